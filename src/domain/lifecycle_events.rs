//! The lifecycle events every kind the worker converges appends, named once: the code names a
//! variant and the event's type ends in its spelling (`kubernetes.cluster.ready`).

use std::fmt;

/// What happened to a resource, as the last part of its event's type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LifecycleEvent {
    /// Recorded by its create.
    Created,
    /// A change converged, or the resource changed without one (a description).
    Updated,
    /// Made at the provider for the first time.
    Ready,
    /// Its delete was recorded.
    Deleting,
    /// Gone at the provider.
    Deleted,
    /// The provider refused; the event's `message` says why.
    Error,
    /// A pass found the provider differing from what was last applied in a field the system
    /// manages; the event's `fields` say which (`applied`, `found`) and `action` what was done.
    Drift,
    /// A cluster's credentials were issued to a caller (clusters only: the audit of who
    /// holds them).
    CredentialsIssued,
}

impl LifecycleEvent {
    /// The spelling at the end of the event type.
    pub fn as_str(self) -> &'static str {
        match self {
            LifecycleEvent::Created => "created",
            LifecycleEvent::Updated => "updated",
            LifecycleEvent::Ready => "ready",
            LifecycleEvent::Deleting => "deleting",
            LifecycleEvent::Deleted => "deleted",
            LifecycleEvent::Error => "error",
            LifecycleEvent::Drift => "drift",
            LifecycleEvent::CredentialsIssued => "credentials-issued",
        }
    }
}

impl fmt::Display for LifecycleEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
