//! Provider accounts. Credentials are checked for their shape, sealed to the account's id with
//! the server's secret key, and never returned, logged or put in an event.

use super::checks::provider_has_zones;
use super::update_mask::Named;
use super::{Context, Service};
use crate::domain::rate_limits::{self, RateWindow};
use crate::domain::urls;
use crate::error::{Error, FieldViolation, Result};
use crate::ids::AccountId;
use crate::proto::platform::{
    CreateAccountRequest, DeleteAccountRequest, GetAccountRequest, ListAccountsRequest, RateLimit, UpdateAccountRequest,
};
use crate::secrets::SecretKey;
use crate::store::{AccountChange, AccountRow, NewAccount, now_micros};

/// A new endpoint without new credentials: the stored ones were made for the old endpoint, and
/// the worker would present them to whatever listens at the new one.
fn endpoint_without_credentials(
    current: &str,
    endpoint: Option<&str>,
    gives_credentials: bool,
) -> Option<FieldViolation> {
    let changes_endpoint = endpoint.is_some_and(|endpoint| endpoint != current);
    (changes_endpoint && !gives_credentials).then(|| {
        FieldViolation::new(
            "credentials",
            "required when the endpoint changes: the stored credentials are never sent to a new endpoint, \
             so give the credentials for it in the same call",
        )
    })
}

/// What is wrong with a provider endpoint: a base URL the worker calls with paths appended, so
/// without a query or a fragment.
fn endpoint_problem(endpoint: &str) -> Option<FieldViolation> {
    let problem = if endpoint.is_empty() {
        None
    } else if endpoint.contains(['?', '#']) {
        Some(
            "has a query or a fragment: must be the provider API's base URL, such as https://api.example.com/v2".into(),
        )
    } else {
        urls::problem(endpoint)
    };
    problem.map(|description| FieldViolation::new("endpoint", description))
}

/// What is wrong with `credentials` for `provider`, never quoting them.
fn credentials_problem(provider: &str, credentials: &str) -> Option<FieldViolation> {
    let problem = match provider {
        "gke" => {
            let key: Option<serde_json::Value> = serde_json::from_str(credentials).ok();
            let field = |name: &str| key.as_ref().and_then(|k| k[name].as_str()).is_some_and(|v| !v.is_empty());
            let is_key = key.as_ref().is_some_and(|k| k["type"] == "service_account")
                && field("client_email")
                && field("private_key");
            (!is_key).then_some(
                "must be a GKE service-account JSON key: an object with \"type\": \"service_account\", \
                 \"client_email\" and \"private_key\"",
            )
        }
        _ => (credentials.is_empty() || credentials.chars().any(|c| c.is_whitespace() || c.is_control()))
            .then_some("must be a DigitalOcean API token: one word, no spaces"),
    };
    problem.map(|description| FieldViolation::new("credentials", description))
}

/// What is wrong with the zones and regions given for `provider`.
fn locations_problems(provider: &str, zones: &[String], regions: &[String], creating: bool) -> Vec<FieldViolation> {
    let mut problems = Vec::new();
    if provider_has_zones(provider) {
        if !regions.is_empty() {
            problems.push(FieldViolation::new("regions", "a GKE account takes zones, not regions"));
        }
        if creating && zones.is_empty() {
            problems.push(FieldViolation::new("zones", "a GKE account needs at least one zone, such as us-central1-a"));
        }
    } else {
        if !zones.is_empty() {
            problems.push(FieldViolation::new("zones", "a DigitalOcean account takes regions, not zones"));
        }
        if creating && regions.is_empty() {
            problems
                .push(FieldViolation::new("regions", "a DigitalOcean account needs at least one region, such as nyc3"));
        }
    }
    problems
}

/// The windows given, as stored (JSON; empty for none, the provider's published limits), or
/// what is wrong with them.
fn rate_limits_json(given: &[RateLimit]) -> Result<String, Vec<FieldViolation>> {
    let windows: Vec<RateWindow> =
        given.iter().map(|limit| RateWindow { requests: limit.requests, per_seconds: limit.per_seconds }).collect();
    let problems: Vec<FieldViolation> = rate_limits::problems(&windows)
        .into_iter()
        .map(|(index, what)| FieldViolation::new(format!("rateLimits[{index}]"), what))
        .collect();
    if !problems.is_empty() {
        return Err(problems);
    }
    Ok(if windows.is_empty() { String::new() } else { serde_json::to_string(&windows).unwrap_or_default() })
}

impl Service {
    /// The secret key, or `UNAVAILABLE` on a server started without one.
    pub(super) fn sealing_key(&self) -> Result<&SecretKey> {
        self.secret_key
            .as_ref()
            .ok_or_else(|| Error::unavailable("this server has no secret key (--secret-key) to seal credentials with"))
    }

