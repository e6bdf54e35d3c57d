//! Instances in the store: what the tenant asked for beside the machine the provider assigned.
//! `state` is `deleting` from the delete call on, so anything that targets instances (load
//! balancers) stops counting one at once; `machine_id` is set once the provider assigned one.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::networks::VPS_EVENT_SOURCE;
use super::{AuthzResourceRow, NewEvent, Store, conflict_on_unique};
use crate::error::{Error, Result};

/// The work kind of instances in the `vps.provider-resources` reconciler.
pub const INSTANCE_KIND: &str = "instance";

/// The authorization resource type of an instance.
pub const INSTANCE_RESOURCE: &str = "compute-instance";

/// An instance as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InstanceRow {
    /// `inst_...`.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its project.
    pub project_id: Option<String>,
    /// Its provider pool.
    pub pool_id: String,
    /// The pool's account.
    pub account_id: String,
    /// Who created it.
    pub owner_id: String,
    /// Its name (the machine's host name).
    pub name: String,
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
    /// `pending`, `provisioning`, `ready`, `deleting`, `deleted` or `error`.
    pub state: String,
    /// Why it is in `error`.
    pub message: String,
    /// Bumped by every tenant change.
    pub version: i64,
    /// The create request's idempotency key.
    pub idempotency_key: String,
    /// Digest of the create request.
    pub request_hash: String,
    /// When deletion was asked for.
    pub delete_requested_at: Option<i64>,
    /// Creation time.
    pub created_at: i64,
    /// Last change.
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
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
    pub state: String,
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

const COLUMNS: &str = "id, tenant_id, project_id, pool_id, account_id, owner_id, name, region, size, image, subnet_id, \
                       network_id, machine_id, public_ipv4, private_ipv4, state, message, version, idempotency_key, \
                       request_hash, delete_requested_at, created_at, updated_at, deleted_at";

fn instance_from_row(row: &AnyRow) -> Result<InstanceRow> {
    Ok(InstanceRow {
        id: row.try_get("id")?,
        tenant_id: row.try_get("tenant_id")?,
        project_id: row.try_get("project_id")?,
        pool_id: row.try_get("pool_id")?,
        account_id: row.try_get("account_id")?,
        owner_id: row.try_get("owner_id")?,
        name: row.try_get("name")?,
        region: row.try_get("region")?,
        size: row.try_get("size")?,
        image: row.try_get("image")?,
        subnet_id: row.try_get("subnet_id")?,
        network_id: row.try_get("network_id")?,
        machine_id: row.try_get("machine_id")?,
        public_ipv4: row.try_get("public_ipv4")?,
        private_ipv4: row.try_get("private_ipv4")?,
        state: row.try_get("state")?,
        message: row.try_get("message")?,
        version: row.try_get("version")?,
        idempotency_key: row.try_get("idempotency_key")?,
        request_hash: row.try_get("request_hash")?,
        delete_requested_at: row.try_get("delete_requested_at")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        deleted_at: row.try_get("deleted_at")?,
    })
}

/// An instance event (`instance.<kind>`) on the instance's subject.
pub fn instance_event(kind: &str, instance: &InstanceRow, now: i64, extra: serde_json::Value) -> NewEvent {
    let mut data = serde_json::json!({
        "instanceId": instance.id,
        "name": instance.name,
        "state": instance.state,
        "version": instance.version,
    });
    if let (Some(data), serde_json::Value::Object(extra)) = (data.as_object_mut(), extra) {
        data.extend(extra);
    }
    NewEvent {
        source: VPS_EVENT_SOURCE.to_owned(),
        event_type: format!("instance.{kind}"),
        subject: instance.id.clone(),
        tenant_id: instance.tenant_id.clone(),
        time: now,
        data,
    }
}

