//! GKE clusters: list, get, create (with its node pools, a TLS API server per cluster), update
//! (one change at a time) and delete, each change answered by an operation.

use std::sync::Arc;

use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

use super::state::{ClusterKey, Effect, FakeCluster, default_locations};
use super::versions::version_key;
use super::{Context, error, valid_name};
use crate::faults::Failure;
use crate::kubeapi::KubeObjects;
use crate::{clock, json_response};

impl Context<'_> {
    pub(super) fn cluster_json(&self, key: &ClusterKey, c: &FakeCluster) -> Value {
        let link = format!("{}/clusters/{}", self.prefix(&key.1), key.2);
        let mut cluster = json!({
            "name": key.2,
            "description": c.description,
            "nodePools": c.pools.iter().map(|p| self.pool_json(&link, p)).collect::<Vec<_>>(),
            "masterAuth": {"clusterCaCertificate": STANDARD.encode(&c.ca_pem)},
            "loggingService": "logging.googleapis.com/kubernetes",
            "monitoringService": "monitoring.googleapis.com/kubernetes",
            "network": c.network,
            "subnetwork": c.subnetwork,
            "masterAuthorizedNetworksConfig": c.authorized_networks,
            "clusterIpv4Cidr": "10.4.0.0/14",
            "resourceLabels": c.labels,
            "labelFingerprint": format!("{:08x}", c.labels.len() as u32 * 2_654_435_761),
            "locations": default_locations(&key.1),
            "selfLink": link,
            "zone": key.1,
            "endpoint": c.endpoint,
            "initialClusterVersion": c.initial_version,
            "currentMasterVersion": c.master_version,
            "currentNodeVersion": c.node_version,
            "createTime": c.create_time,
            "status": c.status,
            "nodeIpv4CidrSize": 24,
            "servicesIpv4Cidr": "34.118.224.0/20",
            "currentNodeCount": c.nodes().len(),
            "location": key.1,
            "id": c.id,
            "etag": format!("{:x}", c.create_time.len() + c.master_version.len()),
        });
        if !c.status_message.is_empty() {
            cluster["statusMessage"] = json!(c.status_message);
        }
        if !c.channel.is_empty() {
            cluster["releaseChannel"] = json!({"channel": c.channel});
        }
        cluster
    }

    pub(super) fn list(&self) -> Response {
        let world = self.shared.world();
        let clusters: Vec<Value> = world
            .gke
            .clusters
            .iter()
            .filter(|(key, _)| key.0 == self.project && (self.location == "-" || key.1 == self.location))
            .map(|(key, c)| self.cluster_json(key, c))
            .collect();
        json_response(200, json!({"clusters": clusters}))
    }

    pub(super) fn get(&self, name: &str) -> Response {
        let world = self.shared.world();
        match world.gke.clusters.get(&self.key(name)) {
            Some(cluster) => json_response(200, self.cluster_json(&self.key(name), cluster)),
            None => error(
                404,
                &format!("Not found: projects/{}/locations/{}/clusters/{name}.", self.project, self.location),
            ),
        }
    }

    pub(super) fn create(&self, body: &Value) -> Response {
        let spec = &body["cluster"];
        let name = spec["name"].as_str().unwrap_or_default();
        if !valid_name(name) {
            return error(
                400,
                &format!("Invalid value for field 'cluster.name': {name:?}. Must match [a-z]([-a-z0-9]*[a-z0-9])?."),
            );
        }
        let key = self.key(name);
        let mut world = self.shared.world();
        if world.gke.clusters.contains_key(&key) {
            return error(409, &format!("Already exists: projects/{}/locations/{}/clusters/{name}.", key.0, key.1));
        }
        let catalog = self.catalog(&world.gke);
        let channel = spec["releaseChannel"]["channel"].as_str().unwrap_or_default().replace("UNSPECIFIED", "");
        if !channel.is_empty() && !catalog.channels.iter().any(|(c, _)| *c == channel) {
            return error(400, &format!("Invalid release channel {channel:?}."));
        }
        let asked = spec["initialClusterVersion"].as_str().unwrap_or_default();
        let Some(version) = catalog.resolve(asked, &channel) else {
            return error(400, &format!("Version {asked:?} is invalid."));
        };
        // A network other than the project's default must exist, and the subnetwork be one of it
        // in the cluster's region, as GKE checks before it accepts the cluster.
        let network = spec["network"].as_str().filter(|n| !n.is_empty()).unwrap_or("default").to_owned();
        let subnetwork = spec["subnetwork"].as_str().unwrap_or_default().to_owned();
        if network != "default" && !world.compute.has_network(&key.0, &network) {
            return error(400, &format!("Network \"{network}\" does not exist."));
        }
        // A zone (`europe-west1-b`) is in the region before its last dash; a region is itself.
        let region = match key.1.rsplit_once('-') {
            Some((region, _)) if key.1.matches('-').count() >= 2 => region.to_owned(),
            _ => key.1.clone(),
        };
        if !subnetwork.is_empty() && !world.compute.has_subnetwork(&key.0, &region, &subnetwork, &network) {
            return error(
                400,
                &format!(
                    "Subnetwork \"{subnetwork}\" does not exist in network \"{network}\" and region \"{region}\"."
                ),
            );
        }
        let mut pools = Vec::new();
        let specs = spec["nodePools"].as_array().cloned().unwrap_or_default();
        let specs = if specs.is_empty() {
            vec![json!({"name": "default-pool", "initialNodeCount": spec["initialNodeCount"].as_u64().unwrap_or(3)})]
        } else {
            specs
        };
        for pool in &specs {
            match self.new_pool(pool, &version) {
                Ok(pool) => pools.push(pool),
                Err(refusal) => return refusal,
            }
        }
        let failure = match world.faults.take_scripted("cluster", "create", name) {
            Some(Failure::Refuse { status, message }) => return error(status, &message),
            Some(Failure::OperationError { message }) => Some(message),
            // A class is answered before the emulator sees the call.
            Some(Failure::Class(_)) | None => None,
        };
        let tls = match crate::tls::cluster_tls(name) {
            Ok(tls) => tls,
            Err(message) => return error(500, &message),
        };
        let kube = KubeObjects::default();
        let router = crate::kubeapi::routes(Arc::clone(self.shared), key.clone());
        let (address, server) = match crate::tls::serve_tls(router, tls.server) {
            Ok(served) => served,
            Err(e) => return error(500, &format!("cannot start the cluster's API server: {e}")),
        };
        let cluster = FakeCluster {
            description: spec["description"].as_str().unwrap_or_default().into(),
            labels: spec["resourceLabels"].as_object().cloned().unwrap_or_default(),
            status: "PROVISIONING".into(),
            status_message: String::new(),
            master_version: version.clone(),
            node_version: version.clone(),
            initial_version: version,
            channel,
            network,
            subnetwork,
            authorized_networks: spec["masterAuthorizedNetworksConfig"].clone(),
            pools,
            create_time: clock::now(),
            id: format!("{:032x}", rand::random::<u128>()),
            endpoint: address.to_string(),
            ca_pem: tls.ca_pem,
            server: Some(server),
            kube,
            operation_log: Vec::new(),
        };
        world.gke.clusters.insert(key.clone(), cluster);
        let target = format!("{}/clusters/{name}", self.prefix(&key.1));
        let effect = match failure {
            Some(message) => Effect::Fail { pool: None, message },
            None => Effect::CreateCluster,
        };
        self.start(&mut world, &key, "CREATE_CLUSTER", target, effect)
    }

    pub(super) fn update(&self, name: &str, body: &Value) -> Response {
        let key = self.key(name);
        let mut world = self.shared.world();
        let update = body["update"].as_object().cloned().unwrap_or_default();
        if update.len() != 1 {
            return error(400, "Exactly one update can be applied to a cluster with each request.");
        }
        let failure = match self.admit(&mut world, &key, "cluster", "update", name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        let catalog = self.catalog(&world.gke);
        let cluster = world.gke.clusters.get(&key).expect("admitted");
        let (operation_type, effect) = match update.iter().next().expect("one entry") {
            (field, Value::String(asked)) if field == "desiredMasterVersion" => {
                let Some(version) = catalog.resolve(asked, &cluster.channel) else {
                    return error(400, &format!("Master version {asked:?} is unsupported."));
                };
                if version_key(&version) < version_key(&cluster.master_version) {
                    return error(
                        400,
                        &format!("Master cannot be downgraded from {} to {version}.", cluster.master_version),
                    );
                }
                ("UPGRADE_MASTER", Effect::MasterVersion(version))
            }
            (field, value) if field == "desiredReleaseChannel" => {
                let channel = value["channel"].as_str().unwrap_or_default().replace("UNSPECIFIED", "");
                if !channel.is_empty() && catalog.channel_default(&channel).is_none() {
                    return error(400, &format!("Invalid release channel {channel:?}."));
                }
                ("UPDATE_CLUSTER", Effect::Channel(channel))
            }
            (field, value) if field == "desiredMasterAuthorizedNetworksConfig" => {
                ("UPDATE_CLUSTER", Effect::AuthorizedNetworks(value.clone()))
            }
            (field, _) => return error(400, &format!("The fake cloud does not emulate update.{field}.")),
        };
        let effect = failure.map(|message| Effect::Fail { pool: None, message }).unwrap_or(effect);
        world.gke.clusters.get_mut(&key).expect("admitted").status = "RECONCILING".into();
        let target = format!("{}/clusters/{name}", self.prefix(&key.1));
        self.start(&mut world, &key, operation_type, target, effect)
    }

    pub(super) fn delete(&self, name: &str) -> Response {
        let key = self.key(name);
        let mut world = self.shared.world();
        let failure = match self.admit(&mut world, &key, "cluster", "delete", name) {
            Ok(failure) => failure,
            Err(refusal) => return refusal,
        };
        world.gke.clusters.get_mut(&key).expect("admitted").status = "STOPPING".into();
        let effect = failure.map(|message| Effect::Fail { pool: None, message }).unwrap_or(Effect::DeleteCluster);
        let target = format!("{}/clusters/{name}", self.prefix(&key.1));
        self.start(&mut world, &key, "DELETE_CLUSTER", target, effect)
    }
}
