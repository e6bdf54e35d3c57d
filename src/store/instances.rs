//! Instances in the store: what the tenant asked for beside the machine the provider assigned.
//! `state` is `deleting` from the delete call on, so anything that targets instances (load
//! balancers) stops counting one at once; `machine_id` is set once the provider assigned one.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::networks::VPS_EVENT_SOURCE;
use super::resource::{AnyQuery, Resource, ResourceFilter, ResourceMeta, ResourceTable, name_taken, retried};
use super::{AuthzResourceRow, NewEvent, Store, conflict_on_unique};
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::ProvisionState;
use crate::error::{Error, Result};

/// The work kind of instances in the `vps.provider-resources` reconciler.
pub const INSTANCE_KIND: &str = "instance";

/// The authorization resource type of an instance.
pub const INSTANCE_RESOURCE: &str = "compute-instance";

/// An instance as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceRow {
    /// Its common fields (`id` is `inst_...`, the name is the machine's host name; `state` is
    /// `pending`, `provisioning`, `ready`, `deleting`, `deleted` or `error`).
    pub meta: ResourceMeta<ProvisionState>,
    /// Its region.
    pub region: String,
    /// The size slug.
    pub size: String,
    /// The image slug.
    pub image: String,
    /// The subnet it is on.
    pub subnet_id: Option<String>,
    /// That subnet's network.
    pub network_id: Option<String>,
    /// The droplet id as text, once the provider assigned one.
    pub machine_id: Option<String>,
    /// Public IPv4, once assigned.
    pub public_ipv4: String,
    /// Private IPv4, once assigned.
    pub private_ipv4: String,
}

impl Resource for InstanceRow {
    type State = ProvisionState;

    const TABLE: ResourceTable = ResourceTable {
        table: "instances",
        columns: "region, size, image, subnet_id, network_id, machine_id, public_ipv4, private_ipv4",
        keeps_idempotency_key: true,
        noun: "instance",
        not_found: "instance",
        id_field: "instanceId",
        work_kind: INSTANCE_KIND,
        authz_type: INSTANCE_RESOURCE,
        event_source: VPS_EVENT_SOURCE,
        event_prefix: "instance",
    };

    fn from_row(row: &AnyRow) -> Result<InstanceRow> {
        Ok(read_columns!(row, InstanceRow {
            region, size, image, subnet_id, network_id, machine_id, public_ipv4, private_ipv4;
            meta: ResourceMeta::from_row(row, &Self::TABLE)?,
        }))
    }
}

impl InstanceRow {
    /// Whether it counts as a target: it has a machine and is not being deleted.
    pub fn targetable(&self) -> bool {
        self.machine_id.is_some() && self.delete_requested_at.is_none() && self.deleted_at.is_none()
    }
}

/// An instance to create.
#[derive(Clone, Debug)]
pub struct NewInstance {
    /// The row (state `pending`).
    pub row: InstanceRow,
    /// When `pending` counts as stuck.
    pub deadline: Option<i64>,
}

/// What the reconciler observed of an instance, and the events that follow.
#[derive(Clone, Debug, Default)]
pub struct InstanceObserved {
    /// The instance's version the observation was made against.
    pub version: i64,
    /// Its new state.
    pub state: ProvisionState,
    /// Its message.
    pub message: String,
    /// The machine, once assigned.
    pub machine_id: Option<String>,
    /// Public IPv4.
    pub public_ipv4: String,
    /// Private IPv4.
    pub private_ipv4: String,
    /// Events to publish with the write.
    pub events: Vec<NewEvent>,
}

/// An instance event (`instance.<kind>`) on the instance's subject.
pub fn instance_event(kind: LifecycleEvent, instance: &InstanceRow, now: i64, extra: serde_json::Value) -> NewEvent {
    instance.event(kind, now, extra)
}

impl Store {
    async fn instance_fetch_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<Option<InstanceRow>> {
        crate::measured::store("instance_fetch_in", self.resource_fetch_in(txn, id)).await
    }

    /// One instance by id (whatever its tenant: callers check).
    pub async fn instance_fetch(&self, id: &str) -> Result<Option<InstanceRow>> {
        crate::measured::store("instance_fetch", self.resource_fetch(id)).await
    }

