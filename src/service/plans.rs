//! Previews of a change. A `validateOnly` call runs on a rehearsal of the store (see
//! [`Service::rehearsal`]); a plan rehearses the update or delete it wraps the same way, so it is
//! checked and decided exactly as the real call, and hands the row before and the row the call
//! would answer to the kind's classification in [`crate::changes`], which its reconciler
//! follows too. A plan is decided like a read: the rehearsed call's own refusals (a field, a
//! state, a secondary decision) are its `violations`, not an error.

use super::{Context, Service};
use crate::changes::{Plan, kubernetes, load_balancers, metal, vps};
use crate::domain::states::NodePoolState;
use crate::error::{Code, Error, FieldViolation, Result};
use crate::proto::compute::{
    PlanCertificateRequest, PlanInstanceRequest, PlanKubernetesClusterRequest, PlanKubernetesNodePoolRequest,
    PlanLoadBalancerRequest, PlanMetalRequest, PlanNetworkRequest, PlanVolumeRequest, plan_certificate_request,
    plan_instance_request, plan_kubernetes_cluster_request, plan_kubernetes_node_pool_request,
    plan_load_balancer_request, plan_metal_request, plan_network_request, plan_volume_request,
};

/// Whether the real call would answer `error` as its refusal of the change (a plan reports it),
/// rather than fail for a reason of the moment (a plan fails with it too).
fn is_refusal(error: &Error) -> bool {
    !matches!(error.code, Code::Unauthenticated | Code::Unavailable | Code::Internal)
}

impl Service {
    /// The plan of `call` rehearsed: `classify` of its answer, or its refusal.
    pub(super) async fn plan_of<R>(
        &self,
        call: impl Future<Output = Result<R>>,
        classify: impl FnOnce(R) -> Plan,
    ) -> Result<Plan> {
        match call.await {
            Ok(after) => Ok(classify(after)),
            Err(error) if is_refusal(&error) => Ok(Plan::refused(&error)),
            Err(error) => Err(error),
        }
    }

    /// The context a plan's rehearsed call runs with: the plan's caller, its call a rehearsal.
    pub(super) fn rehearsed(ctx: &Context) -> Context {
        Context { rehearsal: true, ..ctx.clone() }
    }
}

/// The plan of an already deleted (or deleting) resource's delete: nothing more happens.
fn nothing_left() -> Plan {
    Plan::default()
}

impl Service {
    /// The plan of a cluster's update or delete.
    pub async fn cluster_plan(&self, ctx: &Context, request: PlanKubernetesClusterRequest) -> Result<Plan> {
        use plan_kubernetes_cluster_request::Change;
        let (on, ctx) = (self.rehearsal(), Self::rehearsed(ctx));
        match request.change.ok_or_else(no_change)? {
            Change::Update(update) => {
                let before = self.cluster_of_tenant(&update.tenant_id, &update.cluster_id).await?;
                let call = on.cluster_update(&ctx, update);
                self.plan_of(call, |after| kubernetes::cluster_update(&before, &after)).await
            }
            Change::Delete(delete) => {
                let before = self.cluster_of_tenant(&delete.tenant_id, &delete.cluster_id).await?;
                let call = on.cluster_delete(&ctx, delete);
                self.plan_of(call, |_| {
                    if before.delete_requested_at.is_some() {
                        nothing_left()
                    } else {
                        kubernetes::cluster_delete(&before)
                    }
                })
                .await
            }
        }
    }

    /// The plan of a node pool's update or delete.
    pub async fn node_pool_plan(&self, ctx: &Context, request: PlanKubernetesNodePoolRequest) -> Result<Plan> {
        use plan_kubernetes_node_pool_request::Change;
        let (on, ctx) = (self.rehearsal(), Self::rehearsed(ctx));
        match request.change.ok_or_else(no_change)? {
            Change::Update(update) => {
                let cluster = self.cluster_of_tenant(&update.tenant_id, &update.cluster_id).await?;
                let before = self.pool_of_cluster(&update.tenant_id, &update.cluster_id, &update.node_pool_id).await?;
                let call = on.node_pool_update(&ctx, update);
                self.plan_of(call, |after| kubernetes::node_pool_update(&cluster, &before, &after)).await
            }
            Change::Delete(delete) => {
                let cluster = self.cluster_of_tenant(&delete.tenant_id, &delete.cluster_id).await?;
                let before = self.pool_of_cluster(&delete.tenant_id, &delete.cluster_id, &delete.node_pool_id).await?;
                let gone = before.deleted_at.is_some() || before.state == NodePoolState::Deleting;
                let call = on.node_pool_delete(&ctx, delete);
                self.plan_of(
                    call,
                    |_| if gone { nothing_left() } else { kubernetes::node_pool_delete(&cluster, &before) },
                )
                .await
            }
        }
    }

    /// The plan of a network's update or delete.
    pub async fn network_plan(&self, ctx: &Context, request: PlanNetworkRequest) -> Result<Plan> {
        use plan_network_request::Change;
        let (on, ctx) = (self.rehearsal(), Self::rehearsed(ctx));
        match request.change.ok_or_else(no_change)? {
            Change::Update(update) => {
                let before = self.network_of_tenant(&update.tenant_id, &update.network_id).await?;
                self.plan_of(on.network_update(&ctx, update), |after| vps::network_update(&before, &after)).await
            }
            Change::Delete(delete) => {
                let before = self.network_of_tenant(&delete.tenant_id, &delete.network_id).await?;
                let gone = before.delete_requested_at.is_some();
                let call = on.network_delete(&ctx, delete);
                self.plan_of(call, |_| if gone { nothing_left() } else { vps::network_delete(&before) }).await
            }
        }
    }

