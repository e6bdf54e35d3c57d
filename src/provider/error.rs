//! The one error of every provider adapter, classified twice: by what a reconciler does next
//! ([`ErrorKind`]) and by what a person reading the resource's `problem` should understand of it
//! ([`ErrorClass`]).

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

/// What kind of failure a call met, as the operation log and a resource's `problem` name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorClass {
    /// The provider failed or did not answer in time (5xx, a timeout): the next pass retries.
    Retryable,
    /// The provider asked us to slow down (429), saying for how long where it did.
    Throttled,
    /// The account's quota at the provider is spent.
    Quota,
    /// The credentials were refused or revoked (401, 403).
    Permission,
    /// The provider refused the request as such.
    Invalid,
    /// Another operation holds the object, or it exists already.
    Conflict,
    /// The object is not there.
    NotFound,
    /// No answer at all: the name does not resolve, the connection is refused, TLS fails.
    Unreachable,
    /// Nothing the system can retry: a person must act (billing, a suspended account, an API
    /// that is not what we speak).
    NeedsHuman,
}

impl ErrorClass {
    /// Every class, in the order the docs list them.
    pub const ALL: [ErrorClass; 9] = [
        ErrorClass::Retryable,
        ErrorClass::Throttled,
        ErrorClass::Quota,
        ErrorClass::Permission,
        ErrorClass::Invalid,
        ErrorClass::Conflict,
        ErrorClass::NotFound,
        ErrorClass::Unreachable,
        ErrorClass::NeedsHuman,
    ];

    /// Its name in the API: `notFound`.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorClass::Retryable => "retryable",
            ErrorClass::Throttled => "throttled",
            ErrorClass::Quota => "quota",
            ErrorClass::Permission => "permission",
            ErrorClass::Invalid => "invalid",
            ErrorClass::Conflict => "conflict",
            ErrorClass::NotFound => "notFound",
            ErrorClass::Unreachable => "unreachable",
            ErrorClass::NeedsHuman => "needsHuman",
        }
    }

    /// The class named `name`.
    pub fn parse(name: &str) -> Option<ErrorClass> {
        Self::ALL.into_iter().find(|class| class.as_str() == name)
    }

    /// Whether retrying without a person's change is pointless: the worker then retries only on
    /// the settled interval, and the problem says what to do.
    pub fn waits_for_a_person(self) -> bool {
        matches!(self, ErrorClass::Permission | ErrorClass::Invalid | ErrorClass::NeedsHuman)
    }

    /// What a person must do about a failure of this class, where a person must.
    pub fn advice(self) -> Option<&'static str> {
        match self {
            ErrorClass::Permission => Some(
                "the provider refused the account's credentials: an operator updates the account's credentials \
                 (accounts update) or grants them the permission named",
            ),
            ErrorClass::Quota => {
                Some("the account's quota at the provider is spent: free some or raise the quota there")
            }
            ErrorClass::Invalid => Some("the provider refused the request as such: change the resource and try again"),
            ErrorClass::NeedsHuman => Some("the provider needs a person to act on the account before it goes on"),
            ErrorClass::Unreachable => Some("check the address, the network and the certificate the provider serves"),
            _ => None,
        }
    }
}

impl fmt::Display for ErrorClass {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
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
    /// Its class where the adapter knows better than the status (an unreachable host, an
    /// answer we cannot read); otherwise [`ProviderError::class`] derives it.
    pub class_hint: Option<ErrorClass>,
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
            class_hint: None,
        }
    }

    /// A network or protocol failure before any answer: transient. A timeout is `retryable`;
    /// a failure to connect is `unreachable` and says why (the name, the refused connection, the
    /// certificate), read from the error's causes. The reqwest error's text names the URL at
    /// most, never a header or a body, so it is safe to keep.
    pub fn transport(provider: &'static str, error: reqwest::Error) -> Self {
        let kind = if error.is_builder() { ErrorKind::Permanent } else { ErrorKind::Transient };
        let cause = unreachable_cause(&error);
        let (timed_out, connect) = (error.is_timeout(), error.is_connect());
        let mut converted = Self::new(kind, provider, format!("cannot reach the API: {}", error.without_url()));
        if timed_out {
            converted.class_hint = Some(ErrorClass::Retryable);
        } else if let Some(cause) = cause {
            converted.message = format!("cannot reach the API: {cause}");
            converted.class_hint = Some(ErrorClass::Unreachable);
        } else if connect {
            converted.class_hint = Some(ErrorClass::Unreachable);
        }
        converted
    }

    /// An answer we could not decode: permanent (the API is not what we think it is), and a
    /// person's to look at.
    pub fn decode(provider: &'static str, what: &str, error: impl fmt::Display) -> Self {
        let mut error = Self::new(ErrorKind::Permanent, provider, format!("cannot decode {what}: {error}"));
        error.class_hint = Some(ErrorClass::NeedsHuman);
        error
    }

    /// Its class: the adapter's hint, else what the status and the provider's words say.
    pub fn class(&self) -> ErrorClass {
        if let Some(class) = self.class_hint {
            return class;
        }
        let words = format!("{} {}", self.reason, self.message).to_ascii_lowercase();
        let quota = words.contains("quota") || words.contains("resource_exhausted");
        // A 429 is throttling when Google words a request rate as a quota ("Quota exceeded for
        // quota metric 'Requests'"); a quota of resources (CPUs, addresses) answered 429 is not.
        let rate = ["requests", "per minute", "per second", "rate limit"].iter().any(|w| words.contains(w));
        let person =
            ["billing", "suspended", "locked", "terms of service", "verify your"].iter().any(|w| words.contains(w));
        match (self.kind, self.status) {
            (ErrorKind::NotFound, _) | (_, Some(404)) => ErrorClass::NotFound,
            (ErrorKind::ConflictInProgress, _) | (_, Some(409)) => ErrorClass::Conflict,
            (_, Some(_)) if person => ErrorClass::NeedsHuman,
            (_, Some(429)) if quota && !rate => ErrorClass::Quota,
            (_, Some(429)) => ErrorClass::Throttled,
            (_, Some(_)) if quota => ErrorClass::Quota,
            (_, Some(401 | 403)) => ErrorClass::Permission,
            (_, Some(408 | 500..=599)) => ErrorClass::Retryable,
            (_, Some(_)) => ErrorClass::Invalid,
            (ErrorKind::Transient, None) => ErrorClass::Retryable,
            (ErrorKind::Permanent, None) => ErrorClass::Invalid,
        }
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

impl crate::measured::CallFailure for ProviderError {
    fn class(&self) -> &'static str {
        ProviderError::class(self).as_str()
    }

    fn message(&self) -> String {
        self.to_string()
    }

    fn retry_after(&self) -> Option<Duration> {
        self.retry_after
    }

    fn request_id(&self) -> Option<String> {
        self.request_id.clone()
    }
}

