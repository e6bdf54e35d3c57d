//! The sweep that finds silent nodes: a node with no heartbeat for three of its intervals is
//! `notReady` (a reader never decides it), then each pool's node policy is applied to its silent
//! nodes (remediated, or forgotten: see [`super::node_remediation`]), as a reconciler of one
//! object (`nodes/liveness`) whose lease keeps it to one worker at a time.

use std::time::Duration;

use super::{Outcome, Pass, Reconciler};
use crate::store::now_micros;

/// The kind of the sweep.
pub const NODE_LIVENESS_KIND: &str = "node-liveness";

/// The one object of that kind.
pub const NODE_LIVENESS_OBJECT: &str = "nodes";

/// Marks silent nodes `notReady` and applies the pools' node policies to them.
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
        let now = now_micros();
        let swept = async {
            let marked = pass.store.node_mark_silent(now).await?;
            let remediated = super::node_remediation::sweep(&pass.store, now).await?;
            Ok((marked, remediated))
        };
        Outcome::sweep(swept.await, self.interval, |(marked, remediated)| {
            if marked > 0 {
                tracing::info!(nodes = marked, "silent nodes marked notReady");
            }
            if remediated != Default::default() {
                tracing::info!(steps = remediated.steps, forgotten = remediated.forgotten, "silent nodes remediated");
            }
        })
    }
}
