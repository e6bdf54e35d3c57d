//! The worker: leases across processes, wake-ups, failures and stuck objects, events (list,
//! watch across a restart, server-sent events) and usage metering.

mod abandoned;
mod events;
mod leases;
mod relay;
mod status;
mod usage;
mod wakeup;

use std::time::{Duration, Instant};

use better_compute::service::Service;
use better_compute::store::Store;
use tokio::task::JoinHandle;

/// The server on an existing store (the harness's `TestServer` bootstraps a fresh one; a restart
/// needs the same database again).
pub struct Served {
    /// `http://127.0.0.1:<port>`.
    pub endpoint: String,
    stop: tokio::sync::oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Served {
    /// Serves `store` on a free port.
    pub async fn start(store: Store) -> Served {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(async move {
            better_compute::server::serve(listener, Service::new(store), async move {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Served { endpoint, stop, task }
    }

    /// Stops it gracefully; panics if that takes more than 10 s (a stream that never ends).
    pub async fn stop(self) {
        let _ = self.stop.send(());
        tokio::time::timeout(Duration::from_secs(10), self.task)
            .await
            .expect("the server stops within 10 s, open watches included")
            .unwrap();
    }
}

/// A viewer of `tenant` with an API key; returns the bearer token.
pub async fn tenant_user(store: &Store, tenant: &str) -> String {
    crate::harness::tenant_principal(store, tenant, "viewer").await
}

/// A child process killed when dropped, so that a failing test leaves no worker running.
pub struct KillOnDrop(pub std::process::Child);

impl Drop for KillOnDrop {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Polls `check` every 20 ms until it returns `Some`, failing after `limit`.
pub async fn eventually<T, F, Fut>(limit: Duration, what: &str, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Option<T>>,
{
    let started = Instant::now();
    loop {
        if let Some(value) = check().await {
            return value;
        }
        assert!(started.elapsed() < limit, "timed out after {limit:?} waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
