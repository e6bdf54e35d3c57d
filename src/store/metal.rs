//! Bare-metal machines in the store: the metal view of an enrolled machine, kept in
//! `metal_machines` beside its node (written in the same transaction, so a machine and its node
//! are one record), its moves through the provision state machine (guarded by the row's
//! version, so of two racing verbs one wins), its events on the pool's subject and the work it
//! queues. The BMC password is kept only sealed and is never part of a row read here.

use std::collections::BTreeMap;
use std::fmt;

use sqlx::any::AnyRow;
use sqlx::{Any, Row, Transaction};

use super::catalog::value_from_json;
use super::record::{Announced, Record, pool_event};
use super::resource::AnyQuery;
use super::{NewEvent, NodeCapacityRow, Store};
use crate::domain::states::{MachineState, PoolNodeState, state_or_none};
use crate::error::{Code, Error, Result};

/// The work kind of the metal reconciler, which runs the workflow of a transient state.
pub const METAL_KIND: &str = "metal.machines";

/// The state of the node of a machine that is enrolled but has not joined through `bcd`.
pub const ENROLLED_NODE_STATE: PoolNodeState = PoolNodeState::Enrolled;

/// The machine id an enrolled machine's node has, and its bcd joins with: its node id in the
/// form machine ids take (`node-...`), so the join lands on the enrolled node.
pub fn metal_machine_id(node_id: &str) -> String {
    node_id.replace('_', "-")
}

/// A machine's metal view as stored (never its password).
#[derive(Clone, Debug, PartialEq)]
pub struct MetalMachineRow {
    /// Its node's id (`node_...`).
    pub node_id: String,
    /// The pool it is enrolled in.
    pub pool_id: String,
    /// The tenant whose account the pool is on; `None` for a platform pool.
    pub tenant_id: Option<String>,
    /// Its name, unique among the pool's live machines.
    pub name: String,
    /// Its labels (its node's).
    pub labels: BTreeMap<String, String>,
    /// `redfish` or `ipmi`.
    pub driver: String,
    /// The BMC's address.
    pub address: String,
    /// The BMC user.
    pub username: String,
    /// Whether a sealed password is kept.
    pub credentials_set: bool,
    /// Whether new credentials wait to be checked against the BMC (the old ones are in use).
    pub credentials_pending: bool,
    /// The CA certificate the BMC's must chain to; empty for none.
    pub ca_certificate: String,
    /// Whether any BMC certificate is accepted.
    pub insecure: bool,
    /// `unknown` until the BMC is read, then `on`, `off`, ...
    pub power_state: String,
    /// Its provision state.
    pub provision_state: MachineState,
    /// The state it came from.
    pub previous_state: Option<MachineState>,
    /// The state `exitingRescue` returns to.
    pub rescued_from: Option<MachineState>,
    /// When its transient state times out (µs).
    pub deadline: Option<i64>,
    /// Why the last workflow failed.
    pub last_error: String,
    /// Why its passes keep failing, while they do.
    pub problem: Option<crate::domain::problem::Problem>,
    /// What inspection found.
    pub inventory: Option<serde_json::Value>,
    /// The image it runs or is deploying.
    pub image: String,
    /// Who enrolled it.
    pub created_by: String,
    /// The enrolment's idempotency key.
    pub idempotency_key: String,
    /// The digest of the enrolment's request.
    pub request_digest: String,
    /// Bumped by every change.
    pub version: i64,
    /// When it was enrolled.
    pub created_at: i64,
    /// When it last changed.
    pub updated_at: i64,
    /// When it was deleted.
    pub deleted_at: Option<i64>,
    /// The steps of the current transient state that are done, in order (never in a view).
    pub steps: Vec<String>,
    /// The join token of the deploy under way or done; empty for none (never in a view).
    pub deploy_token_id: String,
    /// The drift the last look at a deployed machine's BMC found (empty for none).
    pub drift: Vec<crate::domain::drift::Drift>,
}

