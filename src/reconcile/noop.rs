//! The built-in `noop` kind, enabled in tests and benchmarks only: a pass waits a little and
//! records when it ran and on which worker, so that tests can check that no object was ever in
//! two passes at once and that every object was reconciled.

use std::time::Duration;

use super::{Outcome, Pass, Reconciler};
use crate::store::now_micros;

/// A reconciler that does nothing but record its passes.
#[derive(Clone, Debug)]
pub struct Noop {
    /// How long a pass lasts.
    pub pass: Duration,
}

#[tonic::async_trait]
impl Reconciler for Noop {
    fn kind(&self) -> &'static str {
        "noop"
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        let started = now_micros();
        if !self.pass.is_zero() {
            tokio::time::sleep(self.pass).await;
        }
        match pass.store.work_noop_record(&pass.item.object_id, &pass.worker_id, started, now_micros()).await {
            Ok(()) => Outcome::settled(),
            Err(error) => Outcome::transient(error.to_string()),
        }
    }
}
