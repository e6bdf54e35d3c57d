//! API keys: the bearer credentials `bck_<id>.<secret>`, authentication of a call, and the
//! operator key made on first start.

use super::auth_cache::Authenticated;
use super::{Caller, PrincipalKind, Service};
use crate::authz::Binding;
use crate::bearer::Bearer;
use crate::error::{Error, Result};
use crate::ids::{ApiKeyId, PrincipalId, RoleBindingId};
use crate::store::{NewApiKey, PrincipalRow, RoleBindingRow, now_micros};

/// A parsed API key `bck_<id>.<secret>`: its id and its secret.
pub type ApiKeyToken = Bearer<ApiKeyId>;

/// What the first start did about the operator key.
#[derive(Debug)]
pub enum BootstrapOutcome {
    /// Keys already existed; nothing was made.
    AlreadyBootstrapped,
    /// An operator key was made; the token is shown this once.
    Created(ApiKeyToken),
}

/// A caller taken from the cache at a generation its call has not read yet. The call reads the
/// generation before anything of it is looked up, decided or answered, and confirms the caller
/// with it ([`Service::confirm_caller`]).
#[derive(Clone, Debug)]
pub struct Unconfirmed {
    /// The generation the cached caller was read at.
    read_at: i64,
    /// The call's `Authorization` header, to authenticate it again when the generation moved.
    authorization: String,
}

/// The key a bearer `Authorization` header names, or why it names none.
fn bearer_token(authorization: Option<&str>) -> Result<ApiKeyToken> {
    let Some(header) = authorization else {
        return Err(Error::unauthenticated("missing credentials: send Authorization: Bearer bck_<id>.<secret>"));
    };
    header
        .strip_prefix("Bearer ")
        .or_else(|| header.strip_prefix("bearer "))
        .and_then(|token| ApiKeyToken::parse(token.trim()))
        .ok_or_else(|| {
            Error::unauthenticated("malformed credentials: expected Authorization: Bearer bck_<id>.<secret>")
        })
}

/// The caller `found` for `token`, unless the presented secret is not the key's or the key
/// has expired.
fn holder_of(token: &ApiKeyToken, found: Authenticated) -> Result<Caller> {
    if !token.matches(&found.secret_sha256) {
        return Err(Error::unauthenticated("invalid API key"));
    }
    if found.expires_at.is_some_and(|expires| expires <= now_micros()) {
        return Err(Error::unauthenticated("this API key has expired"));
    }
    Ok(found.caller)
}

impl Service {
    /// Authenticates a bearer token: a missing, malformed, unknown, wrong, revoked or expired
    /// key is `UNAUTHENTICATED`.
    pub async fn authenticate(&self, authorization: Option<&str>) -> Result<Caller> {
        let token = bearer_token(authorization)?;
        // Read before the key: an entry is never newer than the generation it is kept under.
        let generation = self.store.auth_generation().await?;
        let found = match self.auth_cache.get(token.id.as_str(), generation) {
            Some(found) => found,
            None => {
                let found = self.authenticated_in_store(&token).await?;
                self.auth_cache.put(token.id.as_str(), generation, found.clone());
                found
            }
        };
        holder_of(&token, found)
    }

    /// Authenticates a bearer token as [`Service::authenticate`] does, but answers a cached
    /// caller without reading the generation: the call must then confirm it
    /// ([`Service::confirm_caller`]) with the generation it reads first, before it looks
    /// anything up, decides or answers.
    pub async fn authenticate_unconfirmed(&self, authorization: Option<&str>) -> Result<(Caller, Option<Unconfirmed>)> {
        let token = bearer_token(authorization)?;
        match self.auth_cache.latest(token.id.as_str()) {
            Some((read_at, found)) => {
                let caller = holder_of(&token, found)?;
                let authorization = authorization.unwrap_or_default().to_owned();
                Ok((caller, Some(Unconfirmed { read_at, authorization })))
            }
            None => Ok((self.authenticate(authorization).await?, None)),
        }
    }

    /// The caller of a call whose first read found the store at `generation`: the cached
    /// `caller` when it was read at that generation, else the key authenticated again (and
    /// refused if it was revoked, its principal or tenant deleted, or its bindings changed are
    /// what the decision now sees).
    pub async fn confirm_caller(&self, caller: Caller, unconfirmed: &Unconfirmed, generation: i64) -> Result<Caller> {
        if unconfirmed.read_at == generation {
            return Ok(caller);
        }
        self.authenticate(Some(&unconfirmed.authorization)).await
    }

    /// Confirms a cached caller with a read of its own, for a call refused before its first
    /// read: the refusal goes to a caller who may still call, an unauthenticated one is told so.
    pub async fn confirm_caller_alone(&self, caller: Caller, unconfirmed: &Unconfirmed) -> Result<Caller> {
        let generation = self.store.auth_generation().await?;
        self.confirm_caller(caller, unconfirmed, generation).await
    }

