//! The worker: runs the reconcilers that converge providers to the desired state.
//!
//! This is the runtime's shell: it checks the store is migrated, then idles until asked to
//! stop. Leases, scheduling, wake-ups and the reconcilers themselves plug in here.

use std::future::Future;
use std::time::Duration;

use crate::error::{Error, Result};
use crate::store::Store;

/// The worker's runtime.
#[derive(Debug, Clone)]
pub struct Worker {
    /// Where desired and observed state live.
    store: Store,
    /// How often an idle worker looks for due work.
    tick: Duration,
}

impl Worker {
    /// A worker over `store`.
    pub fn new(store: Store, tick: Duration) -> Self {
        Self { store, tick }
    }

    /// Refuses a store whose migrations are not all applied: a worker must not act on a schema
    /// it does not know.
    pub async fn check_store(&self) -> Result<()> {
        let pending = self.store.pending_migrations().await?;
        if pending.is_empty() {
            Ok(())
        } else {
            Err(Error::unavailable(format!("the database lacks migrations {pending:?}; run `bc-server migrate` first")))
        }
    }

    /// Runs until `shutdown` resolves.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<()> {
        self.check_store().await?;
        tracing::info!(tick_ms = self.tick.as_millis() as u64, "worker started");
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => break,
                () = tokio::time::sleep(self.tick) => {}
            }
        }
        tracing::info!("worker stopped");
        Ok(())
    }
}
