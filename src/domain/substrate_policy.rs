//! A pool's `policy.substrate`: the managed Kubernetes cluster behind a pool, read from the
//! policy document with every fault named by its path (`policy.substrate.flavors[1].machineType`).
//! The service checks it at the call, the store keeps it as the substrate's desired spec, and the
//! `kubernetes.substrates` reconciler converges the provider to it.

use std::collections::BTreeMap;

use regex::Regex;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::error::{FieldViolation, Violations};

/// Where a substrate policy sits in a pool's policy document.
pub const PATH: &str = "policy.substrate";
/// The most flavors of a substrate.
pub const MAX_FLAVORS: usize = 20;

/// A substrate policy, checked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubstratePolicy {
    /// The GKE account the cluster is on.
    pub account: String,
    /// The cluster to make or to adopt.
    pub cluster: SubstrateCluster,
    /// One node pool per flavor.
    pub flavors: Vec<Flavor>,
    /// The bcd image the DaemonSet runs; empty for the default.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub bcd_image: String,
}

/// The cluster behind a substrate.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum SubstrateCluster {
    /// A cluster the substrate makes, and deletes when the pool is archived.
    Create {
        /// Its zone or region.
        location: String,
        /// `rapid`, `regular`, `stable` or `extended`.
        #[serde(rename = "releaseChannel")]
        release_channel: String,
        /// A pinned version; empty for the channel's default.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        version: String,
        /// A tenant network for the nodes; empty for the default.
        #[serde(default, skip_serializing_if = "String::is_empty", rename = "networkId")]
        network_id: String,
    },
    /// A cluster already at the provider: the substrate adds its node pools and objects to it,
    /// and removes only those.
    Adopt {
        /// Its name at the provider.
        name: String,
        /// Its zone or region.
        location: String,
    },
}

impl SubstrateCluster {
    /// Whether `other` names the same cluster: the same mode and place (and, adopted, name).
    /// A made cluster's channel and version may change in place; its location and network not.
    pub fn is_same_cluster(&self, other: &SubstrateCluster) -> bool {
        match (self, other) {
            (
                SubstrateCluster::Create { location, network_id, .. },
                SubstrateCluster::Create { location: other_location, network_id: other_network, .. },
            ) => location == other_location && network_id == other_network,
            (adopted @ SubstrateCluster::Adopt { .. }, other @ SubstrateCluster::Adopt { .. }) => adopted == other,
            _ => false,
        }
    }

    /// `create` or `adopt`.
    pub fn mode(&self) -> &'static str {
        match self {
            SubstrateCluster::Create { .. } => "create",
            SubstrateCluster::Adopt { .. } => "adopt",
        }
    }
}

/// One flavor: a node pool of the cluster, and the nodes it brings to the pool.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Flavor {
    /// 1 to 25 lower-case characters.
    pub name: String,
    /// The provider's machine type.
    pub machine_type: String,
    /// A fixed size; `None` when it autoscales.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_count: Option<i64>,
    /// Autoscaling bounds, when it scales.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub autoscaling: Option<Autoscaling>,
    /// Boot disk, in GiB.
    #[serde(rename = "diskGiB")]
    pub disk_gib: i64,
    /// Spot machines.
    #[serde(default)]
    pub spot: bool,
    /// Accelerators on every node.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub accelerators: Option<Accelerators>,
    /// Kubernetes labels on its nodes.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
    /// Taints on its nodes.
    #[serde(default)]
    pub taints: Vec<Taint>,
}

/// Autoscaling bounds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Autoscaling {
    pub min: i64,
    pub max: i64,
}

/// Accelerators on every node of a flavor.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Accelerators {
    /// `nvidia-l4`.
    #[serde(rename = "type")]
    pub kind: String,
    /// 1 to 16.
    pub count: i64,
}

/// A Kubernetes taint.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Taint {
    pub key: String,
    #[serde(default)]
    pub value: String,
    pub effect: String,
}

