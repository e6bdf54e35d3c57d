//! `bettercompute.compute.v1.Metal`: a machine's metal view (whether BMC credentials are set,
//! never the credentials; the verbs its state allows, from the provision state table) and the
//! table of its methods.

use serde_json::Value;

use super::handlers::thin_service;
use super::plans::plan_view;
use super::timestamp;
use crate::domain::metal_states::allowed_for;
use crate::proto::compute::{
    CommissionMetalRequest, DeleteMetalRequest, DeployMetalRequest, EnrollMetalRequest, GetMetalRequest,
    InspectMetalRequest, ListMetalRequest, ListMetalResponse, MetalDisk, MetalInventory, MetalMachine, MetalNic, Plan,
    PlanMetalRequest, ReleaseMetalRequest, RescueMetalRequest, RetireMetalRequest, UpdateMetalRequest, metal_server,
};
use crate::store::MetalMachineRow;

/// The inventory as the reconciler records it: `MetalInventory` in its JSON mapping.
fn inventory_view(inventory: &Value) -> MetalInventory {
    let text = |value: &Value, key: &str| value[key].as_str().unwrap_or_default().to_owned();
    let list = |key: &str| inventory[key].as_array().cloned().unwrap_or_default();
    MetalInventory {
        cpus: inventory["cpus"].as_i64().unwrap_or_default() as i32,
        cpu_model: text(inventory, "cpuModel"),
        memory_mib: inventory["memoryMib"].as_i64().unwrap_or_default(),
        nics: list("nics").iter().map(|nic| MetalNic { name: text(nic, "name"), mac: text(nic, "mac") }).collect(),
        disks: list("disks")
            .iter()
            .map(|disk| MetalDisk {
                name: text(disk, "name"),
                size_bytes: disk["sizeBytes"].as_i64().unwrap_or_default(),
            })
            .collect(),
        vendor: text(inventory, "vendor"),
        model: text(inventory, "model"),
        serial: text(inventory, "serial"),
    }
}

fn metal_view(row: MetalMachineRow) -> MetalMachine {
    let allowed_verbs = match row.deleted_at {
        Some(_) => Vec::new(),
        None => allowed_for(row.provision_state, row.inventory.is_some()).into_iter().map(str::to_owned).collect(),
    };
    MetalMachine {
        allowed_verbs,
        inventory: row.inventory.as_ref().map(inventory_view),
        id: row.node_id,
        pool_id: row.pool_id,
        name: row.name,
        labels: row.labels.into_iter().collect(),
        driver: row.driver,
        address: row.address,
        username: row.username,
        credentials_set: row.credentials_set,
        ca_certificate: row.ca_certificate,
        insecure: row.insecure,
        power_state: row.power_state,
        drift: super::views::drift_view(row.drift),
        problem: super::views::problem_view(row.problem),
        provision_state: row.provision_state.into(),
        previous_state: row.previous_state.map(String::from).unwrap_or_default(),
        deadline: row.deadline.map(timestamp),
        last_error: row.last_error,
        image: row.image,
        created_by: row.created_by,
        version: row.version,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        deleted_at: row.deleted_at.map(timestamp),
    }
}

thin_service! {
    impl metal_server::Metal: MetalMachine by metal_view;
    enroll(EnrollMetalRequest) metal_enroll, get(GetMetalRequest) metal_get, update(UpdateMetalRequest) metal_update,
    delete(DeleteMetalRequest) metal_delete, inspect(InspectMetalRequest) metal_inspect,
    commission(CommissionMetalRequest) metal_commission, deploy(DeployMetalRequest) metal_deploy,
    rescue(RescueMetalRequest) metal_rescue, release(ReleaseMetalRequest) metal_release,
    retire(RetireMetalRequest) metal_retire;
    list(ListMetalRequest) metal_list -> ListMetalResponse { machines };
    answers { plan(PlanMetalRequest) metal_plan -> Plan by plan_view };
}
