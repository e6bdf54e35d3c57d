//! Load balancers in the store: the tenant's desired state (settings and named targets) beside
//! what the provider last reported (its id, addresses, the machines it was last told about).
//!
//! Every write that needs the reconciler enqueues its work item in the same transaction; the
//! reconciler's observations are conditional on the row's `version`, so an observation made
//! before a tenant's change never overwrites that change (the provider id is the exception: it
//! is recorded whatever the version, or a second load balancer would be made). The create books
//! one `loadBalancers` quota in its own transaction; the reconciler refunds it once the provider
//! deleted the load balancer.

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::load_balancer_rows::{
    HealthCheckRow, LoadBalancerObserved, LoadBalancerRow, LoadBalancerSettings, NewLoadBalancer, TargetsRow,
};
use super::resource::{Resource, ResourceFilter, ResourceMeta, ResourceTable, not_found, retried};
use super::{AuthzResourceRow, NewEvent, Store};
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::LoadBalancerState;
use crate::error::{Error, Result};

/// The work kind of the load balancers' reconciler.
pub const LOAD_BALANCER_KIND: &str = "provider-load-balancer";

/// The meter a load balancer bills.
pub const LOAD_BALANCER_METER: &str = "vps.load-balancer.hours";

/// The authorization resource type of a load balancer.
pub const LOAD_BALANCER_RESOURCE: &str = "compute-provider-load-balancer";

/// The quota kind a load balancer books on its pool.
pub const LOAD_BALANCER_QUOTA: &str = "loadBalancers";

impl Resource for LoadBalancerRow {
    type State = LoadBalancerState;

    const TABLE: ResourceTable = ResourceTable {
        table: "load_balancers",
        columns: "billing_mode, description, scope, region, subnet_id, target_pool, settings, provider_id, address, \
                  address_v6, reached_ids, ready_once",
        keeps_idempotency_key: false,
        noun: "load balancer",
        not_found: "loadBalancer",
        id_field: "loadBalancerId",
        work_kind: LOAD_BALANCER_KIND,
        authz_type: LOAD_BALANCER_RESOURCE,
        event_source: "/compute/vps",
        event_prefix: "providerLoadBalancer",
    };

    fn from_row(row: &AnyRow) -> Result<LoadBalancerRow> {
        let settings: String = row.try_get("settings")?;
        let reached: String = row.try_get("reached_ids")?;
        Ok(LoadBalancerRow {
            meta: ResourceMeta::from_row(row, &Self::TABLE)?,
            billing_mode: row.try_get("billing_mode")?,
            description: row.try_get("description")?,
            scope: row.try_get("scope")?,
            region: row.try_get("region")?,
            subnet_id: row.try_get("subnet_id")?,
            targets: TargetsRow { pool: row.try_get::<i64, _>("target_pool")? != 0, ..Default::default() },
            settings: serde_json::from_str(&settings)
                .map_err(|error| Error::internal(format!("a load balancer's settings do not decode: {error}")))?,
            provider_id: row.try_get("provider_id")?,
            address: row.try_get("address")?,
            address_v6: row.try_get("address_v6")?,
            reached_ids: serde_json::from_str(&reached).unwrap_or_default(),
            ready_once: row.try_get::<i64, _>("ready_once")? != 0,
        })
    }

    /// Its events say its scope.
    fn event_fields(&self) -> Vec<(&'static str, serde_json::Value)> {
        vec![("scope", self.scope.clone().into())]
    }
}

