//! Bare metal: enrolment of a machine by its BMC and the verbs of the provision state machine.
//! Each verb checks its move against [`metal_states`], records it in one transaction (guarded by
//! the row's version: of two racing verbs one wins, the other sees the new state) and queues the
//! metal reconciler; none touches the machine itself. The BMC password is sealed to the node's
//! id before it reaches the store and is never logged, returned or put in an event.

use std::collections::BTreeMap;

use super::create_once::{CreateKey, Created};
use super::request_digest::{self, RequestDigest};
use super::update_mask::Named;
use super::vps::LIST_LIMIT;
use super::{Context, Service};
use crate::domain::metal_policy::{self, MetalPolicy};
use crate::domain::metal_states::{self, DELETABLE, IDLE, WITHOUT_BMC};
use crate::domain::states::MachineState;
use crate::domain::urls;
use crate::error::{Error, FieldViolation, Result, Violations};
use crate::ids::NodeId;
use crate::proto::compute::{
    CommissionMetalRequest, DeleteMetalRequest, DeployMetalRequest, EnrollMetalRequest, GetMetalRequest,
    InspectMetalRequest, ListMetalRequest, MetalBmc, ReleaseMetalRequest, RescueMetalRequest, RetireMetalRequest,
    UpdateMetalRequest,
};
use crate::provider::bmc::address::{self as bmc_address, Checked};
use crate::store::{MetalChange, MetalMachineRow, MetalMove, NewMetalMachine, PoolRow, now_micros};

/// How many times a verb re-reads a machine that changed under it before it gives up.
const RACE_RETRIES: usize = 3;

impl Created for MetalMachineRow {
    fn stored_digest(&self) -> &str {
        &self.request_digest
    }
}

/// What is wrong with a BMC's address, CA certificate and `insecure` for its driver, each
/// named under `prefix` (`bmc.`, or nothing for an update's flat fields).
fn check_bmc(prefix: &str, driver: &str, address: &str, ca_certificate: &str, insecure: bool) -> Violations {
    let mut faults = Violations::new();
    let mut fault = |field: &str, why: String| faults.push(FieldViolation::new(format!("{prefix}{field}"), why));
    match driver {
        "redfish" if address.starts_with("https://") => {}
        "redfish" if address.starts_with("http://") && !insecure => fault(
            "address",
            format!("{address:?} is plain HTTP, which would send the password in clear: use https://, or set insecure"),
        ),
        "redfish" if address.starts_with("http://") => {}
        "redfish" => {
            fault("address", format!("must be the Redfish service root's URL (https://host[:port]); got {address:?}"))
        }
        _ if address.contains("://") => {
            fault("address", format!("an IPMI BMC is named by host or host:port, without a scheme; got {address:?}"))
        }
        _ => {}
    }
    if !ca_certificate.is_empty() {
        if driver != "redfish" {
            fault("caCertificate", "only a Redfish BMC (HTTPS) has a certificate to check".to_owned());
        } else if !ca_certificate.trim_start().starts_with("-----BEGIN CERTIFICATE-----") {
            fault("caCertificate", "must be a PEM certificate (-----BEGIN CERTIFICATE-----)".to_owned());
        }
        if insecure {
            fault("insecure", "cannot be set with caCertificate: give one or the other".to_owned());
        }
    }
    faults
}

/// `INVALID_INPUT` naming `field` when the BMC address resolves to an address the pool's
/// policy does not allow (loopback, link-local, the control plane's own hosts...). A host that
/// does not resolve here passes: the worker checks again, resolving, before every connection.
async fn check_bmc_reach(field: &str, driver: &str, address: &str, policy: &MetalPolicy) -> Result<()> {
    match bmc_address::check(driver, address, &policy.bmc_allowed_networks, &[]).await {
        Checked::Refused(why) => Err(Error::fields(vec![FieldViolation::new(field, why)])),
        Checked::Allowed(_) | Checked::Unresolved(_) | Checked::Malformed => Ok(()),
    }
}

