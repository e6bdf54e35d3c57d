//! Volumes in the store: what the tenant asked for (size, description, the instance to attach
//! to) beside what the provider last reported (its volume id, the machine it is attached to).
//! A volume names its instance's row: an attach holds that instance (it must not be being
//! deleted), and an instance a volume is attached to cannot be deleted until it is detached.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::networks::VPS_EVENT_SOURCE;
use super::resource::{AnyQuery, Resource, ResourceFilter, ResourceMeta, ResourceTable, name_taken, retried};
use super::{AuthzResourceRow, NewEvent, Store, conflict_on_unique, hold_live_row_in};
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::VolumeState;
use crate::error::{Error, Result};

/// The work kind of volumes in the `vps.provider-resources` reconciler.
pub const VOLUME_KIND: &str = "volume";

/// The authorization resource type of a volume.
pub const VOLUME_RESOURCE: &str = "compute-volume";

/// A volume as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct VolumeRow {
    /// Its common fields (`id` is `pvol_...`).
    pub meta: ResourceMeta<VolumeState>,
    /// Free text.
    pub description: String,
    /// Its region.
    pub region: String,
    /// GiB as asked for.
    pub size_gigabytes: i64,
    /// `ext4`, `xfs` or empty, fixed at creation.
    pub filesystem_type: String,
    /// The instance the tenant asked it be attached to.
    pub instance_id: Option<String>,
    /// The droplet the provider last reported it attached to.
    pub attached_machine_id: Option<String>,
    /// The provider's volume id, once it has one.
    pub provider_id: String,
}

impl Resource for VolumeRow {
    type State = VolumeState;

    const TABLE: ResourceTable = ResourceTable {
        table: "volumes",
        columns: "description, region, size_gigabytes, filesystem_type, instance_id, attached_machine_id, provider_id",
        keeps_idempotency_key: true,
        noun: "volume",
        not_found: "volume",
        id_field: "volumeId",
        work_kind: VOLUME_KIND,
        authz_type: VOLUME_RESOURCE,
        event_source: VPS_EVENT_SOURCE,
        event_prefix: "volume",
    };

    fn from_row(row: &AnyRow) -> Result<VolumeRow> {
        Ok(read_columns!(row, VolumeRow {
            description, region, size_gigabytes, filesystem_type, instance_id, attached_machine_id, provider_id;
            meta: ResourceMeta::from_row(row, &Self::TABLE)?,
        }))
    }

    /// Its events say its size and the instance it is to be attached to.
    fn event_fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("sizeGigabytes", self.size_gigabytes.into()), ("instanceId", self.instance_id.clone().into())]
    }
}

/// A volume to create.
#[derive(Clone, Debug)]
pub struct NewVolume {
    /// The row (state `pending`).
    pub row: VolumeRow,
    /// When `pending` counts as stuck.
    pub deadline: Option<i64>,
}

/// What the reconciler observed of a volume, and the events that follow.
#[derive(Clone, Debug, Default)]
pub struct VolumeObserved {
    /// The volume's version the observation was made against.
    pub version: i64,
    /// Its new state.
    pub state: VolumeState,
    /// Its message.
    pub message: String,
    /// The droplet it is attached to at the provider.
    pub attached_machine_id: Option<String>,
    /// Events to publish with the write.
    pub events: Vec<NewEvent>,
}

/// A volume event (`volume.<kind>`) on the volume's subject.
pub fn volume_event(kind: LifecycleEvent, volume: &VolumeRow, now: i64, extra: serde_json::Value) -> NewEvent {
    volume.event(kind, now, extra)
}

impl Store {
    async fn volume_fetch_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<Option<VolumeRow>> {
        crate::measured::store("volume_fetch_in", self.resource_fetch_in(txn, id)).await
    }

    /// One volume by id (whatever its tenant: callers check).
    pub async fn volume_fetch(&self, id: &str) -> Result<Option<VolumeRow>> {
        crate::measured::store("volume_fetch", self.resource_fetch(id)).await
    }

    /// Creates a volume with its authorization row, its work item and its `created` event, in
    /// one transaction. A retry (same id) is returned as it is when its request digest matches
    /// (`Ok((row, false))`), else `CONFLICT`.
    pub async fn volume_create(&self, new: &NewVolume, authz: &AuthzResourceRow) -> Result<(VolumeRow, bool)> {
        crate::measured::store("volume_create", async {
            let row = &new.row;
            let mut txn = self.begin_write().await?;
            if let Some(existing) = self.volume_fetch_in(&mut txn, &row.id).await? {
                drop(txn);
                return retried(existing, row);
            }
            let insert = self
                .resource_insert_in(
                    &mut txn,
                    row,
                    "description, region, size_gigabytes, filesystem_type, provider_id",
                    "?, ?, ?, ?, ''",
                    |query| {
                        query
                            .bind(&row.description)
                            .bind(&row.region)
                            .bind(row.size_gigabytes)
                            .bind(&row.filesystem_type)
                    },
                )
                .await;
            conflict_on_unique(insert, || name_taken(row))?;
            let extra = serde_json::json!({"poolId": row.pool_id, "region": row.region});
            let created = self.resource_created(txn, row, authz, new.deadline, extra).await?;
            Ok((created, true))
        })
        .await
    }