/// The substrate of a pool's policy document: `None` when it has none, the checked policy, or
/// `INVALID_INPUT` naming every fault by its path.
pub fn read(policy: &Value) -> crate::error::Result<Option<SubstratePolicy>> {
    let Some(substrate) = policy.get("substrate") else { return Ok(None) };
    let mut reader = Reader { violations: Violations::new() };
    let read = reader.policy(PATH, substrate);
    if reader.violations.is_empty() { Ok(read) } else { Err(reader.violations.into_error()) }
}

/// Whether `text` is all of `pattern`; each pattern is compiled once per process.
fn matches(pattern: &str, text: &str) -> bool {
    static COMPILED: std::sync::LazyLock<std::sync::Mutex<std::collections::HashMap<String, Regex>>> =
        std::sync::LazyLock::new(Default::default);
    let mut compiled = COMPILED.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    let regex = compiled
        .entry(pattern.to_owned())
        .or_insert_with(|| Regex::new(&format!("^(?:{pattern})$")).expect("the patterns compile"));
    regex.is_match(text)
}

/// Walks the document, recording what is wrong where.
struct Reader {
    violations: Violations,
}

const CHANNELS: [&str; 4] = ["rapid", "regular", "stable", "extended"];
const EFFECTS: [&str; 3] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

impl Reader {
    fn fault(&mut self, path: &str, description: impl Into<String>) {
        self.violations.push_with(|| FieldViolation::new(path, description));
    }

