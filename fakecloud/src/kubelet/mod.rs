//! The fake clusters' kubelets and DaemonSet controller: for every DaemonSet of a fake cluster
//! and every fake node it selects, the real bcd code runs in this process
//! ([`bcd::daemon::run_embedded`]) with what the DaemonSet gives its container, so the nodes
//! of a fake cluster join a pool exactly as a real cluster's would.
//!
//! Design: one background task diffs what should run against what runs every [`PERIOD`] (the
//! only thing in the fake cloud that moves on its own, because bcd itself does). Each daemon
//! keeps its state in a directory per (cluster, DaemonSet, node) under the fake cloud's own
//! temporary directory, as a hostPath would: a restarted pod (a new template generation, a
//! deleted pod) resumes as the same node without joining again; a node whose instance was made
//! again starts with an empty directory and joins anew. A node whose system hangs runs nothing. A node that goes away stops its
//! daemon and its pod; a daemon whose node the control plane deleted is not started again for
//! the same pod; one that failed before joining is restarted with a back-off, as
//! CrashLoopBackOff does; one whose Secret is missing waits, not ready, and is retried.

mod pods;
mod spec;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::gke::{ClusterKey, GkeState};
use super::kubeapi::{self, ObjectKey};
use super::{Shared, clock, machine_types};
use bcd::daemon::{EmbeddedDaemon, Machine, host, run_embedded, state::NodeState};
use bcd::proto::bettercompute::compute::v1::{NodeCapacity, NodeCondition, NodeGpus};
use pods::{ContainerState, Counts, PodFacts};
use spec::{Launch, NotYet};

/// How often what runs is compared with what should.
pub const PERIOD: Duration = Duration::from_millis(200);
/// The longest back-off before a daemon that failed to join is started again.
const BACKOFF_CAP: Duration = Duration::from_secs(5);

/// One pod: a DaemonSet's on a node of a cluster (by GKE's id, so a cluster made again under
/// the same name starts afresh).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct PodKey {
    cluster_id: String,
    namespace: String,
    daemonset: String,
    node: String,
    /// The incarnation of the node's instance: one made again is a new machine, with a new disk.
    incarnation: u64,
}

/// A pod that should run, as this pass reads it.
struct Wanted {
    cluster: ClusterKey,
    daemonset: Value,
    generation: u64,
    node_ip: String,
    resources: host::Resources,
}

/// A pod the kubelets run.
struct Pod {
    cluster: ClusterKey,
    name: String,
    uid: String,
    daemonset_uid: Value,
    generation: u64,
    created: String,
    restarts: u32,
    state_dir: PathBuf,
    phase: Phase,
}

enum Phase {
    Waiting(NotYet),
    /// Dropping `_stop` stops the daemon.
    Running {
        _stop: oneshot::Sender<()>,
        done: oneshot::Receiver<Result<(), String>>,
        started: String,
        joined: bool,
    },
    BackOff {
        until: Instant,
        message: String,
    },
    Failed {
        message: String,
        finished: String,
    },
}

/// The running pods, and where their daemons keep their state.
pub struct Kubelets {
    dir: PathBuf,
    pods: BTreeMap<PodKey, Pod>,
}

/// Runs the kubelets until the task is aborted (the pods' daemons stop with it).
pub async fn run(shared: Arc<Shared>, dir: PathBuf) {
    let mut kubelets = Kubelets { dir, pods: BTreeMap::new() };
    let mut tick = tokio::time::interval(PERIOD);
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tick.tick().await;
        kubelets.pass(&shared);
    }
}

impl Kubelets {
    fn pass(&mut self, shared: &Shared) {
        let mut world = shared.world();
        let wanted = wanted(&world.gke);
        let gone: Vec<PodKey> = self
            .pods
            .iter()
            .filter(|(key, pod)| wanted.get(*key).is_none_or(|w| w.daemonset["metadata"]["uid"] != pod.daemonset_uid))
            .map(|(key, _)| key.clone())
            .collect();
        for key in gone {
            let pod = self.pods.remove(&key).expect("listed above");
            if let Some(cluster) = world.gke.clusters.get_mut(&pod.cluster) {
                cluster.kube.remove_observed(&pod_key(&key, &pod.name));
            }
        }
        let now = Instant::now();
        for (key, want) in &wanted {
            let Some(cluster) = world.gke.clusters.get_mut(&want.cluster) else { continue };
            let objects = &mut cluster.kube;
            let replace = self.pods.get(key).is_some_and(|pod| {
                pod.generation != want.generation || !objects.objects.contains_key(&pod_key(key, &pod.name))
            });
            if replace && let Some(old) = self.pods.remove(key) {
                objects.remove_observed(&pod_key(key, &old.name));
            }
            let dir = &self.dir;
            let pod = self.pods.entry(key.clone()).or_insert_with(|| new_pod(dir, key, want));
            let template = &want.daemonset["spec"]["template"]["spec"];
            let launch = spec::launch(template, objects, &key.namespace, &key.node, &pod.name);
            pod.advance(key, want, launch, now);
            let facts = PodFacts {
                name: &pod.name,
                uid: &pod.uid,
                namespace: &key.namespace,
                created: &pod.created,
                node: &key.node,
                node_ip: &want.node_ip,
                pod_ip: &want.node_ip,
                restarts: pod.restarts,
                generation: pod.generation,
                state: &pod.container_state(),
            };
            objects.put_observed(pod_key(key, &pod.name), pods::pod_json(&want.daemonset, &facts));
        }
        self.publish(&mut world.gke, &wanted);
    }