/// `INVALID_STATE` for `verb` on a machine in `state`, listing what `state` allows.
fn not_allowed(machine: &MetalMachineRow, verb: &str, allowed_for_verb: &[MachineState]) -> Error {
    let deleted = machine.deleted_at.is_some();
    let state = if deleted { "deleted" } else { machine.provision_state.as_str() };
    let allowed = if deleted {
        Vec::new()
    } else {
        metal_states::allowed_for(machine.provision_state, machine.inventory.is_some())
    };
    let from_there = if allowed.is_empty() { "nothing".to_owned() } else { allowed.join(", ") };
    Error::invalid_state(format!(
        "machine {} is {state}: {verb} is allowed from {}; from {state}: {from_there}",
        machine.node_id,
        allowed_for_verb.iter().map(|state| state.as_str()).collect::<Vec<_>>().join(", ")
    ))
    .with_detail("state", state)
    .with_detail("allowed", allowed)
    .with_detail("nodeId", machine.node_id.as_str())
}

/// `INVALID_STATE` for a commission of a machine never inspected: the state table starts a
/// commission from an inspected machine, whose inventory it checks again.
fn never_inspected(machine: &MetalMachineRow) -> Error {
    Error::invalid_state(format!(
        "machine {} was never inspected: commission starts from an inspected machine; inspect it first \
         (metal inspect), then commission it once it is manageable again",
        machine.node_id
    ))
    .with_detail("state", machine.provision_state.as_str())
    .with_detail("reason", "notInspected")
    .with_detail("allowed", metal_states::allowed_for(machine.provision_state, false))
    .with_detail("nodeId", machine.node_id.as_str())
}

impl Service {
    /// The pool a machine is enrolled in: `NOT_FOUND` for an unknown or deleted pool,
    /// `INVALID_STATE` for an archived one.
    async fn metal_pool(&self, pool_id: &str) -> Result<PoolRow> {
        self.pool_taking_new(pool_id, "no machine may be enrolled").await
    }

    /// Machine `node_id` of pool `pool_id`; `NOT_FOUND` for one of another pool.
    pub(super) async fn metal_of_pool(&self, pool_id: &str, node_id: &str) -> Result<MetalMachineRow> {
        match self.store.metal_fetch(node_id).await? {
            Some(machine) if machine.pool_id == pool_id => Ok(machine),
            _ => Err(Error::not_found("machine", node_id)),
        }
    }

    /// Enrols a machine, or answers a retry of the enrolment that made it; see `Metal.Enroll`.
    pub async fn metal_enroll(&self, ctx: &Context, request: EnrollMetalRequest) -> Result<MetalMachineRow> {
        let id = NodeId::derived(&request.pool_id, &ctx.caller.principal_id, &request.idempotency_key);
        // The password stays out of the digest: a digest is no place for a password, even hashed.
        let mut digested = request.clone();
        if let Some(bmc) = digested.bmc.as_mut() {
            bmc.password.clear();
        }
        let digest = RequestDigest {
            current: request_digest::of("bettercompute.compute.v1.EnrollMetalRequest", &digested),
            legacy: None,
        };
        let key = CreateKey { what: "machine", id_field: "nodeId", id: id.as_str(), digest: &digest };
        let fetch = || async { self.store.metal_fetch(id.as_str()).await };
        let create = async {
            let machine = self.metal_enroll_new(ctx, &request, &id, &digest.current).await?;
            Ok((machine, true))
        };
        self.create_once(ctx, key, fetch, create).await
    }

