//! The one error type of the crate, and its mapping to gRPC and to JSON (each in one place).
//!
//! A user sees a code string (`INVALID_INPUT`), a message that names the field or resource, and
//! structured details. Internal context (a database error, say) is logged, never sent. The codes
//! and the reading of a status back are the client's side of the wire, in
//! [`bcd::api_error`], which `bcctl` and `bcd` share.

use std::fmt;

use prost::Message;
use serde_json::{Map, Value, json};

pub use bcd::api_error::{Code, ERROR_DOMAIN, struct_to_json};

use crate::proto::google::rpc;

/// The detail naming the size limit a request body went over (it survives a gRPC status, so the
/// JSON gateway can answer 413 for a body the API layer measured).
const REQUEST_LIMIT_DETAIL: &str = "limitBytes";

/// One offending field of a request.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FieldViolation {
    /// The field's path by JSON names: `nodePools[2].nodeCount`.
    pub field: String,
    /// What was wrong and what would be accepted.
    pub description: String,
}

impl FieldViolation {
    /// A violation of `field`.
    pub fn new(field: impl Into<String>, description: impl Into<String>) -> Self {
        Self { field: field.into(), description: description.into() }
    }
}

/// The most field violations one error lists: past it they are counted, not kept, so that a
/// request built to break every rule costs no more than one that breaks a hundred.
pub const MAX_VIOLATIONS: usize = 100;

/// The most the kept violations may add to an encoded gRPC status, about (see [`weight`]). A
/// gRPC error carries them in its trailers, base64, and clients cap trailers (grpcio from
/// 8 KiB, hyper at 16 KiB): past the cap the stream is reset and, for some clients, the
/// connection with it. With the message, a status stays under 7.5 KiB (the unit test below
/// measures it).
const MAX_VIOLATION_BYTES: usize = 4800;

/// The longest field path and description kept, in bytes: a path echoes what the client sent
/// (a JSON key).
const MAX_FIELD_BYTES: usize = 128;
const MAX_DESCRIPTION_BYTES: usize = 200;

/// The message names violations up to about this length; `details.fields` lists the rest.
const MAX_MESSAGE_BYTES: usize = 240;

/// What a violation adds to an encoded status: its text twice (in `google.rpc.BadRequest` and
/// in the details' `Struct`) and the framing of both.
fn weight(violation: &FieldViolation) -> usize {
    2 * (violation.field.len() + violation.description.len()) + 56
}

/// Field violations as they are found, keeping the first ones (at most [`MAX_VIOLATIONS`], and
/// no more text than a gRPC trailer carries safely) and counting the others.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Violations {
    kept: Vec<FieldViolation>,
    /// The [`weight`] of `kept`.
    kept_bytes: usize,
    /// No more are kept: a bound was reached.
    full: bool,
    /// How many were found past the bound.
    dropped: usize,
}

impl Violations {
    /// No violations yet.
    pub fn new() -> Self {
        Self::default()
    }

    /// Records a violation; `make` runs only while there is room, so that nothing is formatted
    /// for a violation that will not be shown.
    pub fn push_with(&mut self, make: impl FnOnce() -> FieldViolation) {
        if self.full {
            self.dropped += 1;
            return;
        }
        let violation = make().bounded();
        let weight = weight(&violation);
        if !self.kept.is_empty() && self.kept_bytes + weight > MAX_VIOLATION_BYTES {
            self.full = true;
            self.dropped += 1;
            return;
        }
        self.kept_bytes += weight;
        self.kept.push(violation);
        self.full = self.kept.len() >= MAX_VIOLATIONS;
    }

    /// Records a violation.
    pub fn push(&mut self, violation: FieldViolation) {
        self.push_with(|| violation);
    }

    /// Whether no more will be kept: callers may stop looking.
    pub fn is_full(&self) -> bool {
        self.full
    }

    /// How many were found, kept or not.
    pub fn total(&self) -> usize {
        self.kept.len() + self.dropped
    }

    /// Whether none were found.
    pub fn is_empty(&self) -> bool {
        self.kept.is_empty()
    }

    /// The violations kept.
    pub fn kept(&self) -> &[FieldViolation] {
        &self.kept
    }

    /// `INVALID_INPUT` naming them (see [`Error::fields`]).
    pub fn into_error(self) -> Error {
        Error::fields_counted(self.kept, self.dropped)
    }
}

