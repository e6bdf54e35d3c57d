//! The metal reconciler: runs the workflow of a machine's transient provision state through its
//! BMC (see [`steps`]), one recorded step after another, and ends the state in its success or
//! its failure state with an event. A state past its deadline fails naming the step it was at;
//! a BMC that refuses the request (wrong credentials, an action it does not have) fails the
//! state at once; one that does not answer is retried until the deadline.
//!
//! A deploy makes a one-use join token for the machine (recorded sealed, expiring with the
//! deadline), inserts the image and the URL of its boot configuration as virtual media, boots
//! once from them and powers on; the machine is `deployed` when its bcd joins with that token
//! as the machine's node. A release powers off, always erases the disks, ejects the media,
//! clears the boot override, and takes the node out of the pool (credential gone, token revoked).
//!
//! A deployed machine is looked at on the settled interval ([`watch`]): one powered off at its
//! BMC has drifted from the state its deploy applied, and the pool's `policy.drift` says
//! whether it is powered on again or reported. One whose node the pool's remediation gave up
//! waiting for is power cycled, then redeployed ([`remediate`]).

mod remediate;
mod steps;
mod watch;

use std::time::Duration;

use steps::{ERASE_STARTED, Step, WAS_ON, workflow};

use super::{Backoff, DaemonEndpoint, Outcome, Pass, PassError, ResourceReconciler, Schedule};
use crate::bearer::Bearer;
use crate::boot_config::{self, BootConfig};
use crate::domain::metal_policy;
use crate::domain::metal_states::{self, Transition};
use crate::domain::states::{MachineState, PoolNodeState};
use crate::ids::JoinTokenId;
use crate::provider::bmc::address::{self as bmc_address, Checked};
use crate::provider::bmc::sessions::Sessions;
use crate::provider::bmc::{
    self, Bmc, BmcAccess, BmcDriver, BootDevice, EraseTarget, PowerAction, PowerState, ReadBack,
};
use crate::provider::{ErrorKind, ProviderError};
use crate::secrets::SecretKey;
use crate::store::{JoinTokenRow, METAL_KIND, MetalFinish, MetalMachineRow, Store, metal_machine_id, now_micros};

/// The metal reconciler.
#[derive(Clone, Debug)]
pub struct MetalMachines {
    /// Opens BMC passwords and deploy tokens.
    pub secret_key: SecretKey,
    /// Where a deployed machine's bcd joins; `None` fails deploys, saying so.
    pub endpoint: Option<DaemonEndpoint>,
    /// Delays after transient failures.
    pub backoff: Backoff,
    /// How often a machine that is powering or booting is looked at.
    pub poll: Duration,
    /// The Redfish sessions of the BMCs, shared by every pass and machine; logged out when
    /// the worker stops.
    pub sessions: Sessions,
}

impl MetalMachines {
    /// The reconciler with the spec's backoff.
    pub fn new(secret_key: SecretKey, endpoint: Option<DaemonEndpoint>) -> Self {
        Self {
            secret_key,
            endpoint,
            backoff: Backoff::TRANSIENT,
            poll: Duration::from_secs(1),
            sessions: Sessions::default(),
        }
    }
}

#[tonic::async_trait]
impl ResourceReconciler for MetalMachines {
    type Row = MetalMachineRow;

    fn kind(&self) -> &'static str {
        METAL_KIND
    }

    fn schedule(&self) -> Schedule {
        Schedule::with_backoff(self.backoff)
    }

    fn state_deadline(&self, state: &str) -> Option<Duration> {
        metal_states::transient(state.parse().ok()?).and_then(|t| t.deadline)
    }

    async fn fetch(&self, store: &Store, id: &str) -> crate::error::Result<Option<MetalMachineRow>> {
        Ok(store.metal_fetch(id).await?.filter(|machine| machine.deleted_at.is_none()))
    }

    async fn shutdown(&self) {
        self.sessions.logout_all().await;
    }

    async fn reconcile(&self, pass: &Pass, machine: MetalMachineRow) -> Result<Outcome, PassError> {
        let idle = metal_states::IDLE.contains(&machine.provision_state);
        if machine.credentials_pending && idle {
            let run = Run { reconciler: self, pass, machine: &machine, transition: metal_states::transition("enroll") };
            return run.rotate().await;
        }
        let Some(transition) = metal_states::transient(machine.provision_state) else {
            if machine.provision_state == MachineState::Deployed {
                // A deployed machine is looked at on the settled interval, for drift at its BMC.
                let run =
                    Run { reconciler: self, pass, machine: &machine, transition: metal_states::transition("deploy") };
                if let Some((step, requested_at)) = pass.store.node_remediation_pending(&machine.node_id).await? {
                    return run.remediate(&step, requested_at).await;
                }
                return run.watch().await;
            }
            return Ok(Outcome::remove());
        };
        let run = Run { reconciler: self, pass, machine: &machine, transition };
        run.run().await
    }
}

