//! The metal reconciler's writes: the steps of a workflow as they are done, what it reads from
//! the BMC, a deploy's one-use join token and boot configuration, and the end of a transient
//! state (success, failure or deadline) with its event. Each is guarded by the provision state
//! the reconciler read, so a write of a pass that lost its object to a verb or a delete is
//! dropped.

use sqlx::{Any, Transaction};

use super::record::Announced;
use super::{JoinTokenRow, MetalMachineRow, Store};
use crate::domain::states::MachineState;
use crate::error::Result;

/// How a transient state ends.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetalFinish {
    /// The transient state it ends.
    pub from: MachineState,
    /// The state it goes to.
    pub to: MachineState,
    /// Why it failed; empty on success.
    pub error: String,
    /// Why, for the event.
    pub reason: String,
    /// The machine leaves its pool: its node goes back to `enrolled` without a credential and
    /// the deploy's join token is revoked (a release).
    pub leave_pool: bool,
    /// The BMC credentials are wiped (a retire).
    pub wipe_credentials: bool,
}

/// A BMC outage a transient state met: what the state's end event carries as `bmcOutage`.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BmcOutage {
    /// When the first failed pass of the state was (RFC 3339).
    pub since: String,
    /// When the last one was (RFC 3339).
    pub last_at: String,
    /// How many passes in a row or not failed on the BMC during the state.
    pub failed_passes: i64,
    /// The step they failed at, last.
    pub step: String,
    /// The last failure, as the problem said it.
    pub last_error: String,
}

/// What a deploy's boot configuration URL opens.
#[derive(Clone, Debug)]
pub struct BootConfigRow {
    /// The machine, `deploying`.
    pub machine: MetalMachineRow,
    /// Its boot configuration (with the join token's bearer form), sealed to the node id.
    pub config_sealed: String,
}

impl Store {
    /// Records `step` of machine `node_id`'s transient `state` as done. False when the machine
    /// is no longer in `state` (nothing is written).
    pub async fn metal_step_done(&self, node_id: &str, state: MachineState, step: &str, now: i64) -> Result<bool> {
        crate::measured::store("metal_step_done", async {
            let mut txn = self.begin_write().await?;
            let done = self.metal_step_done_in(&mut txn, node_id, state, step, now).await?;
            self.commit(txn).await?;
            Ok(done)
        })
        .await
    }

    /// [`Store::metal_step_done`] inside the caller's transaction.
    async fn metal_step_done_in(
        &self,
        txn: &mut Transaction<'static, Any>,
        node_id: &str,
        state: MachineState,
        step: &str,
        now: i64,
    ) -> Result<bool> {
        let done = sqlx::query(
            "UPDATE metal_machines SET steps = CASE WHEN steps = '' THEN $3 ELSE steps || ',' || $3 END, \
             version = version + 1, updated_at = $4 \
             WHERE node_id = $1 AND provision_state = $2 AND deleted_at IS NULL",
        )
        .bind(node_id)
        .bind(state)
        .bind(step)
        .bind(now)
        .execute(&mut **txn)
        .await?;
        Ok(done.rows_affected() > 0)
    }

    /// Records what the BMC said of machine `node_id` in `state`: its power, and the inventory
    /// when inspection read one.
    pub async fn metal_observe(
        &self,
        node_id: &str,
        state: MachineState,
        power_state: &str,
        inventory: Option<&serde_json::Value>,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("metal_observe", async {
            let observed = sqlx::query(
                "UPDATE metal_machines SET power_state = $3, inventory = COALESCE($4, inventory), \
                 version = version + 1, updated_at = $5 \
                 WHERE node_id = $1 AND provision_state = $2 AND deleted_at IS NULL \
                 AND (power_state <> $3 OR $4 IS NOT NULL)",
            )
            .bind(node_id)
            .bind(state)
            .bind(power_state)
            .bind(inventory.map(|inventory| inventory.to_string()))
            .bind(now)
            .execute(&self.pool)
            .await?;
            Ok(observed.rows_affected() > 0)
        })
        .await
    }

