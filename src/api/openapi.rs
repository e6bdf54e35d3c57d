//! The OpenAPI 3.1 document of the JSON paths, generated from the same descriptor pool the
//! gateway serves from: one operation per method of the [`MethodTable`], request and response
//! schemas by JSON names, the protos' comments as descriptions, the `buf.validate` rules (as the
//! [`Validator`] reads them) as JSON Schema, the error body and bearer authentication.
//!
//! It describes what the gateway really does, not what proto3 JSON allows in general: unknown
//! fields are refused (`additionalProperties: false`), 64-bit integers are JSON numbers, every
//! field without presence is in every response, and every error is `{"error": {...}}` with the
//! documented code of its HTTP status. Served at `/openapi.json`, printed by `bcctl openapi`, and
//! committed as `clients/openapi/openapi.json` (a test keeps the three equal).

use std::collections::{BTreeMap, BTreeSet};

use prost_reflect::{DescriptorPool, FieldDescriptor, Kind, MessageDescriptor, Value as ProtoValue};
use serde_json::{Map, Value, json};

use super::validate::{FieldRules, Format, ScalarRule, Validator};
use crate::error::Code;
use crate::methods::MethodTable;

/// The document for `pool`, as served at `/openapi.json`.
pub fn document(pool: &DescriptorPool) -> Result<Value, String> {
    let validator = Validator::from_pool(pool)?;
    let methods = MethodTable::from_pool(pool);
    let mut builder = Builder { validator: &validator, wanted: BTreeSet::new() };

    let mut operations: Vec<_> = methods.iter().filter_map(|m| m.http_path.clone().map(|p| (p, m))).collect();
    operations.sort_by(|a, b| a.0.cmp(&b.0));
    let mut paths = Map::new();
    let mut tags = BTreeMap::new();
    for (path, method) in operations {
        let descriptor = &method.descriptor;
        let service = descriptor.parent_service();
        let tag = service.full_name().trim_start_matches("bettercompute.").to_owned();
        tags.entry(tag.clone()).or_insert_with(|| comments(service.parent_file_descriptor_proto(), service.path()));
        let input = builder.reference(&descriptor.input(), Role::Request);
        // A missing body is `{}`: it may be left out only when `{}` is a valid request.
        let body_required = validator
            .rules_of(descriptor.input().full_name())
            .is_some_and(|fields| fields.iter().any(|(_, rules)| rules.required));
        let output = builder.reference(&descriptor.output(), Role::Response);
        let mut text = comments(service.parent_file_descriptor_proto(), descriptor.path()).unwrap_or_default();
        // A daemon's method is called with its own credential, not an API key.
        let security = match method.authorization.as_ref().map(|a| a.credential.as_str()) {
            Some("join-token") => json!([{"joinToken": []}]),
            Some("node") => json!([{"nodeCredential": []}]),
            _ => json!([{"bearer": []}]),
        };
        if let Some(authorization) = &method.authorization {
            let items = if authorization.items { ", then each item by a read decision" } else { "" };
            text.push_str(&format!(
                "\n\nAuthorization: `{}` on `{}`{items}.",
                authorization.permission, authorization.resource
            ));
        }
        text.push_str(&format!("\n\ngRPC: `{}`.", method.grpc_path));
        let mut responses = Map::new();
        let result = if descriptor.is_server_streaming() {
            // The gateway relays a stream as server-sent events (api::gateway_stream).
            json!({
                "description": format!(
                    "A stream of server-sent events: each `data:` line is one `{}` in JSON (the \
                     `x-event-schema`), its `id:` the message's `cursor` when it has one; an error \
                     that ends the stream is one `event: error` whose data is the error body.",
                    descriptor.output().name()
                ),
                "content": {"text/event-stream": {"schema": {"type": "string"}, "x-event-schema": output}},
            })
        } else {
            json!({"description": format!("The call's result, a `{}`.", descriptor.output().name()),
                   "content": {"application/json": {"schema": output}}})
        };
        responses.insert("200".into(), result);
        for status in error_statuses() {
            responses.insert(status.to_string(), json!({"$ref": format!("#/components/responses/{status}")}));
        }
        let operation = json!({
            "operationId": method.name.trim_start_matches("bettercompute.").replace('/', "."),
            "tags": [tag],
            "summary": summary(&text),
            "description": text.trim(),
            "security": security,
            "requestBody": {
                "description": "The request in the proto3 JSON mapping; an empty body is `{}`.",
                "required": body_required,
                "content": {"application/json": {"schema": input}},
            },
            "responses": responses,
        });
        paths.insert(path, json!({ "post": operation }));
    }

    let mut schemas = Map::new();
    let mut done = BTreeSet::new();
    while let Some((name, role)) = builder.wanted.iter().find(|w| !done.contains(*w)).cloned() {
        done.insert((name.clone(), role));
        let message = pool.get_message_by_name(&name).ok_or_else(|| format!("no message {name}"))?;
        schemas.insert(schema_name(&name, role), builder.message_schema(&message, role));
    }
    schemas.sort_keys();
    schemas.insert("Error".into(), error_schema());

    let mut responses = Map::new();
    for status in error_statuses() {
        let codes: Vec<&str> = Code::ALL.iter().filter(|c| c.http().as_u16() == status).map(|c| c.as_str()).collect();
        responses.insert(
            status.to_string(),
            json!({
                "description": format!("An error: {}.", codes.join(" or ")),
                "content": {"application/json": {"schema": {
                    "allOf": [
                        {"$ref": "#/components/schemas/Error"},
                        {"properties": {"error": {"properties": {"code": {"enum": codes}}}}},
                    ],
                }}},
            }),
        );
    }

    Ok(json!({
        "openapi": "3.1.0",
        "info": {
            "title": "better-compute",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "The JSON paths of the better-compute API: every method of the gRPC API \
                is also `POST /api/...` with a body in the proto3 JSON mapping (camelCase names, \
                64-bit integers as JSON numbers, timestamps as RFC 3339 text, unknown fields refused). \
                Generated from proto/; do not edit.",
            "license": {"name": "Apache-2.0", "identifier": "Apache-2.0"},
        },
        "tags": tags.into_iter().map(|(name, description)| match description {
            Some(description) => json!({"name": name, "description": description}),
            None => json!({"name": name}),
        }).collect::<Vec<_>>(),
        "security": [{"bearer": []}],
        "paths": paths,
        "components": {
            "securitySchemes": {"bearer": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "bck_<id>.<secret>",
                "description": "An API key: `Authorization: Bearer bck_<id>.<secret>`.",
            }, "joinToken": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "bcjt_<id>.<secret>",
                "description": "A join token, for `nodes.join` only: `Authorization: Bearer bcjt_<id>.<secret>`.",
            }, "nodeCredential": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "bcn_<id>.<secret>",
                "description": "The credential a join returned, for the node's own calls: \
                    `Authorization: Bearer bcn_<id>.<secret>`.",
            }},
            "schemas": schemas,
            "responses": responses,
        },
    }))
}

