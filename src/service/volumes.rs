//! Volumes: the rules of create, list, get, update (grow, describe), attach, detach and delete. A
//! volume only grows, as the provider allows. An attach names an instance of the tenant (another
//! tenant's answers as one that does not exist), decided also as `compute:instances:update` with
//! the caller's own credential, on the volume's account and in its region; a volume is attached
//! to one instance at a time. Each change returns the volume `updating` until the reconciler has
//! brought the provider there.

use super::checks::{VOLUMES, of_tenant};
use super::create_once::no_legacy_digest;
use super::resource_calls::{CreateRequest, ListRequest, resource_requests};
use super::update_mask::Named;
use super::vps::{LIST_LIMIT, check_region, deadline};
use super::{Context, Service};
use crate::authz::Target;
use crate::domain::states::VolumeState;
use crate::error::{Error, FieldViolation, Result};
use crate::proto::compute::{
    AttachVolumeRequest, CreateVolumeRequest, DeleteVolumeRequest, DetachVolumeRequest, GetVolumeRequest,
    ListVolumesRequest, UpdateVolumeRequest,
};
use crate::store::{INSTANCE_RESOURCE, NewVolume, VOLUME_RESOURCE, VolumeRow, now_micros};

/// The method whose secondary decision is on the instance.
const ATTACH: &str = "bettercompute.compute.v1.Volumes/Attach";

/// The secondary decision on the instance an attach names.
const INSTANCE_UPDATE: &str = "compute:instances:update";

resource_requests!(create: CreateVolumeRequest, list: ListVolumesRequest);

/// A volume the provider must change is `updating`, unless it is still `pending`: then the change
/// is part of its making.
fn updating(volume: &mut VolumeRow) {
    if volume.state != VolumeState::Pending {
        volume.state = VolumeState::Updating;
    }
}

impl Service {
    /// A volume of `tenant`, deleted or not; `NOT_FOUND` for one of another tenant.
    pub async fn volume_of_tenant(&self, tenant: &str, id: &str) -> Result<VolumeRow> {
        of_tenant(tenant, "volume", id, self.store.volume_fetch(id).await?, |row| &row.tenant_id)
    }

    /// A volume of `tenant` that may change: not deleted nor being deleted (`INVALID_STATE`).
    async fn changeable_volume(&self, tenant: &str, id: &str) -> Result<VolumeRow> {
        let volume = self.volume_of_tenant(tenant, id).await?;
        if volume.delete_requested_at.is_some() || volume.deleted_at.is_some() {
            return Err(Error::invalid_state(format!("volume {:?} is {} and cannot change", volume.id, volume.state))
                .with_detail("volumeId", volume.id.as_str())
                .with_detail("state", volume.state.as_str()));
        }
        Ok(volume)
    }

    /// Records a volume and returns it `pending`.
    pub async fn volume_create(&self, ctx: &Context, request: CreateVolumeRequest) -> Result<VolumeRow> {
        self.create_resource(ctx, request, no_legacy_digest, |request, id: String, digest: String| async move {
            self.volume_create_new(ctx, request, &id, &digest).await
        })
        .await
    }

    /// The checks and the insert of a volume no earlier call with its key made.
    async fn volume_create_new(
        &self,
        ctx: &Context,
        request: CreateVolumeRequest,
        id: &str,
        digest: &str,
    ) -> Result<(VolumeRow, bool)> {
        let tenant = request.tenant_id.clone();
        self.check_project(&tenant, &request.project_id).await?;
        let pool = self.vps_pool(&tenant, &request.pool_id, VOLUMES).await?;
        check_region(&pool, &request.region, "region")?;
        self.check_budget(&tenant, &pool).await?;
        let now = now_micros();
        let row = VolumeRow {
            meta: request.meta(ctx, id, &pool.pool.account_id, digest, now),
            description: request.description.clone(),
            region: request.region.clone(),
            size_gigabytes: request.size_gigabytes.into(),
            filesystem_type: request.filesystem_type.clone(),
            instance_id: None,
            attached_machine_id: None,
            provider_id: String::new(),
        };
        let mut attributes = request.authz_attributes(&pool.pool.account_id);
        attributes.insert("region".into(), request.region.clone().into());
        let authz = row.meta.authz(VOLUME_RESOURCE, attributes);
        self.store.volume_create(&NewVolume { row, deadline: deadline(now) }, &authz).await
    }

    /// The tenant's volumes (those the caller may read), oldest first.
    pub async fn volume_list(&self, ctx: &Context, request: ListVolumesRequest) -> Result<Vec<VolumeRow>> {
        let volumes = self.store.volume_list(&request.filter(LIST_LIMIT)).await?;
        self.readable_resources(ctx, "compute:volumes:read", VOLUME_RESOURCE, &request.tenant_id, volumes).await
    }

    /// One volume.
    pub async fn volume_get(&self, _ctx: &Context, request: GetVolumeRequest) -> Result<VolumeRow> {
        self.volume_of_tenant(&request.tenant_id, &request.volume_id).await
    }

