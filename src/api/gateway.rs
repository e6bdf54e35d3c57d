//! The JSON gateway: `POST /api/<...>` in the proto3 JSON mapping, served by calling the same
//! in-process gRPC service that gRPC clients reach. One handler for every route; the routes, the
//! message types and the field names all come from the descriptors.

use std::convert::Infallible;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use bytes::Buf;
use http::{HeaderValue, StatusCode, header};
use http_body_util::BodyExt;
use prost_reflect::{DeserializeOptions, DynamicMessage, Kind, MessageDescriptor};
use serde_json::Value;
use std::sync::Arc;
use tonic::body::Body;
use tower::{Service, ServiceExt};

use super::connection::Connection;
use super::layer::{JsonBody, MAX_REQUEST_BYTES, PeerAddress, REQUEST_ID_HEADER};
use super::validate::Validator;
use crate::error::{Error, FieldViolation, Violations};
use crate::methods::MethodTable;
use crate::telemetry::Metrics;

/// What the gateway needs: the method table and the gRPC service to call.
#[derive(Clone)]
pub struct Gateway<S> {
    /// The methods, by JSON path.
    pub methods: Arc<MethodTable>,
    /// The gRPC service (behind the API layer) that serves every method.
    pub grpc: S,
    /// Unused here since the API layer parses the JSON (after authenticating the caller) with
    /// its own validator; kept so that the gateway is built as before.
    pub validator: Arc<Validator>,
    /// Unused here since the API layer records every call to a method, refused or not.
    pub metrics: Metrics,
}

/// The one handler of every JSON path.
pub async fn handle<S>(State(gateway): State<Gateway<S>>, request: Request) -> Response
where
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    // The layer keeps an acceptable client id and makes one otherwise; the gateway passes on
    // the same id so that its own refusals and the layer's carry one id.
    let request_id = super::layer::request_id(request.headers());
    let header = HeaderValue::from_str(&request_id).ok();
    match call(&gateway, request, &request_id).await {
        Ok(response) => response,
        Err(error) => error_response(&error, header),
    }
}

async fn call<S>(gateway: &Gateway<S>, request: Request, request_id: &str) -> Result<Response, Error>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
{
    let path = request.uri().path().to_owned();
    let method = gateway.methods.by_http_path(&path).cloned().ok_or_else(|| {
        Error::new(
            crate::error::Code::NotFound,
            format!("there is no method at {path}; the methods are listed in /openapi.json"),
        )
        .with_detail("path", path.as_str())
    })?;
    if request.method() != http::Method::POST {
        // HTTP's answer to another verb is 405 with `Allow`; the body is our usual error.
        let error = Error::invalid_input(format!("{path} takes POST with a JSON body, not {}", request.method()))
            .with_detail("allow", "POST");
        let mut response = error_response(&error, HeaderValue::from_str(request_id).ok());
        *response.status_mut() = StatusCode::METHOD_NOT_ALLOWED;
        response.headers_mut().insert(header::ALLOW, HeaderValue::from_static("POST"));
        return Ok(response);
    }
    let declared_length = request.headers().get(header::CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse().ok());
    if declared_length.is_some_and(|length: u64| length > MAX_REQUEST_BYTES as u64) {
        // Refused before a byte of it is read; a body that only turns out long is refused by
        // the layer, as it reads.
        return Err(Error::request_too_large(MAX_REQUEST_BYTES));
    }
    let (parts, body) = request.into_parts();
    // The body goes to the API layer unread: it authenticates the caller, then parses the JSON
    // (`decode_json`), so a caller without a key costs no parsing.
    let mut grpc_request = http::Request::post(method.grpc_path.as_str())
        .header(header::CONTENT_TYPE, "application/grpc")
        .header(header::TE, "trailers")
        .header(REQUEST_ID_HEADER, request_id)
        .body(Body::new(body))
        .expect("a request built from valid parts");
    grpc_request.extensions_mut().insert(JsonBody);
    if let Some(peer) = parts.extensions.get::<PeerAddress>() {
        grpc_request.extensions_mut().insert(*peer);
    }
    if let Some(connection) = parts.extensions.get::<Connection>() {
        grpc_request.extensions_mut().insert(connection.clone());
    }
    if let Some(value) = parts.headers.get(header::AUTHORIZATION) {
        grpc_request.headers_mut().insert(header::AUTHORIZATION, value.clone());
    }

    let response = gateway.grpc.clone().oneshot(grpc_request).await.unwrap_or_else(|never| match never {});
    let request_id = response.headers().get(REQUEST_ID_HEADER).cloned();
    if let Some(status) = tonic::Status::from_header_map(response.headers()).filter(|s| s.code() != tonic::Code::Ok) {
        return Ok(error_response(&Error::from_status(&status), request_id));
    }
    if method.descriptor.is_server_streaming() {
        return Ok(super::gateway_stream::respond(method.descriptor.output(), response));
    }
    let collected = response
        .into_body()
        .collect()
        .await
        .map_err(|status| Error::unavailable(format!("the call was cut short: {}", status.message())))?;
    if let Some(status) =
        collected.trailers().and_then(tonic::Status::from_header_map).filter(|s| s.code() != tonic::Code::Ok)
    {
        return Ok(error_response(&Error::from_status(&status), request_id));
    }
    let mut bytes = collected.to_bytes();
    if bytes.remaining() < 5 {
        return Err(Error::internal(format!("{} answered without a message", method.name)));
    }
    bytes.advance(5);
    let answer_bytes = bytes.len();
    let output = DynamicMessage::decode(method.descriptor.output(), bytes).map_err(|error| {
        Error::internal(format!("{} answered a message that does not decode: {error}", method.name))
    })?;
    // Written straight to the body: a `serde_json::Value` in between cost a list of 500 a fifth of
    // its time.
    let mut json = Vec::with_capacity(answer_bytes * 3);
    crate::proto::json::write(&output, &mut json)
        .map_err(|error| Error::internal(format!("cannot write {} as JSON: {error}", method.name)))?;
    let content_type = [(header::CONTENT_TYPE, HeaderValue::from_static("application/json"))];
    let mut response = (StatusCode::OK, content_type, json).into_response();
    if let Some(id) = request_id {
        response.headers_mut().insert(REQUEST_ID_HEADER, id);
    }
    Ok(response)
}