/// The HTTP statuses of the documented error codes, each once.
fn error_statuses() -> BTreeSet<u16> {
    Code::ALL.iter().map(|c| c.http().as_u16()).collect()
}

/// The error body of every 4xx and 5xx answer.
fn error_schema() -> Value {
    let codes: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
    json!({
        "description": "Every failed call: a code string, a message for people, and structured details \
            (`details.fields` lists each offending field of an `INVALID_INPUT`).",
        "type": "object",
        "additionalProperties": false,
        "required": ["error"],
        "properties": {"error": {
            "type": "object",
            "additionalProperties": false,
            "required": ["code", "message", "details"],
            "properties": {
                "code": {"type": "string", "enum": codes},
                "message": {"type": "string"},
                "details": {"type": "object"},
            },
        }},
    })
}

/// Whether a message is read by the server or written by it: a request is checked against its
/// rules, a response always carries every field without presence.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Role {
    Request,
    Response,
}

/// The component name of a message in a role: the full name, except that a message read as a
/// request whose name does not say so gets `Input`, and one written in a response although named
/// `...Request` gets `Output`, so that the two forms of one message never share a name.
fn schema_name(full_name: &str, role: Role) -> String {
    match (role, full_name.ends_with("Request")) {
        (Role::Request, false) => format!("{full_name}Input"),
        (Role::Response, true) => format!("{full_name}Output"),
        _ => full_name.to_owned(),
    }
}