    /// The checks and the records of an enrolment no earlier call with its key made.
    async fn metal_enroll_new(
        &self,
        ctx: &Context,
        request: &EnrollMetalRequest,
        id: &NodeId,
        digest: &str,
    ) -> Result<MetalMachineRow> {
        let default_bmc = MetalBmc::default();
        let bmc = request.bmc.as_ref().unwrap_or(&default_bmc);
        let faults = check_bmc("bmc.", &bmc.driver, &bmc.address, &bmc.ca_certificate, bmc.insecure);
        if !faults.is_empty() {
            return Err(faults.into_error());
        }
        let pool = self.metal_pool(&request.pool_id).await?;
        let policy = metal_policy::read(&pool.policy)?;
        check_bmc_reach("bmc.address", &bmc.driver, &bmc.address, &policy).await?;
        let password_sealed = self.sealing_key()?.seal(&bmc.password, id.as_str())?;
        let now = now_micros();
        let deadline = self.metal_deadline(&policy, MachineState::Enrolling, now);
        let row = MetalMachineRow {
            node_id: id.to_string(),
            pool_id: pool.id,
            tenant_id: pool.tenant_id,
            name: request.name.clone(),
            labels: request.labels.iter().map(|(k, v)| (k.clone(), v.clone())).collect(),
            driver: bmc.driver.clone(),
            address: bmc.address.clone(),
            username: bmc.username.clone(),
            credentials_set: true,
            credentials_pending: false,
            ca_certificate: bmc.ca_certificate.clone(),
            insecure: bmc.insecure,
            power_state: "unknown".to_owned(),
            drift: Vec::new(),
            provision_state: MachineState::Enrolling,
            previous_state: None,
            rescued_from: None,
            deadline,
            last_error: String::new(),
            problem: None,
            inventory: None,
            image: String::new(),
            created_by: ctx.caller.principal_id.clone(),
            idempotency_key: request.idempotency_key.clone(),
            request_digest: digest.to_owned(),
            version: 1,
            created_at: now,
            updated_at: now,
            deleted_at: None,
            steps: Vec::new(),
            deploy_token_id: String::new(),
        };
        let new = NewMetalMachine { row, password_sealed, max_machines: policy.max_machines };
        self.store.metal_enroll(&new, now).await
    }

    /// When `state`, entered at `now`, times out under the pool's policy.
    fn metal_deadline(&self, policy: &MetalPolicy, state: MachineState, now: i64) -> Option<i64> {
        policy.deadline(state).map(|d| now + d.as_micros() as i64)
    }

    /// The pool's live machines, oldest first.
    pub async fn metal_list(&self, _ctx: &Context, request: ListMetalRequest) -> Result<Vec<MetalMachineRow>> {
        let pool = self.store.pool_fetch(&request.pool_id).await?;
        self.store.metal_list(&pool.id, LIST_LIMIT).await
    }

    /// One machine of the pool.
    pub async fn metal_get(&self, _ctx: &Context, request: GetMetalRequest) -> Result<MetalMachineRow> {
        self.metal_of_pool(&request.pool_id, &request.node_id).await
    }

    /// Changes the name, labels or BMC of an idle machine; see `Metal.Update`.
    pub async fn metal_update(&self, ctx: &Context, request: UpdateMetalRequest) -> Result<MetalMachineRow> {
        let named = Named::of(&request.update_mask);
        named.require_some(&["name", "labels", "address", "username", "password", "ca_certificate", "insecure"])?;
        let name = named.required("name", "name", request.name)?;
        let address = named.required("address", "address", request.address)?;
        let username = named.required("username", "username", request.username)?;
        let password = named.required("password", "password", request.password)?;
        let ca_certificate = named.clearable("ca_certificate", request.ca_certificate);
        let insecure = named.clearable("insecure", request.insecure);
        let labels: Option<BTreeMap<String, String>> =
            named.list("labels", request.labels).map(|labels| labels.into_iter().collect());
        for _ in 0..RACE_RETRIES {
            let machine = self.metal_of_pool(&request.pool_id, &request.node_id).await?;
            if machine.deleted_at.is_some() || !IDLE.contains(&machine.provision_state) {
                return Err(not_allowed(&machine, "update", IDLE));
            }
            let faults = check_bmc(
                "",
                &machine.driver,
                address.as_deref().unwrap_or(&machine.address),
                ca_certificate.as_deref().unwrap_or(&machine.ca_certificate),
                insecure.unwrap_or(machine.insecure),
            );
            if !faults.is_empty() {
                return Err(faults.into_error());
            }
            if let Some(address) = &address {
                let pool = self.store.pool_fetch(&machine.pool_id).await?;
                let policy = metal_policy::read(&pool.policy)?;
                check_bmc_reach("address", &machine.driver, address, &policy).await?;
            }
            let password_sealed = match &password {
                Some(password) => Some(self.sealing_key()?.seal(password, &machine.node_id)?),
                None => None,
            };
            let change = MetalChange {
                name: name.clone(),
                labels: labels.clone(),
                address: address.clone(),
                username: username.clone(),
                password_sealed,
                ca_certificate: ca_certificate.clone(),
                insecure,
            };
            if let Some(updated) =
                self.store.metal_update(&machine.node_id, machine.version, &change, now_micros()).await?
            {
                tracing::info!(node = %updated.node_id, pool = %updated.pool_id, credentials_pending = password.is_some(),
                    by = %ctx.caller.principal_id, "metal machine updated");
                return Ok(updated);
            }
        }
        Err(Error::conflict(format!("machine {} kept changing; try again", request.node_id)))
    }