    /// The object at `path`, with only `fields`; `None` (and a fault) when it is not one.
    fn object<'v>(&mut self, path: &str, value: &'v Value, fields: &[&str]) -> Option<&'v Map<String, Value>> {
        let Some(object) = value.as_object() else {
            self.fault(path, format!("must be an object with the fields {}", fields.join(", ")));
            return None;
        };
        for key in object.keys().filter(|key| !fields.contains(&key.as_str())) {
            if self.violations.is_full() {
                break;
            }
            self.fault(&format!("{path}.{key}"), format!("is not a field here; the fields are {}", fields.join(", ")));
        }
        Some(object)
    }

    /// The string at `path.key` matching `pattern` (anchored); `""` when absent and not required.
    fn string(&mut self, object: &Map<String, Value>, path: &str, key: &str, pattern: &str, rule: &str) -> String {
        let path = format!("{path}.{key}");
        match object.get(key) {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(text)) => {
                if matches(pattern, text) {
                    text.clone()
                } else {
                    self.fault(&path, format!("must be {rule}"));
                    String::new()
                }
            }
            Some(_) => {
                self.fault(&path, format!("must be a string: {rule}"));
                String::new()
            }
        }
    }

    fn required(&mut self, object: &Map<String, Value>, path: &str, key: &str, pattern: &str, rule: &str) -> String {
        if object.get(key).is_none_or(Value::is_null) {
            self.fault(&format!("{path}.{key}"), format!("is required: {rule}"));
            return String::new();
        }
        self.string(object, path, key, pattern, rule)
    }

    /// The integer at `path.key` within `min..=max`.
    fn integer(&mut self, object: &Map<String, Value>, path: &str, key: &str, min: i64, max: i64) -> Option<i64> {
        let value = object.get(key).filter(|value| !value.is_null())?;
        match value.as_i64() {
            Some(number) if (min..=max).contains(&number) => Some(number),
            _ => {
                self.fault(&format!("{path}.{key}"), format!("must be a whole number from {min} to {max}"));
                None
            }
        }
    }

    fn policy(&mut self, path: &str, value: &Value) -> Option<SubstratePolicy> {
        let object = self.object(path, value, &["kind", "account", "cluster", "flavors", "bcdImage"])?;
        match object.get("kind") {
            Some(Value::String(kind)) if kind == "kubernetes" => {}
            _ => self.fault(&format!("{path}.kind"), "must be \"kubernetes\", the one kind of substrate"),
        }
        let account =
            self.required(object, path, "account", "acct_[0-9a-hjkmnp-tv-z]{26}", "a GKE account's id (acct_...)");
        let cluster = match object.get("cluster") {
            Some(cluster) => self.cluster(&format!("{path}.cluster"), cluster),
            None => {
                self.fault(&format!("{path}.cluster"), "is required: {\"create\": {...}} or {\"adopt\": {...}}");
                None
            }
        };
        let flavors = self.flavors(&format!("{path}.flavors"), object.get("flavors"));
        let bcd_image =
            self.string(object, path, "bcdImage", "[a-z0-9][a-z0-9./:@_-]{0,254}", "a container image reference");
        Some(SubstratePolicy { account, cluster: cluster?, flavors, bcd_image })
    }

    fn cluster(&mut self, path: &str, value: &Value) -> Option<SubstrateCluster> {
        let object = self.object(path, value, &["create", "adopt"])?;
        const LOCATION: &str = "[a-z]+-[a-z]+[0-9]+(-[a-z])?";
        const LOCATION_RULE: &str = "a GKE zone (us-central1-a) or region (us-central1)";
        match (object.get("create"), object.get("adopt")) {
            (Some(create), None) => {
                let path = format!("{path}.create");
                let fields = self.object(&path, create, &["location", "releaseChannel", "version", "networkId"])?;
                let location = self.required(fields, &path, "location", LOCATION, LOCATION_RULE);
                let channel = self.string(
                    fields,
                    &path,
                    "releaseChannel",
                    &CHANNELS.join("|"),
                    "rapid, regular, stable or extended",
                );
                let version = self.string(
                    fields,
                    &path,
                    "version",
                    r"[0-9]+\.[0-9]+(\.[0-9]+(-gke\.[0-9]+)?)?",
                    "a minor (1.33) or full version",
                );
                let network_id = self.string(
                    fields,
                    &path,
                    "networkId",
                    "net_[0-9a-hjkmnp-tv-z]{26,52}",
                    "a network's id (net_...)",
                );
                let release_channel = if channel.is_empty() { "regular".to_owned() } else { channel };
                Some(SubstrateCluster::Create { location, release_channel, version, network_id })
            }
            (None, Some(adopt)) => {
                let path = format!("{path}.adopt");
                let fields = self.object(&path, adopt, &["name", "location"])?;
                let name = self.required(
                    fields,
                    &path,
                    "name",
                    "[a-z]([-a-z0-9]{0,38}[a-z0-9])?",
                    "the cluster's name at the provider",
                );
                let location = self.required(fields, &path, "location", LOCATION, LOCATION_RULE);
                Some(SubstrateCluster::Adopt { name, location })
            }
            _ => {
                self.fault(
                    path,
                    "must have exactly one of create (a cluster to make) and adopt (a cluster that exists)",
                );
                None
            }
        }
    }

    fn flavors(&mut self, path: &str, value: Option<&Value>) -> Vec<Flavor> {
        let Some(items) = value.and_then(Value::as_array).filter(|items| (1..=MAX_FLAVORS).contains(&items.len()))
        else {
            self.fault(path, format!("must be a list of 1 to {MAX_FLAVORS} flavors"));
            return Vec::new();
        };
        let mut flavors: Vec<Flavor> = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let path = format!("{path}[{index}]");
            let Some(flavor) = self.flavor(&path, item) else { continue };
            if flavors.iter().any(|other| other.name == flavor.name) {
                self.fault(
                    &format!("{path}.name"),
                    format!("{:?} names another flavor too; names are unique", flavor.name),
                );
            }
            flavors.push(flavor);
        }
        flavors
    }

    fn flavor(&mut self, path: &str, value: &Value) -> Option<Flavor> {
        let fields =
            ["name", "machineType", "nodeCount", "autoscaling", "diskGiB", "spot", "accelerators", "labels", "taints"];
        let object = self.object(path, value, &fields)?;
        let name = self.required(
            object,
            path,
            "name",
            "[a-z]([a-z0-9-]{0,23}[a-z0-9])?",
            "1 to 25 lower-case letters, digits and -, starting with a letter",
        );
        let machine_type =
            self.required(object, path, "machineType", "[a-z0-9][a-z0-9.-]{0,62}", "a machine type (e2-standard-4)");
        let node_count = self.integer(object, path, "nodeCount", 0, 1000);
        let autoscaling = match object.get("autoscaling") {
            None | Some(Value::Null) => None,
            Some(bounds) => self.autoscaling(&format!("{path}.autoscaling"), bounds),
        };
        if object.contains_key("nodeCount") == object.contains_key("autoscaling") {
            self.fault(path, "must have exactly one of nodeCount (a fixed size) and autoscaling ({min, max})");
        }
        let disk_gib = self.integer(object, path, "diskGiB", 10, 65536).unwrap_or(100);
        let spot = match object.get("spot") {
            None | Some(Value::Null) => false,
            Some(Value::Bool(spot)) => *spot,
            Some(_) => {
                self.fault(&format!("{path}.spot"), "must be true or false");
                false
            }
        };
        let accelerators = match object.get("accelerators") {
            None | Some(Value::Null) => None,
            Some(value) => {
                let path = format!("{path}.accelerators");
                let fields = self.object(&path, value, &["type", "count"])?;
                let kind =
                    self.required(fields, &path, "type", "[a-z0-9][a-z0-9-]{0,62}", "an accelerator type (nvidia-l4)");
                let count = self.integer(fields, &path, "count", 1, 16).unwrap_or(1);
                Some(Accelerators { kind, count })
            }
        };
        let labels = self.labels(&format!("{path}.labels"), object.get("labels"));
        let taints = self.taints(&format!("{path}.taints"), object.get("taints"));
        Some(Flavor { name, machine_type, node_count, autoscaling, disk_gib, spot, accelerators, labels, taints })
    }

    fn autoscaling(&mut self, path: &str, value: &Value) -> Option<Autoscaling> {
        let object = self.object(path, value, &["min", "max"])?;
        let min = self.integer(object, path, "min", 0, 1000).unwrap_or(0);
        let max = self.integer(object, path, "max", 1, 1000);
        let Some(max) = max else {
            self.fault(&format!("{path}.max"), "is required: a whole number from 1 to 1000");
            return None;
        };
        if min > max {
            self.fault(path, format!("min ({min}) must not be more than max ({max})"));
        }
        Some(Autoscaling { min, max })
    }

    fn labels(&mut self, path: &str, value: Option<&Value>) -> BTreeMap<String, String> {
        let Some(value) = value.filter(|value| !value.is_null()) else { return BTreeMap::new() };
        let Some(object) = value.as_object().filter(|object| object.len() <= 64) else {
            self.fault(path, "must be an object of at most 64 labels (key: value)");
            return BTreeMap::new();
        };
        const KEY: &str = r"([a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?";
        const VALUE: &str = r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?";
        let mut labels = BTreeMap::new();
        for (name, value) in object {
            match value.as_str() {
                Some(value) if matches(KEY, name) && matches(VALUE, value) => {
                    labels.insert(name.clone(), value.to_owned());
                }
                _ => self.fault(
                    &format!("{path}.{name}"),
                    "must be a Kubernetes label: a qualified name and a value of at most 63 characters",
                ),
            }
        }
        labels
    }

    fn taints(&mut self, path: &str, value: Option<&Value>) -> Vec<Taint> {
        let Some(value) = value.filter(|value| !value.is_null()) else { return Vec::new() };
        let Some(items) = value.as_array().filter(|items| items.len() <= 32) else {
            self.fault(path, "must be a list of at most 32 taints ({key, value, effect})");
            return Vec::new();
        };
        let mut taints = Vec::new();
        for (index, item) in items.iter().enumerate() {
            let path = format!("{path}[{index}]");
            let Some(object) = self.object(&path, item, &["key", "value", "effect"]) else { continue };
            let key = self.required(
                object,
                &path,
                "key",
                r"([a-z0-9.-]{1,253}/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?",
                "a qualified name",
            );
            let value = self.string(
                object,
                &path,
                "value",
                r"([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?",
                "at most 63 characters",
            );
            let effect =
                self.required(object, &path, "effect", &EFFECTS.join("|"), "NoSchedule, PreferNoSchedule or NoExecute");
            taints.push(Taint { key, value, effect });
        }
        taints
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn fields(policy: Value) -> Vec<String> {
        let error = read(&json!({"substrate": policy})).unwrap_err();
        let details = serde_json::Value::Object(error.details.as_ref().clone());
        details["fields"].as_array().unwrap().iter().map(|f| f["field"].as_str().unwrap().to_owned()).collect()
    }

    const ACCOUNT: &str = "acct_0123456789abcdefghjkmnpqrs";

    #[test]
    fn a_policy_without_a_substrate_has_none() {
        assert_eq!(read(&json!({"other": 1})).unwrap(), None);
    }

    #[test]
    fn a_create_substrate_reads_with_its_defaults() {
        let policy = read(&json!({"substrate": {"kind": "kubernetes", "account": ACCOUNT,
            "cluster": {"create": {"location": "us-central1-a"}},
            "flavors": [{"name": "general", "machineType": "e2-standard-4", "nodeCount": 2},
                        {"name": "gpu", "machineType": "g2-standard-8", "autoscaling": {"min": 0, "max": 4},
                         "accelerators": {"type": "nvidia-l4", "count": 1}, "spot": true,
                         "taints": [{"key": "gpu", "effect": "NoSchedule"}]}]}}))
        .unwrap()
        .unwrap();
        assert_eq!(policy.cluster.mode(), "create");
        assert!(
            matches!(&policy.cluster, SubstrateCluster::Create { release_channel, .. } if release_channel == "regular")
        );
        assert_eq!(policy.flavors[0].disk_gib, 100);
        assert_eq!(policy.flavors[1].autoscaling, Some(Autoscaling { min: 0, max: 4 }));
        let again: SubstratePolicy = serde_json::from_value(serde_json::to_value(&policy).unwrap()).unwrap();
        assert_eq!(again, policy, "the kept spec reads back as it was");
    }

    #[test]
    fn every_fault_is_named_by_its_path() {
        let found = fields(json!({"kind": "vm", "account": "nope",
            "cluster": {"create": {"location": "mars"}, "adopt": {"name": "x", "location": "us-east1"}},
            "flavors": [{"name": "General", "machineType": "e2 standard", "nodeCount": 2, "autoscaling": {"min": 3, "max": 2}},
                        {"name": "a", "machineType": "e2-small", "nodeCount": 1, "colour": "red"},
                        {"name": "a", "machineType": "e2-small"}]}));
        for expected in [
            "policy.substrate.kind",
            "policy.substrate.account",
            "policy.substrate.cluster",
            "policy.substrate.flavors[0].name",
            "policy.substrate.flavors[0].machineType",
            "policy.substrate.flavors[0]",
            "policy.substrate.flavors[0].autoscaling",
            "policy.substrate.flavors[1].colour",
            "policy.substrate.flavors[2]",
            "policy.substrate.flavors[2].name",
        ] {
            assert!(found.iter().any(|field| field == expected), "{expected} not in {found:?}");
        }
        assert_eq!(
            fields(json!({"kind": "kubernetes", "account": ACCOUNT, "cluster": {"adopt": {"name": "web"}},
            "flavors": []})),
            ["policy.substrate.cluster.adopt.location", "policy.substrate.flavors"]
        );
        let many: Vec<Value> =
            (0..21).map(|i| json!({"name": format!("f{i}"), "machineType": "e2-small", "nodeCount": 1})).collect();
        assert!(fields(json!({"kind": "kubernetes", "account": ACCOUNT, "cluster": {"adopt": {"name": "web", "location": "us-east1"}},
            "flavors": many})).contains(&"policy.substrate.flavors".to_owned()));
    }
}