struct Builder<'a> {
    validator: &'a Validator,
    /// The messages referred to so far, with their role.
    wanted: BTreeSet<(String, Role)>,
}

impl Builder<'_> {
    /// A `$ref` to `message` in `role`, or the inline schema of a well-known type.
    fn reference(&mut self, message: &MessageDescriptor, role: Role) -> Value {
        if let Some(schema) = well_known(message) {
            return schema;
        }
        self.wanted.insert((message.full_name().to_owned(), role));
        json!({"$ref": format!("#/components/schemas/{}", schema_name(message.full_name(), role))})
    }

    fn message_schema(&mut self, message: &MessageDescriptor, role: Role) -> Value {
        let rules = self.validator.rules_of(message.full_name());
        let mut properties = Map::new();
        let mut required = Vec::new();
        for field in message.fields() {
            let field_rules = rules.and_then(|r| r.iter().find(|(f, _)| f == &field).map(|(_, rules)| rules));
            let field_rules = field_rules.filter(|_| role == Role::Request);
            let mut schema = self.field_schema(&field, field_rules, role);
            if role == Role::Request
                && let Some(default) = documented_default(&field)
            {
                schema["default"] = typed_default(&field, default);
            }
            if let Some(text) = comments(message.parent_file_descriptor_proto(), field.path()) {
                // A field kept for one more release says so first in its comment.
                if text.starts_with("Deprecated") {
                    schema["deprecated"] = json!(true);
                }
                insert_description(&mut schema, text);
            }
            let is_required = match role {
                Role::Request => field_rules.is_some_and(|r| r.required),
                // The gateway writes every field without presence, even at its default value.
                Role::Response => !field.supports_presence(),
            };
            if is_required {
                required.push(field.json_name().to_owned());
            } else if role == Role::Request {
                // proto3 JSON reads `null` as "not set", and so does the gateway.
                schema = nullable(schema);
            }
            properties.insert(field.json_name().to_owned(), schema);
        }
        let mut schema = json!({"type": "object", "additionalProperties": false, "properties": properties});
        if !required.is_empty() {
            schema["required"] = json!(required);
        }
        if let Some(text) = comments(message.parent_file_descriptor_proto(), message.path()) {
            insert_description(&mut schema, text);
        }
        schema
    }

    fn field_schema(&mut self, field: &FieldDescriptor, rules: Option<&FieldRules>, role: Role) -> Value {
        if field.is_map() {
            let Kind::Message(entry) = field.kind() else { unreachable!("a map field's kind is its entry") };
            let map = rules.and_then(|r| r.map.as_deref());
            let mut values = self.kind_schema(&entry.map_entry_value_field().kind(), role);
            let mut keys = json!({"type": "string"});
            if let Some(map) = map {
                apply_scalar(&mut values, &map.values.scalar);
                apply_scalar(&mut keys, &map.keys.scalar);
            }
            let mut schema = json!({"type": "object", "additionalProperties": values});
            if keys != json!({"type": "string"}) {
                schema["propertyNames"] = keys;
            }
            let min = map.and_then(|m| m.min).or(rules.filter(|r| r.required).map(|_| 1));
            if let Some(min) = min {
                schema["minProperties"] = json!(min);
            }
            if let Some(max) = map.and_then(|m| m.max) {
                schema["maxProperties"] = json!(max);
            }
            return schema;
        }
        if field.is_list() {
            let list = rules.and_then(|r| r.list.as_deref());
            let mut items = self.kind_schema(&field.kind(), role);
            if let Some(list) = list {
                apply_scalar(&mut items, &list.items.scalar);
            }
            let mut schema = json!({"type": "array", "items": items});
            let min = list.and_then(|l| l.min).or(rules.filter(|r| r.required).map(|_| 1));
            if let Some(min) = min {
                schema["minItems"] = json!(min);
            }
            if let Some(max) = list.and_then(|l| l.max) {
                schema["maxItems"] = json!(max);
            }
            if list.is_some_and(|l| l.unique) {
                schema["uniqueItems"] = json!(true);
            }
            return schema;
        }
        let mut schema = self.kind_schema(&field.kind(), role);
        let Some(rules) = rules else { return schema };
        apply_scalar(&mut schema, &rules.scalar);
        // `required` on a field without presence means "not its zero value".
        if rules.required && !field.supports_presence() {
            match field.kind() {
                Kind::String | Kind::Bytes => {
                    let min = schema["minLength"].as_u64().unwrap_or(0).max(1);
                    schema["minLength"] = json!(min);
                }
                Kind::Bool => schema["const"] = json!(true),
                Kind::Message(_) => {}
                _ => schema["not"] = json!({"const": 0}),
            }
        }
        // The validator skips a field left at its zero value unless it is required; say so when
        // the zero value would break the rules.
        if !rules.required
            && !field.supports_presence()
            && let Some((proto_zero, json_zero)) = zero_value(&field.kind())
            && rules.scalar_refuses(&proto_zero, field)
        {
            schema = json!({"anyOf": [{"const": json_zero}, schema]});
        }
        schema
    }

    fn kind_schema(&mut self, kind: &Kind, role: Role) -> Value {
        let integer = |format: &str, min: Value, max: Value| json!({"type": "integer", "format": format, "minimum": min, "maximum": max});
        match kind {
            Kind::String => json!({"type": "string"}),
            Kind::Bytes => json!({"type": "string", "contentEncoding": "base64"}),
            Kind::Bool => json!({"type": "boolean"}),
            Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => integer("int32", json!(i32::MIN), json!(i32::MAX)),
            Kind::Uint32 | Kind::Fixed32 => integer("uint32", json!(0), json!(u32::MAX)),
            Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => integer("int64", json!(i64::MIN), json!(i64::MAX)),
            Kind::Uint64 | Kind::Fixed64 => integer("uint64", json!(0), json!(u64::MAX)),
            Kind::Float | Kind::Double => {
                let format = if matches!(kind, Kind::Float) { "float" } else { "double" };
                match role {
                    Role::Request => json!({"type": "number", "format": format}),
                    // Values JSON numbers cannot hold are written as text.
                    Role::Response => json!({"anyOf": [
                        {"type": "number", "format": format},
                        {"type": "string", "enum": ["NaN", "Infinity", "-Infinity"]},
                    ]}),
                }
            }
            Kind::Enum(descriptor) => {
                let names: Vec<String> = descriptor.values().map(|v| v.name().to_owned()).collect();
                json!({"type": "string", "enum": names})
            }
            Kind::Message(message) => self.reference(message, role),
        }
    }
}