    /// Deletes a machine that is `manageable`, `enrollFailed` or `retired`; a deleted or
    /// `deleting` one is returned as it is. A `manageable` machine is `deleting` first: the
    /// reconciler powers it off, then deletes it; the others have no BMC to call.
    pub async fn metal_delete(&self, ctx: &Context, request: DeleteMetalRequest) -> Result<MetalMachineRow> {
        for _ in 0..RACE_RETRIES {
            let machine = self.metal_of_pool(&request.pool_id, &request.node_id).await?;
            if machine.deleted_at.is_some() || machine.provision_state == MachineState::Deleting {
                return Ok(machine);
            }
            if !DELETABLE.contains(&machine.provision_state) {
                return Err(not_allowed(&machine, "delete", DELETABLE));
            }
            if !WITHOUT_BMC.contains(&machine.provision_state) {
                let pool = self.store.pool_fetch(&machine.pool_id).await?;
                let policy = metal_policy::read(&pool.policy)?;
                let now = now_micros();
                let mv = MetalMove {
                    from: machine.provision_state,
                    to: MachineState::Deleting,
                    deadline: self.metal_deadline(&policy, MachineState::Deleting, now),
                    rescued_from: None,
                    image: None,
                    wipe_credentials: false,
                    reason: format!("delete requested by {}", ctx.caller.principal_id),
                };
                if let Some(moved) = self.store.metal_move(&machine.node_id, machine.version, &mv, now).await? {
                    tracing::info!(node = %moved.node_id, pool = %moved.pool_id, by = %ctx.caller.principal_id,
                        "metal machine deleting");
                    return Ok(moved);
                }
                continue;
            }
            let deleted = self
                .store
                .metal_delete(&machine.node_id, machine.version, machine.provision_state, "delete", now_micros())
                .await?;
            if let Some(deleted) = deleted {
                tracing::info!(node = %deleted.node_id, pool = %deleted.pool_id, by = %ctx.caller.principal_id,
                    "metal machine deleted");
                return Ok(deleted);
            }
        }
        Err(Error::conflict(format!("machine {} kept changing; try again", request.node_id)))
    }

    /// Moves the machine by `verb` of the provision state table: checks the move, records the
    /// new state with its deadline and the state it came from, and queues the reconciler.
    async fn metal_verb(
        &self,
        ctx: &Context,
        pool_id: &str,
        node_id: &str,
        verb: &str,
        image: Option<String>,
    ) -> Result<MetalMachineRow> {
        let transition = metal_states::transition(verb);
        for _ in 0..RACE_RETRIES {
            let machine = self.metal_of_pool(pool_id, node_id).await?;
            let state = machine.provision_state;
            if machine.deleted_at.is_some() || !transition.from.contains(&state) {
                return Err(not_allowed(&machine, verb, transition.from));
            }
            if verb == "commission" && machine.inventory.is_none() {
                return Err(never_inspected(&machine));
            }
            let pool = self.store.pool_fetch(pool_id).await?;
            let policy = metal_policy::read(&pool.policy)?;
            let image = match (verb, &image) {
                ("deploy", Some(image)) if !image.is_empty() => Some(image.clone()),
                ("deploy", _) if !policy.image.is_empty() => Some(policy.image.clone()),
                ("deploy", _) => {
                    return Err(Error::fields(vec![FieldViolation::new(
                        "image",
                        format!("is required: pool {pool_id}'s policy names no default image (policy.metal.image)"),
                    )]));
                }
                _ => None,
            };
            let now = now_micros();
            // A machine whose BMC was never reached has nothing to power off: retired at once.
            let to = match verb == "retire" && WITHOUT_BMC.contains(&state) {
                true => MachineState::Retired,
                false => transition.to,
            };
            let mv = MetalMove {
                from: state,
                to,
                deadline: self.metal_deadline(&policy, to, now),
                rescued_from: (verb == "rescue").then_some(state),
                image,
                wipe_credentials: to == MachineState::Retired,
                reason: format!("{verb} requested by {}", ctx.caller.principal_id),
            };
            if let Some(moved) = self.store.metal_move(&machine.node_id, machine.version, &mv, now).await? {
                tracing::info!(node = %moved.node_id, pool = %moved.pool_id, from = %mv.from, to = %mv.to,
                    by = %ctx.caller.principal_id, "metal machine {verb}");
                return Ok(moved);
            }
        }
        Err(Error::conflict(format!("machine {node_id} kept changing; try again")))
    }

