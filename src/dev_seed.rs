//! The demo tenants of `bcctl dev`: `acme` and `globex`, each with an admin and a viewer and an API
//! key for each, made once and kept in `dev.json` (the store keeps only the keys' hashes), and a
//! few days of demo usage each, so that the console's usage chart has history to show (metering
//! bills only hours that are over, so a fresh `bcctl dev` would otherwise show none for an hour).

use crate::dev::DevTenant;
use crate::error::{Code, Result};
use crate::ids::{PrincipalId, RoleBindingId};
use crate::service::{ApiKeyToken, Service};
use crate::store::{HOUR_MICROS, NewApiKey, NewTenant, PrincipalRow, RoleBindingRow, now_micros};

/// The demo tenants.
pub const DEMO_TENANTS: [&str; 2] = ["acme", "globex"];

/// The demo tenants with working tokens: those of `previous` (the last `dev.json`) when they
/// still authenticate, otherwise made anew.
pub async fn seed_tenants(services: &Service, previous: &[DevTenant]) -> Result<Vec<DevTenant>> {
    let mut tenants = Vec::new();
    for id in DEMO_TENANTS {
        if let Some(kept) = previous.iter().find(|t| t.id == id)
            && works(services, &kept.token).await
            && works(services, &kept.viewer_token).await
        {
            tenants.push(kept.clone());
            continue;
        }
        match services
            .store()
            .tenant_create(&NewTenant {
                id: id.to_owned(),
                display_name: format!("{}{}", id[..1].to_uppercase(), &id[1..]),
                description: "a demo tenant of bcctl dev".to_owned(),
                now: now_micros(),
            })
            .await
        {
            Ok(_) => seed_usage(services, id).await?,
            Err(error) if error.code != Code::Conflict => return Err(error),
            Err(_) => {}
        }
        let token = principal_with_key(services, id, "admin").await?;
        let viewer_token = principal_with_key(services, id, "viewer").await?;
        tenants.push(DevTenant { id: id.to_owned(), token, viewer_token });
    }
    Ok(tenants)
}

/// The demo usage of a new tenant: what it ran in the days before, by meter, from and until how
/// many hours ago. The worker's metering pass bills it into the ledger as it bills anything.
const DEMO_USAGE: [(&str, &str, i64, i64); 2] = [
    ("kubernetes.cluster.hours", "demo-cluster", 4 * 24, 24),
    ("vps.load-balancer.hours", "demo-load-balancer", 3 * 24, 2 * 24),
];

async fn seed_usage(services: &Service, tenant: &str) -> Result<()> {
    let hour = now_micros() / HOUR_MICROS * HOUR_MICROS;
    for (meter, resource, from, until) in DEMO_USAGE {
        let (start, end) = (hour - from * HOUR_MICROS, hour - until * HOUR_MICROS);
        services
            .store()
            .usage_billable_record(meter, &format!("{resource}-{tenant}"), tenant, start, Some(end))
            .await?;
    }
    Ok(())
}

async fn works(services: &Service, token: &str) -> bool {
    !token.is_empty() && services.authenticate(Some(&format!("Bearer {token}"))).await.is_ok()
}

/// A user of `tenant` holding `role` there, with a key; returns the token.
async fn principal_with_key(services: &Service, tenant: &str, role: &str) -> Result<String> {
    let token = ApiKeyToken::generate();
    let now = now_micros();
    let principal = PrincipalRow {
        id: PrincipalId::random().to_string(),
        kind: "user".to_owned(),
        tenant_id: Some(tenant.to_owned()),
        name: format!("{tenant} {role}"),
        created_at: now,
        deleted_at: None,
    };
    let binding = RoleBindingRow {
        id: RoleBindingId::random().to_string(),
        principal_id: principal.id.clone(),
        role: role.to_owned(),
        scope_type: "tenant".to_owned(),
        scope_id: tenant.to_owned(),
        tenant_id: Some(tenant.to_owned()),
        created_at: now,
    };
    let key = NewApiKey {
        id: token.id.to_string(),
        secret_sha256: token.secret_sha256(),
        description: format!("bcctl dev: {tenant} {role}"),
        expires_at: None,
    };
    services.store().principal_create_with_key(&principal, &key, &[binding]).await?;
    Ok(token.reveal())
}
