//! The one error of every provider adapter, classified by what a reconciler should do next.

use std::fmt;
use std::time::Duration;

use crate::error::{Code, Error};

/// What a reconciler does with a failed provider call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// Try again later (rate limits, 5xx, network failures): the next pass is the retry.
    Transient,
    /// The request itself is wrong or refused; retrying the same request will fail the same way.
    Permanent,
    /// The object is not there.
    NotFound,
    /// Another operation on the object is still running; wait it out, do not fail.
    ConflictInProgress,
}

/// A failed provider call: its classification, the provider's own words and its request id.
///
/// Nothing in here is a secret: adapters build it from the provider's error body and headers
/// only, never from what they sent.
#[derive(Clone, Debug)]
pub struct ProviderError {
    /// What to do about it.
    pub kind: ErrorKind,
    /// Which API answered (`gke`, `digitalocean`, `kubernetes`, `google-oauth`).
    pub provider: &'static str,
    /// The HTTP status, when there was a response.
    pub status: Option<u16>,
    /// The provider's machine-readable reason (`FAILED_PRECONDITION`, `not_found`, `Forbidden`).
    pub reason: String,
    /// The provider's message.
    pub message: String,
    /// The provider's request id, to quote to its support.
    pub request_id: Option<String>,
    /// How long the provider asked us to wait, when it said.
    pub retry_after: Option<Duration>,
}

impl ProviderError {
    /// An error of `kind` from `provider` with a message and nothing else.
    pub fn new(kind: ErrorKind, provider: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            provider,
            status: None,
            reason: String::new(),
            message: message.into(),
            request_id: None,
            retry_after: None,
        }
    }

    /// A network or protocol failure before any answer: transient. The reqwest error's text
    /// names the URL at most, never a header or a body, so it is safe to keep.
    pub fn transport(provider: &'static str, error: reqwest::Error) -> Self {
        let kind = if error.is_builder() { ErrorKind::Permanent } else { ErrorKind::Transient };
        Self::new(kind, provider, format!("cannot reach the API: {}", error.without_url()))
    }

    /// An answer we could not decode: permanent (the API is not what we think it is).
    pub fn decode(provider: &'static str, what: &str, error: impl fmt::Display) -> Self {
        Self::new(ErrorKind::Permanent, provider, format!("cannot decode {what}: {error}"))
    }

    /// The kind that an HTTP status implies, for statuses the provider does not refine.
    pub fn kind_of_status(status: u16) -> ErrorKind {
        match status {
            404 => ErrorKind::NotFound,
            408 | 429 | 500..=599 => ErrorKind::Transient,
            _ => ErrorKind::Permanent,
        }
    }

    /// Whether this is a not-found.
    pub fn is_not_found(&self) -> bool {
        self.kind == ErrorKind::NotFound
    }
}

impl fmt::Display for ProviderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.provider)?;
        if let Some(status) = self.status {
            write!(f, " HTTP {status}")?;
        }
        if !self.reason.is_empty() {
            write!(f, " {}", self.reason)?;
        }
        write!(f, ": {}", self.message)?;
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ProviderError {}

impl From<ProviderError> for Error {
    fn from(error: ProviderError) -> Self {
        let code = match error.kind {
            ErrorKind::Transient => Code::Unavailable,
            ErrorKind::NotFound => Code::NotFound,
            ErrorKind::ConflictInProgress | ErrorKind::Permanent => Code::InvalidState,
        };
        let mut converted = Error::new(code, error.to_string()).with_detail("provider", error.provider);
        if let Some(id) = error.request_id {
            converted = converted.with_detail("requestId", id);
        }
        converted
    }
}

/// The result of a provider call.
pub type ProviderResult<T> = Result<T, ProviderError>;

/// A call whose "not found" is an answer, not a failure: a lookup of an object that may not be
/// made yet, or a delete of one that may be gone already.
pub trait Found<T> {
    /// `Ok(None)` for a not-found, any other failure as it was.
    fn found(self) -> ProviderResult<Option<T>>;
}

impl<T> Found<T> for ProviderResult<T> {
    fn found(self) -> ProviderResult<Option<T>> {
        match self {
            Ok(value) => Ok(Some(value)),
            Err(error) if error.is_not_found() => Ok(None),
            Err(error) => Err(error),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_classify_as_a_reconciler_needs() {
        assert_eq!(ProviderError::kind_of_status(404), ErrorKind::NotFound);
        assert_eq!(ProviderError::kind_of_status(429), ErrorKind::Transient);
        assert_eq!(ProviderError::kind_of_status(503), ErrorKind::Transient);
        assert_eq!(ProviderError::kind_of_status(400), ErrorKind::Permanent);
        assert_eq!(ProviderError::kind_of_status(403), ErrorKind::Permanent);
    }

    #[test]
    fn display_carries_message_reason_and_request_id() {
        let mut error = ProviderError::new(ErrorKind::Permanent, "digitalocean", "bad region");
        error.status = Some(422);
        error.reason = "unprocessable_entity".into();
        error.request_id = Some("req-1".into());
        assert_eq!(error.to_string(), "digitalocean HTTP 422 unprocessable_entity: bad region (request id req-1)");
        let converted: Error = error.into();
        assert_eq!(converted.code, Code::InvalidState);
        assert_eq!(converted.details["requestId"], "req-1");
    }
}
