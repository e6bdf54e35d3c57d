//! The sweep that finds silent nodes: a node with no heartbeat for three of its intervals is
//! `notReady` (a reader never decides it), as a reconciler of one object (`nodes/liveness`)
//! whose lease keeps it to one worker at a time.

use std::time::Duration;

use super::{Outcome, Pass, Reconciler};
use crate::store::now_micros;

/// The kind of the sweep.
pub const NODE_LIVENESS_KIND: &str = "node-liveness";

/// The one object of that kind.
pub const NODE_LIVENESS_OBJECT: &str = "nodes";

/// Marks silent nodes `notReady`.
#[derive(Clone, Debug)]
pub struct NodeLiveness {
    /// How often the sweep runs.
    pub interval: Duration,
}

#[tonic::async_trait]
impl Reconciler for NodeLiveness {
    fn kind(&self) -> &'static str {
        NODE_LIVENESS_KIND
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        Outcome::sweep(pass.store.node_mark_silent(now_micros()).await, self.interval, |marked| {
            if marked > 0 {
                tracing::info!(nodes = marked, "silent nodes marked notReady");
            }
        })
    }
}
