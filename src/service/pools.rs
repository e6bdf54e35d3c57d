//! Pools: the operator's provider pools, and the pools a tenant can see and place resources in.

use super::checks::{check_capability, check_location, check_offer, check_pool_active};
use super::update_mask::Named;
use super::{Context, PrincipalKind, Service};
use crate::authz::Target;
use crate::domain::states::{PoolState, requested_state};
use crate::domain::substrate_policy::{self, SubstratePolicy};
use crate::domain::{drift, metal_policy, node_policy};
use crate::error::{Code, Error, FieldViolation, Result};
use crate::ids::PoolId;
use crate::proto::compute;
use crate::proto::platform::{
    CreatePoolRequest, DeletePoolRequest, GetPoolRequest, ListPoolsRequest, UpdatePoolRequest,
};
use crate::store::{NewPool, PoolChange, PoolRow, VisiblePool, now_micros};

/// A protobuf `Struct` as a JSON object.
pub fn struct_to_json(value: &prost_types::Struct) -> serde_json::Value {
    serde_json::Value::Object(crate::error::struct_to_json(value))
}

impl Service {
    /// Pool `pool_id` when it takes new things: `NOT_FOUND` for an unknown or deleted pool,
    /// `INVALID_STATE` for an archived one, saying what it `refuses` ("no node may join it").
    pub(super) async fn pool_taking_new(&self, pool_id: &str, refuses: &str) -> Result<PoolRow> {
        let pool = self.store.pool_fetch(pool_id).await?;
        if pool.deleted_at.is_some() {
            return Err(Error::not_found("pool", pool_id));
        }
        if pool.state != PoolState::Active {
            return Err(Error::invalid_state(format!("pool {pool_id:?} is {}: {refuses}", pool.state))
                .with_detail("poolId", pool_id));
        }
        Ok(pool)
    }

    /// Records a pool on a live account.
    pub async fn pool_create(&self, ctx: &Context, request: CreatePoolRequest) -> Result<PoolRow> {
        let policy = request.policy.as_ref().map_or_else(|| serde_json::json!({}), struct_to_json);
        metal_policy::read(&policy)?;
        drift::read(&policy)?;
        node_policy::read(&policy)?;
        if let Some(substrate) = substrate_policy::read(&policy)? {
            let account = self.store.account_fetch(&request.account_id).await?;
            self.check_substrate_account(account.tenant_id.as_deref(), &substrate).await?;
        }
        let pool = self
            .store
            .pool_create(&NewPool {
                id: PoolId::random().to_string(),
                account_id: request.account_id,
                name: request.name,
                description: request.description,
                billing_mode: request.billing_mode,
                policy,
                prices: request.prices.into_iter().collect(),
                now: now_micros(),
            })
            .await?;
        tracing::info!(pool = %pool.id, account = %pool.account_id, by = %ctx.caller.principal_id, "pool created");
        Ok(pool)
    }

    /// One pool, deleted or not.
    pub async fn pool_get(&self, _ctx: &Context, request: GetPoolRequest) -> Result<PoolRow> {
        self.store.pool_fetch(&request.pool_id).await
    }

    /// Pools, oldest first.
    pub async fn pool_list(&self, _ctx: &Context, request: ListPoolsRequest) -> Result<Vec<PoolRow>> {
        self.store.pool_list(&request.account_id, &request.tenant_id, request.include_deleted).await
    }

    /// Changes what is named.
    pub async fn pool_update(&self, ctx: &Context, request: UpdatePoolRequest) -> Result<PoolRow> {
        let named = Named::of(&request.update_mask);
        named.require_some(&["name", "description", "billingMode", "state", "policy", "prices"])?;
        let policy = named.clearable("policy", request.policy).as_ref().map(struct_to_json);
        if let Some(policy) = &policy {
            metal_policy::read(policy)?;
            drift::read(policy)?;
            node_policy::read(policy)?;
            self.check_substrate_change(&request.pool_id, policy).await?;
        }
        let change = PoolChange {
            name: named.required("name", "name", request.name)?,
            description: named.clearable("description", request.description),
            billing_mode: named.required("billing_mode", "billingMode", request.billing_mode)?,
            state: named
                .required("state", "state", request.state)?
                .map(|state| requested_state("state", &state, &[PoolState::Active, PoolState::Archived]))
                .transpose()?,
            // A policy named without a value is the empty policy.
            policy,
            prices: named.list("prices", request.prices).map(|prices| prices.into_iter().collect()),
        };
        let pool = self.store.pool_update(&request.pool_id, &change, now_micros()).await?;
        tracing::info!(pool = %pool.id, version = pool.version, by = %ctx.caller.principal_id, "pool updated");
        Ok(pool)
    }

    /// Marks a pool without bookings deleted.
    pub async fn pool_delete(&self, ctx: &Context, request: DeletePoolRequest) -> Result<PoolRow> {
        let pool = self.store.pool_delete(&request.pool_id, now_micros()).await?;
        tracing::info!(pool = %pool.id, by = %ctx.caller.principal_id, "pool deleted");
        Ok(pool)
    }

