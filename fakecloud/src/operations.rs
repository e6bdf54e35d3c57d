//! Google's long-running operations, as the fake GKE and Compute Engine APIs both keep them:
//! an operation is answered at once as `RUNNING`, becomes `DONE` when it is due, and only then
//! applies its effect to the fake's objects (or records why it failed).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::clock;

/// What an operation does once it is due.
pub trait OperationEffect {
    /// The message the operation fails with, if this effect is a failure.
    fn failure(&self) -> Option<&str>;
}

/// One operation, `S` saying where it runs (a cluster, a project's region) and `E` what it
/// does when it is due.
pub struct FakeOperation<S, E> {
    /// Where it runs.
    pub scope: S,
    /// `CREATE_CLUSTER`, `insert`, ...
    pub operation_type: &'static str,
    /// The link of the object it acts on.
    pub target_link: String,
    /// When it started, as Google writes times.
    pub start_time: String,
    /// When it finished; empty until then.
    pub end_time: String,
    /// When it finishes.
    pub due: Instant,
    /// Whether it finished.
    pub done: bool,
    /// Why it failed, once it did.
    pub error: Option<String>,
    /// What it does when due; taken when it is applied.
    pub effect: Option<E>,
}

impl<S, E> FakeOperation<S, E> {
    /// An operation starting now that finishes after `duration`.
    pub fn start(scope: S, operation_type: &'static str, target_link: String, duration: Duration, effect: E) -> Self {
        Self {
            scope,
            operation_type,
            target_link,
            start_time: clock::now(),
            end_time: String::new(),
            due: Instant::now() + duration,
            done: false,
            error: None,
            effect: Some(effect),
        }
    }

    /// `DONE` or `RUNNING`.
    pub fn status(&self) -> &'static str {
        if self.done { "DONE" } else { "RUNNING" }
    }
}

/// Operations by name.
pub type Operations<S, E> = BTreeMap<String, FakeOperation<S, E>>;

/// Finishes every operation that is due at `now`: marks it done, records its failure, and
/// returns the effects, in the operations' name order, for the fake to apply.
pub fn finish_due<S: Clone, E: OperationEffect>(operations: &mut Operations<S, E>, now: Instant) -> Vec<(S, E)> {
    let mut effects = Vec::new();
    for op in operations.values_mut().filter(|op| !op.done && op.due <= now) {
        op.done = true;
        op.end_time = clock::now();
        if let Some(effect) = op.effect.take() {
            if let Some(message) = effect.failure() {
                op.error = Some(message.to_owned());
            }
            effects.push((op.scope.clone(), effect));
        }
    }
    effects
}