impl MetalMachineRow {
    /// Whether `step` of the current transient state is done.
    pub fn step_done(&self, step: &str) -> bool {
        self.steps.iter().any(|done| done == step)
    }
}

/// A machine to enrol: its view and its password, sealed to its node's id.
pub struct NewMetalMachine {
    /// The view as it starts (`enrolling`).
    pub row: MetalMachineRow,
    /// The password sealed to `row.node_id`.
    pub password_sealed: String,
    /// The pool's `maxMachines`, when its policy sets one.
    pub max_machines: Option<i64>,
}

impl fmt::Debug for NewMetalMachine {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("NewMetalMachine").field("row", &self.row).finish_non_exhaustive()
    }
}

/// A move of a machine from one provision state to another, as a verb records it.
#[derive(Clone, Debug, PartialEq)]
pub struct MetalMove {
    /// The state it must still be in (with the version read), or the move is lost to a race.
    pub from: MachineState,
    /// The state it goes to.
    pub to: MachineState,
    /// When `to` times out; `None` for a stable state.
    pub deadline: Option<i64>,
    /// The state `exitingRescue` returns to, when this move sets it.
    pub rescued_from: Option<MachineState>,
    /// The image to deploy, when this move sets it.
    pub image: Option<String>,
    /// Whether the BMC credentials are wiped (retire).
    pub wipe_credentials: bool,
    /// Why, for the event: the verb and who asked.
    pub reason: String,
}

/// What an update changes; `None` leaves a field alone.
#[derive(Default)]
pub struct MetalChange {
    /// The new name.
    pub name: Option<String>,
    /// The new labels.
    pub labels: Option<BTreeMap<String, String>>,
    /// The BMC's new address.
    pub address: Option<String>,
    /// The new BMC user.
    pub username: Option<String>,
    /// The new password, sealed to the node's id: kept pending, with `username` (the new user,
    /// or either one alone with the other as it is), until the BMC takes them (see
    /// [`Store::metal_credentials_checked`]).
    pub password_sealed: Option<String>,
    /// The new CA certificate.
    pub ca_certificate: Option<String>,
    /// Whether any certificate is accepted.
    pub insecure: Option<bool>,
}

impl fmt::Debug for MetalChange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MetalChange")
            .field("name", &self.name)
            .field("address", &self.address)
            .field("password", &self.password_sealed.as_ref().map(|_| "sealed"))
            .finish_non_exhaustive()
    }
}

impl Record for MetalMachineRow {
    const SELECT: &'static str = "SELECT m.node_id, m.pool_id, m.tenant_id, m.name, n.labels, m.driver, m.address, \
                                  m.username, m.password_sealed <> '' AS credentials_set, \
                                  m.password_pending_sealed <> '' AS credentials_pending, m.ca_certificate, \
                                  m.insecure, m.power_state, m.provision_state, m.previous_state, m.rescued_from, \
                                  m.deadline, m.last_error, m.inventory, m.image, m.created_by, m.idempotency_key, \
                                  m.request_digest, m.version, m.created_at, m.updated_at, m.deleted_at, m.steps, \
                                  m.deploy_token_id, m.drift, (SELECT w.problem_class || '|' || \
                                  COALESCE(w.problem_since, 0) || '|' || w.attempts || '|' || w.due_at || '|' || \
                                  COALESCE(w.last_error, '') FROM work_items w WHERE w.kind = 'metal.machines' AND \
                                  w.object_id = m.node_id AND w.problem_class <> '') AS problem \
                                  FROM metal_machines m JOIN nodes n ON n.id = m.node_id";
    const ID: &'static str = "m.node_id";
    const NOUN: &'static str = "machine";

