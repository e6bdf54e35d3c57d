//! What the metal reconciler does for a deployed machine whose node the pool's remediation has
//! given up waiting for (see [`crate::reconcile::node_remediation`]): the requested step is
//! carried out once per request. A power cycle resets the machine through its BMC (powers it on
//! when it is off), so a hung system boots again from its disk and its bcd heartbeats as the
//! same node. A redeploy moves the machine back to `deploying` with the image it runs: the deploy's
//! workflow boots it again and its bcd rejoins as the same node with a new one-use token.

use std::time::Duration;

use super::Run;
use crate::domain::metal_policy;
use crate::domain::states::MachineState;
use crate::provider::ErrorKind;
use crate::provider::bmc::{PowerAction, PowerState};
use crate::reconcile::node_remediation::{POWER_CYCLE, REDEPLOY};
use crate::reconcile::{Outcome, PassError};
use crate::store::{MetalMove, now_micros};

/// How long a power cycle's calls wait on the BMC.
const CYCLE_TIMEOUT: Duration = Duration::from_secs(30);

impl Run<'_> {
    /// Carries out remediation `step` of the machine's node, requested at `requested_at`; a
    /// step the machine has no action for is left to the look at its BMC.
    pub(super) async fn remediate(&self, step: &str, requested_at: i64) -> Result<Outcome, PassError> {
        match step {
            POWER_CYCLE => self.power_cycle(requested_at).await,
            REDEPLOY => self.redeploy(requested_at).await,
            _ => self.watch().await,
        }
    }

    async fn power_cycle(&self, requested_at: i64) -> Result<Outcome, PassError> {
        let m = self.machine;
        let bmc = match self.connect(CYCLE_TIMEOUT).await {
            Ok(bmc) => bmc,
            // A BMC that refuses now is asked again on the settled interval; the node's next
            // step (a redeploy) comes anyway if it stays silent.
            Err(error) if error.kind == ErrorKind::Permanent => return Ok(Outcome::permanent(error.to_string())),
            Err(error) => return Err(error.into()),
        };
        let on = bmc.power_state().await? == PowerState::On;
        bmc.power(if on { PowerAction::ForceRestart } else { PowerAction::On }).await?;
        let how = if on { "reset" } else { "found off, powered on" };
        let reason = format!(
            "remediation: its node sent no heartbeat for longer than the pool's unhealthyAfter: power cycled \
             through its BMC ({how})"
        );
        self.store().metal_power_cycled(&m.node_id, POWER_CYCLE, requested_at, &reason, now_micros()).await?;
        tracing::info!(node = %m.node_id, pool = %m.pool_id, "metal machine power cycled for its node's remediation");
        Ok(Outcome::settled().in_state(MachineState::Deployed))
    }

    async fn redeploy(&self, requested_at: i64) -> Result<Outcome, PassError> {
        let m = self.machine;
        let pool = self.store().pool_fetch(&m.pool_id).await?;
        // A policy the pool's checks let through is readable; were it not, the table's deadline holds.
        let policy = metal_policy::read(&pool.policy).unwrap_or_default();
        let now = now_micros();
        let mv = MetalMove {
            from: MachineState::Deployed,
            to: MachineState::Deploying,
            deadline: policy.deadline(MachineState::Deploying).map(|d| now + d.as_micros() as i64),
            rescued_from: None,
            image: None,
            wipe_credentials: false,
            reason: format!(
                "remediation: its node stayed silent after its power cycle: redeployed with its image {}",
                m.image
            ),
        };
        let moved =
            self.store().metal_move_remediating(&m.node_id, m.version, &mv, REDEPLOY, requested_at, now).await?;
        if moved.is_some() {
            tracing::info!(node = %m.node_id, pool = %m.pool_id, "metal machine redeploying for its node's remediation");
        }
        // The deploy's workflow runs from a fresh read.
        Ok(Outcome::after(Duration::ZERO))
    }
}
