//! The protobuf bodies the typed clients send (`kubectl create namespace`, `create configmap`,
//! `create token`, ...): client-go sends the built-in kinds as
//! `application/vnd.kubernetes.protobuf` whatever the server's discovery says, and takes no 415
//! for an answer, so the fake reads them into the JSON it keeps. It knows the fields of the
//! kinds it serves that those commands fill; a field it does not know that carries a value is
//! refused by number rather than dropped. Answers stay JSON, which the client's `Accept` allows.

use base64::Engine;
use serde_json::{Map, Value, json};

/// The four bytes before every Kubernetes protobuf envelope.
const MAGIC: &[u8] = b"k8s\0";

/// How one field of a message becomes JSON.
#[derive(Clone, Copy)]
enum Field {
    Str(&'static str),
    Int(&'static str),
    Bool(&'static str),
    Strs(&'static str),
    StrMap(&'static str),
    /// Bytes, base64 in JSON.
    BytesMap(&'static str),
    Msg(&'static str, &'static [(u32, Field)]),
    Msgs(&'static str, &'static [(u32, Field)]),
    /// What the server sets (uid, resourceVersion, timestamps): read past.
    Ignored,
}

use Field::*;

type Schema = &'static [(u32, Field)];

const OBJECT_META: Schema = &[
    (1, Str("name")),
    (2, Str("generateName")),
    (3, Str("namespace")),
    (4, Ignored),
    (5, Ignored),
    (6, Ignored),
    (7, Ignored),
    (8, Ignored),
    (9, Ignored),
    (10, Ignored),
    (11, StrMap("labels")),
    (12, StrMap("annotations")),
    (14, Strs("finalizers")),
    (17, Ignored),
];
const NAMESPACE: Schema =
    &[(1, Msg("metadata", OBJECT_META)), (2, Msg("spec", &[(1, Strs("finalizers"))])), (3, Ignored)];
const CONFIG_MAP: Schema =
    &[(1, Msg("metadata", OBJECT_META)), (2, StrMap("data")), (3, BytesMap("binaryData")), (4, Bool("immutable"))];
const SECRET: Schema = &[
    (1, Msg("metadata", OBJECT_META)),
    (2, BytesMap("data")),
    (3, Str("type")),
    (4, StrMap("stringData")),
    (5, Bool("immutable")),
];
const OBJECT_REFERENCE: Schema = &[(1, Str("kind")), (2, Str("namespace")), (3, Str("name"))];
const SERVICE_ACCOUNT: Schema = &[
    (1, Msg("metadata", OBJECT_META)),
    (2, Msgs("secrets", OBJECT_REFERENCE)),
    (3, Msgs("imagePullSecrets", &[(1, Str("name"))])),
    (4, Bool("automountServiceAccountToken")),
];
const CLUSTER_ROLE_BINDING: Schema = &[
    (1, Msg("metadata", OBJECT_META)),
    (2, Msgs("subjects", &[(1, Str("kind")), (2, Str("apiGroup")), (3, Str("name")), (4, Str("namespace"))])),
    (3, Msg("roleRef", &[(1, Str("apiGroup")), (2, Str("kind")), (3, Str("name"))])),
];
const TOKEN_REQUEST: Schema = &[
    (1, Msg("metadata", OBJECT_META)),
    (
        2,
        Msg(
            "spec",
            &[(1, Strs("audiences")), (3, Msg("boundObjectRef", OBJECT_REFERENCE)), (4, Int("expirationSeconds"))],
        ),
    ),
    (3, Ignored),
];
const LABEL_SELECTOR: Schema = &[(1, StrMap("matchLabels"))];
const CONTAINER: Schema = &[
    (1, Str("name")),
    (2, Str("image")),
    (3, Strs("command")),
    (4, Strs("args")),
    (5, Str("workingDir")),
    (6, Msgs("ports", &[(1, Str("name")), (2, Int("hostPort")), (3, Int("containerPort")), (4, Str("protocol"))])),
    (7, Msgs("env", &[(1, Str("name")), (2, Str("value"))])),
    // `resources`: kubectl sends it empty.
    (8, Msg("resources", &[])),
    (14, Str("imagePullPolicy")),
];
const POD_TEMPLATE: Schema = &[
    (1, Msg("metadata", OBJECT_META)),
    (2, Msg("spec", &[(2, Msgs("containers", CONTAINER)), (7, StrMap("nodeSelector"))])),
];
const DEPLOYMENT: Schema = &[
    (1, Msg("metadata", OBJECT_META)),
    (
        2,
        Msg(
            "spec",
            &[
                (1, Int("replicas")),
                (2, Msg("selector", LABEL_SELECTOR)),
                (3, Msg("template", POD_TEMPLATE)),
                // `strategy`: kubectl sends it empty.
                (4, Msg("strategy", &[])),
            ],
        ),
    ),
    (3, Ignored),
];

/// The kinds read, by `apiVersion` and `kind`.
const KINDS: [(&str, &str, Schema); 7] = [
    ("v1", "Namespace", NAMESPACE),
    ("v1", "ConfigMap", CONFIG_MAP),
    ("v1", "Secret", SECRET),
    ("v1", "ServiceAccount", SERVICE_ACCOUNT),
    ("rbac.authorization.k8s.io/v1", "ClusterRoleBinding", CLUSTER_ROLE_BINDING),
    ("authentication.k8s.io/v1", "TokenRequest", TOKEN_REQUEST),
    ("apps/v1", "Deployment", DEPLOYMENT),
];

/// The object of a protobuf envelope, as JSON with its `apiVersion` and `kind`; or what the
/// fake could not read.
pub fn decode(body: &[u8]) -> Result<Value, String> {
    let unknown = body.strip_prefix(MAGIC).ok_or("a protobuf body starts with the bytes \"k8s\\0\"")?;
    let (mut api_version, mut kind, mut raw) = (String::new(), String::new(), &[][..]);
    for (number, value) in fields(unknown)? {
        match (number, value) {
            (1, Wire::Bytes(type_meta)) => {
                for (number, value) in fields(type_meta)? {
                    match (number, value) {
                        (1, Wire::Bytes(text)) => api_version = string(text)?,
                        (2, Wire::Bytes(text)) => kind = string(text)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(bytes)) => raw = bytes,
            (3, Wire::Bytes(encoding)) if !encoding.is_empty() => {
                return Err(format!("the fake does not read contentEncoding {:?}", String::from_utf8_lossy(encoding)));
            }
            _ => {}
        }
    }
    let (_, _, schema) = KINDS
        .iter()
        .find(|(version, named, _)| *version == api_version && *named == kind)
        .ok_or_else(|| format!("the fake reads {api_version} {kind} as JSON only"))?;
    let mut object = message(raw, schema, &kind)?;
    object.insert("apiVersion".into(), json!(api_version));
    object.insert("kind".into(), json!(kind));
    Ok(Value::Object(object))
}

/// One field's value on the wire.
enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

fn varint(bytes: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first().ok_or("a varint runs past the end of the body")?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err("a varint is longer than ten bytes".into())
}

/// The fields of a message, in order.
fn fields(mut bytes: &[u8]) -> Result<Vec<(u32, Wire<'_>)>, String> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        let number = u32::try_from(key >> 3).map_err(|_| "a field number out of range")?;
        let value = match key & 7 {
            0 => Wire::Varint(varint(&mut bytes)?),
            2 => {
                let len = usize::try_from(varint(&mut bytes)?).map_err(|_| "a length out of range")?;
                if len > bytes.len() {
                    return Err(format!("field {number} runs past the end of its message"));
                }
                let (value, rest) = bytes.split_at(len);
                bytes = rest;
                Wire::Bytes(value)
            }
            wire @ (1 | 5) => {
                let len = if wire == 1 { 8 } else { 4 };
                bytes = bytes.get(len..).ok_or("a fixed-width field runs past the end")?;
                Wire::Fixed
            }
            wire => return Err(format!("field {number} has wire type {wire}, which Kubernetes does not use")),
        };
        out.push((number, value));
    }
    Ok(out)
}

fn string(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| "a string field is not UTF-8".into())
}

/// A map entry's key and value (fields 1 and 2).
fn entry(bytes: &[u8]) -> Result<(String, &[u8]), String> {
    let (mut key, mut value) = (String::new(), &[][..]);
    for (number, wire) in fields(bytes)? {
        match (number, wire) {
            (1, Wire::Bytes(text)) => key = string(text)?,
            (2, Wire::Bytes(bytes)) => value = bytes,
            _ => {}
        }
    }
    Ok((key, value))
}

/// Whether a field the fake does not know carries nothing (typed clients write empty fields).
fn empty(wire: &Wire) -> bool {
    match wire {
        Wire::Varint(value) => *value == 0,
        Wire::Bytes(bytes) => bytes.is_empty(),
        Wire::Fixed => false,
    }
}

/// A message as a JSON object: empty strings and empty messages left out, as the JSON the
/// clients send leaves them out.
fn message(bytes: &[u8], schema: Schema, path: &str) -> Result<Map<String, Value>, String> {
    let mut object = Map::new();
    for (number, wire) in fields(bytes)? {
        let Some((_, field)) = schema.iter().find(|(n, _)| *n == number) else {
            if empty(&wire) {
                continue;
            }
            return Err(format!(
                "the fake does not read field {number} of {path} in protobuf; send the object as JSON (kubectl apply -f)"
            ));
        };
        let mismatch = || format!("field {number} of {path} has the wrong wire type");
        match (*field, wire) {
            (Ignored, _) => {}
            (Str(name), Wire::Bytes(text)) => {
                if !text.is_empty() {
                    object.insert(name.into(), json!(string(text)?));
                }
            }
            // int32 and int64 alike: a negative int32 is sign-extended on the wire.
            (Int(name), Wire::Varint(value)) => {
                object.insert(name.into(), json!(value as i64));
            }
            (Bool(name), Wire::Varint(value)) => {
                object.insert(name.into(), json!(value != 0));
            }
            (Strs(name), Wire::Bytes(text)) => push(&mut object, name, json!(string(text)?)),
            (StrMap(name), Wire::Bytes(bytes)) => {
                let (key, value) = entry(bytes)?;
                insert(&mut object, name, key, json!(string(value)?));
            }
            (BytesMap(name), Wire::Bytes(bytes)) => {
                let (key, value) = entry(bytes)?;
                insert(&mut object, name, key, json!(base64::engine::general_purpose::STANDARD.encode(value)));
            }
            (Msg(name, inner), Wire::Bytes(bytes)) => {
                let value = message(bytes, inner, &format!("{path}.{name}"))?;
                if !value.is_empty() {
                    object.insert(name.into(), Value::Object(value));
                }
            }
            (Msgs(name, inner), Wire::Bytes(bytes)) => {
                push(&mut object, name, Value::Object(message(bytes, inner, &format!("{path}.{name}"))?));
            }
            _ => return Err(mismatch()),
        }
    }
    Ok(object)
}

fn push(object: &mut Map<String, Value>, name: &str, value: Value) {
    if let Value::Array(items) = object.entry(name).or_insert_with(|| json!([])) {
        items.push(value);
    }
}

fn insert(object: &mut Map<String, Value>, name: &str, key: String, value: Value) {
    if let Value::Object(map) = object.entry(name).or_insert_with(|| json!({})) {
        map.insert(key, value);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `kubectl create namespace x` (1.32) sends.
    const CREATE_NAMESPACE: &[u8] =
        b"k8s\x00\n\x0f\n\x02v1\x12\tNamespace\x12\x19\n\x11\n\x01x\x12\x00\x1a\x00\"\x00*\x002\x008\x00B\x00\x12\x00\x1a\x02\n\x00\x1a\x00\"\x00";

    fn len(bytes: &[u8]) -> u8 {
        u8::try_from(bytes.len()).unwrap()
    }

    /// Field `number` with `bytes`, length-delimited.
    fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![number << 3 | 2, len(bytes)];
        out.extend_from_slice(bytes);
        out
    }

    fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
        let type_meta = [field(1, api_version.as_bytes()), field(2, kind.as_bytes())].concat();
        [MAGIC.to_vec(), field(1, &type_meta), field(2, raw)].concat()
    }

    #[test]
    fn kubectls_namespace_reads_as_its_json() {
        assert_eq!(
            decode(CREATE_NAMESPACE).unwrap(),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}})
        );
    }

    #[test]
    fn maps_lists_bytes_and_numbers_read_as_json_and_an_unknown_value_is_refused() {
        let meta =
            [field(1, b"c"), field(3, b"default"), field(11, &[field(1, b"app"), field(2, b"web")].concat())].concat();
        let raw = [
            field(1, &meta),
            field(2, &[field(1, b"k"), field(2, b"v")].concat()),
            field(3, &[field(1, b"b"), field(2, b"\x00\xff")].concat()),
            vec![4 << 3, 1],
        ]
        .concat();
        assert_eq!(
            decode(&envelope("v1", "ConfigMap", &raw)).unwrap(),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "c", "namespace": "default", "labels": {"app": "web"}},
                   "data": {"k": "v"}, "binaryData": {"b": "AP8="}, "immutable": true})
        );
        let spec = [field(1, b"api"), vec![4 << 3, 0x90, 0x1c]].concat();
        let token = decode(&envelope("authentication.k8s.io/v1", "TokenRequest", &field(2, &spec))).unwrap();
        assert_eq!(token["spec"], json!({"audiences": ["api"], "expirationSeconds": 3600}));

        let unknown = [field(1, &meta), field(9, b"x")].concat();
        let refused = decode(&envelope("v1", "ConfigMap", &unknown)).unwrap_err();
        assert!(refused.contains("field 9 of ConfigMap"), "{refused}");
        assert!(decode(&envelope("v1", "Pod", &meta)).unwrap_err().contains("JSON only"));
        assert!(decode(b"{}").is_err());
    }
}