/// The zero value of a scalar kind, as a proto value and as JSON.
fn zero_value(kind: &Kind) -> Option<(ProtoValue, Value)> {
    Some(match kind {
        Kind::String => (ProtoValue::String(String::new()), json!("")),
        Kind::Bool => (ProtoValue::Bool(false), json!(false)),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => (ProtoValue::I32(0), json!(0)),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => (ProtoValue::I64(0), json!(0)),
        Kind::Uint32 | Kind::Fixed32 => (ProtoValue::U32(0), json!(0)),
        Kind::Uint64 | Kind::Fixed64 => (ProtoValue::U64(0), json!(0)),
        Kind::Float => (ProtoValue::F32(0.0), json!(0)),
        Kind::Double => (ProtoValue::F64(0.0), json!(0)),
        _ => return None,
    })
}

/// A number as JSON: an integer when it is one.
fn number(n: f64) -> Value {
    if n.fract() == 0.0 && n.abs() < 9.0e15 { json!(n as i64) } else { json!(n) }
}

/// Adds the JSON Schema form of each scalar rule to `schema`.
fn apply_scalar(schema: &mut Value, rules: &[ScalarRule]) {
    for rule in rules {
        match rule {
            ScalarRule::MinLen(n) => schema["minLength"] = json!(n),
            ScalarRule::MaxLen(n) => schema["maxLength"] = json!(n),
            ScalarRule::Len(n) => {
                schema["minLength"] = json!(n);
                schema["maxLength"] = json!(n);
            }
            ScalarRule::Pattern(regex) => schema["pattern"] = json!(regex.as_str()),
            ScalarRule::StringIn(allowed) => schema["enum"] = json!(allowed),
            ScalarRule::StringNotIn(refused) => schema["not"] = json!({"enum": refused}),
            ScalarRule::StringConst(value) => schema["const"] = json!(value),
            ScalarRule::Format(format) => apply_format(schema, *format),
            ScalarRule::Min { bound, inclusive: true } => schema["minimum"] = number(*bound),
            ScalarRule::Min { bound, inclusive: false } => {
                remove(schema, "minimum");
                schema["exclusiveMinimum"] = number(*bound);
            }
            ScalarRule::Max { bound, inclusive: true } => schema["maximum"] = number(*bound),
            ScalarRule::Max { bound, inclusive: false } => {
                remove(schema, "maximum");
                schema["exclusiveMaximum"] = number(*bound);
            }
            ScalarRule::NumberIn(allowed) => schema["enum"] = enum_numbers(schema, allowed),
            ScalarRule::NumberNotIn(refused) => schema["not"] = json!({"enum": enum_numbers(schema, refused)}),
            ScalarRule::NumberConst(n) => schema["const"] = number(*n),
            ScalarRule::BoolConst(b) => schema["const"] = json!(b),
            // An enum schema already lists only the defined values.
            ScalarRule::EnumDefined => {}
        }
    }
}

