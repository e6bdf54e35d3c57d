//! The Node objects of a fake cluster, made from its GKE node pools as GKE's nodes look (every
//! field the Kubernetes schema requires, so official clients read them), and the tables kubectl
//! prints.

use std::time::SystemTime;

use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::clock;
use crate::gke::{FakeCluster, FakeNode};
use crate::machine_types;

/// The pods a GKE node takes.
const MAX_PODS: u32 = 110;
/// What kubelet reports running the fake's nodes.
const OS_IMAGE: &str = "Container-Optimized OS from Google";
const KERNEL: &str = "6.6.72+";
const CONTAINERD: &str = "containerd://1.7.24";

/// `gke-<cluster>-<pool>-<index>`, as the fake names its nodes.
pub fn node_name(cluster_name: &str, node: &FakeNode) -> String {
    format!("gke-{cluster_name}-{}-{:04}", node.pool, node.index)
}

/// The pool's node labels, then the ones GKE and Kubernetes set (which win).
pub fn node_labels(cluster_name: &str, node: &FakeNode) -> Map<String, Value> {
    let name = node_name(cluster_name, node);
    let mut labels = node.labels.clone();
    for (key, value) in [
        ("cloud.google.com/gke-nodepool", node.pool.as_str()),
        ("cloud.google.com/machine-family", node.machine_type.split('-').next().unwrap_or_default()),
        ("kubernetes.io/hostname", name.as_str()),
        ("kubernetes.io/os", "linux"),
        ("kubernetes.io/arch", "amd64"),
        ("beta.kubernetes.io/os", "linux"),
        ("beta.kubernetes.io/arch", "amd64"),
        ("node.kubernetes.io/instance-type", node.machine_type.as_str()),
        ("topology.kubernetes.io/zone", node.zone.as_str()),
        ("topology.kubernetes.io/region", node.zone.rsplit_once('-').map(|(r, _)| r).unwrap_or(&node.zone)),
    ] {
        labels.insert(key.to_owned(), json!(value));
    }
    if node.spot {
        labels.insert("cloud.google.com/gke-spot".to_owned(), json!("true"));
    }
    labels
}

