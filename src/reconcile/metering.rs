//! The metering pass as a reconciler of one object (`metering/ledger`): its lease keeps it to one
//! worker at a time, and the ledger's key keeps it idempotent even without the lease. It also
//! forgets the operation log's calls past their keeping time.

use std::time::Duration;

use super::{Outcome, Pass, Reconciler};
use crate::store::{OPERATIONS_KEPT_MICROS, now_micros};

/// The kind of the metering pass.
pub const METERING_KIND: &str = "metering";

/// The one object of that kind.
pub const METERING_OBJECT: &str = "ledger";

/// Bills every billable resource for the hours that are over.
#[derive(Clone, Debug)]
pub struct Metering {
    /// How often the pass runs.
    pub interval: Duration,
}

#[tonic::async_trait]
impl Reconciler for Metering {
    fn kind(&self) -> &'static str {
        METERING_KIND
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        // The operation log is kept a bounded time: the same periodic pass forgets what is older,
        // also of resources that are gone (their own appends prune only by count).
        let now = now_micros();
        if let Err(error) = pass.store.operation_log_prune(now - OPERATIONS_KEPT_MICROS).await {
            tracing::warn!(%error, "pruning the operation log failed");
        }
        Outcome::sweep(pass.store.usage_meter(now_micros()).await, self.interval, |added| {
            if added > 0 {
                tracing::info!(rows = added, "usage metered");
            }
        })
    }
}