/// The values of an `in` rule: numbers, or for an enum the names of those numbers.
fn enum_numbers(schema: &Value, numbers: &[f64]) -> Value {
    if schema["type"] == "string" {
        // An enum's rules name value numbers but its JSON form uses names: keep the defined
        // names (no API enum carries an `in` rule; the design spells enum-like fields as strings).
        return schema["enum"].clone();
    }
    Value::Array(numbers.iter().map(|n| number(*n)).collect())
}

fn apply_format(schema: &mut Value, format: Format) {
    let (json_format, text) = match format {
        Format::Ip => (None, "An IPv4 or IPv6 address."),
        Format::Ipv4 => (Some("ipv4"), "An IPv4 address."),
        Format::Ipv6 => (Some("ipv6"), "An IPv6 address."),
        Format::IpPrefix => (None, "An IPv4 or IPv6 prefix with no host bits set (`10.0.0.0/8`)."),
        Format::Ipv4Prefix => (None, "An IPv4 prefix with no host bits set (`10.0.0.0/8`)."),
        Format::Ipv6Prefix => (None, "An IPv6 prefix with no host bits set (`2001:db8::/32`)."),
        Format::Ipv4WithPrefixLen => {
            (None, "An IPv4 address with a prefix length (`10.0.0.5/24`); host bits are cleared (`10.0.0.0/24`).")
        }
    };
    match (format, json_format) {
        (_, Some(json_format)) => schema["format"] = json!(json_format),
        (Format::Ip, None) => schema["anyOf"] = json!([{"format": "ipv4"}, {"format": "ipv6"}]),
        _ => {}
    }
    schema["x-format-description"] = json!(text);
}

fn remove(schema: &mut Value, key: &str) {
    if let Value::Object(object) = schema {
        object.remove(key);
    }
}

/// `schema` or `null`, keeping the description outside.
fn nullable(mut schema: Value) -> Value {
    let description = match &mut schema {
        Value::Object(object) => object.remove("description"),
        _ => None,
    };
    let mut wrapped = json!({"anyOf": [schema, {"type": "null"}]});
    if let Some(description) = description {
        wrapped["description"] = description;
    }
    wrapped
}

/// Adds a description to a schema; beside a `$ref` (whose siblings 3.1 allows) too.
fn insert_description(schema: &mut Value, text: String) {
    if let Value::Object(object) = schema {
        object.insert("description".into(), json!(text));
    }
}