/// What a step left to do.
enum Progress {
    /// Done: record it and go on.
    Done,
    /// Come back: the machine is powering or booting.
    Wait,
    /// Done and recorded by the step itself: the next pass goes on from a fresh read.
    Recorded,
}

/// One pass over one machine in a transient state.
struct Run<'a> {
    reconciler: &'a MetalMachines,
    pass: &'a Pass,
    machine: &'a MetalMachineRow,
    transition: &'static Transition,
}

impl Run<'_> {
    fn store(&self) -> &Store {
        &self.pass.store
    }

    fn state(&self) -> MachineState {
        self.machine.provision_state
    }

    /// The steps of the workflow not done yet, in order.
    fn remaining(&self) -> Vec<Step> {
        workflow(self.state())
            .iter()
            .copied()
            .filter(|step| step.runs_on(&self.machine.driver) && !self.machine.step_done(step.name()))
            .collect()
    }

    async fn run(&self) -> Result<Outcome, PassError> {
        let now = now_micros();
        let remaining = self.remaining();
        let deadline = self.machine.deadline.unwrap_or(i64::MAX);
        // A deleting machine is past its deadline reported stuck, not failed: it keeps trying.
        if now >= deadline && self.state() != MachineState::Deleting {
            let at =
                remaining.first().map_or("finishing".to_owned(), |step| format!("{} ({})", step.name(), step.doing()));
            let last = self.pass.item.last_error.as_deref().map(|e| format!("; last error: {e}")).unwrap_or_default();
            let verb = self.transition.verb;
            return self.fail(format!("{verb} timed out at step {at}{last}"), "deadline").await;
        }
        // Past its deadline a deleting machine's calls keep the driver's own timeout.
        let left = match now >= deadline {
            true => bmc::redfish::DEFAULT_TIMEOUT,
            false => Duration::from_micros((deadline - now) as u64),
        };
        let bmc = match self.connect(left).await {
            Ok(bmc) => bmc,
            Err(error) if error.kind == ErrorKind::Permanent => return self.fail(error.to_string(), "bmc").await,
            Err(error) => {
                let at = remaining.first().map_or("finishing", |step| step.name());
                self.outage(at, &error.to_string()).await;
                return Err(error.into());
            }
        };
        for step in remaining {
            match self.step(step, bmc.as_ref()).await {
                Ok(Progress::Done) => {
                    if !self
                        .store()
                        .metal_step_done(&self.machine.node_id, self.state(), step.name(), now_micros())
                        .await?
                    {
                        return Ok(Outcome::converging());
                    }
                }
                Ok(Progress::Wait) => {
                    return Ok(Outcome::after(self.reconciler.poll.min(left)).in_state(self.state().to_owned()));
                }
                Ok(Progress::Recorded) => return Ok(Outcome::after(Duration::ZERO)),
                Err(failure) => {
                    let message = format!("{}: {}", step.name(), failure.message);
                    if failure.refused {
                        return self.fail(message, step.name()).await;
                    }
                    // The state rides the outage out until its deadline; its end event tells it.
                    self.outage(step.name(), &message).await;
                    return Err(PassError::new(super::Failure::Unavailable, message));
                }
            }
        }
        self.succeed().await
    }

    /// Records a pass that failed on the BMC at `step` in the state's outage; a failure to
    /// record it is logged only: the pass failed anyway and the next one tries again.
    async fn outage(&self, step: &str, error: &str) {
        let m = self.machine;
        if let Err(failure) = self.store().metal_outage(&m.node_id, self.state(), step, error, now_micros()).await {
            tracing::warn!(node = %m.node_id, %failure, "recording the BMC outage failed");
        }
    }

    /// Checks the machine's new credentials against its BMC (sign in, read the power): taken,
    /// they replace the old ones; refused, they are dropped and the old ones stay in use. A BMC
    /// that does not answer is asked again on the backoff, the old credentials in use meanwhile.
    async fn rotate(&self) -> Result<Outcome, PassError> {
        let m = self.machine;
        let Some((username, sealed)) = self.store().metal_pending_credentials(&m.node_id).await? else {
            return Ok(Outcome::after(Duration::ZERO));
        };
        let password = self.reconciler.secret_key.open(&sealed, &m.node_id)?;
        let checked = match self.connect_as(bmc::redfish::DEFAULT_TIMEOUT, Some((username, password))).await {
            Ok(bmc) => bmc.power_state().await.map(drop),
            Err(error) => Err(error),
        };
        let refused = match checked {
            Ok(()) => None,
            Err(error) if error.kind == ErrorKind::Permanent => Some(error.to_string()),
            Err(error) => return Err(error.into()),
        };
        self.store().metal_credentials_checked(&m.node_id, &sealed, refused.as_deref(), now_micros()).await?;
        tracing::info!(node = %m.node_id, pool = %m.pool_id, taken = refused.is_none(), "metal credentials checked");
        // What the machine's state asks for (a deployed machine's look) comes next, from a fresh read.
        Ok(Outcome::after(Duration::ZERO))
    }

    /// The machine's BMC, each call given up after at most the time left before the deadline.
    /// Its address is checked first, as the pool's policy says now, and the driver connects to
    /// the addresses checked: a name that resolves elsewhere now than at enrolment is caught.
    async fn connect(&self, left: Duration) -> Result<Box<dyn Bmc>, ProviderError> {
        self.connect_as(left, None).await
    }

    /// [`Run::connect`] signing in as `credentials` (user and password) when given, else with
    /// the machine's own.
    async fn connect_as(
        &self,
        left: Duration,
        credentials: Option<(String, crate::secrets::Secret)>,
    ) -> Result<Box<dyn Bmc>, ProviderError> {
        let m = self.machine;
        let checked = self.check_address().await?;
        let (username, password) = match credentials {
            Some(given) => given,
            None => {
                let sealed = self.store().metal_sealed_password(&m.node_id).await.map_err(store_failure)?;
                let Some(sealed) = sealed else {
                    return Err(ProviderError::new(ErrorKind::Permanent, "bmc", "the machine has no BMC credentials"));
                };
                (m.username.clone(), self.reconciler.secret_key.open(&sealed, &m.node_id).map_err(store_failure)?)
            }
        };
        let driver = match m.driver.as_str() {
            "ipmi" => BmcDriver::Ipmi,
            _ => BmcDriver::Redfish,
        };
        let access = BmcAccess {
            driver,
            address: m.address.clone(),
            username,
            password,
            ca_certificate: (!m.ca_certificate.is_empty()).then(|| m.ca_certificate.clone()),
            insecure: m.insecure,
        };
        let timeout = bmc::redfish::DEFAULT_TIMEOUT.min(left + Duration::from_secs(1));
        bmc::connect_shared(&access, timeout, &checked, Some(&self.reconciler.sessions))
    }

    /// The addresses the machine's BMC address resolves to, each one allowed by the pool's
    /// policy or of no refused kind; a refused one fails the state.
    async fn check_address(&self) -> Result<Vec<std::net::SocketAddr>, ProviderError> {
        let m = self.machine;
        let pool = self.store().pool_fetch(&m.pool_id).await.map_err(store_failure)?;
        let policy = metal_policy::read(&pool.policy).map_err(|error| {
            ProviderError::new(ErrorKind::Permanent, "bmc", format!("the pool's metal policy is not valid: {error}"))
        })?;
        let own = match &self.reconciler.endpoint {
            Some(endpoint) => bmc_address::resolve_own(&endpoint.url).await,
            None => Vec::new(),
        };
        match bmc_address::check(&m.driver, &m.address, &policy.bmc_allowed_networks, &own).await {
            Checked::Allowed(addresses) => Ok(addresses),
            Checked::Refused(why) => {
                Err(ProviderError::new(ErrorKind::Permanent, "bmc", format!("the BMC address {why}")))
            }
            Checked::Unresolved(why) => Err(ProviderError::new(ErrorKind::Transient, "bmc", why)),
            Checked::Malformed => {
                Err(ProviderError::new(ErrorKind::Permanent, "bmc", "the BMC address names no host and port"))
            }
        }
    }

    /// Runs one step.
    async fn step(&self, step: Step, bmc: &dyn Bmc) -> Result<Progress, StepFailure> {
        let m = self.machine;
        match step {
            Step::ReadPower => {
                let power = bmc.power_state().await?;
                self.observe(power, None).await?;
                Ok(Progress::Done)
            }
            Step::ReadInventory | Step::CheckInventory => {
                let inventory = bmc.inventory().await?;
                if step == Step::CheckInventory && inventory.disks.is_empty() {
                    return Err(StepFailure::refused("the BMC reports no disks"));
                }
                let power = bmc.power_state().await?;
                self.observe(power, Some(inventory_json(&inventory))).await?;
                Ok(Progress::Done)
            }
            Step::PowerOff => {
                let progress =
                    self.power_to(bmc, [PowerState::Off, PowerState::PoweringOff], PowerAction::ForceOff).await?;
                let leaving = matches!(self.state(), MachineState::Retiring | MachineState::Deleting);
                if leaving && matches!(progress, Progress::Wait) && !m.step_done(WAS_ON) {
                    self.step_recorded(WAS_ON).await?;
                }
                Ok(progress)
            }
            Step::PowerOn => self.power_to(bmc, [PowerState::On, PowerState::PoweringOn], PowerAction::On).await,
            Step::ClearBoot => Ok(bmc.clear_boot_override().await.map(|()| Progress::Done)?),
            Step::Erase => self.erase(bmc).await,
            Step::IssueToken => self.issue_token().await,
            Step::InsertImage => Ok(bmc.insert_media(&m.image).await.map(|()| Progress::Done)?),
            Step::InsertConfig => {
                let url = self.boot_config_url().await?;
                Ok(bmc.insert_config(&url).await.map(|()| Progress::Done)?)
            }
            Step::InsertRescue => {
                let image = self.rescue_image().await?;
                Ok(bmc.insert_media(&image).await.map(|()| Progress::Done)?)
            }
            Step::BootFromMedia => {
                let device = if m.driver == "ipmi" { BootDevice::Pxe } else { BootDevice::VirtualCd };
                Ok(bmc.boot_once(device).await.map(|()| Progress::Done)?)
            }
            Step::Eject => Ok(bmc.eject_media().await.map(|()| Progress::Done)?),
            Step::AwaitJoin => {
                let node = self.store().node_fetch(&m.node_id).await.map_err(StepFailure::store)?;
                let joined = node.is_some_and(|node| {
                    !m.deploy_token_id.is_empty()
                        && node.join_token_id == m.deploy_token_id
                        && node.state == PoolNodeState::Ready
                });
                Ok(if joined { Progress::Done } else { Progress::Wait })
            }
        }
    }

    /// Erases every disk by the best method its drive offers, then reads each back: done with a
    /// `metal.machine.erased` event naming, per disk, its serial, the method and whether the
    /// read-back verified it. A disk that still holds data fails the state naming it, so a
    /// machine never becomes `ready` with data on it.
    ///
    /// Each disk's erase is recorded as started before it is asked and as done after, so a
    /// worker killed during it never asks it twice for one request: a resumed pass reads a
    /// started disk back instead (blank: done), and fails the state where it cannot tell. A call
    /// the BMC refused or never received (a 5xx, a refused connection) did nothing: its start
    /// is taken back and the next pass asks again.
    async fn erase(&self, bmc: &dyn Bmc) -> Result<Progress, StepFailure> {
        let m = self.machine;
        let disks = bmc.erase_targets().await?;
        for disk in &disks {
            let (started, done) = erase_steps(disk);
            if m.step_done(&done) {
                continue;
            }
            if m.step_done(&started) || m.step_done(ERASE_STARTED) {
                match bmc.read_back(disk).await? {
                    ReadBack::Blank => {
                        self.step_recorded(&done).await?;
                        continue;
                    }
                    _ => {
                        let last = self.pass.item.last_error.as_deref().unwrap_or("the worker stopped during the call");
                        return Err(StepFailure::refused(format!(
                            "the erase of disk {} did not finish ({last}); it is not asked twice for one request: \
                             ask again to erase",
                            disk_named(disk)
                        )));
                    }
                }
            }
            self.step_recorded(&started).await?;
            match bmc.erase_disk(disk).await {
                Ok(()) => self.step_recorded(&done).await?,
                Err(error) if not_received(&error) => {
                    self.store()
                        .metal_step_undone(&m.node_id, self.state(), &started, now_micros())
                        .await
                        .map_err(StepFailure::store)?;
                    return Err(error.into());
                }
                Err(error) => return Err(error.into()),
            }
        }
        let mut report = Vec::new();
        for disk in &disks {
            let verified = match bmc.read_back(disk).await? {
                ReadBack::Blank => true,
                ReadBack::Unavailable => false,
                ReadBack::HoldsData => {
                    return Err(StepFailure::refused(format!(
                        "disk {} still holds data after its {}: it could not be erased (read-only or failed); \
                         the machine is not made ready with data on it",
                        disk_named(disk),
                        disk.method.as_str()
                    )));
                }
            };
            report.push(serde_json::json!({"name": disk.name, "serial": disk.serial, "method": disk.method.as_str(),
                "verified": verified}));
        }
        let recorded = self
            .store()
            .metal_erased(&m.node_id, self.state(), Step::Erase.name(), &serde_json::Value::Array(report), now_micros())
            .await
            .map_err(StepFailure::store)?;
        if !recorded {
            return Err(StepFailure::transient("the machine changed during the pass"));
        }
        tracing::info!(node = %m.node_id, pool = %m.pool_id, disks = disks.len(), "metal machine's disks erased");
        Ok(Progress::Recorded)
    }

    /// Records `step` of the current state as done; the machine having moved is a transient
    /// failure (the next pass reads it again).
    async fn step_recorded(&self, step: &str) -> Result<(), StepFailure> {
        let m = self.machine;
        match self.store().metal_step_done(&m.node_id, self.state(), step, now_micros()).await {
            Ok(true) => Ok(()),
            Ok(false) => Err(StepFailure::transient("the machine changed during the pass")),
            Err(error) => Err(StepFailure::store(error)),
        }
    }

    /// Makes the deploy's one-use join token (expiring with the deadline) and records its boot
    /// configuration sealed, with the SHA-256 of the configuration URL's secret.
    async fn issue_token(&self) -> Result<Progress, StepFailure> {
        let m = self.machine;
        let Some(endpoint) = &self.reconciler.endpoint else {
            return Err(StepFailure::refused(
                "the worker was started without --api-endpoint, so a deployed machine cannot reach the API",
            ));
        };
        let now = now_micros();
        let bearer: Bearer<JoinTokenId> = Bearer::generate();
        let token = JoinTokenRow {
            id: bearer.id.to_string(),
            pool_id: m.pool_id.clone(),
            tenant_id: m.tenant_id.clone(),
            description: format!("deploy of machine {} ({})", m.node_id, m.name),
            max_uses: 1,
            uses: 0,
            expires_at: m.deadline.unwrap_or(now + 3_600_000_000),
            labels: m.labels.clone(),
            taints: Vec::new(),
            secret_sha256: bearer.secret_sha256(),
            created_by: format!("reconciler:{METAL_KIND}"),
            idempotency_key: String::new(),
            request_digest: String::new(),
            created_at: now,
            revoked_at: None,
            last_used_at: None,
            joins: Vec::new(),
            machine_id: Some(metal_machine_id(&m.node_id)),
        };
        let config = BootConfig {
            endpoint: endpoint.url.clone(),
            join_token: bearer.reveal(),
            ca_sha256: endpoint.ca_sha256.clone(),
            machine_id: metal_machine_id(&m.node_id),
            pool_id: m.pool_id.clone(),
            labels: m.labels.clone(),
        };
        let document = serde_json::to_string(&config).expect("a boot configuration serializes");
        let sealed = self.reconciler.secret_key.seal(&document, &m.node_id).map_err(StepFailure::store)?;
        let secret_sha256 = boot_config::secret_sha256(&boot_config::secret(&config.join_token));
        self.store()
            .metal_deploy_token_issue(&m.node_id, &token, &sealed, &secret_sha256, now)
            .await
            .map_err(StepFailure::store)?;
        tracing::info!(node = %m.node_id, pool = %m.pool_id, join_token = %token.id, "metal deploy join token issued");
        Ok(Progress::Recorded)
    }

    /// The image a rescue boots, as the pool's policy says now.
    async fn rescue_image(&self) -> Result<String, StepFailure> {
        let pool = self.store().pool_fetch(&self.machine.pool_id).await.map_err(StepFailure::store)?;
        let policy = metal_policy::read(&pool.policy)
            .map_err(|error| StepFailure::refused(format!("the pool's metal policy is not valid: {error}")))?;
        Ok(policy.rescue_image().to_owned())
    }

    /// The deploy's boot configuration URL, rebuilt from its sealed configuration.
    async fn boot_config_url(&self) -> Result<String, StepFailure> {
        let m = self.machine;
        let sealed = self.store().metal_deploy_token_sealed(&m.node_id).await.map_err(StepFailure::store)?;
        let sealed = sealed.ok_or_else(|| StepFailure::refused("the deploy's boot configuration is not recorded"))?;
        let document = self.reconciler.secret_key.open(&sealed, &m.node_id).map_err(StepFailure::store)?;
        let config: BootConfig = serde_json::from_str(document.expose())
            .map_err(|error| StepFailure::refused(format!("the recorded boot configuration is unreadable: {error}")))?;
        Ok(boot_config::url(&config.endpoint, &boot_config::secret(&config.join_token)))
    }

    /// One step of driving the power to `target` (reached, then on its way): done once the BMC
    /// reports it, waiting while it is on its way; otherwise `action` is sent and the step waits.
    async fn power_to(
        &self,
        bmc: &dyn Bmc,
        [reached, on_its_way]: [PowerState; 2],
        action: PowerAction,
    ) -> Result<Progress, StepFailure> {
        let power = bmc.power_state().await?;
        self.observe(power, None).await?;
        if power == reached {
            return Ok(Progress::Done);
        }
        if power != on_its_way {
            bmc.power(action).await?;
        }
        Ok(Progress::Wait)
    }

    async fn observe(&self, power: PowerState, inventory: Option<serde_json::Value>) -> Result<(), StepFailure> {
        let power = match power {
            PowerState::On => "on",
            PowerState::Off => "off",
            PowerState::PoweringOn => "poweringOn",
            PowerState::PoweringOff => "poweringOff",
        };
        let m = self.machine;
        if power != m.power_state || inventory.is_some() {
            self.store()
                .metal_observe(&m.node_id, self.state(), power, inventory.as_ref(), now_micros())
                .await
                .map_err(StepFailure::store)?;
        }
        Ok(())
    }

    /// Ends the state in its success state: the table's, or for `exitingRescue` the state the
    /// machine was rescued from.
    async fn succeed(&self) -> Result<Outcome, PassError> {
        let to = self.transition.success.or(self.machine.rescued_from).unwrap_or(MachineState::Ready);
        let mut reason = format!("{} completed", self.transition.verb);
        if matches!(self.state(), MachineState::Retiring | MachineState::Deleting) {
            // What was done to the machine on its way out, from a fresh read of the steps.
            let m = self.store().metal_fetch(&self.machine.node_id).await?;
            let was_on = m.as_ref().is_some_and(|m| m.step_done(WAS_ON));
            reason.push_str(match was_on {
                true => ": the machine was on and was powered off first",
                false => ": the machine was off",
            });
            if let (MachineState::Deleting, Some(m)) = (self.state(), m) {
                self.store().metal_delete(&m.node_id, m.version, MachineState::Deleting, &reason, now_micros()).await?;
                tracing::info!(node = %m.node_id, pool = %m.pool_id, "metal machine deleted: {reason}");
                return Ok(Outcome::remove());
            }
        }
        self.finish(to, String::new(), reason).await
    }

    /// Ends the state in its failure state with `message`: the table's, or for `retiring` the
    /// state the machine came from. A `deleting` machine does not fail: it keeps trying, its
    /// problem saying why.
    async fn fail(&self, message: String, what: &str) -> Result<Outcome, PassError> {
        if self.state() == MachineState::Deleting {
            tracing::warn!(node = %self.machine.node_id, pool = %self.machine.pool_id, step = what,
                "metal machine not deleted yet: {message}");
            self.outage(what, &message).await;
            return Err(PassError::invalid(message));
        }
        let to = self.transition.failure.or(self.machine.previous_state).unwrap_or(MachineState::Ready);
        tracing::warn!(node = %self.machine.node_id, pool = %self.machine.pool_id, from = %self.state(), to = %to,
            step = what, "metal workflow failed: {message}");
        self.finish(to, message.clone(), message).await
    }

    async fn finish(&self, to: MachineState, error: String, reason: String) -> Result<Outcome, PassError> {
        let m = self.machine;
        let finish = MetalFinish {
            from: m.provision_state,
            to,
            error,
            reason,
            leave_pool: m.provision_state == MachineState::Releasing && to == MachineState::Ready,
            wipe_credentials: to == MachineState::Retired,
        };
        self.store().metal_finish(&m.node_id, &finish, now_micros()).await?;
        tracing::info!(node = %m.node_id, pool = %m.pool_id, from = %m.provision_state, to = %to, "metal machine moved");
        // A deployed machine stays watched (see `watch`); new credentials waiting are checked
        // next; the other stable states need no pass.
        let next = match (to, m.credentials_pending) {
            (_, true) => Outcome::after(Duration::ZERO),
            (MachineState::Deployed, false) => Outcome::settled(),
            _ => Outcome::remove(),
        };
        Ok(next.in_state(to))
    }
}