    /// The tenant's volumes, oldest first, at most `limit`.
    pub async fn volume_list(&self, filter: &ResourceFilter<'_>) -> Result<Vec<VolumeRow>> {
        crate::measured::store("volume_list", self.resource_list(filter)).await
    }

    /// Writes the tenant's change of `volume` (its description, size, instance and state as
    /// given; `changed` names the fields for the `updated` event), bumps its version and wakes
    /// the reconciler. A newly named instance is held (`INVALID_STATE` while it is being
    /// deleted); `INVALID_STATE` once the volume is being deleted.
    pub async fn volume_update(
        &self,
        volume: &VolumeRow,
        changed: &[&str],
        now: i64,
        deadline: Option<i64>,
    ) -> Result<VolumeRow> {
        crate::measured::store("volume_update", async {
            let mut txn = self.begin_write().await?;
            if let Some(instance) = &volume.instance_id
                && !hold_live_row_in(&mut txn, "instances", instance).await?
            {
                return Err(Error::invalid_state(format!(
                    "instance {instance:?} is being deleted; attach the volume to another one"
                ))
                .with_detail("instanceId", instance.as_str()));
            }
            let updated = sqlx::query(
                "UPDATE volumes SET description = $2, size_gigabytes = $3, instance_id = $4, state = $5, \
                 message = CASE WHEN state = $5 THEN message ELSE '' END, version = version + 1, updated_at = $6 \
                 WHERE id = $1 AND deleted_at IS NULL AND delete_requested_at IS NULL",
            )
            .bind(&volume.id)
            .bind(&volume.description)
            .bind(volume.size_gigabytes)
            .bind(&volume.instance_id)
            .bind(volume.state)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Err(Error::invalid_state(format!("volume {:?} is being deleted and cannot change", volume.id))
                    .with_detail("volumeId", volume.id.as_str()));
            }
            let row = self.volume_fetch_in(&mut txn, &volume.id).await?.expect("just updated");
            self.work_enqueue_in(&mut txn, VOLUME_KIND, &row.id, row.state.as_str(), deadline, now).await?;
            let event = volume_event(LifecycleEvent::Updated, &row, now, serde_json::json!({"changed": changed}));
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(row)
        })
        .await
    }

    /// Marks a volume for deletion and wakes the reconciler, through the shared delete
    /// ([`Store::resource_delete`]); the reconciler detaches it first.
    pub async fn volume_delete(&self, id: &str, now: i64, deadline: Option<i64>) -> Result<VolumeRow> {
        crate::measured::store("volume_delete", async {
            self.resource_delete(id, now, deadline, |_, _, _| Box::pin(async { Ok(()) })).await
        })
        .await
    }

    /// The volumes not yet deleted that name instance `id`, oldest first, read inside the
    /// caller's transaction (the instance's delete refuses while there are any).
    pub async fn volumes_on_instance_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<Vec<String>> {
        crate::measured::store("volumes_on_instance_in", async {
            let ids = sqlx::query_scalar(
                "SELECT id FROM volumes WHERE instance_id = $1 AND deleted_at IS NULL ORDER BY created_at, id",
            )
            .bind(id)
            .fetch_all(&mut **txn)
            .await?;
            Ok(ids)
        })
        .await
    }

    /// Records the provider's volume id, whatever else changed meanwhile: a volume that exists
    /// must never be forgotten.
    pub async fn volume_set_provider_id(&self, id: &str, provider_id: &str, now: i64) -> Result<()> {
        crate::measured::store("volume_set_provider_id", async {
            sqlx::query("UPDATE volumes SET provider_id = $2, updated_at = $3 WHERE id = $1 AND deleted_at IS NULL")
                .bind(id)
                .bind(provider_id)
                .bind(now)
                .execute(&self.pool)
                .await?;
            Ok(())
        })
        .await
    }

    /// Records an observation of the reconciler with its events, unless the tenant changed the
    /// volume meanwhile (then nothing is written and `false` is returned).
    pub async fn volume_observe(&self, id: &str, observed: &VolumeObserved, now: i64) -> Result<bool> {
        crate::measured::store("volume_observe", async {
            let common = (observed.version, observed.state, observed.message.as_str());
            let set = "attached_machine_id = ?";
            let bind = |query: AnyQuery<'static>| query.bind(&observed.attached_machine_id);
            self.resource_observe::<VolumeRow>(id, common, now, (set, bind), &observed.events).await
        })
        .await
    }

    /// The volume is gone at the provider: marks it deleted, removes its authorization row and
    /// publishes `deleted`, in one transaction.
    pub async fn volume_finish_delete(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("volume_finish_delete", async {
            self.resource_finish_delete::<VolumeRow>(id, now, "attached_machine_id = NULL, ").await
        })
        .await
    }

    /// [`Store::volume_finish_delete`] inside the caller's transaction: whether it wrote.
    pub(super) async fn volume_finish_delete_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<bool> {
        self.resource_finish_delete_in::<VolumeRow>(txn, id, now, "attached_machine_id = NULL, ").await
    }
}
