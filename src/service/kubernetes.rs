//! The `kubernetes` module's settings and its two seams to the platform catalog: where a pool
//! places a cluster ([`Service::kubernetes_placement`], the create checks) and which adapter
//! speaks for an account ([`GkeAccounts`]). Clusters and node pools themselves live in
//! `kubernetes_clusters` and `kubernetes_node_pools`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::Service;
use crate::error::{Code, Error, FieldViolation, Result};
use crate::provider::accounts::{GkeAccounts, StaticGkeAccounts};
use crate::provider::{ErrorKind, ProviderError};

/// The module's settings and seams.
#[derive(Debug, Clone)]
pub struct KubernetesModule {
    /// Clusters a tenant may have that are not deleted (`maxClustersPerTenant`, default 10).
    pub max_clusters_per_tenant: i64,
    /// The default lifetime of a kubeconfig (`credentialTtlSeconds`, default 3600).
    pub credential_ttl_seconds: i32,
    /// How long a cluster may stay `pending`, `provisioning`, `updating` or `deleting` before it
    /// is reported stuck.
    pub state_deadline: std::time::Duration,
    /// Account id to GKE adapter.
    pub accounts: Arc<dyn GkeAccounts>,
    /// Pools known to this module until the catalog provides them.
    pub pools: Arc<StaticPools>,
}

impl Default for KubernetesModule {
    fn default() -> Self {
        Self {
            max_clusters_per_tenant: 10,
            credential_ttl_seconds: 3600,
            state_deadline: std::time::Duration::from_secs(3600),
            accounts: StaticGkeAccounts::new(),
            pools: Arc::new(StaticPools::default()),
        }
    }
}

/// A provider pool as this module needs to know it.
#[derive(Clone, Debug)]
pub struct StaticPool {
    /// The pool's id.
    pub id: String,
    /// The tenant that owns it; `None` for a platform pool.
    pub tenant_id: Option<String>,
    /// Tenants a platform pool is offered to, with the offer's state and excluded regions.
    pub offers: HashMap<String, (String, Vec<String>)>,
    /// Its account.
    pub account_id: String,
    /// `gke`, `digitalocean`, ...
    pub provider: String,
    /// The cloud project of the account.
    pub provider_project: String,
    /// The account's zones.
    pub zones: Vec<String>,
    /// `metered`, `platform-fee` or `none`.
    pub billing_mode: String,
}

/// Pools given up front (tests, `bc dev`), until the catalog's pools replace them.
#[derive(Debug, Default)]
pub struct StaticPools {
    pools: Mutex<HashMap<String, StaticPool>>,
}

impl StaticPools {
    /// Adds or replaces a pool.
    pub fn insert(&self, pool: StaticPool) {
        self.pools.lock().expect("not poisoned").insert(pool.id.clone(), pool);
    }

    fn get(&self, id: &str) -> Option<StaticPool> {
        self.pools.lock().expect("not poisoned").get(id).cloned()
    }
}

/// Where a cluster goes: the pool's account and project, its billing, the checked location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterPlacement {
    /// The pool.
    pub pool_id: String,
    /// Its account.
    pub account_id: String,
    /// The account's cloud project.
    pub provider_project: String,
    /// The pool's billing mode.
    pub billing_mode: String,
    /// The account's zones.
    pub zones: Vec<String>,
    /// The region of the location.
    pub region: String,
}

/// The region of a GKE zone: `europe-west1-b` is in `europe-west1`.
pub fn region_of_zone(zone: &str) -> &str {
    zone.rsplit_once('-').map_or(zone, |(region, _)| region)
}

impl Service {
    /// The module's settings.
    pub fn kubernetes(&self) -> &KubernetesModule {
        &self.kubernetes
    }

    /// The same services with the Kubernetes module configured as `module`.
    pub fn with_kubernetes(mut self, module: KubernetesModule) -> Self {
        self.kubernetes = Arc::new(module);
        self
    }

    /// The checks of a create (and of `versions`) on a pool and a location, in the documented
    /// order: the pool visible to the tenant (`NOT_FOUND`), its provider providing managed
    /// Kubernetes (`UNSUPPORTED`), the location a zone of the account or the region of one
    /// (`INVALID_INPUT` with the allowed `zones` and `regions`), the tenant's offer active and
    /// the region not excluded.
    pub async fn kubernetes_placement(&self, tenant: &str, pool_id: &str, location: &str) -> Result<ClusterPlacement> {
        let pool = self.kubernetes.pools.get(pool_id).ok_or_else(|| Error::not_found("pool", pool_id))?;
        let offer = pool.offers.get(tenant);
        let visible = pool.tenant_id.as_deref() == Some(tenant) || (pool.tenant_id.is_none() && offer.is_some());
        if !visible {
            return Err(Error::not_found("pool", pool_id));
        }
        if pool.provider != "gke" {
            return Err(Error::new(
                Code::Unsupported,
                format!(
                    "pool {pool_id:?} is on a {} account, which does not provide managed Kubernetes",
                    pool.provider
                ),
            )
            .with_detail("poolId", pool_id)
            .with_detail("provider", pool.provider.as_str()));
        }
        let mut regions: Vec<String> = Vec::new();
        for zone in &pool.zones {
            let region = region_of_zone(zone).to_owned();
            if !regions.contains(&region) {
                regions.push(region);
            }
        }
        let region = if pool.zones.iter().any(|z| z == location) {
            region_of_zone(location).to_owned()
        } else if regions.iter().any(|r| r == location) {
            location.to_owned()
        } else {
            return Err(Error::fields(vec![FieldViolation::new(
                "location",
                format!(
                    "{location:?} is not a location of pool {pool_id:?}; use one of its zones ({}) or their regions ({})",
                    pool.zones.join(", "),
                    regions.join(", ")
                ),
            )])
            .with_detail("zones", pool.zones.clone())
            .with_detail("regions", regions));
        };
        if let Some((state, excluded)) = offer {
            if state != "active" {
                return Err(Error::invalid_state(format!("the offer of pool {pool_id:?} to this tenant is {state}"))
                    .with_detail("poolId", pool_id)
                    .with_detail("offerState", state.as_str()));
            }
            if excluded.contains(&region) {
                return Err(Error::fields(vec![FieldViolation::new(
                    "location",
                    format!("region {region:?} is excluded from the offer of pool {pool_id:?} to this tenant"),
                )])
                .with_detail("region", region.as_str())
                .with_detail("excludedRegions", excluded.clone()));
            }
        }
        Ok(ClusterPlacement {
            pool_id: pool.id,
            account_id: pool.account_id,
            provider_project: pool.provider_project,
            billing_mode: pool.billing_mode,
            zones: pool.zones,
            region,
        })
    }
}

/// A provider failure during a call that must answer now (credentials, versions): the
/// provider's words, classified for the caller.
pub fn provider_failure(error: ProviderError) -> Error {
    match error.kind {
        ErrorKind::Transient | ErrorKind::ConflictInProgress => {
            Error::unavailable(format!("the provider did not answer: {error}")).with_detail("provider", error.provider)
        }
        _ => error.into(),
    }
}
