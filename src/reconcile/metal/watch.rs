//! The look at a deployed machine on the settled interval: its deploy applied "powered on", so
//! a machine found off (or powering off) at its BMC has drifted (see [`crate::domain::drift`]).
//! Under the pool's `drift: correct` it is powered on again; under `drift: report` it is left
//! off, and `drift[]` says so until it is on again or a verb (release, rescue) moves it, which
//! is the tenant changing its desired state (the move empties `drift[]`). Its power state is
//! the only managed field looked at here.

use std::time::Duration;

use serde_json::json;

use super::Run;
use crate::domain::drift::{self, DriftedField};
use crate::domain::states::MachineState;
use crate::provider::ErrorKind;
use crate::provider::bmc::{PowerAction, PowerState};
use crate::reconcile::{Outcome, PassError};
use crate::store::now_micros;

/// How long one look waits on the BMC.
const LOOK_TIMEOUT: Duration = Duration::from_secs(30);

impl Run<'_> {
    /// Reads the power of a deployed machine and judges it, powering it on when the policy
    /// corrects; records the power and the drift. Settled either way.
    pub(super) async fn watch(&self) -> Result<Outcome, PassError> {
        let m = self.machine;
        let bmc = match self.connect(LOOK_TIMEOUT).await {
            Ok(bmc) => bmc,
            // The machine stays deployed: a BMC that refuses now is tried again next time.
            Err(error) if error.kind == ErrorKind::Permanent => return Ok(Outcome::permanent(error.to_string())),
            Err(error) => return Err(error.into()),
        };
        let power = bmc.power_state().await?;
        let found = match power {
            PowerState::On => "on",
            PowerState::Off => "off",
            PowerState::PoweringOn => "poweringOn",
            PowerState::PoweringOff => "poweringOff",
        };
        // Powering on is the machine on its way to what was applied, not drift.
        let off = matches!(power, PowerState::Off | PowerState::PoweringOff);
        let differing: Vec<DriftedField> =
            off.then(|| DriftedField::compare("powerState", json!("on"), json!(found))).flatten().into_iter().collect();
        let pool = self.store().pool_fetch(&m.pool_id).await?;
        // A policy the pool's checks let through is readable; were it not, the default holds.
        let policy = drift::read(&pool.policy).unwrap_or_default();
        let now = now_micros();
        let judged = drift::judge(true, differing, &m.drift, policy, now);
        if judged.correct && power == PowerState::Off {
            bmc.power(PowerAction::On).await?;
            tracing::info!(node = %m.node_id, pool = %m.pool_id, "deployed machine found off at its BMC: powered on");
        }
        self.store().metal_watched(&m.node_id, m.version, found, &judged.drift, judged.event.as_ref(), now).await?;
        Ok(Outcome::settled().in_state(MachineState::Deployed))
    }
}
