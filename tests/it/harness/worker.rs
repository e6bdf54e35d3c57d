//! The worker in tests: every worker is built by [`worker`], and the resource reconcilers come
//! from the one registry (`better_compute::reconcile::registry`, as `bc-worker` and `bcctl dev`
//! use it), with backoffs and intervals short enough for a test.

use std::sync::Arc;
use std::time::Duration;

use better_compute::provider::accounts::{DigitalOceanAccounts, GkeAccounts};
use better_compute::reconcile::{Backoff, ProviderResources, Reconciler, Timings, Worker, WorkerConfig, registry};
use better_compute::secrets::SecretKey;
use better_compute::store::Store;
use tokio::task::{JoinError, JoinHandle};

/// The backoff of the tests' reconcilers: the spec's are minutes, which is configuration.
const FAST_BACKOFF: Backoff =
    Backoff { base: Duration::from_millis(100), cap: Duration::from_millis(800), jitter: 0.2 };

/// The reconcilers' accounts and key with [`FAST_BACKOFF`] for failures and refused deletes.
pub fn fast_resources(
    gke: Arc<dyn GkeAccounts>,
    digitalocean: Arc<dyn DigitalOceanAccounts>,
    secret_key: SecretKey,
) -> ProviderResources {
    let timings = Timings { backoff: FAST_BACKOFF, delete_backoff: FAST_BACKOFF, ..Timings::SPEC };
    ProviderResources { timings, ..ProviderResources::new(gke, digitalocean, secret_key) }
}

/// A worker that ticks every 50 ms, holds leases for 2 s, passes converging objects every
/// 100 ms and settled ones every 2 s.
pub fn fast_config() -> WorkerConfig {
    WorkerConfig {
        tick: Duration::from_millis(50),
        lease: Duration::from_secs(2),
        converging: Some(Duration::from_millis(100)),
        settled: Some(Duration::from_secs(2)),
        shutdown_grace: Duration::from_millis(100),
        ..WorkerConfig::default()
    }
}

/// The registry's reconcilers of `kinds` (every kind when `None`): a suite that makes the
/// rows of other kinds by hand keeps their reconcilers away from them.
pub fn reconcilers(resources: ProviderResources, kinds: Option<&[&str]>) -> Vec<Arc<dyn Reconciler>> {
    registry(resources)
        .into_iter()
        .filter(|reconciler| kinds.is_none_or(|kinds| kinds.contains(&reconciler.kind())))
        .collect()
}

/// The worker of a test, not started: on `store`, with `config`, running `reconcilers`. A test
/// that kills workers at random moments runs and aborts it itself; the others start it with
/// [`start_worker`] or a handle's `start_worker`.
pub fn worker(store: &Store, config: WorkerConfig, reconcilers: Vec<Arc<dyn Reconciler>>) -> Worker {
    Worker::new(store.clone(), config).with_reconcilers(reconcilers)
}

/// Starts a worker on `store` (of a system a test started) with `config`, running `reconcilers`,
/// until it is stopped or dropped.
pub fn start_worker(store: &Store, config: WorkerConfig, reconcilers: Vec<Arc<dyn Reconciler>>) -> RunningWorker {
    RunningWorker::start(worker(store, config, reconcilers))
}

/// A worker running in a task until stopped; dropping it cancels the task.
pub struct RunningWorker {
    /// Asks the worker to stop.
    stop: tokio::sync::watch::Sender<bool>,
    /// The running task.
    task: Option<JoinHandle<()>>,
}

impl RunningWorker {
    /// Runs `worker` until [`stop`](Self::stop); it panics in its task if it fails.
    fn start(worker: Worker) -> RunningWorker {
        let (stop, mut stopped) = tokio::sync::watch::channel(false);
        let task = tokio::spawn(async move {
            worker
                .run(async move {
                    let _ = stopped.wait_for(|stopped| *stopped).await;
                })
                .await
                .unwrap();
        });
        RunningWorker { stop, task: Some(task) }
    }

    /// Stops the worker and waits for it: an error if its task failed.
    pub async fn stop(mut self) -> Result<(), JoinError> {
        let _ = self.stop.send(true);
        match self.task.take() {
            Some(task) => task.await,
            None => Ok(()),
        }
    }
}

impl Drop for RunningWorker {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
        if let Some(task) = self.task.take() {
            task.abort();
        }
    }
}