impl FieldViolation {
    /// The violation with its path and description cut to what an error shows.
    fn bounded(self) -> Self {
        Self { field: cut(self.field, MAX_FIELD_BYTES), description: cut(self.description, MAX_DESCRIPTION_BYTES) }
    }
}

/// `text` cut to at most `max` bytes (at a character boundary), marked with an ellipsis where
/// cut.
fn cut(text: String, max: usize) -> String {
    if text.len() <= max {
        return text;
    }
    let end = (0..=max).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
    format!("{}...", &text[..end])
}

/// The error of every fallible operation a user can see the end of.
#[derive(Clone, Debug)]
pub struct Error {
    /// What kind of failure this is.
    pub code: Code,
    /// The message the user sees.
    pub message: String,
    /// Structured details the user sees (`{"limit": 10}`); boxed to keep results small.
    pub details: Box<Map<String, Value>>,
    /// Context for the logs only; never sent.
    pub internal: Option<String>,
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// An error with `code` and `message` and no details.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self { code, message: message.into(), details: Box::default(), internal: None }
    }

    /// `INVALID_INPUT` with a message.
    pub fn invalid_input(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidInput, message)
    }

    /// `INVALID_INPUT` listing the offending fields in `details.fields` (the first ones, as
    /// [`Violations`] keeps them, with `details.truncated` counting the others) and the first
    /// few in the message.
    pub fn fields(violations: Vec<FieldViolation>) -> Self {
        let mut bounded = Violations::new();
        for violation in violations {
            bounded.push(violation);
        }
        bounded.into_error()
    }

    fn fields_counted(violations: Vec<FieldViolation>, dropped: usize) -> Self {
        let mut message = String::from("invalid input: ");
        let mut named = 0;
        for v in &violations {
            if named > 0 && message.len() + v.field.len() + v.description.len() > MAX_MESSAGE_BYTES {
                break;
            }
            if named > 0 {
                message.push_str("; ");
            }
            if !v.field.is_empty() {
                message.push_str(&v.field);
                message.push_str(": ");
            }
            message.push_str(&v.description);
            named += 1;
        }
        let mut message = cut(message, MAX_MESSAGE_BYTES);
        let unnamed = violations.len() - named + dropped;
        if unnamed > 0 {
            message.push_str(&format!("; and {unnamed} more"));
        }
        let fields = violations.iter().map(|v| json!({"field": v.field, "description": v.description})).collect();
        let error = Self::invalid_input(message).with_detail("fields", Value::Array(fields));
        if dropped > 0 { error.with_detail("truncated", dropped) } else { error }
    }

    /// `INVALID_INPUT` for a request body over `limit` bytes; on the JSON paths it is `413`.
    pub fn request_too_large(limit: usize) -> Self {
        Self::invalid_input(format!("the request body is larger than the limit of {limit} bytes"))
            .with_detail(REQUEST_LIMIT_DETAIL, limit)
    }

    /// The HTTP status of this error on the JSON paths: its code's, except that a body over
    /// the limit is `413 Payload Too Large` (HTTP has a status of its own for it).
    pub fn http_status(&self) -> http::StatusCode {
        if self.code == Code::InvalidInput && self.details.contains_key(REQUEST_LIMIT_DETAIL) {
            http::StatusCode::PAYLOAD_TOO_LARGE
        } else {
            self.code.http()
        }
    }

    /// `UNAUTHENTICATED`.
    pub fn unauthenticated(message: impl Into<String>) -> Self {
        Self::new(Code::Unauthenticated, message)
    }

    /// `ACCESS_DENIED`.
    pub fn access_denied(message: impl Into<String>) -> Self {
        Self::new(Code::AccessDenied, message)
    }

    /// `NOT_FOUND` for a resource of `kind` with `id`.
    pub fn not_found(kind: &str, id: &str) -> Self {
        Self::new(Code::NotFound, format!("{kind} {id:?} was not found"))
            .with_detail("resource", kind)
            .with_detail("id", id)
    }

    /// `CONFLICT`.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(Code::Conflict, message)
    }

    /// `INVALID_STATE`.
    pub fn invalid_state(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidState, message)
    }

    /// `UNAVAILABLE`: try again later.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(Code::Unavailable, message)
    }

    /// `INTERNAL`: the user sees a generic message, the logs see `context`.
    pub fn internal(context: impl Into<String>) -> Self {
        Self { internal: Some(context.into()), ..Self::new(Code::Internal, "internal error") }
    }

    /// Adds a detail.
    pub fn with_detail(mut self, key: &str, value: impl Into<Value>) -> Self {
        self.details.insert(key.to_owned(), value.into());
        self
    }

    /// The gRPC status carrying this error: the code string in `google.rpc.ErrorInfo`, the
    /// details as a `google.protobuf.Struct`, field violations also as `google.rpc.BadRequest`.
    pub fn to_status(&self) -> tonic::Status {
        if let Some(internal) = &self.internal {
            tracing::error!(code = %self.code, internal = %internal, "{}", self.message);
        }
        let info = rpc::ErrorInfo {
            reason: self.code.as_str().to_owned(),
            domain: ERROR_DOMAIN.to_owned(),
            metadata: Default::default(),
        };
        let mut details = vec![any("google.rpc.ErrorInfo", &info)];
        let violations = self.violations();
        if !violations.is_empty() {
            let bad_request = rpc::BadRequest {
                field_violations: violations
                    .into_iter()
                    .map(|v| rpc::bad_request::FieldViolation {
                        field: v.field,
                        description: v.description,
                        ..Default::default()
                    })
                    .collect(),
            };
            details.push(any("google.rpc.BadRequest", &bad_request));
        }
        details.push(any("google.protobuf.Struct", &json_to_struct(&self.details)));
        let status = rpc::Status { code: self.code.grpc() as i32, message: self.message.clone(), details };
        tonic::Status::with_details(self.code.grpc(), self.message.clone(), status.encode_to_vec().into())
    }

    /// Reads an error back from a gRPC status, as a client reads it.
    pub fn from_status(status: &tonic::Status) -> Self {
        let read = bcd::api_error::ApiError::from_status(status);
        Self { code: read.code, message: read.message, details: Box::new(read.details), internal: None }
    }

    /// The JSON body of this error: `{"error": {"code", "message", "details"}}`.
    pub fn to_json(&self) -> Value {
        json!({"error": {"code": self.code.as_str(), "message": self.message, "details": self.details}})
    }

    fn violations(&self) -> Vec<FieldViolation> {
        let Some(Value::Array(fields)) = self.details.get("fields") else { return Vec::new() };
        fields
            .iter()
            .map(|v| {
                FieldViolation::new(
                    v["field"].as_str().unwrap_or_default(),
                    v["description"].as_str().unwrap_or_default(),
                )
            })
            .collect()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.code, self.message)
    }
}