    /// Creates an instance with its authorization row, its work item and its `created` event, in
    /// one transaction; an instance on a subnet holds its network (see
    /// [`Store::network_hold_in`]). A retry (same id) is returned as it is when its request
    /// hash matches (`Ok((row, false))`), else `CONFLICT`.
    pub async fn instance_create(&self, new: &NewInstance, authz: &AuthzResourceRow) -> Result<(InstanceRow, bool)> {
        crate::measured::store("instance_create", async {
            let row = &new.row;
            let mut txn = self.begin_write().await?;
            if let Some(existing) = self.instance_fetch_in(&mut txn, &row.id).await? {
                drop(txn);
                return retried(existing, row);
            }
            if let Some(network) = &row.network_id {
                self.network_hold_in(&mut txn, network).await?;
            }
            let insert = self
                .resource_insert_in(
                    &mut txn,
                    row,
                    "region, size, image, subnet_id, network_id, public_ipv4, private_ipv4",
                    "?, ?, ?, ?, ?, '', ''",
                    |query| {
                        query
                            .bind(&row.region)
                            .bind(&row.size)
                            .bind(&row.image)
                            .bind(&row.subnet_id)
                            .bind(&row.network_id)
                    },
                )
                .await;
            conflict_on_unique(insert, || name_taken(row))?;
            let extra = serde_json::json!({
                "poolId": row.pool_id, "region": row.region, "size": row.size, "image": row.image,
                "subnetId": row.subnet_id,
            });
            let created = self.resource_created(txn, row, authz, new.deadline, extra).await?;
            Ok((created, true))
        })
        .await
    }

    /// The tenant's instances, oldest first, at most `limit`.
    pub async fn instance_list(&self, filter: &ResourceFilter<'_>) -> Result<Vec<InstanceRow>> {
        crate::measured::store("instance_list", self.resource_list(filter)).await
    }

    /// Marks an instance for deletion (`deleting` from now on) and wakes the reconciler, through
    /// the shared delete ([`Store::resource_delete`]).
    ///
    /// Load balancers hook in here: whatever targets the instance is updated in this same
    /// transaction, so it stops targeting it at once. A volume attached to it (or being attached)
    /// refuses the delete: `INVALID_STATE`, reason `inUse`, with the `volumes` in `details`.
    pub async fn instance_delete(&self, id: &str, now: i64, deadline: Option<i64>) -> Result<InstanceRow> {
        crate::measured::store("instance_delete", async {
            self.resource_delete(id, now, deadline, |store, txn, id| {
                Box::pin(async move {
                    // The row lock is held: an attach now either committed before (and is
                    // counted here) or waits and is refused (`volume_update` holds the instance).
                    let volumes = store.volumes_on_instance_in(txn, id).await?;
                    if !volumes.is_empty() {
                        return Err(Error::invalid_state(format!(
                            "instance {id:?} has volume(s) {} attached; detach or delete them first",
                            volumes.join(", ")
                        ))
                        .with_detail("reason", "inUse")
                        .with_detail("volumes", volumes));
                    }
                    store.load_balancers_wake_for_instance_in(txn, id, now).await
                })
            })
            .await
        })
        .await
    }

    /// Records the machine the provider assigned, whatever else changed meanwhile: a machine
    /// that exists must never be forgotten.
    pub async fn instance_set_machine(&self, id: &str, machine_id: &str, now: i64) -> Result<()> {
        crate::measured::store("instance_set_machine", async {
            let mut txn = self.begin_write().await?;
            sqlx::query("UPDATE instances SET machine_id = $2, updated_at = $3 WHERE id = $1 AND deleted_at IS NULL")
                .bind(id)
                .bind(machine_id)
                .bind(now)
                .execute(&mut *txn)
                .await?;
            // Its load balancers reach it from now on (the settled pass would, within five minutes).
            self.load_balancers_wake_for_instance_in(&mut txn, id, now).await?;
            self.commit_and_signal(txn).await?;
            Ok(())
        })
        .await
    }

    /// Records an observation of the reconciler with its events, unless the tenant changed the
    /// instance meanwhile (then nothing is written and `false` is returned).
    pub async fn instance_observe(&self, id: &str, observed: &InstanceObserved, now: i64) -> Result<bool> {
        crate::measured::store("instance_observe", async {
            let common = (observed.version, observed.state, observed.message.as_str());
            let set = "machine_id = COALESCE(?, machine_id), public_ipv4 = ?, private_ipv4 = ?";
            let bind = |query: AnyQuery<'static>| {
                query.bind(&observed.machine_id).bind(&observed.public_ipv4).bind(&observed.private_ipv4)
            };
            self.resource_observe::<InstanceRow>(id, common, now, (set, bind), &observed.events).await
        })
        .await
    }

    /// The machine is gone at the provider: marks the instance deleted, removes its
    /// authorization row and publishes `deleted`, in one transaction.
    pub async fn instance_finish_delete(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("instance_finish_delete", async {
            self.resource_finish_delete::<InstanceRow>(id, now, "").await
        })
        .await
    }

    /// [`Store::instance_finish_delete`] inside the caller's transaction: whether it wrote.
    pub(super) async fn instance_finish_delete_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<bool> {
        self.resource_finish_delete_in::<InstanceRow>(txn, id, now, "").await
    }
}
