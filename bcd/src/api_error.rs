//! The API's errors as a client reads them: the documented codes (and their gRPC and HTTP
//! statuses), and a failed call's code string, message and details read back from its gRPC
//! status, as the server writes them (`google.rpc.ErrorInfo` and a `google.protobuf.Struct`).

use std::fmt;

use prost::Message;
use serde_json::{Map, Value, json};

use crate::proto::google::rpc;

/// The domain of our `google.rpc.ErrorInfo`.
pub const ERROR_DOMAIN: &str = "bettercompute.io";

/// The documented error codes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    InvalidInput,
    Unauthenticated,
    AccessDenied,
    NotFound,
    Conflict,
    InvalidState,
    Unsupported,
    QuotaExceeded,
    Unavailable,
    Internal,
}

impl Code {
    /// Every code, for lookups and tests.
    pub const ALL: [Code; 10] = [
        Code::InvalidInput,
        Code::Unauthenticated,
        Code::AccessDenied,
        Code::NotFound,
        Code::Conflict,
        Code::InvalidState,
        Code::Unsupported,
        Code::QuotaExceeded,
        Code::Unavailable,
        Code::Internal,
    ];

    /// The code string users see.
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidInput => "INVALID_INPUT",
            Code::Unauthenticated => "UNAUTHENTICATED",
            Code::AccessDenied => "ACCESS_DENIED",
            Code::NotFound => "NOT_FOUND",
            Code::Conflict => "CONFLICT",
            Code::InvalidState => "INVALID_STATE",
            Code::Unsupported => "UNSUPPORTED",
            Code::QuotaExceeded => "QUOTA_EXCEEDED",
            Code::Unavailable => "UNAVAILABLE",
            Code::Internal => "INTERNAL",
        }
    }

    /// Parses a code string.
    pub fn parse(text: &str) -> Option<Code> {
        Code::ALL.into_iter().find(|code| code.as_str() == text)
    }

    /// The gRPC status code of this code.
    pub fn grpc(self) -> tonic::Code {
        match self {
            Code::InvalidInput => tonic::Code::InvalidArgument,
            Code::Unauthenticated => tonic::Code::Unauthenticated,
            Code::AccessDenied => tonic::Code::PermissionDenied,
            Code::NotFound => tonic::Code::NotFound,
            Code::Conflict => tonic::Code::AlreadyExists,
            Code::InvalidState | Code::Unsupported => tonic::Code::FailedPrecondition,
            Code::QuotaExceeded => tonic::Code::ResourceExhausted,
            Code::Unavailable => tonic::Code::Unavailable,
            Code::Internal => tonic::Code::Internal,
        }
    }

    /// The HTTP status of this code on the JSON paths.
    pub fn http(self) -> http::StatusCode {
        use http::StatusCode as S;
        match self {
            Code::InvalidInput => S::BAD_REQUEST,
            Code::Unauthenticated => S::UNAUTHORIZED,
            Code::AccessDenied => S::FORBIDDEN,
            Code::NotFound => S::NOT_FOUND,
            Code::Conflict | Code::InvalidState => S::CONFLICT,
            Code::Unsupported => S::UNPROCESSABLE_ENTITY,
            Code::QuotaExceeded => S::TOO_MANY_REQUESTS,
            Code::Unavailable => S::SERVICE_UNAVAILABLE,
            Code::Internal => S::INTERNAL_SERVER_ERROR,
        }
    }

    /// Our code for a gRPC status that carries none of ours (one tonic made itself).
    pub fn from_grpc(code: tonic::Code) -> Code {
        use tonic::Code as G;
        match code {
            G::InvalidArgument | G::OutOfRange => Code::InvalidInput,
            G::Unauthenticated => Code::Unauthenticated,
            G::PermissionDenied => Code::AccessDenied,
            G::NotFound | G::Unimplemented => Code::NotFound,
            G::AlreadyExists | G::Aborted => Code::Conflict,
            G::FailedPrecondition => Code::InvalidState,
            G::ResourceExhausted => Code::QuotaExceeded,
            G::Unavailable | G::DeadlineExceeded | G::Cancelled => Code::Unavailable,
            _ => Code::Internal,
        }
    }
}