impl std::error::Error for Error {}

impl From<Error> for tonic::Status {
    fn from(error: Error) -> Self {
        error.to_status()
    }
}

impl From<sqlx::Error> for Error {
    fn from(error: sqlx::Error) -> Self {
        let unavailable = match &error {
            sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) => true,
            sqlx::Error::Database(db) => db.code().is_some_and(|code| store_unavailable(&code)),
            _ => false,
        };
        if unavailable {
            tracing::warn!(%error, "store unavailable");
            Error::unavailable("the store is unavailable; try again")
        } else {
            Error::internal(format!("store: {error}"))
        }
    }
}

impl From<bcd::tls::TlsError> for Error {
    fn from(error: bcd::tls::TlsError) -> Self {
        use bcd::tls::TlsError;
        match error {
            TlsError::Invalid(message) => Error::invalid_state(message),
            TlsError::NoTrustedRoots => Error::unavailable(error.to_string()),
            TlsError::Internal(context) => Error::internal(context),
        }
    }
}

/// Whether a database error's SQLSTATE says the database, not the statement, failed: a
/// connection problem (class 08), the server shutting down or starting up (57P01 to 57P03, as in
/// a restart or a failover) or out of connections (53300). A retry can succeed.
fn store_unavailable(sqlstate: &str) -> bool {
    sqlstate.starts_with("08") || matches!(sqlstate, "57P01" | "57P02" | "57P03" | "53300")
}

fn any(type_name: &str, message: &impl Message) -> prost_types::Any {
    prost_types::Any { type_url: format!("type.googleapis.com/{type_name}"), value: message.encode_to_vec() }
}

/// A JSON object as a protobuf `Struct`.
pub fn json_to_struct(map: &Map<String, Value>) -> prost_types::Struct {
    prost_types::Struct { fields: map.iter().map(|(k, v)| (k.clone(), json_to_value(v))).collect() }
}