/// Why a step did not get done.
struct StepFailure {
    /// Asking again will fail the same way: the state fails now.
    refused: bool,
    message: String,
}

impl StepFailure {
    fn refused(message: impl Into<String>) -> Self {
        Self { refused: true, message: message.into() }
    }

    fn transient(message: impl Into<String>) -> Self {
        Self { refused: false, message: message.into() }
    }

    fn store(error: crate::error::Error) -> Self {
        Self::transient(error.to_string())
    }
}

impl From<ProviderError> for StepFailure {
    fn from(error: ProviderError) -> Self {
        let refused = matches!(error.kind, ErrorKind::Permanent | ErrorKind::NotFound);
        Self { refused, message: error.to_string() }
    }
}

/// The steps that record `disk`'s erase as started and as done (a drive's path holds no comma,
/// which separates the steps; one that did would still name it uniquely).
fn erase_steps(disk: &EraseTarget) -> (String, String) {
    let key = disk.id.replace(',', "%2C");
    (format!("eraseStarted:{key}"), format!("erased:{key}"))
}

/// A disk as a message names it: its name and serial.
fn disk_named(disk: &EraseTarget) -> String {
    match disk.serial.is_empty() {
        true => disk.name.clone(),
        false => format!("{} (serial {})", disk.name, disk.serial),
    }
}

/// Whether a failed call certainly did nothing: the BMC answered it with a refusal that is
/// not a timeout (a 5xx, a 429), or the connection was never made.
fn not_received(error: &ProviderError) -> bool {
    error.kind == ErrorKind::Transient
        && (error.status.is_some() || error.class() == crate::provider::ErrorClass::Unreachable)
        && error.reason != "timeout"
}

fn store_failure(error: crate::error::Error) -> ProviderError {
    ProviderError::new(ErrorKind::Transient, "store", error.to_string())
}

/// The inventory as the metal view shows it.
fn inventory_json(inventory: &bmc::Inventory) -> serde_json::Value {
    serde_json::json!({
        "cpus": inventory.cpus,
        "cpuModel": inventory.cpu_model,
        "memoryMib": inventory.memory_mib,
        "nics": inventory.nics.iter().map(|nic| serde_json::json!({"name": nic.name, "mac": nic.mac})).collect::<Vec<_>>(),
        "disks": inventory.disks.iter().map(|disk| serde_json::json!({"name": disk.name, "sizeBytes": disk.size_bytes})).collect::<Vec<_>>(),
        "vendor": inventory.vendor,
        "model": inventory.model,
        "serial": inventory.serial,
    })
}
