//! The worker: runs the reconcilers that converge providers to the desired state.
//!
//! Design: every object a reconciler looks after has a row in `work_items` (see
//! `store::work`), written by its resource module in the same transaction as the resource. The
//! [`Worker`] claims due rows with a lease, runs one pass per row through the kind's
//! [`Reconciler`], renews the leases while passes run, and records what the pass said to do next:
//! come back on the converging or settled interval, after a delay, never (the object is gone), or
//! after a backoff for a failure. Passes are level-triggered: a pass re-reads everything it needs,
//! so running one twice, or after a crash half way, is safe. Writes wake the worker at once
//! (`NOTIFY` on Postgres, an in-process signal in one process); a tick catches the rest.
//!
//! A resource module plugs in in two places. In its store transaction it writes the resource,
//! then `Store::work_enqueue_in` (kind, id, state, the state's deadline), `usage_billable_*_in`
//! when billing starts or ends, and `event_append_in` last (it takes the outbox's ordering lock),
//! and commits with `commit_and_signal`. And it implements [`ResourceReconciler`]: the runtime
//! fetches the row, drops the work of an object that is gone, and turns a failed pass into its
//! outcome through the one error policy ([`PassError`]); the reconciler is listed in
//! [`registry`], which `bc-worker`, `bcctl dev` and the tests register with the worker.

mod error;
pub mod kubernetes_clusters;
pub mod kubernetes_substrates;
mod metal;
mod metering;
mod node_liveness;
mod node_pool_drift;
mod node_pool_steps;
mod node_remediation;
mod noop;
mod orphan_sweeper;
mod outcome;
pub mod provider_objects;
mod registry;
pub mod relay;
mod resealing;
mod runtime;
pub mod vps;
mod wake;

pub use error::{Context, Failure, PassError, refusal};
pub use kubernetes_clusters::KubernetesClusters;
pub use kubernetes_substrates::{DaemonEndpoint, KubernetesSubstrates};
pub use metal::MetalMachines;
pub use metering::Metering;
pub use node_liveness::NodeLiveness;
pub use noop::Noop;
pub use orphan_sweeper::OrphanSweeper;
pub use outcome::{Backoff, Next, Outcome, Schedule, Timings};
pub use registry::registry;
pub use resealing::{Resealer, SweepReport};
pub use runtime::{Worker, WorkerConfig, parse_kind_intervals};
pub use vps::{ProviderLoadBalancers, ProviderResources};

use std::time::Duration;

use crate::store::{ConvergedRow, Store, WorkItem};

/// What a pass gets: its object's work item and the store.
#[derive(Clone, Debug)]
pub struct Pass {
    /// The claimed item: kind, object id, attempts, last error, state.
    pub item: WorkItem,
    /// The store.
    pub store: Store,
    /// The id of the worker running the pass.
    pub worker_id: String,
}

/// One kind of object the worker converges. A module writes only this.
#[tonic::async_trait]
pub trait Reconciler: Send + Sync + 'static {
    /// The kind, as in `work_items.kind` (`kubernetes-cluster`).
    fn kind(&self) -> &'static str;

    /// Intervals and backoff; the defaults are the spec's (30 s converging, 5 min settled).
    fn schedule(&self) -> Schedule {
        Schedule::default()
    }

    /// How long an object may stay in `state` before it is reported stuck; `None` for states
    /// that are not transient.
    fn state_deadline(&self, _state: &str) -> Option<Duration> {
        None
    }

    /// Takes the next idempotent step for the object and says what to do next.
    async fn reconcile(&self, pass: &Pass) -> Outcome;

    /// Lets go of what the kind holds at providers beyond one pass (the metal reconciler's BMC
    /// sessions): the worker is stopping and its passes are done.
    async fn shutdown(&self) {}
}

/// A kind whose objects are rows of a resource. The runtime fetches the row before each pass and
/// drops the work of an object that is gone; a failed pass becomes its outcome through
/// [`PassError::outcome`]. Every such kind is a [`Reconciler`].
#[tonic::async_trait]
pub trait ResourceReconciler: Send + Sync + 'static {
    /// The resource's row.
    type Row: Send + Sync;

    /// The kind, as in `work_items.kind`.
    fn kind(&self) -> &'static str;

    /// Intervals and backoff; the defaults are the spec's.
    fn schedule(&self) -> Schedule {
        Schedule::default()
    }

    /// How long an object may stay in `state` before it is reported stuck.
    fn state_deadline(&self, _state: &str) -> Option<Duration> {
        None
    }

    /// The object's row, `None` once it is gone (deleted, or never there).
    async fn fetch(&self, store: &Store, id: &str) -> crate::error::Result<Option<Self::Row>>;

    /// Takes the next idempotent step for the object and says what to do next.
    async fn reconcile(&self, pass: &Pass, row: Self::Row) -> Result<Outcome, PassError>;

    /// See [`Reconciler::shutdown`].
    async fn shutdown(&self) {}
}

/// The reconciler of a kind the kit's lifecycle owns: it names its row and its timings and
/// writes its steps; the kind, the schedule, the stuck deadlines (from the row's state enum)
/// and the fetch come from the row ([`ConvergedRow`]). Every such kind is a
/// [`ResourceReconciler`].
#[tonic::async_trait]
pub trait KitReconciler: Send + Sync + 'static {
    /// The resource's row.
    type Row: ConvergedRow;

    /// Its backoffs and stuck deadline.
    fn timings(&self) -> Timings;

    /// Takes the next idempotent step for the object and says what to do next.
    async fn reconcile(&self, pass: &Pass, row: Self::Row) -> Result<Outcome, PassError>;
}

#[tonic::async_trait]
impl<K: KitReconciler> ResourceReconciler for K {
    type Row = K::Row;

    fn kind(&self) -> &'static str {
        K::Row::KIND
    }

    fn schedule(&self) -> Schedule {
        Schedule::with_backoff(self.timings().backoff)
    }

    fn state_deadline(&self, state: &str) -> Option<Duration> {
        self.timings().deadline_in::<<K::Row as ConvergedRow>::State>(state)
    }

    async fn fetch(&self, store: &Store, id: &str) -> crate::error::Result<Option<K::Row>> {
        K::Row::fetch_live(store, id).await
    }

    async fn reconcile(&self, pass: &Pass, row: K::Row) -> Result<Outcome, PassError> {
        KitReconciler::reconcile(self, pass, row).await
    }
}

#[tonic::async_trait]
impl<R: ResourceReconciler> Reconciler for R {
    fn kind(&self) -> &'static str {
        ResourceReconciler::kind(self)
    }

    fn schedule(&self) -> Schedule {
        ResourceReconciler::schedule(self)
    }

    fn state_deadline(&self, state: &str) -> Option<Duration> {
        ResourceReconciler::state_deadline(self, state)
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        let row = match self.fetch(&pass.store, &pass.item.object_id).await {
            Ok(Some(row)) => row,
            Ok(None) => return Next::Remove.into(),
            Err(error) => return PassError::from(error).outcome(),
        };
        ResourceReconciler::reconcile(self, pass, row).await.unwrap_or_else(PassError::outcome)
    }

    async fn shutdown(&self) {
        ResourceReconciler::shutdown(self).await
    }
}