impl LoadBalancerSettings {
    /// The health check in force: the one the tenant set, with the provider's default for each
    /// setting it left out (stored as zero or empty), or the provider's default check when it set
    /// none. What the answers show and what the provider is sent, so that the two never differ.
    pub fn health_check_in_force(&self) -> HealthCheckRow {
        let defaults = crate::domain::health_check::DEFAULTS;
        let given = self.health_check.clone().unwrap_or_default();
        let or = |value: i32, default: u32| if value > 0 { value } else { default as i32 };
        let protocol = if given.protocol.is_empty() { defaults.protocol.to_owned() } else { given.protocol };
        // A tcp check opens a connection and requests no path.
        let path = match protocol.as_str() {
            "tcp" => String::new(),
            _ if given.path.is_empty() => defaults.path.to_owned(),
            _ => given.path,
        };
        HealthCheckRow {
            protocol,
            port: or(given.port, u32::from(defaults.port)),
            path,
            interval_seconds: or(given.interval_seconds, defaults.interval_seconds),
            timeout_seconds: or(given.timeout_seconds, defaults.timeout_seconds),
            healthy_threshold: or(given.healthy_threshold, defaults.healthy_threshold),
            unhealthy_threshold: or(given.unhealthy_threshold, defaults.unhealthy_threshold),
        }
    }
}

/// A load balancer event on the load balancer's subject (`providerLoadBalancer.<kind>`).
pub fn load_balancer_event(kind: LifecycleEvent, lb: &LoadBalancerRow, now: i64, extra: serde_json::Value) -> NewEvent {
    lb.event(kind, now, extra)
}

/// The member kind of named instances.
const MEMBER_INSTANCE: &str = "instance";
/// The member kind of named regional load balancers.
const MEMBER_LOAD_BALANCER: &str = "load-balancer";

impl Store {
    async fn load_balancer_fetch_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<Option<LoadBalancerRow>> {
        crate::measured::store("load_balancer_fetch_in", async {
            let Some(mut lb) = self.resource_fetch_in::<LoadBalancerRow>(txn, id).await? else { return Ok(None) };
            let members = sqlx::query(
                "SELECT member_kind, member_id FROM load_balancer_members WHERE load_balancer_id = $1 \
                 ORDER BY position",
            )
            .bind(id)
            .fetch_all(&mut **txn)
            .await?;
            add_members(&mut lb, &members)?;
            Ok(Some(lb))
        })
        .await
    }

    /// One load balancer by id, with its named targets.
    pub async fn load_balancer_fetch(&self, id: &str) -> Result<Option<LoadBalancerRow>> {
        crate::measured::store("load_balancer_fetch", async {
            let Some(mut lb) = self.resource_fetch::<LoadBalancerRow>(id).await? else { return Ok(None) };
            let members = sqlx::query(
                "SELECT member_kind, member_id FROM load_balancer_members WHERE load_balancer_id = $1 \
                 ORDER BY position",
            )
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
            add_members(&mut lb, &members)?;
            Ok(Some(lb))
        })
        .await
    }