impl Store {
    async fn instance_fetch_in(&self, txn: &mut Transaction<'static, Any>, id: &str) -> Result<Option<InstanceRow>> {
        crate::measured::store("instance_fetch_in", async {
            let sql = format!("SELECT {COLUMNS} FROM instances WHERE id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&mut **txn).await?;
            row.as_ref().map(instance_from_row).transpose()
        })
        .await
    }

    /// One instance by id (whatever its tenant: callers check).
    pub async fn instance_fetch(&self, id: &str) -> Result<Option<InstanceRow>> {
        crate::measured::store("instance_fetch", async {
            let sql = format!("SELECT {COLUMNS} FROM instances WHERE id = $1");
            let row = sqlx::query(sqlx::AssertSqlSafe(sql)).bind(id).fetch_optional(&self.pool).await?;
            row.as_ref().map(instance_from_row).transpose()
        })
        .await
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
                if existing.request_hash != row.request_hash {
                    return Err(Error::conflict(format!(
                        "idempotency key already used for instance {:?} with a different request",
                        existing.id
                    ))
                    .with_detail("instanceId", existing.id.as_str()));
                }
                return Ok((existing, false));
            }
            if let Some(network) = &row.network_id {
                self.network_hold_in(&mut txn, network).await?;
            }
            let insert = sqlx::query(
                "INSERT INTO instances (id, tenant_id, project_id, pool_id, account_id, owner_id, name, region, size, \
                 image, subnet_id, network_id, public_ipv4, private_ipv4, state, message, version, idempotency_key, \
                 request_hash, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, '', '', 'pending', '', 1, $13, $14, $15, \
                 $15)",
            )
            .bind(&row.id)
            .bind(&row.tenant_id)
            .bind(&row.project_id)
            .bind(&row.pool_id)
            .bind(&row.account_id)
            .bind(&row.owner_id)
            .bind(&row.name)
            .bind(&row.region)
            .bind(&row.size)
            .bind(&row.image)
            .bind(&row.subnet_id)
            .bind(&row.network_id)
            .bind(&row.idempotency_key)
            .bind(&row.request_hash)
            .bind(row.created_at)
            .execute(&mut *txn)
            .await;
            conflict_on_unique(insert, || {
                Error::conflict(format!("tenant {:?} already has an instance named {:?}", row.tenant_id, row.name))
                    .with_detail("name", row.name.as_str())
            })?;
            self.authz_resource_insert_in(&mut txn, authz).await?;
            self.work_enqueue_in(&mut txn, INSTANCE_KIND, &row.id, "pending", new.deadline, row.created_at).await?;
            let created = self.instance_fetch_in(&mut txn, &row.id).await?.expect("just inserted");
            let event = instance_event(
                "created",
                &created,
                row.created_at,
                serde_json::json!({
                    "poolId": row.pool_id, "region": row.region, "size": row.size, "image": row.image,
                    "subnetId": row.subnet_id,
                }),
            );
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok((created, true))
        })
        .await
    }

    /// The tenant's instances, oldest first, at most `limit`.
    pub async fn instance_list(
        &self,
        tenant_id: &str,
        pool_id: Option<&str>,
        project_id: Option<&str>,
        include_deleted: bool,
        limit: i64,
    ) -> Result<Vec<InstanceRow>> {
        crate::measured::store("instance_list", async {
            let sql = format!(
                "SELECT {COLUMNS} FROM instances WHERE tenant_id = $1 AND ($2 IS NULL OR pool_id = $2) \
                 AND ($3 IS NULL OR project_id = $3) AND ($4 = 1 OR deleted_at IS NULL) ORDER BY created_at, id \
                 LIMIT $5"
            );
            let rows = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(tenant_id)
                .bind(pool_id)
                .bind(project_id)
                .bind(include_deleted as i64)
                .bind(limit)
                .fetch_all(&self.pool)
                .await?;
            rows.iter().map(instance_from_row).collect()
        })
        .await
    }

    /// Marks an instance for deletion (`deleting` from now on) and wakes the reconciler;
    /// publishes `deleting`. One already `deleting` is returned unchanged; one whose delete
    /// failed is retried at once.
    ///
    /// Load balancers hook in here: whatever targets the instance is updated in this same
    /// transaction, so it stops targeting it at once.
    pub async fn instance_delete(&self, id: &str, now: i64, deadline: Option<i64>) -> Result<InstanceRow> {
        crate::measured::store("instance_delete", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE instances SET state = 'deleting', message = '', version = version + 1, updated_at = $2, \
                 delete_requested_at = COALESCE(delete_requested_at, $2) \
                 WHERE id = $1 AND deleted_at IS NULL AND state <> 'deleting'",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                drop(txn);
                return self.instance_fetch(id).await?.ok_or_else(|| Error::not_found("instance", id));
            }
            self.work_restart_delete_in(&mut txn, INSTANCE_KIND, id, deadline, now).await?;
            self.load_balancers_wake_for_instance_in(&mut txn, id, now).await?;
            let instance =
                self.instance_fetch_in(&mut txn, id).await?.ok_or_else(|| Error::not_found("instance", id))?;
            self.event_append_in(&mut txn, &instance_event("deleting", &instance, now, serde_json::json!({}))).await?;
            self.commit_and_signal(txn).await?;
            Ok(instance)
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
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE instances SET state = $3, message = $4, machine_id = COALESCE($5, machine_id), \
                 public_ipv4 = $6, private_ipv4 = $7, updated_at = $8 WHERE id = $1 AND version = $2 \
                 AND deleted_at IS NULL",
            )
            .bind(id)
            .bind(observed.version)
            .bind(&observed.state)
            .bind(&observed.message)
            .bind(&observed.machine_id)
            .bind(&observed.public_ipv4)
            .bind(&observed.private_ipv4)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(false);
            }
            for event in &observed.events {
                self.event_append_in(&mut txn, event).await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// The machine is gone at the provider: marks the instance deleted, removes its
    /// authorization row and publishes `deleted`, in one transaction.
    pub async fn instance_finish_delete(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("instance_finish_delete", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE instances SET state = 'deleted', message = '', deleted_at = $2, updated_at = $2 \
                 WHERE id = $1 AND deleted_at IS NULL AND delete_requested_at IS NOT NULL",
            )
            .bind(id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Ok(());
            }
            self.authz_resource_delete_in(&mut txn, INSTANCE_RESOURCE, id).await?;
            let instance =
                self.instance_fetch_in(&mut txn, id).await?.ok_or_else(|| Error::not_found("instance", id))?;
            self.event_append_in(&mut txn, &instance_event("deleted", &instance, now, serde_json::json!({}))).await?;
            self.commit_and_signal(txn).await?;
            Ok(())
        })
        .await
    }
}
