//! Issues the one change a running node pool needs (decided by
//! [`crate::changes::kubernetes::next_pool_step`]), for the reconcilers that own node pools
//! (clusters' pools and substrates' flavors).

pub use crate::changes::kubernetes::{PoolStep, next_pool_step};
use crate::provider::{ManagedKubernetes, ProviderResult};

/// Issues `step` on pool `pool` of cluster `cluster`.
pub async fn take(gke: &dyn ManagedKubernetes, cluster: &str, pool: &str, step: &PoolStep) -> ProviderResult<()> {
    match step {
        PoolStep::SetAutoscaling(bounds) => gke.node_pool_set_autoscaling(cluster, pool, bounds).await.map(drop),
        PoolStep::Update(change) => gke.node_pool_update(cluster, pool, change).await.map(drop),
        PoolStep::SetSize(count) => gke.node_pool_set_size(cluster, pool, *count).await.map(drop),
    }
}