/// The inline schema of a well-known type, in its proto3 JSON form.
fn well_known(message: &MessageDescriptor) -> Option<Value> {
    Some(match message.full_name() {
        "google.protobuf.Timestamp" => json!({"type": "string", "format": "date-time",
            "description": "RFC 3339 time in UTC (`2024-05-01T12:00:00Z`)."}),
        "google.protobuf.Duration" => json!({"type": "string", "pattern": "^-?[0-9]+(\\.[0-9]{1,9})?s$",
            "description": "Seconds with an `s` suffix (`1.5s`)."}),
        "google.protobuf.Struct" => json!({"type": "object"}),
        "google.protobuf.Value" => json!({}),
        "google.protobuf.ListValue" => json!({"type": "array"}),
        "google.protobuf.Empty" => json!({"type": "object", "additionalProperties": false}),
        "google.protobuf.FieldMask" => json!({
            "type": "string",
            "description": "Comma-separated camelCase field names (`authorizedNetworks,description`). \
                            Left out, the keys of the body are the mask.",
        }),
        "google.protobuf.StringValue" => json!({"type": "string"}),
        "google.protobuf.BoolValue" => json!({"type": "boolean"}),
        "google.protobuf.Int32Value" | "google.protobuf.UInt32Value" => json!({"type": "integer"}),
        "google.protobuf.Int64Value" | "google.protobuf.UInt64Value" => json!({"type": "integer"}),
        "google.protobuf.FloatValue" | "google.protobuf.DoubleValue" => json!({"type": "number"}),
        "google.protobuf.BytesValue" => json!({"type": "string", "contentEncoding": "base64"}),
        _ => return None,
    })
}

/// The leading comment of the element at `path` in `file`, without the comment markers' indent.
/// A documented default as the JSON value of its field's type: `1` for a number, `"regular"`
/// for a string (the option holds the text of the JSON form).
fn typed_default(field: &prost_reflect::FieldDescriptor, text: String) -> Value {
    use prost_reflect::Kind;
    let scalar = matches!(
        field.kind(),
        Kind::Int32
            | Kind::Sint32
            | Kind::Sfixed32
            | Kind::Uint32
            | Kind::Fixed32
            | Kind::Int64
            | Kind::Sint64
            | Kind::Sfixed64
            | Kind::Uint64
            | Kind::Fixed64
            | Kind::Float
            | Kind::Double
            | Kind::Bool
    );
    if scalar { serde_json::from_str(&text).unwrap_or(Value::String(text)) } else { Value::String(text) }
}

/// The default a request field documents (`bettercompute.options.v1.field_default`).
fn documented_default(field: &prost_reflect::FieldDescriptor) -> Option<String> {
    let extension = field.parent_pool().get_extension_by_name("bettercompute.options.v1.field_default")?;
    let options = field.options();
    if !options.has_extension(&extension) {
        return None;
    }
    options.get_extension(&extension).as_str().filter(|text| !text.is_empty()).map(str::to_owned)
}