impl fmt::Display for Code {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A failed call as the API reported it.
#[derive(Clone, Debug)]
pub struct ApiError {
    /// Our code, from the status's `ErrorInfo`, else mapped from its gRPC code.
    pub code: Code,
    /// The message the server sent.
    pub message: String,
    /// The structured details the server sent (`{"reason": "deleted"}`).
    pub details: Map<String, Value>,
}

impl ApiError {
    /// Reads an error back from a gRPC status: ours with its code string and details, or one
    /// tonic made (a malformed frame, an unknown method) mapped by its gRPC code.
    pub fn from_status(status: &tonic::Status) -> Self {
        let mut error = ApiError {
            code: Code::from_grpc(status.code()),
            message: status.message().to_owned(),
            details: Map::new(),
        };
        if let Ok(rpc_status) = rpc::Status::decode(status.details()) {
            for detail in rpc_status.details {
                match detail.type_url.rsplit('/').next() {
                    Some("google.rpc.ErrorInfo") => {
                        if let Some(code) = rpc::ErrorInfo::decode(detail.value.as_slice())
                            .ok()
                            .and_then(|info| Code::parse(&info.reason))
                        {
                            error.code = code;
                        }
                    }
                    Some("google.protobuf.Struct") => {
                        if let Ok(details) = prost_types::Struct::decode(detail.value.as_slice()) {
                            error.details = struct_to_json(&details);
                        }
                    }
                    _ => {}
                }
            }
        }
        error
    }
}

/// A failed call as `bcctl` and `bcd` print it: the code string, the message and the details.
pub fn describe_status(status: &tonic::Status) -> String {
    let error = ApiError::from_status(status);
    if error.details.is_empty() {
        format!("{}: {}", error.code, error.message)
    } else {
        format!(
            "{}: {}\n{}",
            error.code,
            error.message,
            serde_json::to_string_pretty(&error.details).unwrap_or_default()
        )
    }
}

/// A protobuf `Struct` as a JSON object (integral numbers as integers).
pub fn struct_to_json(value: &prost_types::Struct) -> Map<String, Value> {
    value.fields.iter().map(|(k, v)| (k.clone(), value_to_json(v))).collect()
}

fn value_to_json(value: &prost_types::Value) -> Value {
    use prost_types::value::Kind;
    match &value.kind {
        None | Some(Kind::NullValue(_)) => Value::Null,
        Some(Kind::BoolValue(b)) => Value::Bool(*b),
        // Struct numbers are doubles; integers come back as integers.
        Some(Kind::NumberValue(n)) if n.fract() == 0.0 && n.abs() < 9.0e15 => json!(*n as i64),
        Some(Kind::NumberValue(n)) => json!(n),
        Some(Kind::StringValue(s)) => Value::String(s.clone()),
        Some(Kind::ListValue(list)) => Value::Array(list.values.iter().map(value_to_json).collect()),
        Some(Kind::StructValue(s)) => Value::Object(struct_to_json(s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_map_as_the_design_table_says() {
        let table = [
            ("INVALID_INPUT", tonic::Code::InvalidArgument, 400),
            ("UNAUTHENTICATED", tonic::Code::Unauthenticated, 401),
            ("ACCESS_DENIED", tonic::Code::PermissionDenied, 403),
            ("NOT_FOUND", tonic::Code::NotFound, 404),
            ("CONFLICT", tonic::Code::AlreadyExists, 409),
            ("INVALID_STATE", tonic::Code::FailedPrecondition, 409),
            ("UNSUPPORTED", tonic::Code::FailedPrecondition, 422),
            ("QUOTA_EXCEEDED", tonic::Code::ResourceExhausted, 429),
            ("UNAVAILABLE", tonic::Code::Unavailable, 503),
            ("INTERNAL", tonic::Code::Internal, 500),
        ];
        for (text, grpc, http) in table {
            let code = Code::parse(text).unwrap();
            assert_eq!(code.grpc(), grpc, "{text}");
            assert_eq!(code.http().as_u16(), http, "{text}");
        }
    }

    #[test]
    fn a_status_tonic_made_reads_by_its_grpc_code_without_details() {
        let error = ApiError::from_status(&tonic::Status::unimplemented("no such method"));
        assert_eq!((error.code, error.message.as_str()), (Code::NotFound, "no such method"));
        assert!(error.details.is_empty());
        assert_eq!(describe_status(&tonic::Status::unavailable("down")), "UNAVAILABLE: down");
    }
}