    /// Grows a volume or changes its description. A size smaller than the volume's is
    /// `INVALID_INPUT` naming `sizeGigabytes`; a size is `updating` until the provider grew it.
    pub async fn volume_update(&self, ctx: &Context, request: UpdateVolumeRequest) -> Result<VolumeRow> {
        let named = Named::of(&request.update_mask);
        named.require_some(&["sizeGigabytes", "description"])?;
        let size = named.required("size_gigabytes", "sizeGigabytes", request.size_gigabytes)?;
        let description = named.clearable("description", request.description);
        let mut volume = self.changeable_volume(&request.tenant_id, &request.volume_id).await?;
        let mut changed = Vec::new();
        if let Some(size) = size.map(i64::from) {
            if size < volume.size_gigabytes {
                return Err(Error::fields(vec![FieldViolation::new(
                    "sizeGigabytes",
                    format!(
                        "a volume only grows: {size} is smaller than its {} GiB; give {} to 16384",
                        volume.size_gigabytes, volume.size_gigabytes
                    ),
                )]));
            }
            if size != volume.size_gigabytes {
                volume.size_gigabytes = size;
                updating(&mut volume);
                changed.push("sizeGigabytes");
            }
        }
        if let Some(description) = description {
            volume.description = description;
            changed.push("description");
        }
        self.volume_change(ctx, volume, &changed).await
    }

    /// Attaches a volume to an instance of the tenant.
    pub async fn volume_attach(&self, ctx: &Context, request: AttachVolumeRequest) -> Result<VolumeRow> {
        let tenant = &request.tenant_id;
        let mut volume = self.changeable_volume(tenant, &request.volume_id).await?;
        let live = self.store.instance_fetch(&request.instance_id).await?.filter(|i| i.deleted_at.is_none());
        let instance = of_tenant(tenant, "instance", &request.instance_id, live, |i| &i.tenant_id)?;
        let target = Target {
            resource_type: INSTANCE_RESOURCE.to_owned(),
            id: instance.id.clone(),
            tenant_id: Some(instance.tenant_id.clone()),
            ..Default::default()
        };
        self.authorize(ctx, ATTACH, INSTANCE_UPDATE, target).await?;
        if instance.account_id != volume.account_id {
            return Err(Error::fields(vec![FieldViolation::new(
                "instanceId",
                format!(
                    "instance {:?} is on another provider account than volume {:?}; name an instance made on the \
                     volume's pool",
                    instance.id, volume.id
                ),
            )]));
        }
        if instance.region != volume.region {
            return Err(Error::fields(vec![FieldViolation::new(
                "instanceId",
                format!(
                    "instance {:?} is in region {:?}, not in the volume's {:?}; name an instance in {:?}",
                    instance.id, instance.region, volume.region, volume.region
                ),
            )]));
        }
        match volume.instance_id.as_deref() {
            Some(attached) if attached == instance.id => return Ok(volume),
            Some(attached) => {
                return Err(Error::invalid_state(format!(
                    "volume {:?} is attached to instance {attached:?}; a volume is attached to one instance at a \
                     time: detach it first",
                    volume.id
                ))
                .with_detail("volumeId", volume.id.as_str())
                .with_detail("instanceId", attached));
            }
            None => {}
        }
        volume.instance_id = Some(instance.meta.id);
        updating(&mut volume);
        self.volume_change(ctx, volume, &["instanceId"]).await
    }

    /// Detaches a volume from its instance; one attached to none is returned as it is.
    pub async fn volume_detach(&self, ctx: &Context, request: DetachVolumeRequest) -> Result<VolumeRow> {
        let mut volume = self.changeable_volume(&request.tenant_id, &request.volume_id).await?;
        if volume.instance_id.is_none() {
            return Ok(volume);
        }
        volume.instance_id = None;
        updating(&mut volume);
        self.volume_change(ctx, volume, &["instanceId"]).await
    }

    /// Writes a change of the tenant's and wakes the reconciler.
    async fn volume_change(&self, ctx: &Context, volume: VolumeRow, changed: &[&str]) -> Result<VolumeRow> {
        let now = now_micros();
        let updated = self.store.volume_update(&volume, changed, now, deadline(now)).await?;
        tracing::info!(volume = %updated.id, version = updated.version, by = %ctx.caller.principal_id, "volume updated");
        Ok(updated)
    }

    /// Marks a volume for deletion (its reconciler detaches it first); one being deleted is
    /// returned as it is.
    pub async fn volume_delete(&self, ctx: &Context, request: DeleteVolumeRequest) -> Result<VolumeRow> {
        let volume = self.volume_of_tenant(&request.tenant_id, &request.volume_id).await?;
        let delete = |id: String, now| async move { self.store.volume_delete(&id, now, deadline(now)).await };
        self.delete_resource(ctx, "volume", volume, request.force, delete).await
    }
}