    async fn load_balancer_members_replace_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        lb: &LoadBalancerRow,
    ) -> Result<()> {
        crate::measured::store("load_balancer_members_replace_in", async {
            sqlx::query("DELETE FROM load_balancer_members WHERE load_balancer_id = $1")
                .bind(&lb.id)
                .execute(&mut **txn)
                .await?;
            let members = lb
                .targets
                .instance_ids
                .iter()
                .map(|id| (MEMBER_INSTANCE, id))
                .chain(lb.targets.load_balancer_ids.iter().map(|id| (MEMBER_LOAD_BALANCER, id)));
            for (position, (kind, member)) in members.enumerate() {
                sqlx::query(
                    "INSERT INTO load_balancer_members (load_balancer_id, member_kind, member_id, position) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(&lb.id)
                .bind(kind)
                .bind(member)
                .bind(position as i64)
                .execute(&mut **txn)
                .await?;
            }
            Ok(())
        })
        .await
    }

    /// Creates a load balancer with its named targets, books one `loadBalancers` quota on its
    /// pool, writes its authorization row, its work item and its `created` event, in one
    /// transaction. A load balancer with the same id (a retry) is returned as it is when its
    /// request digest matches (`Ok((row, false))`), else `CONFLICT`; no room in the quota (or no
    /// quota row) is `QUOTA_EXCEEDED` and writes nothing.
    pub async fn load_balancer_create(
        &self,
        new: &NewLoadBalancer,
        authz: &AuthzResourceRow,
    ) -> Result<(LoadBalancerRow, bool)> {
        crate::measured::store("load_balancer_create", async {
            let row = &new.row;
            if let Some(existing) = self.load_balancer_fetch(&row.id).await? {
                return retried(existing, row);
            }
            let mut txn = self.begin_write().await?;
            if let Some(subnet) = &row.subnet_id {
                // Its network cannot be deleted under it (see `network_hold_in`).
                let network: String = sqlx::query_scalar("SELECT network_id FROM subnets WHERE id = $1")
                    .bind(subnet)
                    .fetch_one(&mut *txn)
                    .await?;
                self.network_hold_in(&mut txn, &network).await?;
            }
            for certificate in row.settings.certificate_ids() {
                self.certificate_hold_in(&mut txn, &certificate).await?;
            }
            self.quota_book_in(&mut txn, &row.pool_id, &row.tenant_id, LOAD_BALANCER_QUOTA, 1).await?;
            let insert = self
                .resource_insert_in(
                    &mut txn,
                    row,
                    "billing_mode, description, scope, region, subnet_id, target_pool, settings, provider_id, \
                     address, address_v6, reached_ids, ready_once",
                    "?, ?, ?, ?, ?, ?, ?, '', '', '', '[]', 0",
                    |query| {
                        query
                            .bind(&row.billing_mode)
                            .bind(&row.description)
                            .bind(&row.scope)
                            .bind(&row.region)
                            .bind(&row.subnet_id)
                            .bind(row.targets.pool as i64)
                            .bind(serde_json::to_string(&row.settings).expect("settings serialize"))
                    },
                )
                .await;
            match insert {
                Ok(_) => {}
                // The same retry, twice at once: the other one made it.
                Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
                    drop(txn);
                    let existing = self
                        .load_balancer_fetch(&row.id)
                        .await?
                        .ok_or_else(|| not_found::<LoadBalancerRow>(&row.id))?;
                    return retried(existing, row);
                }
                Err(error) => return Err(error.into()),
            }
            self.load_balancer_members_replace_in(&mut txn, row).await?;
            let extra = serde_json::json!({"poolId": row.pool_id, "region": row.region, "subnetId": row.subnet_id});
            self.resource_created(txn, row, authz, new.deadline, extra).await?;
            let created =
                self.load_balancer_fetch(&row.id).await?.ok_or_else(|| not_found::<LoadBalancerRow>(&row.id))?;
            Ok((created, true))
        })
        .await
    }

    /// The tenant's load balancers with their named targets, oldest first, at most `limit`.
    pub async fn load_balancer_list(&self, filter: &ResourceFilter<'_>) -> Result<Vec<LoadBalancerRow>> {
        crate::measured::store("load_balancer_list", async {
            let mut lbs: Vec<LoadBalancerRow> = self.resource_list(filter).await?;
            if lbs.is_empty() {
                return Ok(lbs);
            }
            // One query for the named targets of every listed load balancer of the tenant.
            let members = sqlx::query(
                "SELECT m.load_balancer_id, m.member_kind, m.member_id FROM load_balancer_members m \
                 JOIN load_balancers lb ON lb.id = m.load_balancer_id WHERE lb.tenant_id = $1 \
                 ORDER BY m.load_balancer_id, m.position",
            )
            .bind(filter.tenant_id)
            .fetch_all(&self.pool)
            .await?;
            for member in &members {
                let owner: String = member.try_get("load_balancer_id")?;
                if let Some(lb) = lbs.iter_mut().find(|lb| lb.id == owner) {
                    add_members(lb, std::slice::from_ref(member))?;
                }
            }
            Ok(lbs)
        })
        .await
    }

    /// Applies a tenant's change (settings and targets as in `lb`): `version` bumped, the
    /// reconciler woken, and the load balancer `updating` until the provider applied it, once
    /// the provider has made it (it has a provider id, or was ready once), whatever its state
    /// (`ready`, `pending` while the provider activates it, `error`). One the provider never made
    /// (waiting for its certificates, or refused when it was asked to make it) is `pending`:
    /// there is nothing to update, the change is part of its making. `INVALID_STATE` once it is
    /// being deleted.
    pub async fn load_balancer_update(
        &self,
        lb: &LoadBalancerRow,
        now: i64,
        deadline: Option<i64>,
    ) -> Result<LoadBalancerRow> {
        crate::measured::store("load_balancer_update", async {
            let mut txn = self.begin_write().await?;
            let updated = sqlx::query(
                "UPDATE load_balancers SET description = $2, target_pool = $3, settings = $4, \
                 state = CASE WHEN ready_once = 1 OR provider_id <> '' THEN 'updating' ELSE 'pending' END, \
                 message = CASE WHEN state = 'error' THEN '' ELSE message END, \
                 version = version + 1, updated_at = $5 \
                 WHERE id = $1 AND deleted_at IS NULL AND delete_requested_at IS NULL",
            )
            .bind(&lb.id)
            .bind(&lb.description)
            .bind(lb.targets.pool as i64)
            .bind(serde_json::to_string(&lb.settings).expect("settings serialize"))
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if updated.rows_affected() == 0 {
                return Err(Error::invalid_state(format!(
                    "load balancer {:?} is being deleted and cannot change",
                    lb.id
                ))
                .with_detail("loadBalancerId", lb.id.as_str()));
            }
            for certificate in lb.settings.certificate_ids() {
                self.certificate_hold_in(&mut txn, &certificate).await?;
            }
            self.load_balancer_members_replace_in(&mut txn, lb).await?;
            let updated = self.load_balancer_fetch_in(&mut txn, &lb.id).await?.expect("just updated");
            self.work_enqueue_in(&mut txn, LOAD_BALANCER_KIND, &lb.id, updated.state.as_str(), deadline, now).await?;
            self.commit_and_signal(txn).await?;
            Ok(updated)
        })
        .await
    }

    /// The load balancers not yet deleted (those being deleted included: they still use it at
    /// the provider) whose settings name certificate `id`, oldest first, read inside the caller's
    /// transaction.
    pub async fn load_balancers_naming_certificate_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<Vec<String>> {
        crate::measured::store("load_balancers_naming_certificate_in", async {
            // The settings are JSON text: the quoted id narrows the rows, the parsed settings decide.
            let rows: Vec<(String, String)> = sqlx::query_as(
                "SELECT id, settings FROM load_balancers WHERE deleted_at IS NULL AND settings LIKE $2 \
                 AND tenant_id = (SELECT tenant_id FROM certificates WHERE id = $1) ORDER BY created_at, id",
            )
            .bind(id)
            .bind(format!("%\"{id}\"%"))
            .fetch_all(&mut **txn)
            .await?;
            let mut users = Vec::new();
            for (lb, settings) in rows {
                let settings: LoadBalancerSettings = serde_json::from_str(&settings)
                    .map_err(|error| Error::internal(format!("a load balancer's settings do not decode: {error}")))?;
                if settings.certificate_ids().iter().any(|named| named == id) {
                    users.push(lb);
                }
            }
            Ok(users)
        })
        .await
    }

    /// Marks the load balancer for deletion and wakes the reconciler, through the shared delete
    /// ([`Store::resource_delete`]). A regional one that a live global one of the tenant
    /// targets is `INVALID_STATE` (reason `inUse`), checked in the same transaction.
    pub async fn load_balancer_delete(&self, id: &str, now: i64, deadline: Option<i64>) -> Result<LoadBalancerRow> {
        crate::measured::store("load_balancer_delete", async {
            let mut deleting = self
                .resource_delete::<LoadBalancerRow>(id, now, deadline, |_, txn, id| {
                    Box::pin(async move {
                        let users: Vec<String> = sqlx::query_scalar(
                            "SELECT lb.id FROM load_balancer_members m \
                         JOIN load_balancers lb ON lb.id = m.load_balancer_id \
                         JOIN load_balancers target ON target.id = m.member_id \
                         WHERE m.member_kind = $1 AND m.member_id = $2 AND lb.tenant_id = target.tenant_id \
                         AND lb.deleted_at IS NULL ORDER BY lb.created_at, lb.id",
                        )
                        .bind(MEMBER_LOAD_BALANCER)
                        .bind(id)
                        .fetch_all(&mut **txn)
                        .await?;
                        if users.is_empty() {
                            return Ok(());
                        }
                        Err(Error::invalid_state(format!(
                            "load balancer {id:?} is the target of global load balancer(s) {}; \
                         delete them or retarget them first",
                            users.join(", ")
                        ))
                        .with_detail("reason", "inUse")
                        .with_detail("targetedBy", users))
                    })
                })
                .await?;
            // The row as the delete's transaction left it (a rehearsal's rolls back), with its
            // members, which a delete does not change.
            let members = sqlx::query(
                "SELECT member_kind, member_id FROM load_balancer_members WHERE load_balancer_id = $1 \
                 ORDER BY position",
            )
            .bind(id)
            .fetch_all(&self.pool)
            .await?;
            add_members(&mut deleting, &members)?;
            Ok(deleting)
        })
        .await
    }

    /// Records an observation of the reconciler with its events, unless the tenant changed the
    /// load balancer meanwhile (then only the provider id is kept, or a second load balancer
    /// would be made, and `false` is returned: the change has already queued the next pass).
    /// Starts billing when it is first ready, on a pool that bills.
    pub async fn load_balancer_observe(&self, id: &str, observed: &LoadBalancerObserved, now: i64) -> Result<bool> {
        crate::measured::store("load_balancer_observe", async {
            let mut txn = self.begin_write().await?;
            if !observed.provider_id.is_empty() {
                // The reconciler is its only writer: the latest id it made or found wins.
                sqlx::query("UPDATE load_balancers SET provider_id = $2 WHERE id = $1 AND provider_id <> $2")
                    .bind(id)
                    .bind(&observed.provider_id)
                    .execute(&mut *txn)
                    .await?;
            }
            let before =
                self.load_balancer_fetch_in(&mut txn, id).await?.ok_or_else(|| Error::not_found("loadBalancer", id))?;
            let common = (observed.version, observed.state, observed.message.as_str());
            let set = "address = ?, address_v6 = ?, reached_ids = ?, ready_once = ?, drift = ?";
            let written = self
                .resource_observe_in::<LoadBalancerRow>(&mut txn, id, common, now, set, |query| {
                    query
                        .bind(&observed.address)
                        .bind(&observed.address_v6)
                        .bind(serde_json::to_string(&observed.reached_ids).expect("strings serialize"))
                        .bind(observed.ready_once as i64)
                        .bind(crate::domain::drift::to_column(&observed.drift))
                })
                .await?;
            if !written {
                self.commit(txn).await?;
                return Ok(false);
            }
            if observed.ready_once
                && !before.ready_once
                && matches!(before.billing_mode.as_str(), "metered" | "platform-fee")
            {
                self.usage_billable_start_on_pool_in(
                    &mut txn,
                    LOAD_BALANCER_METER,
                    id,
                    &before.tenant_id,
                    Some(&before.pool_id),
                    now,
                )
                .await?;
            }
            self.commit_with_events(txn, &observed.events).await?;
            Ok(true)
        })
        .await
    }

    /// The load balancer is gone at the provider: marks it deleted, removes its authorization
    /// row, ends its billing, refunds its quota and publishes `deleted`, in one transaction.
    pub async fn load_balancer_finish_delete(&self, id: &str, now: i64) -> Result<()> {
        crate::measured::store("load_balancer_finish_delete", async {
            let mut txn = self.begin_write().await?;
            if self.load_balancer_finish_delete_in(&mut txn, id, now).await? {
                self.commit_and_signal(txn).await?;
            }
            Ok(())
        })
        .await
    }

    /// [`Store::load_balancer_finish_delete`] inside the caller's transaction: whether it wrote.
    pub(super) async fn load_balancer_finish_delete_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
        now: i64,
    ) -> Result<bool> {
        if !self.resource_mark_deleted_in::<LoadBalancerRow>(txn, id, now, "").await? {
            return Ok(false);
        }
        // The quota row before the event head (taken by `resource_deleted_in`): a create books
        // its quota before it appends its event, and the opposite order here deadlocked the two.
        let lb = self
            .resource_fetch_in::<LoadBalancerRow>(txn, id)
            .await?
            .ok_or_else(|| not_found::<LoadBalancerRow>(id))?;
        self.quota_refund_in(txn, &lb.pool_id, &lb.tenant_id, LOAD_BALANCER_QUOTA, 1).await?;
        self.usage_billable_end_in(txn, LOAD_BALANCER_METER, id, now).await?;
        let _: LoadBalancerRow = self.resource_deleted_in(txn, id, now).await?;
        Ok(true)
    }

    /// Wakes, inside the caller's transaction, every live load balancer that may reach
    /// `instance_id`: those that name it, and the regional ones of its tenant in its pool and
    /// region (pool targets). Their next pass recomputes what they reach from the rows as this
    /// transaction leaves them. The instance's delete calls it, so its load balancers drop it at
    /// once; a machine newly assigned may call it too.
    pub async fn load_balancers_wake_for_instance_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        instance_id: &str,
        now: i64,
    ) -> Result<()> {
        crate::measured::store("load_balancers_wake_for_instance_in", async {
            let rows = sqlx::query(
                "SELECT lb.id, lb.state FROM load_balancers lb \
                 WHERE lb.deleted_at IS NULL AND lb.delete_requested_at IS NULL \
                 AND (lb.id IN (SELECT load_balancer_id FROM load_balancer_members \
                                WHERE member_kind = $1 AND member_id = $2) \
                   OR (lb.target_pool = 1 AND EXISTS (SELECT 1 FROM instances i \
                       WHERE i.id = $2 AND i.tenant_id = lb.tenant_id \
                       AND i.pool_id = lb.pool_id AND i.region = lb.region))) \
                 ORDER BY lb.id",
            )
            .bind(MEMBER_INSTANCE)
            .bind(instance_id)
            .fetch_all(&mut **txn)
            .await?;
            for row in rows {
                let id: String = row.try_get("id")?;
                let state: String = row.try_get("state")?;
                self.work_enqueue_in(txn, LOAD_BALANCER_KIND, &id, &state, None, now).await?;
            }
            Ok(())
        })
        .await
    }

    /// The load balancers that are not deleted living on a subnet of network `id`, inside the
    /// network's delete transaction: they rest on it.
    pub async fn load_balancers_on_network_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        id: &str,
    ) -> Result<Vec<String>> {
        crate::measured::store("load_balancers_on_network_in", async {
            let ids = sqlx::query_scalar(
                "SELECT lb.id FROM load_balancers lb JOIN subnets s ON s.id = lb.subnet_id \
                 WHERE s.network_id = $1 AND lb.deleted_at IS NULL ORDER BY lb.created_at, lb.id",
            )
            .bind(id)
            .fetch_all(&mut **txn)
            .await?;
            Ok(ids)
        })
        .await
    }
}

fn add_members(lb: &mut LoadBalancerRow, members: &[AnyRow]) -> Result<()> {
    for member in members {
        let kind: String = member.try_get("member_kind")?;
        let id: String = member.try_get("member_id")?;
        if kind == MEMBER_LOAD_BALANCER {
            lb.targets.load_balancer_ids.push(id);
        } else {
            lb.targets.instance_ids.push(id);
        }
    }
    Ok(())
}
