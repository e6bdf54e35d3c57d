//! Bare-metal machines: the plans of their updates and deletes. A machine is not made or removed
//! at a provider; what a change asks of it is of its BMC.

use serde_json::json;

use super::{Effect, Plan};
use crate::store::MetalMachineRow;

/// The plan of an update of an idle machine: its name and labels are the pool's own records; a
/// new BMC address or credentials are used the next time its BMC is called, the machine
/// itself untouched (`password_changed`: the update names a password, which no row shows).
pub fn metal_update(before: &MetalMachineRow, after: &MetalMachineRow, password_changed: bool) -> Plan {
    let mut plan = Plan::default();
    plan.compare("name", &before.name, &after.name, Effect::None, || "recorded only: the BMC is not asked".into());
    plan.compare("labels", &before.labels, &after.labels, Effect::None, || {
        "recorded only: the BMC is not asked".into()
    });
    let bmc = "used the next time the machine's BMC is called; the machine is not powered or booted";
    plan.compare("address", &before.address, &after.address, Effect::None, || bmc.into());
    plan.compare("username", &before.username, &after.username, Effect::None, || bmc.into());
    plan.compare("caCertificate", &before.ca_certificate, &after.ca_certificate, Effect::None, || bmc.into());
    plan.compare("insecure", &before.insecure, &after.insecure, Effect::None, || bmc.into());
    if password_changed {
        // The password is never shown, only that it changes.
        plan.change("password", json!("(set)"), json!("(new)"), Effect::None, bmc);
    }
    plan
}

/// The plan of deleting a machine: the pool forgets it; the machine and its disks stay as they
/// are at its BMC.
pub fn metal_delete(machine: &MetalMachineRow) -> Plan {
    let mut plan = Plan::default();
    plan.change(
        "state",
        json!(machine.provision_state.as_str()),
        json!("deleted"),
        Effect::Delete,
        "the pool stops managing the machine; its BMC is no longer called".to_owned(),
    );
    if machine.power_state == "on" {
        plan.disrupt("the machine is left powered on; power it off at its BMC if it should stop");
    }
    plan
}
