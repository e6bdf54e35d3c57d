//! GKE's operations: every change to a cluster or its pools is admitted only when the cluster
//! exists, is not broken and runs no operation the change must wait for (any, for a change of
//! the cluster itself; one on the same pool, or as many as GKE runs at once on a cluster, for a
//! change of a pool), and is answered by an operation that applies it when due.

use axum::response::Response;
use serde_json::{Value, json};

use super::state::{ClusterKey, Effect, GkeOperation, Initiator, pool_of};
use super::{Context, error, status_error};
use crate::faults::Failure;
use crate::operations::FakeOperation;
use crate::{World, json_response};

impl Context<'_> {
    pub(super) fn operation_json(&self, name: &str, op: &GkeOperation) -> Value {
        let mut value = json!({
            "name": name,
            "zone": op.scope.1,
            "operationType": op.operation_type,
            "status": op.status(),
            "selfLink": format!("{}/operations/{name}", self.prefix(&op.scope.1)),
            "targetLink": op.target_link,
            "startTime": op.start_time,
            "location": op.scope.1,
        });
        if op.done {
            value["endTime"] = json!(op.end_time);
        }
        if let Some(message) = &op.error {
            value["error"] = json!({"code": 13, "message": message});
            value["statusMessage"] = json!(message);
        }
        value
    }

    /// Records an operation on `key` and returns it as GKE does.
    pub(super) fn start(
        &self,
        world: &mut World,
        key: &ClusterKey,
        operation_type: &'static str,
        target: String,
        effect: Effect,
    ) -> Response {
        let name = format!("operation-{}-{:08x}", world.next(), rand::random::<u32>());
        let duration = self.shared.config.operation_duration;
        let op = FakeOperation::start(key.clone(), operation_type, target, duration, effect);
        let body = self.operation_json(&name, &op);
        if let Some(cluster) = world.gke.clusters.get_mut(key) {
            cluster.operation_log.push((name.clone(), Initiator::Api));
        }
        world.gke.operations.insert(name, op);
        let running = world.gke.running(key).len();
        let most = world.gke.most_operations_running.entry(key.2.clone()).or_default();
        *most = (*most).max(running);
        json_response(200, body)
    }

    /// Why a change of the cluster `key` (of its node pool `pool`) must wait for the operations
    /// running on it, as GKE words it, if it must. A change of the cluster itself (create,
    /// update, upgrade, delete) runs alone; changes of different node pools run side by side,
    /// one per pool, up to the limit of operations per cluster.
    fn wait_for_operations(world: &World, key: &ClusterKey, pool: Option<&str>) -> Option<String> {
        let running = world.gke.running(key);
        let incompatible =
            running.iter().find(|(_, op)| pool.is_none() || pool_of(op).is_none() || pool_of(op) == pool);
        if let Some((name, _)) = incompatible {
            return Some(format!(
                "Cluster is running incompatible operation projects/{}/locations/{}/operations/{name}.",
                key.0, key.1
            ));
        }
        let (oldest, _) = running.first().filter(|_| running.len() >= world.gke.operation_limit)?;
        Some(format!(
            "Operation {oldest} is currently running on cluster {}. Please wait and try again once it is done.",
            key.2
        ))
    }

    /// The refusal if the cluster is missing, broken or runs operations the change must wait
    /// for; the scripted failure otherwise.
    pub(super) fn admit(
        &self,
        world: &mut World,
        key: &ClusterKey,
        kind: &str,
        verb: &str,
        name: &str,
    ) -> Result<Option<String>, Response> {
        let Some(cluster) = world.gke.clusters.get(key) else {
            return Err(error(404, &format!("Not found: projects/{}/locations/{}/clusters/{}.", key.0, key.1, key.2)));
        };
        if cluster.status == "ERROR" && verb != "delete" {
            return Err(status_error(400, "FAILED_PRECONDITION", "Cluster is in ERROR state; it can only be deleted."));
        }
        if let Some(message) = Self::wait_for_operations(world, key, (kind == "nodePool").then_some(name)) {
            *world.gke.operations_refused.entry(key.2.clone()).or_default() += 1;
            return Err(status_error(400, "FAILED_PRECONDITION", &message));
        }
        match world.faults.take_scripted(kind, verb, name) {
            Some(Failure::Refuse { status, message }) => Err(error(status, &message)),
            Some(Failure::OperationError { message }) => Ok(Some(message)),
            // A class is answered before the emulator sees the call.
            Some(Failure::Class(_)) | None => Ok(None),
        }
    }

    pub(super) fn operation(&self, name: &str) -> Response {
        let world = self.shared.world();
        match world.gke.operations.get(name).filter(|op| op.scope.0 == self.project) {
            Some(op) => json_response(200, self.operation_json(name, op)),
            None => error(
                404,
                &format!("Not found: projects/{}/locations/{}/operations/{name}.", self.project, self.location),
            ),
        }
    }
}
