//! Why a pass failed, and the one error policy that turns a failure into the pass's outcome.
//!
//! A reconciler returns `Result<Outcome, PassError>` and lets `?` carry store and provider
//! errors up, classified by what the worker should do about them; [`PassError::outcome`] is the
//! only place that decides. A failure the pass handles itself (a refused create recorded as the
//! resource's `error` state, a refused delete retried on the delete backoff) is an `Ok` outcome.

use std::fmt;

use super::Outcome;
use crate::error::{Code, Error};
use crate::provider::{ErrorKind, ProviderError};

/// What a failure means for the next pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The store or the provider could not answer (down, timed out, a 5xx): retry on the kind's
    /// backoff.
    Unavailable,
    /// The provider asked us to slow down (HTTP 429): retry on the kind's backoff.
    RateLimited,
    /// The provider is busy with another operation on the object: retry on the kind's backoff.
    Busy,
    /// The request is wrong or refused: the same request fails the same way until something
    /// changes, so retry on the settled interval (or at the next change).
    Invalid,
    /// Something the pass needs is not there: as `Invalid`.
    NotFound,
}

/// A failed pass: its classification and its message (recorded as the object's last error).
#[derive(Clone, Debug, PartialEq)]
pub struct PassError {
    /// What to do about it.
    pub failure: Failure,
    /// What went wrong, in words.
    pub message: String,
}

impl PassError {
    /// A failure of class `failure`.
    pub fn new(failure: Failure, message: impl Into<String>) -> Self {
        Self { failure, message: message.into() }
    }

    /// Something that cannot work until something changes.
    pub fn invalid(message: impl Into<String>) -> Self {
        Self::new(Failure::Invalid, message)
    }

    /// Something the pass needs is gone.
    pub fn not_found(message: impl Into<String>) -> Self {
        Self::new(Failure::NotFound, message)
    }

    /// The same failure, its message prefixed with what the pass was doing.
    pub fn context(self, doing: &str) -> Self {
        Self { message: format!("{doing}: {}", self.message), ..self }
    }

    /// The error policy: the outcome of a pass that failed with this.
    pub fn outcome(self) -> Outcome {
        match self.failure {
            Failure::Unavailable | Failure::RateLimited | Failure::Busy => Outcome::transient(self.message),
            Failure::Invalid | Failure::NotFound => Outcome::permanent(self.message),
        }
    }
}

impl fmt::Display for PassError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for PassError {}

impl From<PassError> for Outcome {
    fn from(error: PassError) -> Self {
        error.outcome()
    }
}

/// A store error: a database that did not answer, or a statement that failed (a serialization
/// failure, a deadlock), is worth retrying; a row that is not there or a refused change is not.
impl From<Error> for PassError {
    fn from(error: Error) -> Self {
        let failure = match error.code {
            Code::Unavailable | Code::Internal => Failure::Unavailable,
            Code::NotFound => Failure::NotFound,
            _ => Failure::Invalid,
        };
        Self::new(failure, error.to_string())
    }
}

impl From<ProviderError> for PassError {
    fn from(error: ProviderError) -> Self {
        let failure = match error.kind {
            ErrorKind::Transient if error.status == Some(429) => Failure::RateLimited,
            ErrorKind::Transient => Failure::Unavailable,
            ErrorKind::ConflictInProgress => Failure::Busy,
            ErrorKind::Permanent => Failure::Invalid,
            ErrorKind::NotFound => Failure::NotFound,
        };
        Self::new(failure, error.to_string())
    }
}

/// A provider's refusal, for the pass to record as the resource's `error`: `Ok` when the same
/// request would fail the same way (refused, not found), else the failure for the error policy
/// (unavailable, rate limited, busy).
pub fn refusal(error: ProviderError) -> Result<ProviderError, PassError> {
    match error.kind {
        ErrorKind::Permanent | ErrorKind::NotFound => Ok(error),
        ErrorKind::Transient | ErrorKind::ConflictInProgress => Err(error.into()),
    }
}

/// Adds what the pass was doing to a failure on its way up.
pub trait Context<T> {
    /// The failure, its message prefixed with `doing`.
    fn context(self, doing: &str) -> Result<T, PassError>;
}

impl<T, E: Into<PassError>> Context<T> for Result<T, E> {
    fn context(self, doing: &str) -> Result<T, PassError> {
        self.map_err(|error| error.into().context(doing))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::reconcile::Next;

    fn provider(kind: ErrorKind, status: u16) -> PassError {
        let mut error = ProviderError::new(kind, "gke", "no");
        error.status = Some(status);
        error.into()
    }

    #[test]
    fn retryable_failures_back_off_and_refusals_wait_for_a_change() {
        for retried in [provider(ErrorKind::Transient, 503), provider(ErrorKind::ConflictInProgress, 400)] {
            assert!(matches!(retried.outcome().next, Next::Transient(_)));
        }
        for refused in [provider(ErrorKind::Permanent, 400), provider(ErrorKind::NotFound, 404)] {
            assert!(matches!(refused.outcome().next, Next::Permanent(_)));
        }
        assert_eq!(provider(ErrorKind::Transient, 429).failure, Failure::RateLimited);
    }

    #[test]
    fn store_errors_are_retried_unless_they_refuse() {
        let unavailable: PassError = Error::unavailable("down").into();
        let gone: PassError = Error::not_found("cluster", "kcl_1").into();
        assert_eq!((unavailable.failure, gone.failure), (Failure::Unavailable, Failure::NotFound));
        let failed: Result<(), Error> = Err(Error::unavailable("down"));
        let error = failed.context("recording the cluster failed").unwrap_err();
        assert_eq!(error.outcome(), Outcome::transient("recording the cluster failed: UNAVAILABLE: down"));
    }
}