/// A UUID-shaped digest of `parts`, stable for a node.
fn stable_uuid(parts: &[&str]) -> String {
    let digest: String = Sha256::digest(parts.join("/")).iter().take(16).map(|b| format!("{b:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &digest[..8], &digest[8..12], &digest[12..16], &digest[16..20], &digest[20..32])
}

/// The GPUs of a node: (model, count) of its accelerators.
pub fn accelerators(node: &FakeNode) -> Vec<(String, i64)> {
    node.accelerators
        .iter()
        .filter_map(|a| {
            let model = a["acceleratorType"].as_str()?.to_owned();
            let count = match &a["acceleratorCount"] {
                Value::String(text) => text.parse().ok()?,
                other => other.as_i64()?,
            };
            Some((model, count))
        })
        .collect()
}

pub fn node_json(cluster: &FakeCluster, cluster_name: &str, node: &FakeNode) -> Value {
    let name = node_name(cluster_name, node);
    // The ids of a node GKE replaced are new: they are made from its instance, not its name.
    let instance = if node.instance.is_empty() { name.as_str() } else { node.instance.as_str() };
    let shape = machine_types::shape(&node.machine_type);
    let ip = format!("10.128.0.{}", node.index + 2);
    let mut capacity = json!({
        "cpu": shape.cpus.to_string(), "memory": format!("{}Ki", shape.memory_gib * 1024 * 1024),
        "ephemeral-storage": format!("{}Ki", node.disk_size_gb.max(10) * 1024 * 1024), "pods": MAX_PODS.to_string(),
        "hugepages-2Mi": "0", "hugepages-1Gi": "0",
    });
    let gpus: i64 = accelerators(node).iter().map(|(_, count)| count).sum();
    if gpus > 0 {
        capacity["nvidia.com/gpu"] = json!(gpus.to_string());
    }
    let mut allocatable = capacity.clone();
    allocatable["cpu"] = json!(format!("{}m", shape.cpus * 1000 - 60 - 10 * shape.cpus.min(8)));
    allocatable["memory"] = json!(format!("{}Ki", shape.memory_gib * 1024 * 1024 * 85 / 100));
    allocatable["ephemeral-storage"] = json!(format!("{}Ki", node.disk_size_gb.max(10) * 1024 * 1024 * 80 / 100));
    let condition = |kind: &str, status: &str, reason: &str, message: &str| {
        json!({"type": kind, "status": status, "reason": reason, "message": message,
               "lastHeartbeatTime": clock::now(), "lastTransitionTime": node.created})
    };
    let mut spec = json!({
        "providerID": format!("gce://fake/{}/{instance}", node.zone),
        "podCIDR": format!("10.4.{}.0/24", node.index), "podCIDRs": [format!("10.4.{}.0/24", node.index)],
    });
    if !node.taints.is_empty() {
        spec["taints"] = json!(node.taints);
    }
    json!({
        "kind": "Node", "apiVersion": "v1",
        "metadata": {
            "name": name, "uid": stable_uuid(&[&cluster.id, instance, "uid"]), "resourceVersion": "1",
            "creationTimestamp": node.created,
            "labels": node_labels(cluster_name, node),
            "annotations": {"node.alpha.kubernetes.io/ttl": "0", "volumes.kubernetes.io/controller-managed-attach-detach": "true"},
        },
        "spec": spec,
        "status": {
            "capacity": capacity,
            "allocatable": allocatable,
            "conditions": [
                condition("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
                condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
                condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
                condition("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
            ],
            "addresses": [{"type": "InternalIP", "address": ip}, {"type": "Hostname", "address": name}],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "machineID": stable_uuid(&[&cluster.id, instance, "machine"]).replace('-', ""),
                "systemUUID": stable_uuid(&[&cluster.id, instance, "system"]),
                "bootID": stable_uuid(&[&cluster.id, instance, "boot"]),
                "kernelVersion": KERNEL, "osImage": OS_IMAGE,
                "containerRuntimeVersion": CONTAINERD,
                "kubeletVersion": format!("v{}", node.version), "kubeProxyVersion": format!("v{}", node.version),
                "operatingSystem": "linux", "architecture": "amd64",
            },
            "images": [],
        },
    })
}

/// How long ago `timestamp` was, as kubectl prints ages (`45s`, `3m`, `2h`, `4d`).
fn age(timestamp: &Value) -> String {
    let Some(then) = timestamp.as_str().and_then(clock::parse) else { return "<unknown>".into() };
    let seconds = SystemTime::now().duration_since(then).unwrap_or_default().as_secs();
    match seconds {
        0..120 => format!("{seconds}s"),
        120..7200 => format!("{}m", seconds / 60),
        7200..172_800 => format!("{}h", seconds / 3600),
        _ => format!("{}d", seconds / 86_400),
    }
}

/// Objects as kubectl's table printer asks for them (`Accept: ...;as=Table`), with the
/// columns the real server prints for the kind.
pub fn table(kind: &str, objects: &[Value]) -> Value {
    let columns: &[&str] = match kind {
        "Node" => &["Name", "Status", "Roles", "Age", "Version"],
        "Pod" => &["Name", "Ready", "Status", "Restarts", "Age"],
        "DaemonSet" => &["Name", "Desired", "Current", "Ready", "Up-to-date", "Available", "Age"],
        "Namespace" => &["Name", "Status", "Age"],
        "Secret" => &["Name", "Type", "Data", "Age"],
        "ConfigMap" => &["Name", "Data", "Age"],
        _ => &["Name", "Age"],
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|o| {
            let (metadata, status) = (&o["metadata"], &o["status"]);
            let cells: Vec<Value> = columns
                .iter()
                .map(|column| match *column {
                    "Name" => metadata["name"].clone(),
                    "Age" => json!(age(&metadata["creationTimestamp"])),
                    "Status" if kind == "Node" => json!("Ready"),
                    "Status" => status["phase"].clone(),
                    "Roles" => json!("<none>"),
                    "Version" => status["nodeInfo"]["kubeletVersion"].clone(),
                    "Ready" if kind == "Pod" => {
                        let statuses = status["containerStatuses"].as_array().cloned().unwrap_or_default();
                        let ready = statuses.iter().filter(|s| s["ready"] == true).count();
                        json!(format!("{ready}/{}", o["spec"]["containers"].as_array().map_or(0, Vec::len)))
                    }
                    "Restarts" => json!(status["containerStatuses"][0]["restartCount"].as_i64().unwrap_or(0)),
                    "Desired" => status["desiredNumberScheduled"].clone(),
                    "Current" => status["currentNumberScheduled"].clone(),
                    "Ready" => status["numberReady"].clone(),
                    "Up-to-date" => status["updatedNumberScheduled"].clone(),
                    "Available" => status["numberAvailable"].clone(),
                    "Type" => o["type"].clone(),
                    "Data" => json!(o["data"].as_object().map_or(0, Map::len)),
                    _ => Value::Null,
                })
                .collect();
            json!({"cells": cells, "object": {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": metadata}})
        })
        .collect();
    let definitions: Vec<Value> = columns
        .iter()
        .map(|name| {
            let (kind, format) = if *name == "Name" { ("string", "name") } else { ("string", "") };
            json!({"name": name, "type": kind, "format": format, "description": name, "priority": 0})
        })
        .collect();
    json!({"kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": {"resourceVersion": "1"},
           "columnDefinitions": definitions, "rows": rows})
}