/// A JSON error response.
pub fn error_response(error: &Error, request_id: Option<HeaderValue>) -> Response {
    let mut response = (error.http_status(), axum::Json(error.to_json())).into_response();
    if let Some(id) = request_id {
        response.headers_mut().insert(REQUEST_ID_HEADER, id);
    }
    response
}

/// The keys of a JSON body, and of the objects one level down (an update a plan wraps), with
/// `true` for every value: what the masks are filled from, without a copy of the body.
fn key_tree(value: &Value) -> Value {
    let Value::Object(object) = value else { return Value::Null };
    let keys = object.iter().map(|(key, inner)| {
        let inner = match inner {
            Value::Object(inner) => Value::Object(inner.keys().map(|k| (k.clone(), Value::Bool(true))).collect()),
            _ => Value::Bool(true),
        };
        (key.clone(), inner)
    });
    Value::Object(keys.collect())
}

/// Parses a JSON body into a message of `descriptor`, naming the unknown or mistyped fields
/// together with what the validator finds in the rest (a bounded list: see [`Violations`]). A
/// body with no bytes is `{}`. The API layer calls it once the caller is authenticated.
pub fn decode_json(
    descriptor: &MessageDescriptor,
    body: &[u8],
    validator: &Validator,
) -> Result<DynamicMessage, Error> {
    // Only a body with no bytes at all stands for `{}`; anything else must be a JSON object.
    let mut value: Value = if body.is_empty() {
        Value::Object(Default::default())
    } else {
        serde_json::from_slice(body).map_err(|error| {
            Error::invalid_input(format!("the request body is not valid JSON: {error}"))
                .with_detail("line", error.line())
                .with_detail("column", error.column())
        })?
    };
    let mut violations = Violations::new();
    check_message(&mut value, descriptor, "", &mut violations);
    if violations.is_full() {
        // Nothing more would be shown.
        return Err(violations.into_error());
    }
    // The keys given are what an update changes (`[]` and `null` included), unless the body
    // names its own mask.
    let keys = key_tree(&value);
    let decoded = DynamicMessage::deserialize_with_options(
        descriptor.clone(),
        value,
        &DeserializeOptions::new().deny_unknown_fields(true),
    )
    .map(|mut message| {
        super::update_mask::fill_from_json(&mut message, &keys, validator);
        message
    });
    match decoded {
        Ok(message) if violations.is_empty() => Ok(message),
        Ok(message) => {
            // The offending fields were taken out; report what is wrong with the others too.
            let named: std::collections::HashSet<String> = violations.kept().iter().map(|v| v.field.clone()).collect();
            for violation in validator.validate(&message).kept() {
                if !named.contains(&violation.field) {
                    violations.push(violation.clone());
                }
            }
            Err(violations.into_error())
        }
        Err(error) => {
            violations.push(FieldViolation::new("", error.to_string()));
            Err(violations.into_error())
        }
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") }
}

/// Checks the shape of `value` against `descriptor`: objects where messages are, known field
/// names, and JSON types that the field's type accepts; takes each offending field out of
/// `value` (an object keeps its other fields, so that a wrong field inside it does not also
/// make it missing). Values are checked by the validator. Returns whether `value` is an object.
fn check_message(value: &mut Value, descriptor: &MessageDescriptor, path: &str, out: &mut Violations) -> bool {
    if descriptor.full_name().starts_with("google.protobuf.") {
        // Well-known types have JSON forms of their own (timestamps as text, ...).
        return true;
    }
    let Value::Object(object) = value else {
        out.push(FieldViolation::new(path, "must be a JSON object"));
        return false;
    };
    // The accepted names are listed once per object, at its first unknown key.
    let mut accepted_named = false;
    object.retain(|key, value| check_field(key, value, descriptor, path, &mut accepted_named, out));
    true
}

/// Checks one field of an object; returns whether it is kept (false: it is no field of the
/// message, or its JSON type is wrong, which a violation says).
fn check_field(
    key: &str,
    value: &mut Value,
    descriptor: &MessageDescriptor,
    path: &str,
    accepted_named: &mut bool,
    out: &mut Violations,
) -> bool {
    let Some(field) = descriptor.get_field_by_json_name(key).or_else(|| descriptor.get_field_by_name(key)) else {
        let first = !std::mem::replace(accepted_named, true);
        out.push_with(|| {
            let description = if first {
                let accepted: Vec<String> = descriptor.fields().map(|f| f.json_name().to_owned()).collect();
                format!("is not a field of this request; accepted: {}", accepted.join(", "))
            } else {
                "is not a field of this request either".to_owned()
            };
            FieldViolation::new(join(path, key), description)
        });
        return false;
    };
    if value.is_null() {
        return true;
    }
    let field_path = join(path, field.json_name());
    if field.is_map() {
        let Kind::Message(entry) = field.kind() else { return true };
        match value {
            Value::Object(entries) => {
                let value_kind = entry.map_entry_value_field().kind();
                let mut all_well_typed = true;
                for (key, item) in entries.iter_mut() {
                    all_well_typed &= check_kind(item, &value_kind, &format!("{field_path}[{key:?}]"), out);
                }
                all_well_typed
            }
            _ => {
                out.push(FieldViolation::new(field_path, "must be a JSON object"));
                false
            }
        }
    } else if field.is_list() {
        match value {
            Value::Array(items) => {
                let mut all_well_typed = true;
                for (index, item) in items.iter_mut().enumerate() {
                    all_well_typed &= check_kind(item, &field.kind(), &format!("{field_path}[{index}]"), out);
                }
                all_well_typed
            }
            _ => {
                out.push(FieldViolation::new(field_path, "must be a JSON array"));
                false
            }
        }
    } else {
        check_kind(value, &field.kind(), &field_path, out)
    }
}

/// Checks a value of `kind`; returns whether its JSON type is right (an object with wrong
/// fields inside is right: those fields were taken out of it).
fn check_kind(value: &mut Value, kind: &Kind, path: &str, out: &mut Violations) -> bool {
    let wrong = match kind {
        Kind::String | Kind::Bytes => (!value.is_string()).then_some("must be a string"),
        Kind::Bool => (!value.is_boolean()).then_some("must be true or false"),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => {
            return check_integer(value, i32::MIN.into(), i32::MAX.into(), path, out);
        }
        Kind::Uint32 | Kind::Fixed32 => return check_integer(value, 0, u32::MAX.into(), path, out),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => {
            return check_integer(value, i64::MIN.into(), i64::MAX.into(), path, out);
        }
        Kind::Uint64 | Kind::Fixed64 => return check_integer(value, 0, u64::MAX.into(), path, out),
        Kind::Float | Kind::Double => (!(value.is_number() || value.is_string())).then_some("must be a number"),
        Kind::Enum(_) => (!(value.is_string() || value.is_i64())).then_some("must be one of the documented values"),
        Kind::Message(message) => return check_message(value, message, path, out),
    };
    if let Some(description) = wrong {
        out.push(FieldViolation::new(path, description));
        return false;
    }
    true
}

/// Checks an integer field's value (a JSON number or its text) is a whole number from `min` to
/// `max`, the range of its type; a value out of it would otherwise fail the decode with no
/// field named.
fn check_integer(value: &Value, min: i128, max: i128, path: &str, out: &mut Violations) -> bool {
    let whole = match value {
        Value::Number(n) => n
            .as_i64()
            .map(i128::from)
            .or_else(|| n.as_u64().map(i128::from))
            .or_else(|| n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 1e38).map(|f| f as i128)),
        Value::String(s) => s.parse::<i128>().ok(),
        _ => None,
    };
    match whole {
        Some(whole) if (min..=max).contains(&whole) => true,
        Some(_) => {
            out.push(FieldViolation::new(path, format!("is out of range: use a whole number from {min} to {max}")));
            false
        }
        None => {
            out.push(FieldViolation::new(path, "must be an integer"));
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::descriptor_pool;

    #[test]
    fn an_integer_out_of_its_type_s_range_is_named() {
        let pool = descriptor_pool();
        let descriptor = pool.get_message_by_name("bettercompute.compute.v1.CreateVolumeRequest").unwrap();
        let error = decode_json(&descriptor, br#"{"sizeGigabytes": 2147483648}"#).unwrap_err();
        let text = format!("{error:?}");
        assert!(text.contains("out of range") && text.contains("2147483647"), "{text}");
        assert!(fields_of(error).contains(&"sizeGigabytes".to_owned()));
        // The largest int32 decodes; what is wrong with it is the validator's to say.
        let fits = decode_json(&descriptor, br#"{"sizeGigabytes": "2147483647"}"#);
        assert!(
            fits.as_ref().map_or_else(|error| !format!("{error:?}").contains("out of range"), |_| true),
            "{fits:?}"
        );
    }

    fn create_tenant() -> MessageDescriptor {
        descriptor_pool().get_message_by_name("bettercompute.platform.v1.CreateTenantRequest").unwrap()
    }

    fn decode_json(descriptor: &MessageDescriptor, body: &[u8]) -> Result<DynamicMessage, Error> {
        let validator = Validator::from_pool(descriptor_pool()).unwrap();
        super::decode_json(descriptor, body, &validator)
    }

    fn fields_of(error: Error) -> Vec<String> {
        error.details["fields"].as_array().unwrap().iter().map(|f| f["field"].as_str().unwrap().to_owned()).collect()
    }

    #[test]
    fn unknown_and_mistyped_fields_are_named() {
        let error = decode_json(&create_tenant(), br#"{"id": 7, "colour": "red", "displayName": "A"}"#).unwrap_err();
        assert_eq!(error.code, crate::error::Code::InvalidInput);
        let mut fields = fields_of(error);
        fields.sort();
        assert_eq!(fields, vec!["colour", "id"]);
    }

    #[test]
    fn a_malformed_field_does_not_hide_the_others_faults() {
        let error =
            decode_json(&create_tenant(), br#"{"id": "no spaces", "colour": 1, "description": 5}"#).unwrap_err();
        let mut fields = fields_of(error);
        fields.sort();
        assert_eq!(fields, vec!["colour", "description", "id"]);
    }

    #[test]
    fn a_flood_of_unknown_keys_names_the_accepted_fields_once_and_counts_the_rest() {
        let body = format!("{{{}}}", (0..10_000).map(|i| format!("\"k{i}\": 0")).collect::<Vec<_>>().join(","));
        let error = decode_json(&create_tenant(), body.as_bytes()).unwrap_err();
        let fields = error.details["fields"].as_array().unwrap();
        assert_eq!(error.details["truncated"], 10_000 - fields.len());
        let naming = fields.iter().filter(|f| f["description"].as_str().unwrap().contains("accepted: id,")).count();
        assert_eq!(naming, 1, "{fields:?}");
    }

    #[test]
    fn a_mistyped_field_inside_an_object_leaves_the_object_given() {
        let create =
            descriptor_pool().get_message_by_name("bettercompute.compute.v1.CreateLoadBalancerRequest").unwrap();
        let body = br#"{"tenantId": "acme", "targets": {"pool": "yes", "colour": 1}}"#;
        let fields = fields_of(decode_json(&create, body).unwrap_err());
        assert!(
            fields.contains(&"targets.pool".to_owned()) && fields.contains(&"targets.colour".to_owned()),
            "{fields:?}"
        );
        assert!(!fields.contains(&"targets".to_owned()), "targets was given: {fields:?}");
    }

    #[test]
    fn malformed_json_is_invalid_input() {
        let error = decode_json(&create_tenant(), b"{\"id\": ").unwrap_err();
        assert_eq!(error.code, crate::error::Code::InvalidInput);
        assert!(error.message.contains("not valid JSON"), "{}", error.message);
    }

    #[test]
    fn proto_field_names_and_camel_case_are_both_accepted() {
        let message = decode_json(&create_tenant(), br#"{"id": "acme", "display_name": "Acme"}"#).unwrap();
        assert_eq!(message.get_field_by_name("display_name").unwrap().as_str(), Some("Acme"));
        assert!(decode_json(&create_tenant(), b"").is_ok());
    }
}