    /// See `Metal.Inspect`.
    pub async fn metal_inspect(&self, ctx: &Context, request: InspectMetalRequest) -> Result<MetalMachineRow> {
        self.metal_verb(ctx, &request.pool_id, &request.node_id, "inspect", None).await
    }

    /// See `Metal.Commission`.
    pub async fn metal_commission(&self, ctx: &Context, request: CommissionMetalRequest) -> Result<MetalMachineRow> {
        self.metal_verb(ctx, &request.pool_id, &request.node_id, "commission", None).await
    }

    /// See `Metal.Deploy`.
    pub async fn metal_deploy(&self, ctx: &Context, request: DeployMetalRequest) -> Result<MetalMachineRow> {
        if let Some(problem) =
            Some(&request.image).filter(|image| !image.is_empty()).and_then(|image| urls::problem(image))
        {
            return Err(Error::fields(vec![FieldViolation::new("image", problem)]));
        }
        self.metal_verb(ctx, &request.pool_id, &request.node_id, "deploy", Some(request.image)).await
    }

    /// See `Metal.Rescue`: enters rescue, or with `exit` leaves it.
    pub async fn metal_rescue(&self, ctx: &Context, request: RescueMetalRequest) -> Result<MetalMachineRow> {
        let verb = if request.exit { "exitRescue" } else { "rescue" };
        self.metal_verb(ctx, &request.pool_id, &request.node_id, verb, None).await
    }

    /// See `Metal.Release`.
    pub async fn metal_release(&self, ctx: &Context, request: ReleaseMetalRequest) -> Result<MetalMachineRow> {
        self.metal_verb(ctx, &request.pool_id, &request.node_id, "release", None).await
    }

    /// See `Metal.Retire`.
    pub async fn metal_retire(&self, ctx: &Context, request: RetireMetalRequest) -> Result<MetalMachineRow> {
        self.metal_verb(ctx, &request.pool_id, &request.node_id, "retire", None).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fields(faults: &Violations) -> Vec<&str> {
        faults.kept().iter().map(|f| f.field.as_str()).collect()
    }

    #[test]
    fn a_bmc_address_fits_its_driver() {
        assert!(check_bmc("bmc.", "redfish", "https://10.0.0.5", "", false).is_empty());
        assert!(check_bmc("bmc.", "ipmi", "10.0.0.5:623", "", false).is_empty());
        assert_eq!(fields(&check_bmc("bmc.", "redfish", "http://10.0.0.5", "", false)), ["bmc.address"]);
        assert!(check_bmc("bmc.", "redfish", "http://10.0.0.5", "", true).is_empty(), "plain HTTP when insecure");
        assert_eq!(fields(&check_bmc("bmc.", "redfish", "10.0.0.5", "", false)), ["bmc.address"]);
        assert_eq!(fields(&check_bmc("bmc.", "ipmi", "https://10.0.0.5", "", false)), ["bmc.address"]);
        assert_eq!(fields(&check_bmc("", "ipmi", "h", "-----BEGIN CERTIFICATE-----", false)), ["caCertificate"]);
        assert_eq!(
            fields(&check_bmc("bmc.", "redfish", "https://h", "-----BEGIN CERTIFICATE-----\n", true)),
            ["bmc.insecure"]
        );
    }
}
