//! A substrate node's remediation: a node of the pool that the pool's remediation asked to be
//! recreated (silent past `unhealthyAfter`) has its machine deleted at the provider, which its
//! managed instance group makes again under the same name with a fresh disk. The old node is
//! `deleted` with an event saying why, and the new machine's bcd joins as a new node with the
//! substrate's hosted token. The provider is asked first, then the store: a pass that stops in
//! between asks again, and a machine made twice is still one machine.

use super::Step;
use crate::domain::states::PoolNodeState;
use crate::provider::Node;
use crate::provider::gce::instance_of_provider_id;
use crate::reconcile::node_remediation::RECREATE;
use crate::reconcile::{Context, PassError};
use crate::store::now_micros;

impl Step<'_> {
    /// Recreates the machine of every node waiting for it that the cluster still lists in `listed`.
    pub(super) async fn recreate_unhealthy(&self, listed: &[Node]) -> Result<(), PassError> {
        let store = &self.pass.store;
        for node in store.node_list(self.pool_id(), i64::MAX).await? {
            if node.remediation != RECREATE || node.state != PoolNodeState::NotReady || node.deleted_at.is_some() {
                continue;
            }
            let Some((step, requested_at)) = store.node_remediation_pending(&node.id).await? else { continue };
            // A node the cluster no longer lists is deleted as gone; one it lists without a
            // machine to name is left as it is.
            let Some(found) = listed.iter().find(|n| n.name == node.machine_id) else { continue };
            let Some((zone, instance)) = instance_of_provider_id(&found.provider_id) else {
                tracing::warn!(pool = %self.pool_id(), node = %node.id, provider_id = %found.provider_id,
                    "a node to recreate names no Compute Engine instance; left as it is");
                continue;
            };
            self.gke
                .compute()
                .instance_delete(zone, instance)
                .await
                .context(&format!("recreating instance {instance} in {zone}"))?;
            let reason = format!(
                "remediation: no heartbeat for longer than the pool's unhealthyAfter: its machine (instance \
                 {instance} in {zone}) was made again at the provider, and joins as a new node"
            );
            if store.node_recreated(&node.id, &step, requested_at, &reason, now_micros()).await?.is_some() {
                tracing::info!(pool = %self.pool_id(), node = %node.id, %instance, "substrate node's machine recreated");
            }
        }
        Ok(())
    }
}
