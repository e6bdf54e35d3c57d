//! The objects the fake kubelets and DaemonSet controller write: a daemon's Pod (owned by its
//! DaemonSet, bound to its node, its phase and conditions as a kubelet reports them) and the
//! DaemonSet's status counts.

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// Where a daemon's container is.
#[derive(Clone, Debug, PartialEq)]
pub enum ContainerState {
    /// It cannot start yet: a kubelet's reason (`CreateContainerConfigError`) and message.
    Waiting { reason: String, message: String },
    /// bcd runs; `ready` once it has joined.
    Running { started: String, ready: bool },
    /// bcd exited before joining and is started again after a back-off.
    BackOff { message: String },
    /// bcd stopped for good (its node was deleted).
    Failed { message: String, finished: String },
}

/// What a pod is made of.
pub struct PodFacts<'a> {
    pub name: &'a str,
    pub uid: &'a str,
    pub namespace: &'a str,
    pub created: &'a str,
    pub node: &'a str,
    pub node_ip: &'a str,
    pub pod_ip: &'a str,
    pub restarts: u32,
    pub generation: u64,
    pub state: &'a ContainerState,
}

/// A short digest, as the controller names revisions.
fn digest(text: &str) -> String {
    Sha256::digest(text).iter().take(5).map(|b| format!("{b:02x}")).collect()
}

/// The pod of `daemonset` (the stored object) described by `facts`.
pub fn pod_json(daemonset: &Value, facts: &PodFacts) -> Value {
    let template = &daemonset["spec"]["template"];
    let mut labels = template["metadata"]["labels"].clone();
    if !labels.is_object() {
        labels = json!({});
    }
    labels["controller-revision-hash"] = json!(digest(&template.to_string()));
    labels["pod-template-generation"] = json!(facts.generation.to_string());
    let mut spec = template["spec"].clone();
    spec["nodeName"] = json!(facts.node);
    let containers = spec["containers"].as_array().cloned().unwrap_or_default();
    let (phase, ready) = match facts.state {
        ContainerState::Running { ready, .. } => ("Running", *ready),
        ContainerState::Waiting { .. } => ("Pending", false),
        ContainerState::BackOff { .. } => ("Running", false),
        ContainerState::Failed { .. } => ("Failed", false),
    };
    let statuses: Vec<Value> = containers
        .iter()
        .map(|container| {
            let image = container["image"].as_str().unwrap_or_default();
            let state = match facts.state {
                ContainerState::Waiting { reason, message } => {
                    json!({"waiting": {"reason": reason, "message": message}})
                }
                ContainerState::Running { started, .. } => json!({"running": {"startedAt": started}}),
                ContainerState::BackOff { message } => {
                    json!({"waiting": {"reason": "CrashLoopBackOff", "message": message}})
                }
                ContainerState::Failed { message, finished } => json!({"terminated": {
                    "exitCode": 1, "reason": "Error", "message": message,
                    "startedAt": facts.created, "finishedAt": finished}}),
            };
            let running = matches!(facts.state, ContainerState::Running { .. });
            json!({
                "name": container["name"], "image": image, "imageID": format!("{image}@sha256:{}", digest(image)),
                "containerID": format!("containerd://{}", digest(&format!("{}{}", facts.uid, facts.restarts))),
                "ready": ready, "started": running, "restartCount": facts.restarts, "state": state,
            })
        })
        .collect();
    let condition = |kind: &str, holds: bool| {
        let mut condition = json!({"type": kind, "status": if holds { "True" } else { "False" },
                                   "lastProbeTime": null, "lastTransitionTime": facts.created});
        if !holds {
            condition["reason"] = json!("ContainersNotReady");
        }
        condition
    };
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {
            "name": facts.name, "generateName": format!("{}-", daemonset["metadata"]["name"].as_str().unwrap_or_default()),
            "namespace": facts.namespace, "uid": facts.uid, "creationTimestamp": facts.created, "labels": labels,
            "annotations": template["metadata"]["annotations"],
            "ownerReferences": [{"apiVersion": "apps/v1", "kind": "DaemonSet", "name": daemonset["metadata"]["name"],
                                 "uid": daemonset["metadata"]["uid"], "controller": true, "blockOwnerDeletion": true}],
        },
        "spec": spec,
        "status": {
            "phase": phase,
            "conditions": [condition("Initialized", true), condition("Ready", ready),
                           condition("ContainersReady", ready), condition("PodScheduled", true)],
            "hostIP": facts.node_ip, "hostIPs": [{"ip": facts.node_ip}],
            "podIP": facts.pod_ip, "podIPs": [{"ip": facts.pod_ip}],
            "startTime": facts.created, "qosClass": "BestEffort", "containerStatuses": statuses,
        },
    })
}

/// A DaemonSet's status counts.
#[derive(Default)]
pub struct Counts {
    /// Nodes it selects.
    pub desired: u64,
    /// Nodes running one of its pods.
    pub current: u64,
    /// Pods whose bcd joined.
    pub ready: u64,
    /// Pods of its current generation.
    pub updated: u64,
}

pub fn daemonset_status(generation: u64, counts: &Counts) -> Value {
    json!({
        "currentNumberScheduled": counts.current, "desiredNumberScheduled": counts.desired,
        "numberMisscheduled": 0, "numberReady": counts.ready, "updatedNumberScheduled": counts.updated,
        "numberAvailable": counts.ready, "numberUnavailable": counts.desired.saturating_sub(counts.ready),
        "observedGeneration": generation,
    })
}