fn comments(file: &prost_types::FileDescriptorProto, path: &[i32]) -> Option<String> {
    let location = file.source_code_info.as_ref()?.location.iter().find(|l| l.path == path)?;
    let text = location.leading_comments();
    let lines: Vec<&str> = text.lines().map(|l| l.strip_prefix(' ').unwrap_or(l).trim_end()).collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// The first sentence of a description.
fn summary(text: &str) -> String {
    let first = text.split("\n\n").next().unwrap_or_default().replace('\n', " ");
    match first.find(". ") {
        Some(end) => first[..=end].to_owned(),
        None => first.trim().to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::descriptor_pool;

    fn doc() -> Value {
        document(&crate::proto::documented_descriptor_pool()).unwrap()
    }

    #[test]
    fn the_server_keeps_no_comments_and_the_document_has_them() {
        let kept = descriptor_pool().file_descriptor_protos().filter(|file| file.source_code_info.is_some()).count();
        assert_eq!(kept, 0, "the server's own descriptors leave the comments out");
        let documented = crate::proto::documented_descriptor_pool();
        let ours: Vec<_> =
            documented.file_descriptor_protos().filter(|file| file.package().starts_with("bettercompute.")).collect();
        assert!(ours.len() > 5 && ours.iter().all(|file| file.source_code_info.is_some()));
        let create = &doc()["paths"]["/api/compute/kubernetesClusters/create"]["post"];
        assert!(create["description"].as_str().is_some_and(|text| text.len() > 40), "{create}");
    }

    #[test]
    fn every_method_is_a_post_path_with_its_schemas_and_every_error_status() {
        let doc = doc();
        let table = MethodTable::from_pool(descriptor_pool());
        let paths = doc["paths"].as_object().unwrap();
        assert_eq!(paths.len(), table.iter().count());
        for method in table.iter() {
            let operation = &paths[method.http_path.as_deref().unwrap()]["post"];
            assert!(operation["requestBody"]["content"]["application/json"]["schema"]["$ref"].is_string());
            for status in ["200", "400", "401", "403", "404", "409", "422", "429", "500", "503"] {
                assert!(operation["responses"].get(status).is_some(), "{} lacks {status}", method.name);
            }
        }
        let create = &paths["/api/platform/tenants/create"]["post"];
        assert_eq!(create["summary"], "Records a tenant and returns it `active`.");
        assert!(create["description"].as_str().unwrap().contains("`platform:tenants:create` on `platform-tenant`"));
        let conflict = &doc["components"]["responses"]["409"]["content"]["application/json"]["schema"];
        assert_eq!(
            conflict["allOf"][1]["properties"]["error"]["properties"]["code"]["enum"],
            json!(["CONFLICT", "INVALID_STATE"])
        );
        // A daemon's method names the credential it is called with.
        assert_eq!(paths["/api/compute/nodes/join"]["post"]["security"], json!([{"joinToken": []}]));
        assert_eq!(paths["/api/compute/nodes/heartbeat"]["post"]["security"], json!([{"nodeCredential": []}]));
        assert_eq!(create["security"], json!([{"bearer": []}]));
        assert_eq!(doc["components"]["securitySchemes"]["joinToken"]["bearerFormat"], "bcjt_<id>.<secret>");
    }

    #[test]
    fn request_schemas_carry_the_validation_rules_by_json_names() {
        let doc = doc();
        let create = &doc["components"]["schemas"]["bettercompute.platform.v1.CreateTenantRequest"];
        assert_eq!(create["additionalProperties"], false);
        assert_eq!(create["required"], json!(["id"]));
        let id = &create["properties"]["id"];
        assert_eq!((id["maxLength"].as_u64(), id["minLength"].as_u64()), (Some(128), Some(1)));
        assert_eq!(id["pattern"], "^[A-Za-z0-9._:-]{1,128}$");
        assert!(id["description"].as_str().unwrap().starts_with("The new tenant's id"));
        let display_name = &create["properties"]["displayName"];
        assert_eq!(display_name["anyOf"], json!([{"type": "string", "maxLength": 128}, {"type": "null"}]));
        assert!(display_name["description"].as_str().unwrap().starts_with("A name for people to read"));
        let update = &doc["components"]["schemas"]["bettercompute.platform.v1.UpdateTenantRequest"];
        assert_eq!(update["required"], json!(["tenantId"]), "optional fields are not required");
    }

    #[test]
    fn responses_require_every_field_without_presence_and_write_times_as_text() {
        let doc = doc();
        let tenant = &doc["components"]["schemas"]["bettercompute.platform.v1.Tenant"];
        let required: Vec<&str> = tenant["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
        assert_eq!(required, ["id", "displayName", "description", "state", "version"]);
        assert_eq!(tenant["properties"]["version"]["type"], "integer");
        assert_eq!(tenant["properties"]["createdAt"]["format"], "date-time");
        assert_eq!(
            tenant["properties"]["deletedAt"]["description"],
            "When the tenant was deleted; absent while it is not."
        );
        assert!(tenant["properties"]["id"].get("pattern").is_none(), "responses carry no request rules");
    }

    #[test]
    fn a_zero_value_the_rules_refuse_is_still_documented_as_accepted() {
        // The validator skips an optional field at its zero value; the schema must too.
        let pool = descriptor_pool();
        let validator = Validator::from_pool(pool).unwrap();
        let mut builder = Builder { validator: &validator, wanted: BTreeSet::new() };
        let message = pool.get_message_by_name("bettercompute.platform.v1.CreateTenantRequest").unwrap();
        let field = message.get_field_by_name("description").unwrap();
        let rules = FieldRules {
            scalar: vec![ScalarRule::Pattern(regex::Regex::new("^[a-z]+$").unwrap())],
            ..FieldRules::default()
        };
        let schema = builder.field_schema(&field, Some(&rules), Role::Request);
        assert_eq!(schema["anyOf"][0], json!({"const": ""}));
        assert_eq!(schema["anyOf"][1]["pattern"], "^[a-z]+$");
    }

    #[test]
    fn the_committed_document_is_the_generated_one() {
        let committed = include_str!("../../clients/openapi/openapi.json");
        let committed: Value = serde_json::from_str(committed).unwrap();
        assert!(committed == doc(), "clients/openapi/openapi.json is stale: run clients/generate");
    }
}
