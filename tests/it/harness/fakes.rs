//! What the tests' fakes and instruments do on a clock of their own: a peer that never
//! answers, a balancer's health probes, a memory sampler, workers crashed at random moments.
//! None of these is a wait: a test waits for what the system records (`poll`), and these
//! only play the part of the world around it.

use std::future::Future;
use std::ops::Range;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use better_compute::reconcile::{Reconciler, WorkerConfig};
use better_compute::store::Store;
use rand::Rng;
use tokio::task::{AbortHandle, JoinHandle};

/// A call into a peer that hangs (a provider or a store that stopped answering): it never
/// returns, and marks `gave_up` when the caller drops it, so a test can wait for the caller
/// to have given up rather than for a time.
pub async fn never_answer(gave_up: Arc<AtomicBool>) {
    /// Marks the call given up when its future is dropped.
    struct GivenUp(Arc<AtomicBool>);
    impl Drop for GivenUp {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let _marked = GivenUp(gave_up);
    std::future::pending::<()>().await;
}

/// Runs `probe` every `period` until `stop`: a health checker (a load balancer's, a
/// Kubernetes Service's) looks on its own period, whatever the servers record.
pub async fn probe_every<F, Fut>(period: Duration, stop: &AtomicBool, mut probe: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = ()>,
{
    while !stop.load(Ordering::Relaxed) {
        probe().await;
        tokio::time::sleep(period).await;
    }
}

/// Calls `sample` every `period` on this thread until `stop`: a figure that changes on its own
/// (a process's resident memory) is measured by sampling it, not waited for.
pub fn sample_every(period: Duration, stop: &AtomicBool, mut sample: impl FnMut()) {
    while !stop.load(Ordering::Acquire) {
        sample();
        std::thread::sleep(period);
    }
}

/// Crashes workers as a machine dies: `kills` workers in a row on `store`, each cancelled
/// (no graceful stop, its leases run out) after a random time in `alive` (ms), then one that
/// stays, whose abort handle the returned task gives back for the test to stop it.
pub fn workers_killed_at_random(
    store: &Store,
    config: WorkerConfig,
    reconcilers: Vec<Arc<dyn Reconciler>>,
    kills: usize,
    alive: Range<u64>,
) -> JoinHandle<AbortHandle> {
    let store = store.clone();
    tokio::spawn(async move {
        for _ in 0..kills {
            let worker = super::worker(&store, config.clone(), reconcilers.clone());
            let task = tokio::spawn(worker.run(std::future::pending()));
            let lived = rand::rng().random_range(alive.clone());
            tokio::time::sleep(Duration::from_millis(lived)).await;
            task.abort();
            let _ = task.await;
        }
        let worker = super::worker(&store, config, reconcilers);
        tokio::spawn(worker.run(std::future::pending())).abort_handle()
    })
}