    fn from_row(row: &AnyRow) -> Result<MetalMachineRow> {
        let inventory: Option<String> = row.try_get("inventory")?;
        let steps: String = row.try_get("steps")?;
        Ok(read_columns!(row, MetalMachineRow {
            node_id, pool_id, tenant_id, name, driver, address, username, ca_certificate, power_state,
            provision_state, deadline, last_error, image, created_by, idempotency_key, request_digest, version,
            created_at, updated_at, deleted_at, deploy_token_id;
            previous_state: state_or_none(&row.try_get::<String, _>("previous_state")?)?,
            rescued_from: state_or_none(&row.try_get::<String, _>("rescued_from")?)?,
            labels: value_from_json(&row.try_get::<String, _>("labels")?)?,
            credentials_set: row.try_get::<bool, _>("credentials_set").or_else(|_| {
                // SQLite answers a comparison as an integer.
                row.try_get::<i64, _>("credentials_set").map(|set| set != 0)
            })?,
            credentials_pending: row
                .try_get::<bool, _>("credentials_pending")
                .or_else(|_| row.try_get::<i64, _>("credentials_pending").map(|set| set != 0))?,
            insecure: row.try_get::<i64, _>("insecure")? != 0,
            inventory: inventory.as_deref().map(value_from_json).transpose()?,
            steps: steps.split(',').filter(|step| !step.is_empty()).map(str::to_owned).collect(),
            drift: crate::domain::drift::from_column(&row.try_get::<String, _>("drift")?),
            problem: crate::domain::problem::from_column(row.try_get::<Option<String>, _>("problem").ok().flatten().as_deref()),
        }))
    }
}

impl Announced for MetalMachineRow {
    const TABLE: &'static str = "metal_machines";

    fn deleted_at(&self) -> Option<i64> {
        self.deleted_at
    }

    /// `metal.machine.<change>` on the pool's subject, with no reason yet:
    /// [`Store::metal_changed_in`] gives it the verb's. It never holds the password.
    fn event(&self, change: &str) -> NewEvent {
        let data = serde_json::json!({
            "nodeId": self.node_id, "poolId": self.pool_id, "name": self.name,
            "provisionState": self.provision_state, "reason": "",
            "previousState": self.previous_state.map_or("", MachineState::as_str),
            "version": self.version,
        });
        let tenant = self.tenant_id.as_deref();
        pool_event("/compute/metal", "metal.machine", change, &self.pool_id, tenant, self.updated_at, data)
    }
}

fn json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("a machine's fields serialize")
}

fn name_taken(pool_id: &str, name: &str) -> Error {
    Error::conflict(format!("pool {pool_id} has a machine named {name:?} already; choose another name"))
        .with_detail("name", name)
        .with_detail("poolId", pool_id)
}