    /// The plan of an instance's delete.
    pub async fn instance_plan(&self, ctx: &Context, request: PlanInstanceRequest) -> Result<Plan> {
        use plan_instance_request::Change;
        let (on, ctx) = (self.rehearsal(), Self::rehearsed(ctx));
        let Change::Delete(delete) = request.change.ok_or_else(no_delete)?;
        let before = self.instance_of_tenant(&delete.tenant_id, &delete.instance_id).await?;
        let gone = before.delete_requested_at.is_some();
        let call = on.instance_delete(&ctx, delete);
        self.plan_of(call, |_| if gone { nothing_left() } else { vps::instance_delete(&before) }).await
    }

    /// The plan of a certificate's delete.
    pub async fn certificate_plan(&self, ctx: &Context, request: PlanCertificateRequest) -> Result<Plan> {
        use plan_certificate_request::Change;
        let (on, ctx) = (self.rehearsal(), Self::rehearsed(ctx));
        let Change::Delete(delete) = request.change.ok_or_else(no_delete)?;
        let before = self.certificate_of_tenant(&delete.tenant_id, &delete.certificate_id).await?;
        let gone = before.delete_requested_at.is_some();
        let call = on.certificate_delete(&ctx, delete);
        self.plan_of(call, |_| if gone { nothing_left() } else { vps::certificate_delete(&before) }).await
    }

    /// The plan of a load balancer's update or delete.
    pub async fn load_balancer_plan(&self, ctx: &Context, request: PlanLoadBalancerRequest) -> Result<Plan> {
        use plan_load_balancer_request::Change;
        let (on, ctx) = (self.rehearsal(), Self::rehearsed(ctx));
        match request.change.ok_or_else(no_change)? {
            Change::Update(update) => {
                let before = self.load_balancer_of_tenant(&update.tenant_id, &update.load_balancer_id).await?;
                match on.load_balancer_update(&ctx, update).await {
                    Ok(after) => load_balancers::load_balancer_update(&self.store, &before, &after).await,
                    Err(error) if is_refusal(&error) => Ok(Plan::refused(&error)),
                    Err(error) => Err(error),
                }
            }
            Change::Delete(delete) => {
                let before = self.load_balancer_of_tenant(&delete.tenant_id, &delete.load_balancer_id).await?;
                let gone = before.delete_requested_at.is_some();
                let call = on.load_balancer_delete(&ctx, delete);
                self.plan_of(
                    call,
                    |_| if gone { nothing_left() } else { load_balancers::load_balancer_delete(&before) },
                )
                .await
            }
        }
    }

    /// The plan of a volume's update or delete.
    pub async fn volume_plan(&self, ctx: &Context, request: PlanVolumeRequest) -> Result<Plan> {
        use plan_volume_request::Change;
        let (on, ctx) = (self.rehearsal(), Self::rehearsed(ctx));
        match request.change.ok_or_else(no_change)? {
            Change::Update(update) => {
                let before = self.volume_of_tenant(&update.tenant_id, &update.volume_id).await?;
                self.plan_of(on.volume_update(&ctx, update), |after| vps::volume_update(&before, &after)).await
            }
            Change::Delete(delete) => {
                let before = self.volume_of_tenant(&delete.tenant_id, &delete.volume_id).await?;
                let gone = before.delete_requested_at.is_some();
                let call = on.volume_delete(&ctx, delete);
                self.plan_of(call, |_| if gone { nothing_left() } else { vps::volume_delete(&before) }).await
            }
        }
    }

    /// The plan of a machine's update or delete.
    pub async fn metal_plan(&self, ctx: &Context, request: PlanMetalRequest) -> Result<Plan> {
        use plan_metal_request::Change;
        let (on, ctx) = (self.rehearsal(), Self::rehearsed(ctx));
        match request.change.ok_or_else(no_change)? {
            Change::Update(update) => {
                let before = self.metal_of_pool(&update.pool_id, &update.node_id).await?;
                let password = update.password.is_some();
                let username = update.username.clone();
                let call = on.metal_update(&ctx, update);
                self.plan_of(call, |after| metal::metal_update(&before, &after, password, username.as_deref())).await
            }
            Change::Delete(delete) => {
                let before = self.metal_of_pool(&delete.pool_id, &delete.node_id).await?;
                let gone = before.deleted_at.is_some();
                let call = on.metal_delete(&ctx, delete);
                self.plan_of(call, |_| if gone { nothing_left() } else { metal::metal_delete(&before) }).await
            }
        }
    }
}

/// A plan request that names no call.
fn no_change() -> Error {
    Error::fields(vec![FieldViolation::new(
        "update",
        "name the call to plan: {\"update\": <an update request>} or {\"delete\": <a delete request>}",
    )])
}

/// A plan request of a kind that has no update and names no call.
fn no_delete() -> Error {
    Error::fields(vec![FieldViolation::new("delete", "name the call to plan: {\"delete\": <a delete request>}")])
}
