//! GKE node pools: list, get, create, update (the fields GKE's `UpdateNodePoolRequest` has, one
//! kind of change at a time), upgrade, the custom verbs (`setSize`, `setAutoscaling`, ...) and
//! delete, each change answered by an operation on the cluster.

use axum::response::Response;
use serde_json::{Value, json};

use super::state::{Effect, FakeCluster, FakePool, PoolPatch, default_locations};
use super::versions::{VersionCatalog, version_key};
use super::{Context, error, valid_name};
use crate::json_response;

/// Every field of GKE's `UpdateNodePoolRequest` (discovery document, container v1).
const UPDATE_NODE_POOL_FIELDS: &[&str] = &[
    "accelerators",
    "bootDisk",
    "clusterId",
    "confidentialNodes",
    "consolidationDelay",
    "containerdConfig",
    "diskSizeGb",
    "diskType",
    "etag",
    "fastSocket",
    "flexStart",
    "gcfsConfig",
    "gvnic",
    "image",
    "imageProject",
    "imageType",
    "kubeletConfig",
    "labels",
    "linuxNodeConfig",
    "locations",
    "loggingConfig",
    "machineType",
    "maintenancePolicy",
    "maxRunDuration",
    "name",
    "nodeConfigUpdateMode",
    "nodeDrainConfig",
    "nodeNetworkConfig",
    "nodePoolId",
    "nodeVersion",
    "projectId",
    "queuedProvisioning",
    "resourceLabels",
    "resourceManagerTags",
    "storagePools",
    "tags",
    "taintConfig",
    "taints",
    "upgradeSettings",
    "windowsNodeConfig",
    "workloadMetadataConfig",
    "zone",
];

/// The `UpdateNodePoolRequest` changes the fake applies.
const EMULATED_NODE_POOL_UPDATES: &[&str] =
    &["nodeVersion", "labels", "taints", "machineType", "diskSizeGb", "diskType", "accelerators", "locations"];

/// An int64 as GKE takes it: a JSON string or a number.
fn int64(value: &Value) -> Option<i64> {
    match value {
        Value::String(text) => text.parse().ok(),
        value => value.as_i64(),
    }
}

/// A `NodeTaint` list (absent: none); an effect GKE does not know is refused as GKE does.
fn check_taints(value: &Value) -> Result<Vec<Value>, Response> {
    let taints = value.as_array().cloned().unwrap_or_default();
    for (i, taint) in taints.iter().enumerate() {
        let effect = taint["effect"].as_str().unwrap_or_default();
        if !["NO_SCHEDULE", "PREFER_NO_SCHEDULE", "NO_EXECUTE"].contains(&effect) {
            return Err(error(400, &format!("Invalid value at 'taints[{i}].effect' ({effect:?}).")));
        }
        if taint["key"].as_str().is_none_or(str::is_empty) {
            return Err(error(400, &format!("Invalid value at 'taints[{i}].key': a taint needs a key.")));
        }
    }
    Ok(taints)
}

/// A machine type Compute Engine has; any other is refused before anything is made, in GKE's
/// words.
fn check_machine_type(machine_type: &str) -> Result<(), Response> {
    if crate::machine_types::exists(machine_type) {
        return Ok(());
    }
    Err(error(400, &format!("machine type {machine_type:?} does not exist.")))
}

/// An `AcceleratorConfig` list (absent: none): each with a type and a count of at least 1.
fn check_accelerators(value: &Value) -> Result<Vec<Value>, Response> {
    let accelerators = value.as_array().cloned().unwrap_or_default();
    for (i, accelerator) in accelerators.iter().enumerate() {
        let count = int64(&accelerator["acceleratorCount"]).unwrap_or(0);
        if accelerator["acceleratorType"].as_str().is_none_or(str::is_empty) || count < 1 {
            return Err(error(400, &format!("Invalid value at 'accelerators[{i}]': {accelerator}.")));
        }
    }
    Ok(accelerators)
}