    /// The key of `token` with its principal and bindings, read from the store; a key that is
    /// unknown, does not match, was revoked, whose principal was deleted or whose principal's
    /// tenant was deleted is `UNAUTHENTICATED` (the secret is checked first, so only its holder
    /// learns the rest).
    async fn authenticated_in_store(&self, token: &ApiKeyToken) -> Result<Authenticated> {
        let invalid = || Error::unauthenticated("invalid API key");
        let holder = self.store.api_key_fetch_for_call(token.id.as_str()).await?.ok_or_else(invalid)?;
        let (key, principal) = (holder.key, holder.principal);
        if !token.matches(&key.secret_sha256) {
            return Err(invalid());
        }
        if key.revoked_at.is_some() {
            return Err(Error::unauthenticated("this API key was revoked"));
        }
        if principal.deleted_at.is_some() {
            return Err(Error::unauthenticated("the principal of this API key was deleted"));
        }
        if holder.tenant_deleted_at.is_some() {
            return Err(Error::unauthenticated("the tenant of this API key was deleted"));
        }
        let kind = PrincipalKind::parse(&principal.kind).ok_or_else(|| {
            Error::internal(format!("principal {} has unknown kind {:?}", principal.id, principal.kind))
        })?;
        let bindings = self
            .store
            .role_binding_list_for_principal(&principal.id)
            .await?
            .into_iter()
            .map(|b| Binding { role: b.role, scope_type: b.scope_type, scope_id: b.scope_id })
            .collect();
        Ok(Authenticated {
            secret_sha256: key.secret_sha256,
            expires_at: key.expires_at,
            caller: Caller { principal_id: principal.id, kind, tenant_id: principal.tenant_id, bindings },
        })
    }

    /// The names people read for `caller`: its principal's, and its tenant's display name (a
    /// tenant principal's only). Its own names, which its key may always learn.
    pub async fn caller_names(&self, caller: &Caller) -> Result<(String, Option<String>)> {
        let principal = self.store.principal_fetch(&caller.principal_id).await?;
        let name = principal.map(|p| p.name).unwrap_or_default();
        let tenant = match &caller.tenant_id {
            Some(id) => Some(self.store.tenant_fetch(id).await?.display_name),
            None => None,
        };
        Ok((name, tenant))
    }

    /// On a store with no keys, creates the operator principal and its key: `token` when given
    /// (`BC_BOOTSTRAP_TOKEN`), a new one otherwise.
    pub async fn bootstrap_operator(&self, token: Option<&str>) -> Result<BootstrapOutcome> {
        if self.store.api_key_count().await? > 0 {
            return Ok(BootstrapOutcome::AlreadyBootstrapped);
        }
        let token = match token {
            Some(text) => ApiKeyToken::parse(text).ok_or_else(|| {
                Error::invalid_input("the bootstrap token must look like bck_<26 base32 characters>.<secret of 16 or more letters and digits>")
            })?,
            None => ApiKeyToken::generate(),
        };
        let principal = PrincipalRow {
            id: PrincipalId::random().to_string(),
            kind: PrincipalKind::Operator.as_str().to_owned(),
            tenant_id: None,
            name: "operator".to_owned(),
            created_at: now_micros(),
            deleted_at: None,
        };
        let admin = RoleBindingRow {
            id: RoleBindingId::random().to_string(),
            principal_id: principal.id.clone(),
            role: "platform-admin".to_owned(),
            scope_type: "platform".to_owned(),
            scope_id: "platform".to_owned(),
            tenant_id: None,
            created_at: principal.created_at,
        };
        let key = NewApiKey {
            id: token.id.to_string(),
            secret_sha256: token.secret_sha256(),
            description: "bootstrap operator key".to_owned(),
            expires_at: None,
        };
        self.store.principal_create_with_key(&principal, &key, &[admin]).await?;
        Ok(BootstrapOutcome::Created(token))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_round_trips_and_its_debug_form_hides_the_secret() {
        let token = ApiKeyToken::generate();
        let text = token.reveal();
        assert!(text.starts_with("bck_"));
        let parsed = ApiKeyToken::parse(&text).unwrap();
        assert_eq!(parsed, token);
        assert_eq!(parsed.secret_sha256(), token.secret_sha256());
        assert!(!format!("{token:?}").contains(text.split_once('.').unwrap().1));
    }

    #[test]
    fn malformed_tokens_are_refused() {
        for text in [
            "",
            "bck_",
            "bck_abc.def",
            "prn_0000000000000000000000000a.0123456789abcdef",
            "bck_0000000000000000000000000a.short",
        ] {
            assert!(ApiKeyToken::parse(text).is_none(), "{text}");
        }
        assert!(ApiKeyToken::parse("bck_0000000000000000000000000a.0123456789abcdef").is_some());
    }
}
