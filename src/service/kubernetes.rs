//! The `kubernetes` module's settings and its two seams to the platform catalog: where a pool
//! places a cluster ([`Service::kubernetes_placement`], the create checks; the lighter
//! [`Service::kubernetes_location`] of `versions`) and which adapter speaks for an account
//! ([`GkeAccounts`]); and what the cluster and node pool calls share: authorized networks as
//! GKE keeps them, and a refusal that names every violated field at once ([`refusal`]).
//! Clusters and node pools themselves live in `kubernetes_clusters` and `kubernetes_node_pools`.

use std::sync::{Arc, OnceLock};

use super::Service;
use super::checks::{MANAGED_KUBERNETES, check_capability, check_location};
use crate::error::{Error, FieldViolation, Result};
use crate::provider::accounts::{GkeAccounts, StoreGkeAccounts};
use crate::provider::google_auth::ServiceAccountKey;
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
    /// Account id to GKE adapter; by default the catalog's accounts, opened with the services'
    /// secret key.
    pub accounts: Arc<OnceLock<Arc<dyn GkeAccounts>>>,
}

impl Default for KubernetesModule {
    fn default() -> Self {
        Self {
            max_clusters_per_tenant: 10,
            credential_ttl_seconds: 3600,
            state_deadline: std::time::Duration::from_secs(3600),
            accounts: Arc::default(),
        }
    }
}

/// Where a cluster goes: the pool's account and project, its billing, the checked location.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClusterPlacement {
    /// The pool.
    pub pool_id: String,
    /// Its account.
    pub account_id: String,
    /// The account's cloud project, when its key says.
    pub provider_project: String,
    /// The pool's billing mode.
    pub billing_mode: String,
    /// The account's zones.
    pub zones: Vec<String>,
    /// The region of the location.
    pub region: String,
}

pub use super::checks::region_of_zone;

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

    /// The GKE adapters of the catalog's accounts (or the ones the module was given).
    pub fn gke_accounts(&self) -> Result<Arc<dyn GkeAccounts>> {
        if let Some(accounts) = self.kubernetes.accounts.get() {
            return Ok(accounts.clone());
        }
        let key = self.secret_key.clone().ok_or_else(|| {
            Error::unavailable("the server has no secret key, so it cannot open provider credentials")
        })?;
        let accounts: Arc<dyn GkeAccounts> = StoreGkeAccounts::new(self.store.clone(), key);
        Ok(self.kubernetes.accounts.get_or_init(|| accounts).clone())
    }

    /// The checks of `versions`, a read: the pool visible to the tenant (`NOT_FOUND`), its
    /// provider providing managed Kubernetes (`UNSUPPORTED`) and the location a zone of the
    /// account or the region of one (`INVALID_INPUT` with the allowed `zones` and `regions`).
    /// Nothing that only refuses new resources (an archived pool, a suspended offer, an excluded
    /// region, a reached budget) keeps a tenant from reading what the provider offers. Returns
    /// the pool's account.
    pub async fn kubernetes_location(&self, tenant: &str, pool_id: &str, location: &str) -> Result<String> {
        let pool = self.check_pool_visible(tenant, pool_id).await?;
        check_capability(&pool, MANAGED_KUBERNETES)?;
        check_location(&pool, location)?;
        Ok(pool.pool.account_id)
    }

    /// The checks of a create (and of a node pool added later) on a pool and a location, in the
    /// documented order (the catalog's placement checks): the pool visible to the tenant
    /// (`NOT_FOUND`), its provider providing managed Kubernetes (`UNSUPPORTED`), active, the
    /// location a zone of the account or the region of one (`INVALID_INPUT` with the allowed
    /// `zones` and `regions`), the tenant's offer active and the region not excluded, and the
    /// budgets unless the pool's billing mode is `none`.
    pub async fn kubernetes_placement(&self, tenant: &str, pool_id: &str, location: &str) -> Result<ClusterPlacement> {
        let placement = self.check_placement(tenant, pool_id, MANAGED_KUBERNETES, location).await?;
        let pool = placement.pool;
        let provider_project = match &self.secret_key {
            Some(key) => self
                .store
                .account_credentials(key, &pool.pool.account_id)
                .await
                .ok()
                .and_then(|opened| ServiceAccountKey::from_json(opened.credentials.expose()).ok())
                .map(|key| key.project_id)
                .unwrap_or_default(),
            None => String::new(),
        };
        Ok(ClusterPlacement {
            pool_id: pool.pool.id,
            account_id: pool.pool.account_id,
            provider_project,
            billing_mode: pool.pool.billing_mode,
            zones: pool.locations,
            region: placement.location.region,
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

/// The authorized networks a cluster keeps from `given`: each masked to its network as GKE masks
/// it, each once (in the order given), with a violation naming `authorizedNetworks[i]` for each
/// entry that is not an IPv4 CIDR (the schema's rule says so first; this holds without it). How
/// many there may be is the schema's rule alone.
pub fn authorized_networks(given: &[String]) -> (Vec<String>, Vec<FieldViolation>) {
    let mut networks: Vec<String> = Vec::new();
    let mut violations = Vec::new();
    for (i, text) in given.iter().enumerate() {
        match crate::domain::cidr::mask_ipv4_prefix(text) {
            Some(network) if !networks.contains(&network) => networks.push(network),
            Some(_) => {}
            None => violations.push(FieldViolation::new(
                format!("authorizedNetworks[{i}]"),
                format!(
                    "{text:?} is not an IPv4 CIDR; give an address and a prefix length of 0 to 32, such as \
                     203.0.113.0/24 (host bits are cleared: 203.0.113.7/24 is 203.0.113.0/24)"
                ),
            )),
        }
    }
    (networks, violations)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn authorized_networks_keep_their_network_once_and_anything_else_is_refused() {
        let given = ["10.0.0.5/24", "10.0.0.0/24", "nope"].map(String::from);
        let (networks, violations) = authorized_networks(&given);
        assert_eq!(networks, ["10.0.0.0/24"]);
        assert_eq!(violations.len(), 1);
        assert_eq!(violations[0].field, "authorizedNetworks[2]");
        assert!(violations[0].description.contains("203.0.113.0/24"), "{}", violations[0].description);
    }
}