    /// Writes every DaemonSet's status and every cluster's list of daemons.
    fn publish(&self, gke: &mut GkeState, wanted: &BTreeMap<PodKey, Wanted>) {
        for cluster in gke.clusters.values_mut() {
            let id = cluster.id.clone();
            let objects = &mut cluster.kube;
            let daemonsets: Vec<(ObjectKey, Value)> = objects
                .objects
                .iter()
                .filter(|((plural, _, _), _)| plural == "daemonsets")
                .map(|(key, object)| (key.clone(), object.clone()))
                .collect();
            for (object_key, mut daemonset) in daemonsets {
                let (_, namespace, name) = &object_key;
                let generation = daemonset["metadata"]["generation"].as_u64().unwrap_or(1);
                let mut counts = Counts::default();
                for (_, pod) in self.pods.iter().filter(|(k, _)| {
                    k.cluster_id == id && &k.namespace == namespace && &k.daemonset == name && wanted.contains_key(*k)
                }) {
                    counts.desired += 1;
                    counts.current += 1;
                    counts.ready += u64::from(matches!(pod.phase, Phase::Running { joined: true, .. }));
                    counts.updated += u64::from(pod.generation == generation);
                }
                daemonset["status"] = pods::daemonset_status(generation, &counts);
                objects.put_observed(object_key, daemonset);
            }
            objects.daemons =
                self.pods.iter().filter(|(key, _)| key.cluster_id == id).map(|(key, pod)| pod.inspect(key)).collect();
        }
    }
}

fn pod_key(key: &PodKey, name: &str) -> ObjectKey {
    ("pods".to_owned(), key.namespace.clone(), name.to_owned())
}

fn new_pod(dir: &Path, key: &PodKey, want: &Wanted) -> Pod {
    let suffix: String = (0..5).map(|_| (b'a' + rand::random::<u8>() % 26) as char).collect();
    let node = format!("{}.{}", key.node, key.incarnation);
    let state_dir = dir.join(&key.cluster_id).join(&key.namespace).join(&key.daemonset).join(node);
    Pod {
        cluster: want.cluster.clone(),
        name: format!("{}-{suffix}", key.daemonset),
        uid: kubeapi::new_uid(),
        daemonset_uid: want.daemonset["metadata"]["uid"].clone(),
        generation: want.generation,
        created: clock::now(),
        restarts: 0,
        state_dir,
        phase: Phase::BackOff { until: Instant::now(), message: String::new() },
    }
}

impl Pod {
    /// Moves the pod on: starts its daemon when it can, notes how a running one ended.
    fn advance(&mut self, key: &PodKey, want: &Wanted, launch: Result<Launch, NotYet>, now: Instant) {
        match &mut self.phase {
            Phase::Failed { .. } => {}
            Phase::BackOff { until, .. } if *until > now => {}
            Phase::Waiting(_) | Phase::BackOff { .. } => match launch {
                Ok(launch) => self.start(key, launch, want.resources.clone()),
                Err(not_yet) => self.phase = Phase::Waiting(not_yet),
            },
            Phase::Running { done, joined, .. } => match done.try_recv() {
                Err(oneshot::error::TryRecvError::Empty) => {
                    *joined = *joined || NodeState::read(&self.state_dir).ok().flatten().is_some();
                }
                Ok(Err(message)) if NodeState::read(&self.state_dir).ok().flatten().is_some() => {
                    tracing::info!(pod = %self.name, node = %key.node, "bcd stopped for good: {message}");
                    self.phase = Phase::Failed { message, finished: clock::now() };
                }
                ended => {
                    let message = match ended {
                        Ok(Err(message)) => message,
                        _ => "bcd exited".to_owned(),
                    };
                    self.restarts += 1;
                    let backoff = (PERIOD * 2u32.saturating_pow(self.restarts.min(10))).min(BACKOFF_CAP);
                    self.phase = Phase::BackOff { until: now + backoff, message };
                }
            },
        }
    }