impl Store {
    /// Machine `node_id` as a change inside `txn` left it, with its `change` event for `reason`
    /// appended; the caller commits.
    pub(super) async fn metal_changed_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        node_id: &str,
        change: &str,
        reason: &str,
    ) -> Result<MetalMachineRow> {
        let machine: MetalMachineRow = self.record_fetch_in(txn, node_id).await?;
        let mut event = machine.event(change);
        // Overwriting keeps the key where the builder put it: the event's JSON keeps its order.
        event.data["reason"] = reason.into();
        self.event_append_in(txn, &event).await?;
        Ok(machine)
    }

    /// Enrols a machine: its node (`enrolled`, no credential, its name as host name), its metal
    /// view, the metal reconciler's work, its booking of the pool's `maxMachines` and its
    /// `metal.machine.enrolled` event, in one transaction. Past `maxMachines` it is
    /// `QUOTA_EXCEEDED`; a live machine of the pool with its name is `CONFLICT`.
    pub async fn metal_enroll(&self, new: &NewMetalMachine, now: i64) -> Result<MetalMachineRow> {
        crate::measured::store("metal_enroll", async {
            let row = &new.row;
            let mut txn = self.begin_write().await?;
            // Writing the pool's row serialises the enrolments of one pool on every backend, so
            // two of them cannot both take the last free machine.
            sqlx::query("UPDATE pools SET version = version WHERE id = $1")
                .bind(&row.pool_id)
                .execute(&mut *txn)
                .await?;
            if let Some(limit) = new.max_machines {
                let used: i64 =
                    sqlx::query_scalar("SELECT COUNT(*) FROM metal_machines WHERE pool_id = $1 AND deleted_at IS NULL")
                        .bind(&row.pool_id)
                        .fetch_one(&mut *txn)
                        .await?;
                if used >= limit {
                    return Err(Error::new(
                        Code::QuotaExceeded,
                        format!(
                            "pool {} allows {limit} machines (its policy's maxMachines) and has {used}; \
                             delete a machine or raise maxMachines",
                            row.pool_id
                        ),
                    )
                    .with_detail("poolId", row.pool_id.as_str())
                    .with_detail("limit", limit)
                    .with_detail("used", used)
                    .with_detail("resourceKind", "maxMachines"));
                }
            }
            let empty = json(&NodeCapacityRow::default());
            let node = sqlx::query(
                "INSERT INTO nodes (id, pool_id, tenant_id, machine_id, hostname, architecture, os, kernel, \
                 bcd_version, capacity, allocatable, conditions, labels, taints, state, cordoned, join_token_id, \
                 credential_sha256, address, heartbeat_interval_ms, version, joined_at, last_heartbeat_at, left_at, \
                 deleted_at, updated_at) VALUES ($1, $2, $3, $9, $4, '', '', '', '', $5, $5, '[]', $6, '[]', $7, 0, \
                 '', '', '', 0, 1, $8, $8, NULL, NULL, $8)",
            )
            .bind(&row.node_id)
            .bind(&row.pool_id)
            .bind(&row.tenant_id)
            .bind(&row.name)
            .bind(&empty)
            .bind(json(&row.labels))
            .bind(ENROLLED_NODE_STATE)
            .bind(now)
            .bind(metal_machine_id(&row.node_id))
            .execute(&mut *txn)
            .await;
            super::conflict_on_unique(node, || {
                Error::conflict(format!("machine {} is being enrolled by another call", row.node_id))
            })?;
            let inserted = sqlx::query(
                "INSERT INTO metal_machines (node_id, pool_id, tenant_id, name, driver, address, username, \
                 password_sealed, ca_certificate, insecure, power_state, provision_state, previous_state, \
                 rescued_from, deadline, last_error, inventory, image, created_by, idempotency_key, request_digest, \
                 version, created_at, updated_at, deleted_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, \
                 $12, $13, '', $14, '', NULL, '', $15, $16, $17, 1, $18, $18, NULL)",
            )
            .bind(&row.node_id)
            .bind(&row.pool_id)
            .bind(&row.tenant_id)
            .bind(&row.name)
            .bind(&row.driver)
            .bind(&row.address)
            .bind(&row.username)
            .bind(&new.password_sealed)
            .bind(&row.ca_certificate)
            .bind(row.insecure as i64)
            .bind(&row.power_state)
            .bind(row.provision_state)
            .bind(row.previous_state.map_or("", MachineState::as_str))
            .bind(row.deadline)
            .bind(&row.created_by)
            .bind(&row.idempotency_key)
            .bind(&row.request_digest)
            .bind(now)
            .execute(&mut *txn)
            .await;
            super::conflict_on_unique(inserted, || name_taken(&row.pool_id, &row.name))?;
            self.work_enqueue_in(&mut txn, METAL_KIND, &row.node_id, row.provision_state.as_str(), row.deadline, now)
                .await?;
            let enrolled = self.metal_changed_in(&mut txn, &row.node_id, "enrolled", "enroll").await?;
            self.commit_and_signal(txn).await?;
            Ok(enrolled)
        })
        .await
    }

    /// One machine, deleted or not, whatever its pool: callers check.
    pub async fn metal_fetch(&self, node_id: &str) -> Result<Option<MetalMachineRow>> {
        crate::measured::store("metal_fetch", self.record_find(node_id)).await
    }

    /// The pool's live machines, oldest first, at most `limit`.
    pub async fn metal_list(&self, pool_id: &str, limit: i64) -> Result<Vec<MetalMachineRow>> {
        let live = "m.pool_id = $1 AND m.deleted_at IS NULL";
        let bind = |q: AnyQuery<'static>| q.bind(pool_id.to_owned()).bind(limit);
        crate::measured::store("metal_list", self.record_list(live, "m.created_at, m.node_id LIMIT $2", bind)).await
    }

    /// The sealed BMC password of a machine (for the reconciler to open); `None` once wiped.
    pub async fn metal_sealed_password(&self, node_id: &str) -> Result<Option<String>> {
        crate::measured::store("metal_sealed_password", self.metal_sealed(node_id, "password_sealed")).await
    }

    /// The new BMC user and password (sealed) of machine `node_id` waiting to be checked.
    pub async fn metal_pending_credentials(&self, node_id: &str) -> Result<Option<(String, String)>> {
        crate::measured::store("metal_pending_credentials", async {
            let sealed = self.metal_sealed(node_id, "password_pending_sealed").await?;
            let user: Option<String> =
                sqlx::query_scalar("SELECT username_pending FROM metal_machines WHERE node_id = $1")
                    .bind(node_id)
                    .fetch_optional(&self.pool)
                    .await?;
            Ok(sealed.zip(user).map(|(sealed, user)| (user, sealed)))
        })
        .await
    }

    /// Ends the check of machine `node_id`'s pending credentials (sealed as `sealed`, so a newer
    /// rotation is left alone): taken by the BMC, they replace the old ones; refused, they are
    /// dropped and the old ones stay, `last_error` saying why. With its
    /// `metal.machine.credentialsRotated` or `credentialsRefused` event, in one transaction.
    pub async fn metal_credentials_checked(
        &self,
        node_id: &str,
        sealed: &str,
        refused: Option<&str>,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("metal_credentials_checked", async {
            let mut txn = self.begin_write().await?;
            let sql = match refused {
                None => {
                    "UPDATE metal_machines SET password_sealed = password_pending_sealed, username = username_pending, \
                     password_pending_sealed = '', username_pending = '', last_error = $3, \
                     version = version + 1, updated_at = $4 \
                     WHERE node_id = $1 AND password_pending_sealed = $2 AND deleted_at IS NULL"
                }
                Some(_) => {
                    "UPDATE metal_machines SET password_pending_sealed = '', username_pending = '', last_error = $3, \
                     version = version + 1, updated_at = $4 \
                     WHERE node_id = $1 AND password_pending_sealed = $2 AND deleted_at IS NULL"
                }
            };
            let error = refused.map(|why| format!("credentials: {why}")).unwrap_or_default();
            let done = sqlx::query(sqlx::AssertSqlSafe(sql))
                .bind(node_id)
                .bind(sealed)
                .bind(&error)
                .bind(now)
                .execute(&mut *txn)
                .await?;
            if done.rows_affected() == 0 {
                return Ok(false);
            }
            let (change, reason) = match refused {
                None => ("credentialsRotated", "the BMC took the new credentials; the old ones are dropped".to_owned()),
                Some(why) => (
                    "credentialsRefused",
                    format!("the BMC refused the new credentials ({why}); the old ones stay in use"),
                ),
            };
            self.metal_changed_in(&mut txn, node_id, change, &reason).await?;
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// What machine `node_id` keeps sealed in `column`; `None` when it keeps nothing there.
    pub(super) async fn metal_sealed(&self, node_id: &str, column: &'static str) -> Result<Option<String>> {
        let sealed: Option<String> =
            sqlx::query_scalar(sqlx::AssertSqlSafe(format!("SELECT {column} FROM metal_machines WHERE node_id = $1")))
                .bind(node_id)
                .fetch_optional(&self.pool)
                .await?;
        Ok(sealed.filter(|sealed| !sealed.is_empty()))
    }

    /// Records a move of machine `node_id` read at `version`: its new state, the state it came
    /// from, its deadline, its event (`metal.machine.<to>`) and, for a transient state, the
    /// reconciler's work, in one transaction. `None` when the machine changed since it was read
    /// (another verb won the race): nothing is written.
    pub async fn metal_move(
        &self,
        node_id: &str,
        version: i64,
        mv: &MetalMove,
        now: i64,
    ) -> Result<Option<MetalMachineRow>> {
        crate::measured::store("metal_move", async {
            let mut txn = self.begin_write().await?;
            let Some(machine) = self.metal_move_in(&mut txn, node_id, version, mv, now).await? else {
                return Ok(None);
            };
            self.commit_and_signal(txn).await?;
            Ok(Some(machine))
        })
        .await
    }

    /// [`Store::metal_move`] made by the remediation step `step` of the machine's node requested
    /// at `requested_at`, which is marked done with it: both or neither. `None` when the machine
    /// changed since it was read or the step is no longer to be done.
    pub async fn metal_move_remediating(
        &self,
        node_id: &str,
        version: i64,
        mv: &MetalMove,
        step: &str,
        requested_at: i64,
        now: i64,
    ) -> Result<Option<MetalMachineRow>> {
        crate::measured::store("metal_move_remediating", async {
            let mut txn = self.begin_write().await?;
            if !self.node_remediation_done_in(&mut txn, node_id, step, requested_at).await? {
                return Ok(None);
            }
            let Some(machine) = self.metal_move_in(&mut txn, node_id, version, mv, now).await? else {
                return Ok(None);
            };
            self.commit_and_signal(txn).await?;
            Ok(Some(machine))
        })
        .await
    }

    async fn metal_move_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        node_id: &str,
        version: i64,
        mv: &MetalMove,
        now: i64,
    ) -> Result<Option<MetalMachineRow>> {
        let moved = sqlx::query(
            "UPDATE metal_machines SET provision_state = $4, previous_state = $3, deadline = $5, \
             rescued_from = COALESCE($6, rescued_from), image = COALESCE($7, image), \
             password_sealed = CASE WHEN $8 = 1 THEN '' ELSE password_sealed END, \
             password_pending_sealed = CASE WHEN $8 = 1 THEN '' ELSE password_pending_sealed END, last_error = '', \
             steps = '', drift = '[]', version = version + 1, updated_at = $9 \
             WHERE node_id = $1 AND version = $2 AND provision_state = $3 AND deleted_at IS NULL",
        )
        .bind(node_id)
        .bind(version)
        .bind(mv.from)
        .bind(mv.to)
        .bind(mv.deadline)
        .bind(mv.rescued_from)
        .bind(&mv.image)
        .bind(mv.wipe_credentials as i64)
        .bind(now)
        .execute(&mut **txn)
        .await?;
        if moved.rows_affected() == 0 {
            return Ok(None);
        }
        if mv.deadline.is_some() {
            self.work_enqueue_in(txn, METAL_KIND, node_id, mv.to.as_str(), mv.deadline, now).await?;
        }
        Ok(Some(self.metal_changed_in(txn, node_id, mv.to.as_str(), &mv.reason).await?))
    }

    /// Applies `change` to machine `node_id` read at `version` while it is in one of
    /// `idle_states`, with its `metal.machine.updated` event. `None` when the machine changed
    /// since it was read; a live machine of the pool with the new name is `CONFLICT`.
    pub async fn metal_update(
        &self,
        node_id: &str,
        version: i64,
        change: &MetalChange,
        now: i64,
    ) -> Result<Option<MetalMachineRow>> {
        crate::measured::store("metal_update", async {
            let mut txn = self.begin_write().await?;
            // New credentials (a user, a password or both) wait, sealed, until the BMC takes them.
            let updated = sqlx::query(
                "UPDATE metal_machines SET name = COALESCE($3, name), address = COALESCE($4, address), \
                 username_pending = CASE WHEN $5 IS NULL AND $6 IS NULL THEN username_pending \
                 ELSE COALESCE($5, username) END, \
                 password_pending_sealed = CASE WHEN $5 IS NULL AND $6 IS NULL THEN password_pending_sealed \
                 ELSE COALESCE($6, password_sealed) END, \
                 ca_certificate = COALESCE($7, ca_certificate), insecure = COALESCE($8, insecure), \
                 version = version + 1, updated_at = $9 WHERE node_id = $1 AND version = $2 AND deleted_at IS NULL",
            )
            .bind(node_id)
            .bind(version)
            .bind(&change.name)
            .bind(&change.address)
            .bind(&change.username)
            .bind(&change.password_sealed)
            .bind(&change.ca_certificate)
            .bind(change.insecure.map(i64::from))
            .bind(now)
            .execute(&mut *txn)
            .await;
            let updated = match updated {
                Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
                    let pool_id: String = sqlx::query_scalar("SELECT pool_id FROM metal_machines WHERE node_id = $1")
                        .bind(node_id)
                        .fetch_one(&self.pool)
                        .await?;
                    return Err(name_taken(&pool_id, change.name.as_deref().unwrap_or_default()));
                }
                other => other?,
            };
            if updated.rows_affected() == 0 {
                return Ok(None);
            }
            sqlx::query(
                "UPDATE nodes SET hostname = COALESCE($2, hostname), labels = COALESCE($3, labels), \
                 version = version + 1, updated_at = $4 WHERE id = $1",
            )
            .bind(node_id)
            .bind(&change.name)
            .bind(change.labels.as_ref().map(json))
            .bind(now)
            .execute(&mut *txn)
            .await?;
            let machine = self.metal_changed_in(&mut txn, node_id, "updated", "update").await?;
            if change.password_sealed.is_some() || change.username.is_some() {
                let state = machine.provision_state.as_str();
                self.work_enqueue_in(&mut txn, METAL_KIND, node_id, state, machine.deadline, now).await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(Some(machine))
        })
        .await
    }

    /// Deletes machine `node_id` read at `version` in state `from`: the view and its node are
    /// marked deleted, the password wiped (freeing its booking of `maxMachines`), the
    /// reconciler's work dropped, with its `metal.machine.deleted` event for `reason`. `None`
    /// when the machine changed since it was read.
    pub async fn metal_delete(
        &self,
        node_id: &str,
        version: i64,
        from: MachineState,
        reason: &str,
        now: i64,
    ) -> Result<Option<MetalMachineRow>> {
        crate::measured::store("metal_delete", async {
            let mut txn = self.begin_write().await?;
            let deleted = sqlx::query(
                "UPDATE metal_machines SET deleted_at = $4, password_sealed = '', password_pending_sealed = '', \
                 deadline = NULL, \
                 version = version + 1, updated_at = $4 \
                 WHERE node_id = $1 AND version = $2 AND provision_state = $3 AND deleted_at IS NULL",
            )
            .bind(node_id)
            .bind(version)
            .bind(from)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if deleted.rows_affected() == 0 {
                return Ok(None);
            }
            sqlx::query(
                "UPDATE nodes SET state = 'deleted', deleted_at = $2, version = version + 1, updated_at = $2 \
                 WHERE id = $1",
            )
            .bind(node_id)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            sqlx::query("DELETE FROM work_items WHERE kind = $1 AND object_id = $2")
                .bind(METAL_KIND)
                .bind(node_id)
                .execute(&mut *txn)
                .await?;
            let machine = self.metal_changed_in(&mut txn, node_id, "deleted", reason).await?;
            self.commit_and_signal(txn).await?;
            Ok(Some(machine))
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_machine_reads_its_problem_as_every_resource_does() {
        let column = crate::domain::problem::column_sql(METAL_KIND, "m.node_id");
        let squeezed = |sql: &str| sql.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(squeezed(MetalMachineRow::SELECT).contains(&squeezed(&column)), "{}", MetalMachineRow::SELECT);
    }
}
