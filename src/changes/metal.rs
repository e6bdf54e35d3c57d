//! Bare-metal machines: the plans of their updates and deletes. A machine is not made or removed
//! at a provider; what a change asks of it is of its BMC.

use serde_json::json;

use super::{Effect, Plan};
use crate::store::MetalMachineRow;

/// The plan of an update of an idle machine: its name and labels are the pool's own records; a
/// new BMC address or credentials are used the next time its BMC is called, the machine
/// itself untouched (`password_changed`: the update names a password, which no row shows).
pub fn metal_update(
    before: &MetalMachineRow,
    after: &MetalMachineRow,
    password_changed: bool,
    username: Option<&str>,
) -> Plan {
    let mut plan = Plan::default();
    plan.compare("name", &before.name, &after.name, Effect::None, || "recorded only: the BMC is not asked".into());
    plan.compare("labels", &before.labels, &after.labels, Effect::None, || {
        "recorded only: the BMC is not asked".into()
    });
    let bmc = "used the next time the machine's BMC is called; the machine is not powered or booted";
    plan.compare("address", &before.address, &after.address, Effect::None, || bmc.into());
    // New credentials are checked against the BMC before the old ones are dropped: the view
    // shows the old user until then, so the plan shows the one asked for.
    let checked = "checked against the BMC (sign in, read the power) before the old credentials are dropped; \
                   refused, the old ones stay in use";
    let asked = username.unwrap_or(&after.username);
    plan.compare("username", &before.username.as_str(), &asked, Effect::None, || checked.into());
    plan.compare("caCertificate", &before.ca_certificate, &after.ca_certificate, Effect::None, || bmc.into());
    plan.compare("insecure", &before.insecure, &after.insecure, Effect::None, || bmc.into());
    if password_changed {
        // The password is never shown, only that it changes.
        plan.change("password", json!("(set)"), json!("(new)"), Effect::None, checked);
    }
    plan
}

/// The plan of deleting a machine: the pool forgets it. A `manageable` one is powered off at
/// its BMC first (`deleting`); one whose BMC was never reached or whose credentials are wiped
/// is left as it is.
pub fn metal_delete(machine: &MetalMachineRow) -> Plan {
    let mut plan = Plan::default();
    let through_bmc = !crate::domain::metal_states::WITHOUT_BMC.contains(&machine.provision_state);
    let what = match through_bmc {
        true => "the machine is powered off at its BMC (deleting), then the pool stops managing it",
        false => "the pool stops managing the machine; its BMC is no longer called",
    };
    plan.change("state", json!(machine.provision_state.as_str()), json!("deleted"), Effect::Delete, what.to_owned());
    match (through_bmc, machine.power_state.as_str()) {
        (true, "off") => {}
        (true, _) => plan.disrupt("the machine is powered off before it is deleted"),
        (false, "on") => plan.disrupt("the machine is left powered on; power it off at its BMC if it should stop"),
        (false, _) => {}
    }
    plan
}