    fn start(&mut self, key: &PodKey, launch: Launch, resources: host::Resources) {
        let daemon = EmbeddedDaemon {
            endpoint: launch.endpoint,
            token: launch.token,
            ca_sha256: launch.ca_sha256,
            identity: host::Identity {
                machine_id: launch.machine_id,
                hostname: key.node.clone(),
                architecture: "amd64".into(),
                os: "Container-Optimized OS from Google".into(),
                kernel: "6.6.72+".into(),
            },
            labels: launch.labels,
            machine: Machine::Given(resources),
            state_dir: self.state_dir.clone(),
        };
        let (stop, stopped) = oneshot::channel::<()>();
        let (report, done) = oneshot::channel();
        tokio::spawn(async move {
            let ended = run_embedded(daemon, async move {
                let _ = stopped.await;
            })
            .await;
            let _ = report.send(ended);
        });
        let joined = NodeState::read(&self.state_dir).ok().flatten().is_some();
        self.phase = Phase::Running { _stop: stop, done, started: clock::now(), joined };
    }

    fn container_state(&self) -> ContainerState {
        match &self.phase {
            Phase::Waiting(not_yet) => {
                ContainerState::Waiting { reason: not_yet.reason.to_owned(), message: not_yet.message.clone() }
            }
            Phase::Running { started, joined, .. } => {
                ContainerState::Running { started: started.clone(), ready: *joined }
            }
            Phase::BackOff { message, .. } => ContainerState::BackOff { message: message.clone() },
            Phase::Failed { message, finished } => {
                ContainerState::Failed { message: message.clone(), finished: finished.clone() }
            }
        }
    }

    fn inspect(&self, key: &PodKey) -> Value {
        let (phase, message) = match &self.phase {
            Phase::Waiting(not_yet) => ("waiting", not_yet.message.clone()),
            Phase::Running { joined: true, .. } => ("running", String::new()),
            Phase::Running { .. } => ("joining", String::new()),
            Phase::BackOff { message, .. } => ("backOff", message.clone()),
            Phase::Failed { message, .. } => ("failed", message.clone()),
        };
        json!({"pod": self.name, "namespace": key.namespace, "daemonSet": key.daemonset, "node": key.node,
               "phase": phase, "message": message, "restarts": self.restarts, "generation": self.generation})
    }
}

/// Every pod that should run now: each DaemonSet's on each node it selects.
fn wanted(gke: &GkeState) -> BTreeMap<PodKey, Wanted> {
    let mut wanted = BTreeMap::new();
    for (cluster_key, cluster) in &gke.clusters {
        let nodes = cluster.nodes();
        let daemonsets = cluster.kube.objects.iter().filter(|((plural, _, _), _)| plural == "daemonsets");
        for ((_, namespace, name), daemonset) in daemonsets {
            let template = &daemonset["spec"]["template"]["spec"];
            for node in &nodes {
                let node_name = kubeapi::node_name(&cluster_key.2, node);
                // A hung system runs nothing: its pods stop, as their daemons do.
                if node.hung || !spec::selects(template, &kubeapi::node_labels(&cluster_key.2, node), &node.taints) {
                    continue;
                }
                let key = PodKey {
                    cluster_id: cluster.id.clone(),
                    namespace: namespace.clone(),
                    daemonset: name.clone(),
                    node: node_name.clone(),
                    incarnation: node.incarnation,
                };
                let want = Wanted {
                    cluster: cluster_key.clone(),
                    daemonset: daemonset.clone(),
                    generation: daemonset["metadata"]["generation"].as_u64().unwrap_or(1),
                    node_ip: format!("10.128.0.{}", node.index + 2),
                    resources: resources(node),
                };
                wanted.insert(key, want);
            }
        }
    }
    wanted
}

/// What bcd reports of a fake node: its machine type's CPUs and memory, its disk, its GPUs.
fn resources(node: &super::gke::FakeNode) -> host::Resources {
    let shape = machine_types::shape(&node.machine_type);
    let gpus: Vec<NodeGpus> =
        kubeapi::accelerators(node).into_iter().map(|(model, count)| NodeGpus { model, count: count as i32 }).collect();
    let disk = (node.disk_size_gb.max(10) as i64) << 30;
    let capacity = NodeCapacity {
        cpu_millis: shape.cpus * 1000,
        memory_bytes: shape.memory_gib << 30,
        ephemeral_storage_bytes: disk,
        gpus: gpus.clone(),
    };
    let allocatable = NodeCapacity {
        cpu_millis: shape.cpus * 1000 - 100,
        memory_bytes: (shape.memory_gib << 30) - (256 << 20),
        ephemeral_storage_bytes: disk - disk / 10,
        gpus,
    };
    let condition = |kind: &str, what: &str| NodeCondition {
        r#type: kind.to_owned(),
        status: "False".to_owned(),
        message: format!("90% of the {what} is free"),
    };
    host::Resources {
        capacity,
        allocatable,
        conditions: vec![condition("MemoryPressure", "memory"), condition("DiskPressure", "disk")],
    }
}

/// A directory of the fake cloud's own, removed when it drops.
pub struct StateRoot(pub PathBuf);

impl StateRoot {
    pub fn new() -> std::io::Result<StateRoot> {
        let dir =
            std::env::temp_dir().join(format!("bc-fakecloud-{}-{:016x}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(&dir)?;
        Ok(StateRoot(dir))
    }
}

impl Drop for StateRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