    /// Records a look at deployed machine `node_id` read at `version`: its power state and the
    /// drift found (see [`crate::domain::drift`]), with a `metal.machine.drift` event carrying
    /// `drift_event` when one is due, in one transaction. Nothing is written when nothing
    /// changed, nor when the machine moved since it was read (`false`).
    pub async fn metal_watched(
        &self,
        node_id: &str,
        version: i64,
        power_state: &str,
        drift: &[crate::domain::drift::Drift],
        drift_event: Option<&serde_json::Value>,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("metal_watched", async {
            let mut txn = self.begin_write().await?;
            let column = crate::domain::drift::to_column(drift);
            let written = sqlx::query(
                "UPDATE metal_machines SET power_state = $3, drift = $4, version = version + 1, updated_at = $5 \
                 WHERE node_id = $1 AND version = $2 AND provision_state = 'deployed' AND deleted_at IS NULL \
                 AND (power_state <> $3 OR drift <> $4)",
            )
            .bind(node_id)
            .bind(version)
            .bind(power_state)
            .bind(&column)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if written.rows_affected() == 0 {
                return Ok(false);
            }
            if let Some(data) = drift_event {
                let machine: MetalMachineRow = self.record_fetch_in(&mut txn, node_id).await?;
                let mut event = machine.event(crate::domain::lifecycle_events::LifecycleEvent::Drift.as_str());
                if let (Some(event), Some(data)) = (event.data.as_object_mut(), data.as_object()) {
                    event.remove("reason");
                    event.extend(data.clone());
                }
                self.event_append_in(&mut txn, &event).await?;
            }
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// Issues a deploy's join token: the token row, the boot configuration holding its bearer
    /// form sealed to the node, and the
    /// SHA-256 of the boot configuration's URL secret, with the step `token` done, in one
    /// transaction. False when the machine is no longer `deploying` or the step is done.
    pub async fn metal_deploy_token_issue(
        &self,
        node_id: &str,
        token: &JoinTokenRow,
        token_sealed: &str,
        boot_config_sha256: &str,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("metal_deploy_token_issue", async {
            let mut txn = self.begin_write().await?;
            let recorded = sqlx::query(
                "UPDATE metal_machines SET deploy_token_id = $2, deploy_token_sealed = $3, boot_config_sha256 = $4, \
                 steps = CASE WHEN steps = '' THEN 'token' ELSE steps || ',token' END, \
                 version = version + 1, updated_at = $5 \
                 WHERE node_id = $1 AND provision_state = 'deploying' AND deleted_at IS NULL \
                 AND ',' || steps || ',' NOT LIKE '%,token,%'",
            )
            .bind(node_id)
            .bind(&token.id)
            .bind(token_sealed)
            .bind(boot_config_sha256)
            .bind(now)
            .execute(&mut *txn)
            .await?;
            if recorded.rows_affected() == 0 {
                return Ok(false);
            }
            self.join_token_insert_in(&mut txn, token).await?;
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// Takes `step` of machine `node_id`'s transient `state` off the steps done: a call that the
    /// BMC refused or never received did nothing, so asking again is asking once.
    pub async fn metal_step_undone(&self, node_id: &str, state: MachineState, step: &str, now: i64) -> Result<bool> {
        crate::measured::store("metal_step_undone", async {
            let machine = self.metal_fetch(node_id).await?;
            let Some(machine) = machine.filter(|m| m.provision_state == state && m.deleted_at.is_none()) else {
                return Ok(false);
            };
            let kept: Vec<&str> = machine.steps.iter().map(String::as_str).filter(|done| *done != step).collect();
            let undone = sqlx::query(
                "UPDATE metal_machines SET steps = $3, version = version + 1, updated_at = $5 \
                 WHERE node_id = $1 AND provision_state = $2 AND version = $4 AND deleted_at IS NULL",
            )
            .bind(node_id)
            .bind(state)
            .bind(kept.join(","))
            .bind(machine.version)
            .bind(now)
            .execute(&self.pool)
            .await?;
            Ok(undone.rows_affected() > 0)
        })
        .await
    }

    /// Records a pass of machine `node_id`'s transient `state` that failed on the BMC at `step`
    /// with `error`: the state's outage grows by one pass (see [`BmcOutage`]).
    pub async fn metal_outage(
        &self,
        node_id: &str,
        state: MachineState,
        step: &str,
        error: &str,
        now: i64,
    ) -> Result<()> {
        crate::measured::store("metal_outage", async {
            let current: Option<String> = sqlx::query_scalar(
                "SELECT bmc_outage FROM metal_machines WHERE node_id = $1 AND provision_state = $2 AND deleted_at IS NULL",
            )
            .bind(node_id)
            .bind(state)
            .fetch_optional(&self.pool)
            .await?;
            let Some(current) = current else { return Ok(()) };
            let at = crate::domain::dates::rfc3339_micros(now);
            let mut outage: BmcOutage = serde_json::from_str(&current).unwrap_or_default();
            if outage.since.is_empty() {
                outage.since = at.clone();
            }
            outage.last_at = at;
            outage.failed_passes += 1;
            outage.step = step.to_owned();
            outage.last_error = error.chars().take(400).collect();
            let column = serde_json::to_string(&outage).expect("an outage serializes");
            sqlx::query(
                "UPDATE metal_machines SET bmc_outage = $3 \
                 WHERE node_id = $1 AND provision_state = $2 AND deleted_at IS NULL",
            )
            .bind(node_id)
            .bind(state)
            .bind(column)
            .execute(&self.pool)
            .await?;
            Ok(())
        })
        .await
    }

    /// Records the erase of machine `node_id`'s disks in transient `state` as done (step
    /// `step`), with a `metal.machine.erased` event whose `disks` says, per disk, its serial,
    /// the method and whether a read-back verified it, in one transaction. False when the
    /// machine is no longer in `state`.
    pub async fn metal_erased(
        &self,
        node_id: &str,
        state: MachineState,
        step: &str,
        disks: &serde_json::Value,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("metal_erased", async {
            let mut txn = self.begin_write().await?;
            if !self.metal_step_done_in(&mut txn, node_id, state, step, now).await? {
                return Ok(false);
            }
            let machine: MetalMachineRow = self.record_fetch_in(&mut txn, node_id).await?;
            let mut event = machine.event("erased");
            event.data["reason"] = format!("{} erased the disks", state.as_str()).into();
            event.data["disks"] = disks.clone();
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// Records the power cycle of deployed machine `node_id` that carried out its node's
    /// remediation `step` requested at `requested_at`, with its `metal.machine.powerCycled`
    /// event saying `reason`. False when the step is no longer to be done (nothing written).
    pub async fn metal_power_cycled(
        &self,
        node_id: &str,
        step: &str,
        requested_at: i64,
        reason: &str,
        now: i64,
    ) -> Result<bool> {
        crate::measured::store("metal_power_cycled", async {
            let mut txn = self.begin_write().await?;
            if !self.node_remediation_done_in(&mut txn, node_id, step, requested_at).await? {
                return Ok(false);
            }
            let machine: MetalMachineRow = self.record_fetch_in(&mut txn, node_id).await?;
            let mut event = machine.event("powerCycled");
            event.data["reason"] = reason.into();
            event.time = now;
            self.event_append_in(&mut txn, &event).await?;
            self.commit_and_signal(txn).await?;
            Ok(true)
        })
        .await
    }

    /// The sealed boot configuration (with its join token) of machine `node_id`'s deploy under way.
    pub async fn metal_deploy_token_sealed(&self, node_id: &str) -> Result<Option<String>> {
        crate::measured::store("metal_deploy_token_sealed", self.metal_sealed(node_id, "deploy_token_sealed")).await
    }

    /// The deploying machine whose boot configuration URL secret hashes to `sha256`, with its
    /// sealed join token; `None` for any other.
    pub async fn metal_boot_config(&self, sha256: &str) -> Result<Option<BootConfigRow>> {
        crate::measured::store("metal_boot_config", async {
            let found: Option<(String, String)> = sqlx::query_as(
                "SELECT node_id, deploy_token_sealed FROM metal_machines \
                 WHERE boot_config_sha256 = $1 AND provision_state = 'deploying' AND deleted_at IS NULL",
            )
            .bind(sha256)
            .fetch_optional(&self.pool)
            .await?;
            let Some((node_id, config_sealed)) = found else { return Ok(None) };
            Ok(self.metal_fetch(&node_id).await?.map(|machine| BootConfigRow { machine, config_sealed }))
        })
        .await
    }

    /// The deploying machine whose inspected inventory has a network interface of MAC address
    /// `mac` (lower case, colon separated) and whose boot configuration is recorded, with it
    /// sealed; `None` for any other. Few machines deploy at once: their inventories are read
    /// here rather than indexed.
    pub async fn metal_boot_config_by_mac(&self, mac: &str) -> Result<Option<BootConfigRow>> {
        crate::measured::store("metal_boot_config_by_mac", async {
            let deploying: Vec<(String, String, Option<String>)> = sqlx::query_as(
                "SELECT node_id, deploy_token_sealed, inventory FROM metal_machines \
                 WHERE provision_state = 'deploying' AND deploy_token_sealed <> '' AND deleted_at IS NULL",
            )
            .fetch_all(&self.pool)
            .await?;
            let has_mac = |inventory: &str| {
                let inventory: serde_json::Value = serde_json::from_str(inventory).unwrap_or_default();
                inventory["nics"].as_array().is_some_and(|nics| {
                    nics.iter()
                        .any(|nic| nic["mac"].as_str().and_then(crate::boot_config::normal_mac).as_deref() == Some(mac))
                })
            };
            let found = deploying.into_iter().find(|(_, _, inventory)| inventory.as_deref().is_some_and(has_mac));
            let Some((node_id, config_sealed, _)) = found else { return Ok(None) };
            Ok(self.metal_fetch(&node_id).await?.map(|machine| BootConfigRow { machine, config_sealed }))
        })
        .await
    }

    /// Ends machine `node_id`'s transient state as `finish` says, with its event
    /// (`metal.machine.<to>`, the previous state and the reason), in one transaction. The boot
    /// configuration stops answering. `None` when the machine is no longer in `finish.from`.
    pub async fn metal_finish(&self, node_id: &str, finish: &MetalFinish, now: i64) -> Result<Option<MetalMachineRow>> {
        crate::measured::store("metal_finish", async {
            let mut txn = self.begin_write().await?;
            let outage: Option<String> = sqlx::query_scalar(
                "SELECT bmc_outage FROM metal_machines WHERE node_id = $1 AND provision_state = $2 AND deleted_at IS NULL",
            )
            .bind(node_id)
            .bind(finish.from)
            .fetch_optional(&mut *txn)
            .await?;
            let outage = outage.and_then(|text| serde_json::from_str::<BmcOutage>(&text).ok());
            let ended = sqlx::query(
                "UPDATE metal_machines SET provision_state = $3, previous_state = $2, deadline = NULL, steps = '', \
                 last_error = $4, boot_config_sha256 = '', deploy_token_sealed = '', drift = '[]', bmc_outage = '', \
                 password_sealed = CASE WHEN $6 = 1 THEN '' ELSE password_sealed END, \
                 password_pending_sealed = CASE WHEN $6 = 1 THEN '' ELSE password_pending_sealed END, \
                 version = version + 1, updated_at = $5 \
                 WHERE node_id = $1 AND provision_state = $2 AND deleted_at IS NULL",
            )
            .bind(node_id)
            .bind(finish.from)
            .bind(finish.to)
            .bind(&finish.error)
            .bind(now)
            .bind(finish.wipe_credentials as i64)
            .execute(&mut *txn)
            .await?;
            if ended.rows_affected() == 0 {
                return Ok(None);
            }
            if finish.leave_pool {
                self.metal_leave_pool_in(&mut txn, node_id, now).await?;
            }
            let machine = match outage {
                Some(outage) => {
                    let machine: MetalMachineRow = self.record_fetch_in(&mut txn, node_id).await?;
                    let mut event = machine.event(finish.to.as_str());
                    event.data["reason"] = finish.reason.as_str().into();
                    event.data["bmcOutage"] = serde_json::to_value(&outage).expect("an outage serializes");
                    self.event_append_in(&mut txn, &event).await?;
                    machine
                }
                None => self.metal_changed_in(&mut txn, node_id, finish.to.as_str(), &finish.reason).await?,
            };
            self.commit_and_signal(txn).await?;
            Ok(Some(machine))
        })
        .await
    }

    /// The machine's node back to `enrolled` without a credential (its bcd can no longer speak
    /// for it), and its deploy's join token revoked.
    async fn metal_leave_pool_in(&self, txn: &mut Transaction<'static, Any>, node_id: &str, now: i64) -> Result<()> {
        sqlx::query(
            "UPDATE join_tokens SET revoked_at = $2 WHERE revoked_at IS NULL \
             AND id = (SELECT deploy_token_id FROM metal_machines WHERE node_id = $1)",
        )
        .bind(node_id)
        .bind(now)
        .execute(&mut **txn)
        .await?;
        sqlx::query("UPDATE metal_machines SET deploy_token_id = '' WHERE node_id = $1")
            .bind(node_id)
            .execute(&mut **txn)
            .await?;
        sqlx::query(
            "UPDATE nodes SET state = $2, credential_sha256 = '', join_token_id = '', version = version + 1, \
             updated_at = $3 WHERE id = $1",
        )
        .bind(node_id)
        .bind(super::ENROLLED_NODE_STATE)
        .bind(now)
        .execute(&mut **txn)
        .await?;
        Ok(())
    }
}
