//! Instances: the rules of create, list, get and delete. A create runs the catalog's checks on
//! its pool and region in the documented order (the offer check the cluster page points to as
//! "as for `instances.create`" is [`super::checks::check_offer`], which every module calls the
//! same way), then the subnet's: the tenant's own, on the pool's account, in the region.

use super::checks::INSTANCES;
use super::resource_calls::{CreateRequest, ListRequest, resource_requests};
use super::vps::{LIST_LIMIT, check_region, deadline, legacy_digest, optional};
use super::{Context, Service};
use crate::error::{Error, FieldViolation, Result};
use crate::proto::compute::{CreateInstanceRequest, DeleteInstanceRequest, GetInstanceRequest, ListInstancesRequest};
use crate::store::{INSTANCE_RESOURCE, InstanceRow, NewInstance, VisiblePool, now_micros};

/// The digest earlier releases kept of a create request (its fields listed by hand), with which
/// the instances they made are still recognised on a retry.
fn legacy_request_digest(request: &CreateInstanceRequest) -> String {
    legacy_digest(&serde_json::json!({
        "projectId": request.project_id, "poolId": request.pool_id, "name": request.name,
        "region": request.region, "size": request.size, "image": request.image, "subnetId": request.subnet_id,
    }))
}

resource_requests!(create: CreateInstanceRequest, list: ListInstancesRequest);

impl Service {
    /// An instance of `tenant`, deleted or not; `NOT_FOUND` for one of another tenant.
    pub async fn instance_of_tenant(&self, tenant: &str, id: &str) -> Result<InstanceRow> {
        super::checks::of_tenant(tenant, "instance", id, self.store.instance_fetch(id).await?, |row| &row.tenant_id)
    }

    /// The subnet an instance names and its network: the tenant's own (`NOT_FOUND` otherwise),
    /// on the pool's account and in the instance's region (`INVALID_INPUT`), its network not
    /// being deleted (`INVALID_STATE`).
    async fn instance_subnet(
        &self,
        tenant: &str,
        request: &CreateInstanceRequest,
        pool: &VisiblePool,
    ) -> Result<String> {
        let live = self.store.subnet_fetch(&request.subnet_id).await?.filter(|s| s.deleted_at.is_none());
        let subnet = super::checks::of_tenant(tenant, "subnet", &request.subnet_id, live, |s| &s.tenant_id)?;
        let network = self
            .store
            .network_fetch(&subnet.network_id)
            .await?
            .ok_or_else(|| Error::not_found("subnet", &request.subnet_id))?;
        if network.account_id != pool.pool.account_id {
            return Err(Error::fields(vec![FieldViolation::new(
                "subnetId",
                format!(
                    "subnet {:?} is on another provider account than pool {:?}; name a subnet of a network made on \
                     that pool's account",
                    subnet.id, pool.pool.id
                ),
            )]));
        }
        if subnet.region != request.region {
            return Err(Error::fields(vec![FieldViolation::new(
                "subnetId",
                format!("subnet {:?} is in region {:?}, not {:?}", subnet.id, subnet.region, request.region),
            )]));
        }
        if network.delete_requested_at.is_some() {
            return Err(Error::invalid_state(format!(
                "network {:?} of subnet {:?} is being deleted: nothing new can use it",
                network.id, subnet.id
            ))
            .with_detail("networkId", network.id.as_str()));
        }
        Ok(network.meta.id)
    }

    /// Records an instance and returns it `pending`.
    pub async fn instance_create(&self, ctx: &Context, request: CreateInstanceRequest) -> Result<InstanceRow> {
        self.create_resource(ctx, request, legacy_request_digest, |request, id, digest| async move {
            self.instance_create_new(ctx, request, &id, &digest).await
        })
        .await
    }

    /// The checks and the insert of a instance no earlier call with its key made.
    async fn instance_create_new(
        &self,
        ctx: &Context,
        request: CreateInstanceRequest,
        id: &str,
        digest: &str,
    ) -> Result<(InstanceRow, bool)> {
        let tenant = request.tenant_id.clone();
        self.check_project(&tenant, &request.project_id).await?;
        let pool = self.vps_pool(&tenant, &request.pool_id, INSTANCES).await?;
        check_region(&pool, &request.region, "region")?;
        self.check_budget(&tenant, &pool).await?;
        let network_id = if request.subnet_id.is_empty() {
            None
        } else {
            Some(self.instance_subnet(&tenant, &request, &pool).await?)
        };
        let now = now_micros();
        let row = InstanceRow {
            meta: request.meta(ctx, id, &pool.pool.account_id, digest, now),
            region: request.region.clone(),
            size: request.size.clone(),
            image: request.image.clone(),
            subnet_id: optional(&request.subnet_id),
            network_id,
            machine_id: None,
            public_ipv4: String::new(),
            private_ipv4: String::new(),
        };
        let mut attributes = request.authz_attributes(&pool.pool.account_id);
        attributes.insert("region".into(), request.region.clone().into());
        let authz = row.meta.authz(INSTANCE_RESOURCE, attributes);
        self.store.instance_create(&NewInstance { row, deadline: deadline(now) }, &authz).await
    }

    /// The tenant's instances (those the caller may read), oldest first.
    pub async fn instance_list(&self, ctx: &Context, request: ListInstancesRequest) -> Result<Vec<InstanceRow>> {
        let instances = self.store.instance_list(&request.filter(LIST_LIMIT)).await?;
        self.readable_resources(ctx, "compute:instances:read", INSTANCE_RESOURCE, &request.tenant_id, instances).await
    }

    /// One instance.
    pub async fn instance_get(&self, _ctx: &Context, request: GetInstanceRequest) -> Result<InstanceRow> {
        self.instance_of_tenant(&request.tenant_id, &request.instance_id).await
    }

    /// Marks an instance for deletion (`deleting` at once); one being deleted is returned as it is.
    pub async fn instance_delete(&self, ctx: &Context, request: DeleteInstanceRequest) -> Result<InstanceRow> {
        let instance = self.instance_of_tenant(&request.tenant_id, &request.instance_id).await?;
        let delete = |id: String, now| async move { self.store.instance_delete(&id, now, deadline(now)).await };
        self.delete_resource(ctx, "instance", instance, request.force, delete).await
    }
}
