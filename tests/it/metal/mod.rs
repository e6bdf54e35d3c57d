//! Bare metal through `POST /api/compute/metal/...`: every (state, verb) pair against the
//! provision state table of the API reference (written out here by hand, so the code's table
//! is checked against the reference and not against itself), enrolment's checks, idempotency and quota, update
//! and delete only where allowed, two racing verbs, who may call, and the BMC password found
//! nowhere but sealed in its column.

mod credentials;
mod dev;
mod erase;
mod flow;
mod leaving;
mod outage;
mod plan_reality;
mod pxe;
mod remediation;
mod secrets;
mod sessions;
mod states;

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::{OwnPool, System};

pub use crate::harness::{ENROLL, PASSWORD};

/// A server with acme's own pool for machines (a policy of none), acme's admin, and the
/// platform's pool offered to acme.
pub async fn setup(backend: Backend) -> OwnPool {
    setup_with_policy(backend, json!({})).await
}

/// [`setup`] with the pool's `policy`.
pub async fn setup_with_policy(backend: Backend, policy: Value) -> OwnPool {
    System::on(backend).own_pool("metal", policy).await
}

/// An enrolment's body for a Redfish BMC.
pub fn enrolment(pool: &str, name: &str, key: &str) -> Value {
    json!({"poolId": pool, "name": name, "idempotencyKey": key, "labels": {"rack": "r1"},
        "bmc": {"driver": "redfish", "address": "https://10.0.0.5", "username": "admin", "password": PASSWORD,
            "insecure": true}})
}

impl OwnPool {
    /// Enrols machine `name` and returns its view.
    pub async fn enroll(&self, name: &str) -> Value {
        let (status, machine) = self.as_admin(ENROLL, enrolment(&self.pool, name, name)).await;
        assert_eq!(status, 200, "{machine}");
        machine
    }

    /// Calls `/api/compute/metal/<method>` on machine `node` of the pool with `extra` fields.
    pub async fn call(&self, method: &str, node: &str, extra: Value) -> (u16, Value) {
        let mut body = json!({"poolId": self.pool, "nodeId": node});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        self.as_admin(&format!("/api/compute/metal/{method}"), body).await
    }

    /// Puts machine `node` in `state` through the store, as a reconciler would have.
    pub async fn put_in_state(&self, node: &str, state: &str) {
        self.execute(&format!("UPDATE metal_machines SET provision_state = '{state}' WHERE node_id = '{node}'")).await;
    }

    /// Records an inventory for machine `node` through the store, as an inspection would have.
    pub async fn put_inspected(&self, node: &str) {
        let inventory = r#"{"cpus": 8, "memoryMib": 32768, "disks": [{"name": "disk0", "sizeBytes": 1}]}"#;
        self.execute(&format!("UPDATE metal_machines SET inventory = '{inventory}' WHERE node_id = '{node}'")).await;
    }

    /// The pool's metal events, oldest first.
    pub async fn events(&self) -> Vec<better_compute::store::EventRow> {
        let filter =
            better_compute::store::EventFilter { subject: self.pool.clone(), limit: 1000, ..Default::default() };
        let events = self.server.store.event_list_after(&filter).await.unwrap();
        events.into_iter().filter(|event| event.event_type.starts_with("metal.")).collect()
    }
}