impl Context<'_> {
    pub(super) fn pool_json(&self, cluster_link: &str, p: &FakePool) -> Value {
        let mut pool = json!({
            "name": p.name,
            "config": {
                "machineType": p.machine_type, "diskSizeGb": p.disk_size_gb, "labels": p.node_labels,
                "imageType": "COS_CONTAINERD", "diskType": p.disk_type,
                "oauthScopes": ["https://www.googleapis.com/auth/cloud-platform"],
            },
            "initialNodeCount": p.node_count,
            "management": {"autoUpgrade": true, "autoRepair": true},
            "maxPodsConstraint": {"maxPodsPerNode": p.max_pods},
            "podIpv4CidrSize": 24,
            "locations": p.locations,
            "selfLink": format!("{cluster_link}/nodePools/{}", p.name),
            "version": p.version,
            "status": p.status,
        });
        if let Some(autoscaling) = &p.autoscaling {
            pool["autoscaling"] = autoscaling.clone();
        }
        if !p.status_message.is_empty() {
            pool["statusMessage"] = json!(p.status_message);
        }
        if p.spot {
            pool["config"]["spot"] = json!(true);
        }
        if !p.accelerators.is_empty() {
            pool["config"]["accelerators"] = json!(p.accelerators);
        }
        if !p.taints.is_empty() {
            pool["config"]["taints"] = json!(p.taints);
        }
        pool
    }

    pub(super) fn new_pool(&self, spec: &Value, version: &str) -> Result<FakePool, Response> {
        let name = spec["name"].as_str().unwrap_or_default();
        if !valid_name(name) {
            return Err(error(400, &format!("Invalid node pool name {name:?}.")));
        }
        let locations = match spec["locations"].as_array() {
            Some(zones) if !zones.is_empty() => self.zones_of_region(zones)?,
            _ => default_locations(&self.location),
        };
        let machine_type = spec["config"]["machineType"].as_str().filter(|s| !s.is_empty()).unwrap_or("e2-medium");
        check_machine_type(machine_type)?;
        let taints = check_taints(&spec["config"]["taints"])?;
        let accelerators = check_accelerators(&spec["config"]["accelerators"])?;
        let max_pods = match &spec["maxPodsConstraint"]["maxPodsPerNode"] {
            Value::String(text) => text.clone(),
            Value::Number(n) => n.to_string(),
            _ => "110".into(),
        };
        Ok(FakePool {
            name: name.to_owned(),
            status: "PROVISIONING".into(),
            status_message: String::new(),
            version: version.to_owned(),
            node_count: spec["initialNodeCount"].as_u64().unwrap_or(3),
            machine_type: machine_type.into(),
            disk_size_gb: spec["config"]["diskSizeGb"].as_u64().filter(|d| *d > 0).unwrap_or(100),
            node_labels: spec["config"]["labels"].as_object().cloned().unwrap_or_default(),
            autoscaling: spec.get("autoscaling").filter(|a| a.is_object()).cloned(),
            max_pods,
            locations,
            disk_type: spec["config"]["diskType"].as_str().filter(|s| !s.is_empty()).unwrap_or("pd-balanced").into(),
            spot: spec["config"]["spot"] == true,
            accelerators,
            taints,
            instances: Default::default(),
        })
    }

    pub(super) fn pools(&self, cluster: &str) -> Response {
        let key = self.key(cluster);
        let world = self.shared.world();
        let Some(c) = world.gke.clusters.get(&key) else {
            return error(404, &format!("Not found: cluster {cluster}."));
        };
        let link = format!("{}/clusters/{cluster}", self.prefix(&key.1));
        json_response(200, json!({"nodePools": c.pools.iter().map(|p| self.pool_json(&link, p)).collect::<Vec<_>>()}))
    }

    pub(super) fn pool_get(&self, cluster: &str, pool: &str) -> Response {
        let key = self.key(cluster);
        let world = self.shared.world();
        let found = world.gke.clusters.get(&key).and_then(|c| c.pools.iter().find(|p| p.name == pool));
        match found {
            Some(p) => json_response(200, self.pool_json(&format!("{}/clusters/{cluster}", self.prefix(&key.1)), p)),
            None => error(
                404,
                &format!("Not found: projects/{}/locations/{}/clusters/{cluster}/nodePools/{pool}.", key.0, key.1),
            ),
        }
    }

    pub(super) fn pool_create(&self, cluster: &str, body: &Value) -> Response {
        let key = self.key(cluster);
        let mut world = self.shared.world();
        let name = body["nodePool"]["name"].as_str().unwrap_or_default().to_owned();
        let failure = match self.admit(&mut world, &key, "nodePool", "create", &name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        let c = world.gke.clusters.get(&key).expect("admitted");
        if c.pools.iter().any(|p| p.name == name) {
            return error(409, &format!("Already exists: node pool {name}."));
        }
        let asked = body["nodePool"]["version"].as_str().unwrap_or_default();
        let version = if asked.is_empty() { c.master_version.clone() } else { asked.to_owned() };
        let pool = match self.new_pool(&body["nodePool"], &version) {
            Ok(pool) => pool,
            Err(refusal) => return refusal,
        };
        let c = world.gke.clusters.get_mut(&key).expect("admitted");
        c.pools.push(pool);
        c.status = "RECONCILING".into();
        let effect = match failure {
            Some(message) => Effect::Fail { pool: Some(name.clone()), message },
            None => Effect::CreatePool(name.clone()),
        };
        let target = format!("{}/clusters/{cluster}/nodePools/{name}", self.prefix(&key.1));
        self.start(&mut world, &key, "CREATE_NODE_POOL", target, effect)
    }

    /// Admits a change to an existing pool, then starts it.
    pub(super) fn pool_change(
        &self,
        cluster: &str,
        pool: &str,
        verb: &str,
        operation_type: &'static str,
        decide: impl FnOnce(&FakeCluster, &VersionCatalog) -> Result<Effect, Response>,
    ) -> Response {
        let key = self.key(cluster);
        let mut world = self.shared.world();
        let failure = match self.admit(&mut world, &key, "nodePool", verb, pool) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        let catalog = self.catalog(&world.gke);
        let c = world.gke.clusters.get(&key).expect("admitted");
        if !c.pools.iter().any(|p| p.name == pool) {
            return error(
                404,
                &format!("Not found: projects/{}/locations/{}/clusters/{cluster}/nodePools/{pool}.", key.0, key.1),
            );
        }
        let effect = match decide(c, &catalog) {
            Ok(effect) => {
                failure.map(|message| Effect::Fail { pool: Some(pool.to_owned()), message }).unwrap_or(effect)
            }
            Err(refusal) => return refusal,
        };
        let c = world.gke.clusters.get_mut(&key).expect("admitted");
        c.status = "RECONCILING".into();
        let p = c.pools.iter_mut().find(|p| p.name == pool).expect("checked above");
        p.status = if verb == "delete" { "STOPPING" } else { "RECONCILING" }.into();
        let target = format!("{}/clusters/{cluster}/nodePools/{pool}", self.prefix(&key.1));
        self.start(&mut world, &key, operation_type, target, effect)
    }

    /// `nodePools.update`: one change per request, as an operation; the fields of GKE's
    /// `UpdateNodePoolRequest` the fake does not emulate are refused as such, and names GKE does
    /// not know (`spot`: a pool's Spot VMs cannot change in place) as GKE refuses them.
    pub(super) fn pool_update(&self, cluster: &str, pool: &str, body: &Value) -> Response {
        let fields = body.as_object().cloned().unwrap_or_default();
        if let Some(unknown) = fields.keys().find(|f| !UPDATE_NODE_POOL_FIELDS.contains(&f.as_str())) {
            return error(400, &format!("Invalid JSON payload received. Unknown name {unknown:?}: Cannot find field."));
        }
        let identity = ["name", "projectId", "zone", "clusterId", "nodePoolId", "etag", "imageType"];
        let changes: Vec<&String> = fields.keys().filter(|f| !identity.contains(&f.as_str())).collect();
        if let Some(field) = changes.iter().find(|f| !EMULATED_NODE_POOL_UPDATES.contains(&f.as_str())) {
            return error(400, &format!("The fake cloud does not emulate nodePools.update {field}."));
        }
        if changes.len() != 1 {
            return error(400, "Exactly one update can be applied to a node pool with each request.");
        }
        let owned = pool.to_owned();
        let value = &fields[changes[0].as_str()];
        let patch = match changes[0].as_str() {
            "nodeVersion" => return self.pool_upgrade(cluster, pool, value.as_str().unwrap_or_default()),
            "labels" => PoolPatch::Labels(value["labels"].as_object().cloned().unwrap_or_default()),
            "taints" => match check_taints(&value["taints"]) {
                Ok(taints) => PoolPatch::Taints(taints),
                Err(refusal) => return refusal,
            },
            "machineType" => match value.as_str().filter(|m| !m.is_empty()) {
                Some(machine_type) => match check_machine_type(machine_type) {
                    Ok(()) => PoolPatch::MachineType(machine_type.to_owned()),
                    Err(refusal) => return refusal,
                },
                None => return error(400, "Invalid value for field 'machineType': it must name a machine type."),
            },
            "diskSizeGb" => match int64(value).filter(|size| *size >= 10) {
                Some(size) => PoolPatch::DiskSizeGb(size as u64),
                None => {
                    return error(400, &format!("Invalid value for field 'diskSizeGb': {value}. Must be at least 10."));
                }
            },
            "diskType" => match value.as_str().filter(|d| !d.is_empty()) {
                Some(disk_type) => PoolPatch::DiskType(disk_type.to_owned()),
                None => return error(400, "Invalid value for field 'diskType': it must name a disk type."),
            },
            "accelerators" => match check_accelerators(value) {
                Ok(accelerators) => PoolPatch::Accelerators(accelerators),
                Err(refusal) => return refusal,
            },
            "locations" => match value.as_array().filter(|zones| !zones.is_empty()) {
                Some(zones) => match self.zones_of_region(zones) {
                    Ok(zones) => PoolPatch::Locations(zones),
                    Err(refusal) => return refusal,
                },
                None => return error(400, "Invalid value for field 'locations': a node pool needs at least one zone."),
            },
            other => unreachable!("{other} is one of the emulated updates"),
        };
        // Labels, taints and zones change the pool; the rest migrates its nodes (an upgrade).
        let kind = match &patch {
            PoolPatch::Labels(_) | PoolPatch::Taints(_) | PoolPatch::Locations(_) => "UPDATE_CLUSTER",
            _ => "UPGRADE_NODES",
        };
        self.pool_change(cluster, pool, "update", kind, |_, _| Ok(Effect::PoolConfig(owned, patch)))
    }

    /// `nodePools.update` with `nodeVersion`: never past the control plane, never down.
    pub(super) fn pool_upgrade(&self, cluster: &str, pool: &str, asked: &str) -> Response {
        let owned = pool.to_owned();
        let asked = asked.to_owned();
        self.pool_change(cluster, pool, "update", "UPGRADE_NODES", move |c, catalog| {
            let version = if asked == "-" || asked == "latest" || asked == c.master_version {
                Some(c.master_version.clone())
            } else {
                catalog.resolve(&asked, "")
            };
            let Some(version) = version else {
                return Err(error(400, &format!("Node version {asked:?} is unsupported.")));
            };
            if version_key(&version) > version_key(&c.master_version) {
                return Err(error(
                    400,
                    &format!("Node version {version} must not be newer than the master's {}.", c.master_version),
                ));
            }
            let current = c.pools.iter().find(|p| p.name == owned).map(|p| p.version.clone()).unwrap_or_default();
            if version_key(&version) < version_key(&current) {
                return Err(error(400, &format!("Node pool cannot be downgraded from {current} to {version}.")));
            }
            Ok(Effect::PoolVersion(owned, version))
        })
    }

    pub(super) fn pool_verb(&self, cluster: &str, pool: &str, verb: &str, body: &Value) -> Response {
        let owned = pool.to_owned();
        match verb {
            "setSize" => {
                let Some(count) = body["nodeCount"].as_u64() else {
                    return error(400, "nodeCount is required.");
                };
                self.pool_change(cluster, pool, "update", "SET_NODE_POOL_SIZE", move |_, _| {
                    Ok(Effect::PoolSize(owned, count))
                })
            }
            "setAutoscaling" => {
                let autoscaling = body["autoscaling"].clone();
                let (min, max) = (
                    autoscaling["minNodeCount"].as_i64().unwrap_or(0),
                    autoscaling["maxNodeCount"].as_i64().unwrap_or(0),
                );
                if autoscaling["enabled"] == true && (min > max || max == 0) {
                    return error(400, "Autoscaling requires 0 < maxNodeCount and minNodeCount <= maxNodeCount.");
                }
                self.pool_change(cluster, pool, "update", "UPDATE_CLUSTER", move |_, _| {
                    Ok(Effect::PoolAutoscaling(owned, autoscaling))
                })
            }
            _ => error(404, &format!("Method not found: {verb}.")),
        }
    }

    pub(super) fn pool_delete(&self, cluster: &str, pool: &str) -> Response {
        let owned = pool.to_owned();
        self.pool_change(cluster, pool, "delete", "DELETE_NODE_POOL", move |_, _| Ok(Effect::DeletePool(owned)))
    }
}