    /// Records an account; its credentials are sealed before they reach the store.
    pub async fn account_create(&self, ctx: &Context, request: CreateAccountRequest) -> Result<AccountRow> {
        let mut problems = locations_problems(&request.provider, &request.zones, &request.regions, true);
        problems.extend(credentials_problem(&request.provider, &request.credentials));
        problems.extend(endpoint_problem(&request.endpoint));
        let rate_limits = rate_limits_json(&request.rate_limits).unwrap_or_else(|found| {
            problems.extend(found);
            String::new()
        });
        if !problems.is_empty() {
            return Err(Error::fields(problems));
        }
        let id = AccountId::random().to_string();
        let sealed_credentials = self.sealing_key()?.seal(&request.credentials, &id)?;
        let locations = if provider_has_zones(&request.provider) { request.zones } else { request.regions };
        let account = self
            .store
            .account_create(&NewAccount {
                id,
                tenant_id: Some(request.tenant_id).filter(|t| !t.is_empty()),
                provider: request.provider,
                name: request.name,
                description: request.description,
                endpoint: request.endpoint,
                locations,
                sealed_credentials,
                rate_limits,
                now: now_micros(),
            })
            .await?;
        tracing::info!(account = %account.id, provider = %account.provider, by = %ctx.caller.principal_id, "account created");
        Ok(account)
    }

    /// One account, without its credentials.
    pub async fn account_get(&self, _ctx: &Context, request: GetAccountRequest) -> Result<AccountRow> {
        self.store.account_fetch(&request.account_id).await
    }

    /// Accounts, oldest first.
    pub async fn account_list(&self, _ctx: &Context, request: ListAccountsRequest) -> Result<Vec<AccountRow>> {
        self.store.account_list(&request.tenant_id, request.platform_only, request.include_deleted).await
    }

    /// Changes what is named; credentials are replaced whole and sealed again.
    pub async fn account_update(&self, ctx: &Context, request: UpdateAccountRequest) -> Result<AccountRow> {
        let named = Named::of(&request.update_mask);
        named.require_some(&["name", "description", "credentials", "endpoint", "zones", "regions", "rate_limits"])?;
        let name = named.required("name", "name", request.name.clone())?;
        let credentials = named.required("credentials", "credentials", request.credentials.clone())?;
        let current = self.store.account_fetch(&request.account_id).await?;
        // The provider's own kind of location, named, replaces them and must not be emptied.
        let names_locations =
            if provider_has_zones(&current.provider) { named.has("zones") } else { named.has("regions") };
        let mut problems = locations_problems(&current.provider, &request.zones, &request.regions, names_locations);
        if let Some(credentials) = &credentials {
            problems.extend(credentials_problem(&current.provider, credentials));
        }
        let endpoint = named.clearable("endpoint", request.endpoint.clone());
        problems.extend(endpoint.as_deref().and_then(endpoint_problem));
        problems.extend(endpoint_without_credentials(&current.endpoint, endpoint.as_deref(), credentials.is_some()));
        let rate_limits = match rate_limits_json(&request.rate_limits) {
            Ok(json) => named.has("rate_limits").then_some(json),
            Err(found) => {
                problems.extend(found);
                None
            }
        };
        if !problems.is_empty() {
            return Err(Error::fields(problems));
        }
        let sealed_credentials = match &credentials {
            Some(credentials) => Some(self.sealing_key()?.seal(credentials, &current.id)?),
            None => None,
        };
        let locations = if provider_has_zones(&current.provider) { request.zones } else { request.regions };
        let change = AccountChange {
            name,
            description: named.clearable("description", request.description),
            endpoint,
            locations: names_locations.then_some(locations),
            sealed_credentials,
            rate_limits,
        };
        let account = self.store.account_update(&current.id, &change, now_micros()).await?;
        tracing::info!(account = %account.id, version = account.version, by = %ctx.caller.principal_id, "account updated");
        Ok(account)
    }

    /// Marks an account without live pools deleted.
    pub async fn account_delete(&self, ctx: &Context, request: DeleteAccountRequest) -> Result<AccountRow> {
        let account = self.store.account_delete(&request.account_id, now_micros()).await?;
        tracing::info!(account = %account.id, by = %ctx.caller.principal_id, "account deleted");
        Ok(account)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn credentials_are_checked_for_their_shape_without_being_quoted() {
        let key = r#"{"type": "service_account", "client_email": "a@p.iam.gserviceaccount.com", "private_key": "k"}"#;
        assert!(credentials_problem("gke", key).is_none());
        let bad = credentials_problem("gke", "hunter2-not-json").unwrap();
        assert!(!bad.description.contains("hunter2"));
        assert!(credentials_problem("digitalocean", "dop_v1_abc").is_none());
        assert!(credentials_problem("digitalocean", "two words").is_some());
    }

    #[test]
    fn an_endpoint_is_a_base_url_without_a_query_or_fragment() {
        assert!(endpoint_problem("").is_none());
        assert!(endpoint_problem("https://[::1]:8443/v1").is_none());
        for bad in ["http://[", "http://host?x=1", "http://host#top", "http://user:secret@host"] {
            assert_eq!(endpoint_problem(bad).map(|p| p.field), Some("endpoint".into()), "{bad}");
        }
    }
}
