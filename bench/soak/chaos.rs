//! The soak's faults and watchers: workers killed with SIGKILL and restarted at random, Postgres
//! restarted once, resident memory sampled, and the fake cloud watched for a cluster created
//! twice (two provider objects, at once or one after the other, under one cluster's label).

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use fakecloud::FakeCloud;
use rand::Rng;

use crate::common::procs::{Process, WorkerOptions, start_worker};

/// The workers, by slot, shared by the killer, the sampler and the end of the soak.
pub type Workers = Arc<Mutex<Vec<Option<Process>>>>;

/// How to start a worker again.
#[derive(Clone)]
pub struct WorkerRecipe {
    /// The database URL.
    pub database_url: String,
    /// The servers' secret key.
    pub secret_key: String,
    /// The logs' directory.
    pub logs: PathBuf,
    /// Its options.
    pub options: WorkerOptions,
}

impl WorkerRecipe {
    /// Starts worker `slot` (numbered from 1 in its name and log).
    pub fn start(&self, slot: usize) -> Result<Process, String> {
        start_worker(slot + 1, &self.database_url, &self.secret_key, &self.logs, &self.options)
    }
}

/// Kills a random worker with SIGKILL every `min..max` seconds and starts it again up to five
/// seconds later, until `stop`; returns how many it killed.
pub async fn kill_workers(workers: Workers, recipe: WorkerRecipe, every: (u64, u64), stop: Instant) -> usize {
    let mut kills = 0;
    loop {
        let wait = Duration::from_millis(rand::rng().random_range(every.0 * 1000..every.1 * 1000));
        if Instant::now() + wait >= stop {
            return kills;
        }
        tokio::time::sleep(wait).await;
        let slot = {
            let mut workers = workers.lock().unwrap_or_else(|p| p.into_inner());
            let slot = rand::rng().random_range(0..workers.len());
            if let Some(mut worker) = workers[slot].take() {
                worker.kill();
                kills += 1;
            }
            slot
        };
        let down = Duration::from_millis(rand::rng().random_range(0..5000));
        tokio::time::sleep(down).await;
        let started = recipe.start(slot);
        let mut workers = workers.lock().unwrap_or_else(|p| p.into_inner());
        match started {
            Ok(process) => workers[slot] = Some(process),
            Err(error) => eprintln!("soak: cannot restart worker {}: {error}", slot + 1),
        }
    }
}

/// Starts every worker slot that has none (at the end of the chaos).
pub fn ensure_workers(workers: &Workers, recipe: &WorkerRecipe) -> Result<(), String> {
    let mut workers = workers.lock().unwrap_or_else(|p| p.into_inner());
    for (slot, worker) in workers.iter_mut().enumerate() {
        if worker.as_mut().is_none_or(|w| !w.running()) {
            *worker = Some(recipe.start(slot)?);
        }
    }
    Ok(())
}

/// Resident memory at one moment.
#[derive(Clone, Debug)]
pub struct MemorySample {
    /// Since the start of the soak.
    pub at: Duration,
    /// `bc-server`'s, KiB.
    pub server_kib: Option<u64>,
    /// Each worker slot's, KiB (none while it is down).
    pub workers_kib: Vec<Option<u64>>,
}

/// Samples memory every `every` until `stop`.
pub async fn sample_memory(
    server_pid: u32,
    workers: Workers,
    every: Duration,
    started: Instant,
    stop: Instant,
) -> Vec<MemorySample> {
    let mut samples = Vec::new();
    // Let the workers finish starting: a process not yet running its program has no memory.
    tokio::time::sleep(Duration::from_secs(1)).await;
    loop {
        let workers_kib = {
            let workers = workers.lock().unwrap_or_else(|p| p.into_inner());
            workers.iter().map(|w| w.as_ref().and_then(Process::rss_kib)).collect()
        };
        samples.push(MemorySample {
            at: started.elapsed(),
            server_kib: crate::common::procs::rss_kib(server_pid),
            workers_kib,
        });
        if Instant::now() + every > stop {
            return samples;
        }
        tokio::time::sleep(every).await;
    }
}

/// What the watcher saw at the fake cloud.
#[derive(Debug, Default)]
pub struct Sightings {
    /// Provider ids seen under each cluster label, ever.
    pub ids_by_label: BTreeMap<String, BTreeSet<String>>,
    /// Times two provider clusters carried one label at once.
    pub twins: u64,
    /// Most clusters at the provider at once.
    pub most: usize,
    /// Provider ids seen under each load balancer name, ever.
    pub lb_ids_by_name: BTreeMap<String, BTreeSet<String>>,
    /// Times two provider load balancers carried one name at once.
    pub lb_twins: u64,
    /// Looks taken.
    pub looks: u64,
}

/// Looks at the fake cloud's GKE clusters and DigitalOcean load balancers now.
pub fn look(cloud: &FakeCloud, sightings: &mut Sightings) {
    let world = cloud.inspect();
    let clusters = world["gke"]["clusters"].as_array().cloned().unwrap_or_default();
    let mut labels = BTreeSet::new();
    for cluster in &clusters {
        let label = cluster["labels"]["better-compute-cluster"].as_str().unwrap_or_default().to_owned();
        if !labels.insert(label.clone()) {
            sightings.twins += 1;
        }
        sightings.ids_by_label.entry(label).or_default().insert(cluster["id"].as_str().unwrap_or_default().to_owned());
    }
    sightings.most = sightings.most.max(clusters.len());
    let load_balancers = world["digitalocean"]["loadBalancers"].as_array().cloned().unwrap_or_default();
    let mut names = BTreeSet::new();
    for lb in &load_balancers {
        let name = lb["name"].as_str().unwrap_or_default().to_owned();
        if !names.insert(name.clone()) {
            sightings.lb_twins += 1;
        }
        sightings.lb_ids_by_name.entry(name).or_default().insert(lb["id"].to_string());
    }
    sightings.looks += 1;
}

/// Looks every `every` until `stop`.
pub async fn watch_cloud(cloud: Arc<FakeCloud>, sightings: Arc<Mutex<Sightings>>, every: Duration, stop: Instant) {
    while Instant::now() < stop {
        look(&cloud, &mut sightings.lock().unwrap_or_else(|p| p.into_inner()));
        tokio::time::sleep(every).await;
    }
}