/// Why a connection failed, in words a person can act on, read from the error's causes: an
/// untrusted or invalid certificate, a name that does not resolve, a refused connection.
fn unreachable_cause(error: &reqwest::Error) -> Option<String> {
    let mut causes = Vec::new();
    let mut source: Option<&dyn std::error::Error> = std::error::Error::source(error);
    while let Some(cause) = source {
        causes.push(cause.to_string());
        source = cause.source();
    }
    let all = causes.join(": ");
    let lower = all.to_ascii_lowercase();
    let said = if lower.contains("unknownissuer") || lower.contains("unknown issuer") {
        "the certificate is not trusted (its issuer is not a CA this system trusts)"
    } else if lower.contains("notvalidforname") || lower.contains("not valid for name") {
        "the certificate is not valid for the address"
    } else if lower.contains("expired") && lower.contains("certificate") {
        "the certificate has expired"
    } else if lower.contains("certificate") || lower.contains("tls") || lower.contains("handshake") {
        "TLS failed"
    } else if lower.contains("dns") || lower.contains("failed to lookup") || lower.contains("name or service not known")
    {
        "the name does not resolve"
    } else if lower.contains("connection refused") {
        "the connection was refused (nothing listens there)"
    } else if lower.contains("connection reset") || lower.contains("closed") {
        "the connection was closed without an answer"
    } else {
        return None;
    };
    // The innermost cause is the library's own words (`invalid peer certificate: UnknownIssuer`).
    let innermost = causes.last().map(|c| c.chars().take(200).collect::<String>()).unwrap_or_default();
    Some(if innermost.is_empty() { said.to_owned() } else { format!("{said}: {innermost}") })
}

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
    fn classes_follow_the_status_and_the_providers_words() {
        let with = |status: u16, reason: &str, message: &str| {
            let mut error = ProviderError::new(ProviderError::kind_of_status(status), "gke", message);
            error.status = Some(status);
            error.reason = reason.into();
            error.class()
        };
        assert_eq!(with(503, "", "backend error"), ErrorClass::Retryable);
        assert_eq!(
            with(429, "RESOURCE_EXHAUSTED", "Insufficient regional quota to satisfy request: resource \"CPUS\""),
            ErrorClass::Quota
        );
        assert_eq!(with(429, "", "slow down"), ErrorClass::Throttled);
        assert_eq!(with(403, "PERMISSION_DENIED", "caller lacks container.clusters.get"), ErrorClass::Permission);
        assert_eq!(with(401, "unauthorized", "Unable to authenticate you"), ErrorClass::Permission);
        assert_eq!(with(403, "QUOTA_EXCEEDED", "Quota 'CPUS' exceeded"), ErrorClass::Quota);
        assert_eq!(
            with(429, "RESOURCE_EXHAUSTED", "Quota exceeded for quota metric 'Requests'"),
            ErrorClass::Throttled
        );
        assert_eq!(with(400, "INVALID_ARGUMENT", "bad machine type"), ErrorClass::Invalid);
        assert_eq!(with(409, "ALREADY_EXISTS", "exists"), ErrorClass::Conflict);
        assert_eq!(with(404, "not_found", "gone"), ErrorClass::NotFound);
        assert_eq!(with(403, "FAILED_PRECONDITION", "Billing is disabled for project p"), ErrorClass::NeedsHuman);
        let busy = ProviderError::new(ErrorKind::ConflictInProgress, "gke", "operation running");
        assert_eq!(busy.class(), ErrorClass::Conflict);
        assert_eq!(ProviderError::decode("gke", "a cluster", "missing field").class(), ErrorClass::NeedsHuman);
        for class in ErrorClass::ALL {
            assert_eq!(ErrorClass::parse(class.as_str()), Some(class));
        }
    }

    #[tokio::test]
    async fn a_refused_connection_is_unreachable_and_says_so() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        drop(listener);
        let error = reqwest::Client::new().get(format!("http://{address}/")).send().await.unwrap_err();
        let converted = ProviderError::transport("gke", error);
        assert_eq!(converted.class(), ErrorClass::Unreachable);
        assert!(converted.message.contains("connection was refused"), "{}", converted.message);
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