    /// A substrate's account must be a live GKE account of the pool's owner (the platform's for a
    /// platform pool, the tenant's own for a tenant's pool).
    async fn check_substrate_account(&self, owner: Option<&str>, substrate: &SubstratePolicy) -> Result<()> {
        let field = format!("{}.account", substrate_policy::PATH);
        let refuse = |why: String| Err(Error::fields(vec![FieldViolation::new(field.clone(), why)]));
        let account = match self.store.account_fetch(&substrate.account).await {
            Ok(account) => account,
            Err(error) if error.code == Code::NotFound => {
                return refuse(format!("no account {} exists", substrate.account));
            }
            Err(error) => return Err(error),
        };
        if account.deleted_at.is_some() {
            return refuse(format!("account {} is deleted", account.id));
        }
        if account.provider != "gke" {
            return refuse(format!(
                "account {} is on {}; a kubernetes substrate needs a gke account",
                account.id, account.provider
            ));
        }
        if account.tenant_id.as_deref() != owner {
            let owner = owner.map_or("the platform".to_owned(), |tenant| format!("tenant {tenant}"));
            return refuse(format!("account {} is not one of {owner}, whose pool this is", account.id));
        }
        self.check_substrate_adoption(owner, substrate).await
    }

    /// A changed policy's substrate: checked as at create; on a live pool, a substrate keeps its
    /// cluster (no switch between create and adopt, no other adopted cluster or location).
    async fn check_substrate_change(&self, pool_id: &str, policy: &serde_json::Value) -> Result<()> {
        let Some(wanted) = substrate_policy::read(policy)? else { return Ok(()) };
        let pool = self.store.pool_fetch(pool_id).await?;
        self.check_substrate_account(pool.tenant_id.as_deref(), &wanted).await?;
        let Ok(Some(current)) = substrate_policy::read(&pool.policy) else { return Ok(()) };
        if pool.state != PoolState::Archived && !current.cluster.is_same_cluster(&wanted.cluster) {
            let said = if current.cluster.mode() != wanted.cluster.mode() {
                format!("switches the substrate from {} to {}", current.cluster.mode(), wanted.cluster.mode())
            } else {
                "changes the substrate's cluster".to_owned()
            };
            return Err(Error::invalid_state(format!(
                "pool {pool_id}'s policy {said}, which a live pool cannot do: archive the pool and make another"
            ))
            .with_detail("field", format!("{}.cluster", substrate_policy::PATH)));
        }
        Ok(())
    }

    /// The tenant a tenant-facing call is about: an operator names any; a tenant principal only
    /// its own (the identity work's decisions will take this over).
    fn tenant_of_call(ctx: &Context, requested: &str) -> Result<()> {
        match (ctx.caller.kind, ctx.caller.tenant_id.as_deref()) {
            (PrincipalKind::Operator, _) => Ok(()),
            (_, Some(own)) if own == requested => Ok(()),
            _ => Err(Error::access_denied(format!("this principal cannot read the pools of tenant {requested:?}"))
                .with_detail("tenantId", requested)),
        }
    }

    /// The pools a tenant can see, oldest first.
    pub async fn pool_list_visible(
        &self,
        ctx: &Context,
        request: compute::ListPoolsRequest,
    ) -> Result<Vec<VisiblePool>> {
        Self::tenant_of_call(ctx, &request.tenant_id)?;
        let pools = self.store.pool_list_visible(&request.tenant_id).await?;
        // "+ items": the list was decided on the tenant; each pool is kept if it may be read.
        Ok(self.authorize_items(ctx, "compute:pools:read", pools, |pool| Target {
            resource_type: "compute-pool".to_owned(),
            id: pool.pool.id.clone(),
            tenant_id: Some(request.tenant_id.clone()),
            project_id: None,
            owner_id: None,
            attributes: serde_json::Map::new(),
        }))
    }

    /// One pool a tenant can see; `NOT_FOUND` for any other.
    pub async fn pool_get_visible(&self, ctx: &Context, request: compute::GetPoolRequest) -> Result<VisiblePool> {
        Self::tenant_of_call(ctx, &request.tenant_id)?;
        self.check_pool_visible(&request.tenant_id, &request.pool_id).await
    }

    /// Every check of a create, and room in the `resourceKind` quota, booking nothing.
    pub async fn pool_check_placement(
        &self,
        ctx: &Context,
        request: compute::CheckPlacementRequest,
    ) -> Result<compute::CheckPlacementResponse> {
        Self::tenant_of_call(ctx, &request.tenant_id)?;
        let tenant = &request.tenant_id;
        let pool = self.check_pool_visible(tenant, &request.pool_id).await?;
        check_capability(&pool, &request.capability)?;
        check_pool_active(&pool)?;
        let location = check_location(&pool, &request.location)?;
        check_offer(&pool, &location.region)?;
        if !request.resource_kind.is_empty() {
            self.store.quota_check(&pool.pool.id, tenant, &request.resource_kind, 1).await?;
        }
        self.check_budget(tenant, &pool).await?;
        Ok(compute::CheckPlacementResponse {
            ok: true,
            zone: location.zone.unwrap_or_default(),
            region: location.region,
        })
    }
}