fn json_to_value(value: &Value) -> prost_types::Value {
    use prost_types::value::Kind;
    let kind = match value {
        Value::Null => Kind::NullValue(0),
        Value::Bool(b) => Kind::BoolValue(*b),
        Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        Value::String(s) => Kind::StringValue(s.clone()),
        Value::Array(items) => {
            Kind::ListValue(prost_types::ListValue { values: items.iter().map(json_to_value).collect() })
        }
        Value::Object(map) => Kind::StructValue(json_to_struct(map)),
    };
    prost_types::Value { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_restarting_or_unreachable_database_is_unavailable_and_a_bad_statement_is_not() {
        for code in ["57P01", "57P02", "57P03", "08006", "08001", "53300"] {
            assert!(store_unavailable(code), "{code}");
        }
        for code in ["23505", "42P01", "22001", "40001"] {
            assert!(!store_unavailable(code), "{code}");
        }
    }

    #[test]
    fn an_error_survives_the_trip_through_a_grpc_status() {
        let error = Error::new(Code::QuotaExceeded, "the tenant has 10 clusters")
            .with_detail("limit", 10)
            .with_detail("nested", json!({"a": [1, "b", null, 1.5]}));
        let status = error.to_status();
        assert_eq!(status.code(), tonic::Code::ResourceExhausted);
        let back = Error::from_status(&status);
        assert_eq!(back.code, Code::QuotaExceeded);
        assert_eq!(back.message, "the tenant has 10 clusters");
        assert_eq!(Value::Object(*back.details), json!({"limit": 10, "nested": {"a": [1, "b", null, 1.5]}}));
    }

    #[test]
    fn field_violations_are_named_in_the_message_and_the_details() {
        let error = Error::fields(vec![
            FieldViolation::new("name", "must be at most 40 characters"),
            FieldViolation::new("nodePools[2].nodeCount", "must be at most 1000"),
        ]);
        assert_eq!(error.code, Code::InvalidInput);
        assert!(error.message.contains("name: must be at most 40 characters"));
        assert!(error.message.contains("nodePools[2].nodeCount"));
        assert_eq!(error.to_json()["error"]["details"]["fields"][1]["field"], "nodePools[2].nodeCount");
    }

    #[test]
    fn a_flood_of_violations_is_cut_to_what_a_grpc_trailer_carries_and_counted() {
        for (field, description) in [
            ("#1000".to_owned(), "is not a field of CreateTenantRequest".to_owned()),
            ("a".repeat(10_000), "b".repeat(100_000)),
            ("é".repeat(10_000), "ü".repeat(100_000)),
            ("id".to_owned(), "is required".to_owned()),
        ] {
            let violations = vec![FieldViolation::new(field, description); 5_000];
            let error = Error::fields(violations);
            let kept = error.details["fields"].as_array().unwrap().len();
            assert!((1..=MAX_VIOLATIONS).contains(&kept), "{kept}");
            assert_eq!(error.details["truncated"], 5_000 - kept);
            assert!(error.message.ends_with("more"), "{}", error.message);
            let mut headers = http::HeaderMap::new();
            error.to_status().add_header(&mut headers).unwrap();
            let size: usize = headers.iter().map(|(name, value)| name.as_str().len() + value.len() + 32).sum();
            assert!(size < 7 * 1024 + 512, "a {size}-byte trailer for {kept} violations");
        }
        let few = Error::fields(vec![FieldViolation::new("id", "is required"); 3]);
        assert!(!few.details.contains_key("truncated"));
        assert_eq!(few.message, "invalid input: id: is required; id: is required; id: is required");
    }

    #[test]
    fn a_body_over_the_limit_is_413_on_json_even_after_a_grpc_status() {
        let error = Error::from_status(&Error::request_too_large(4096).to_status());
        assert_eq!((error.code, error.http_status().as_u16()), (Code::InvalidInput, 413));
        assert_eq!(Error::invalid_input("x").http_status().as_u16(), 400);
    }

    #[test]
    fn internal_context_is_not_sent() {
        let error = Error::internal("password=hunter2 in a query");
        let status = error.to_status();
        assert!(!status.message().contains("hunter2"));
        assert!(!error.to_json().to_string().contains("hunter2"));
    }
}
