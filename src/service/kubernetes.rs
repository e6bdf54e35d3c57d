//! The `kubernetes` module's settings and its two seams to the platform catalog: where a pool
//! places a cluster ([`Service::kubernetes_placement`], the create checks) and which adapter
//! speaks for an account ([`GkeAccounts`]). Clusters and node pools themselves live in
//! `kubernetes_clusters` and `kubernetes_node_pools`.

use std::sync::{Arc, OnceLock};

use super::Service;
use super::checks::MANAGED_KUBERNETES;
use crate::error::{Error, Result};
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

    /// The checks of a create (and of `versions`) on a pool and a location, in the documented
    /// order (the catalog's placement checks): the pool visible to the tenant (`NOT_FOUND`), its
    /// provider providing managed Kubernetes (`UNSUPPORTED`), active, the location a zone of the
    /// account or the region of one (`INVALID_INPUT` with the allowed `zones` and `regions`), the
    /// tenant's offer active and the region not excluded, and the budgets unless the pool's
    /// billing mode is `none`.
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
