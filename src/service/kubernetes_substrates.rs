//! Kubernetes pool substrates as their pool's people see them: the pool's substrate, read. The
//! pool's policy makes one and archiving the pool tears it down (see `store::kubernetes_substrates`).
//! Also what the pools and the joins ask of substrates: whether a policy may adopt a cluster,
//! and whether a machine may join with a substrate's hosted token.

use super::{Context, Service};
use crate::domain::substrate_policy::{self, SubstrateCluster, SubstratePolicy};
use crate::error::{Error, Result};
use crate::proto::compute::{GetKubernetesSubstrateRequest, ListKubernetesSubstratesRequest};
use crate::store::{ClusterMarks, JoinTokenRow, JoinTokenState, SUBSTRATE_KIND, SubstrateRow, now_micros};

impl Service {
    /// The pool's substrate, in a list: none, or the one its policy made.
    pub async fn substrate_list(
        &self,
        _ctx: &Context,
        request: ListKubernetesSubstratesRequest,
    ) -> Result<Vec<SubstrateRow>> {
        let pool = self.store.pool_fetch(&request.pool_id).await?;
        match self.store.substrate_fetch(&pool.id).await {
            Ok(substrate) => Ok(vec![substrate]),
            Err(error) if error.code == crate::error::Code::NotFound => Ok(Vec::new()),
            Err(error) => Err(error),
        }
    }

    /// The pool's substrate; `NOT_FOUND` when its policy never had one.
    pub async fn substrate_get(&self, _ctx: &Context, request: GetKubernetesSubstrateRequest) -> Result<SubstrateRow> {
        let pool = self.store.pool_fetch(&request.pool_id).await?;
        self.store.substrate_fetch(&pool.id).await
    }
}

/// How long after the substrate last changed a refused join may wake its reconciler: a new
/// node of its node pools is admitted once a pass has listed it, and wakes beyond one per this
/// interval would only let the token's holder drive the reconciler.
const JOIN_WAKE_INTERVAL_MICROS: i64 = 5_000_000;

impl Service {
    /// A substrate adopts only a cluster of its pool's own tenant (`owner`; `None` for a
    /// platform pool) or one the system does not manage: a managed cluster's Secrets and nodes
    /// are readable by its tenant's admins, so the pool's join token and nodes would be theirs.
    /// The reconciler asks again before it writes anything into the cluster.
    pub(super) async fn check_substrate_adoption(
        &self,
        owner: Option<&str>,
        substrate: &SubstratePolicy,
    ) -> Result<()> {
        let SubstrateCluster::Adopt { name, .. } = &substrate.cluster else { return Ok(()) };
        let marks = ClusterMarks { name, ..ClusterMarks::default() };
        // The pool may not exist yet: no substrate of its own to leave out.
        let Some(managed) = self.store.substrate_managed_cluster(marks, "").await? else { return Ok(()) };
        if managed.adoptable_by(owner) {
            return Ok(());
        }
        let field = format!("{}.cluster.adopt.name", substrate_policy::PATH);
        Err(Error::invalid_state(format!(
            "{field}: cluster {name:?} is one better-compute manages ({}) and not for the pool's own tenant; a \
             substrate adopts only clusters of its pool's own tenant or clusters better-compute does not manage",
            managed.managed_as
        ))
        .with_detail("field", field))
    }

    /// A join with a substrate's hosted token is for a Node its cluster's API lists in the
    /// substrate's node pools (as its reconciler last recorded them), by that Node's name (the
    /// machine id bcd's DaemonSet gives it); any other machine is `ACCESS_DENIED` and uses
    /// nothing. A machine the reconciler has not listed yet wakes it, so a new node is admitted
    /// on its next try.
    pub(super) async fn substrate_check_join(&self, token: &JoinTokenRow, machine_id: &str) -> Result<()> {
        let Some(substrate) = self.store.substrate_hosting(&token.id).await? else { return Ok(()) };
        let now = now_micros();
        let wake = substrate.deleted_at.is_none() && substrate.updated_at + JOIN_WAKE_INTERVAL_MICROS <= now;
        let listed = substrate.flavors.iter().any(|flavor| flavor.nodes.iter().any(|node| node == machine_id));
        let state = token.state_at(now);
        if listed || state != JoinTokenState::Active {
            // The join says why an unusable token is refused; one that ran out is replaced by
            // the reconciler's next pass, made now.
            if listed && state == JoinTokenState::Exhausted && wake {
                self.store.work_wake(SUBSTRATE_KIND, &substrate.pool_id, now).await?;
            }
            return Ok(());
        }
        if wake {
            self.store.work_wake(SUBSTRATE_KIND, &substrate.pool_id, now).await?;
        }
        let node_pools: Vec<&str> = substrate.flavors.iter().map(|flavor| flavor.node_pool.as_str()).collect();
        Err(Error::access_denied(format!(
            "join token {} is the one pool {}'s substrate hosts on cluster {:?}: it joins only the nodes of the \
             substrate's node pools ({}) as the cluster's API lists them, and machine {machine_id:?} is not one of \
             them",
            token.id,
            substrate.pool_id,
            substrate.cluster_name,
            node_pools.join(", ")
        ))
        .with_detail("joinTokenId", token.id.as_str())
        .with_detail("machineId", machine_id))
    }
}
