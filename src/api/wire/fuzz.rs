//! Fuzz targets for the decoders a caller reaches first: the binary wire scan ([`super::scan`]),
//! the JSON gateway's [`decode_json`] and the [`Validator`]. Each runs a bounded number of cases
//! (`BC_FUZZ_CASES`, 1,500 by default) from a fixed seed (`BC_FUZZ_SEED` picks another), so
//! every `cargo test` and CI run fuzzes for a few seconds and a failure replays exactly. The
//! first seeds are the attacks the hostile probe found: a `Struct` nested 3,000 deep,
//! a million unknown field numbers, 300k unknown JSON keys, a `unique` list of 120k items.

use std::collections::HashMap;

use prost::Message;
use prost::encoding::{WireType, encode_key, encode_varint};
use prost_reflect::{DynamicMessage, Kind, MapKey, MessageDescriptor, Value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::api::gateway::decode_json;
use crate::api::validate::Validator;
use crate::error::MAX_VIOLATIONS;
use crate::proto::descriptor_pool;

fn cases() -> usize {
    std::env::var("BC_FUZZ_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(1_500)
}

fn rng(target: u64) -> StdRng {
    let seed = std::env::var("BC_FUZZ_SEED").ok().and_then(|n| n.parse().ok()).unwrap_or(14);
    StdRng::seed_from_u64(seed ^ target)
}

/// The request messages of the API: what a caller can send.
fn requests() -> Vec<MessageDescriptor> {
    descriptor_pool()
        .all_messages()
        .filter(|m| m.full_name().starts_with("bettercompute.") && m.name().ends_with("Request"))
        .collect()
}

fn message(name: &str) -> MessageDescriptor {
    descriptor_pool().get_message_by_name(name).unwrap()
}

fn length_delimited(tag: u32, body: &[u8], out: &mut Vec<u8>) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// The crash the hostile probe found: `Pools/Create` whose `policy` is a `Struct` nested `depth` deep.
fn deep_policy(depth: usize) -> Vec<u8> {
    let mut current = Vec::new();
    for _ in 0..depth {
        let mut value = Vec::new();
        length_delimited(5, &current, &mut value);
        let mut entry = Vec::new();
        length_delimited(1, b"k", &mut entry);
        length_delimited(2, &value, &mut entry);
        current.clear();
        length_delimited(1, &entry, &mut current);
    }
    let mut request = Vec::new();
    length_delimited(2, b"deep", &mut request);
    length_delimited(5, &current, &mut request);
    request
}

fn unknown_numbers(count: u32) -> Vec<u8> {
    let mut bytes = Vec::new();
    for number in 0..count {
        encode_key(1000 + number, WireType::Varint, &mut bytes);
        encode_varint(u64::from(number), &mut bytes);
    }
    bytes
}

/// A random value of `kind`, nested at most `depth` more levels.
fn random_value(rng: &mut StdRng, kind: &Kind, depth: usize) -> Value {
    match kind {
        Kind::String => Value::String(random_text(rng)),
        Kind::Bytes => Value::Bytes((0..rng.random_range(0..8)).map(|_| rng.random::<u8>()).collect::<Vec<_>>().into()),
        Kind::Bool => Value::Bool(rng.random()),
        Kind::Int32 | Kind::Sint32 | Kind::Sfixed32 => Value::I32(rng.random()),
        Kind::Int64 | Kind::Sint64 | Kind::Sfixed64 => Value::I64(rng.random()),
        Kind::Uint32 | Kind::Fixed32 => Value::U32(rng.random()),
        Kind::Uint64 | Kind::Fixed64 => Value::U64(rng.random()),
        Kind::Float => Value::F32(rng.random()),
        Kind::Double => Value::F64(rng.random()),
        Kind::Enum(e) => Value::EnumNumber(if rng.random_bool(0.8) {
            e.values().nth(rng.random_range(0..e.values().len().max(1))).map_or(0, |v| v.number())
        } else {
            rng.random()
        }),
        Kind::Message(m) => Value::Message(random_message(rng, m, depth.saturating_sub(1))),
    }
}

fn random_text(rng: &mut StdRng) -> String {
    const PIECES: &[&str] =
        &["a", "acme", "-", "0", "10.0.0.0/8", " ", "\0", "é", "us-central1-a", "acct_", "\u{202e}"];
    (0..rng.random_range(0..6)).map(|_| PIECES[rng.random_range(0..PIECES.len())]).collect()
}

/// A random, well-typed message of `descriptor`.
fn random_message(rng: &mut StdRng, descriptor: &MessageDescriptor, depth: usize) -> DynamicMessage {
    let mut message = DynamicMessage::new(descriptor.clone());
    for field in descriptor.fields() {
        let nested = matches!(field.kind(), Kind::Message(_));
        if !rng.random_bool(0.5) || (nested && depth == 0) {
            continue;
        }
        let kind = field.kind();
        let value = if field.is_map() {
            let Kind::Message(entry) = &kind else { continue };
            let (key_kind, value_kind) = (entry.map_entry_key_field().kind(), entry.map_entry_value_field().kind());
            let mut map = HashMap::new();
            for _ in 0..rng.random_range(0..4) {
                let key = match random_value(rng, &key_kind, depth) {
                    Value::String(s) => MapKey::String(s),
                    Value::I32(n) => MapKey::I32(n),
                    Value::I64(n) => MapKey::I64(n),
                    Value::U32(n) => MapKey::U32(n),
                    Value::U64(n) => MapKey::U64(n),
                    Value::Bool(b) => MapKey::Bool(b),
                    _ => continue,
                };
                map.insert(key, random_value(rng, &value_kind, depth));
            }
            Value::Map(map)
        } else if field.is_list() {
            Value::List((0..rng.random_range(0..5)).map(|_| random_value(rng, &kind, depth)).collect())
        } else {
            random_value(rng, &kind, depth)
        };
        message.set_field(&field, value);
    }
    message
}

/// One random change to `bytes`: a flipped byte, a cut, an inserted run, a duplicated slice.
fn mutate(rng: &mut StdRng, bytes: &mut Vec<u8>) {
    if bytes.is_empty() {
        bytes.push(rng.random());
        return;
    }
    let at = rng.random_range(0..bytes.len());
    match rng.random_range(0..5) {
        0 => bytes[at] ^= 1 << rng.random_range(0..8),
        1 => bytes[at] = rng.random(),
        2 => bytes.truncate(at),
        3 => {
            let run: Vec<u8> = (0..rng.random_range(1..6)).map(|_| rng.random()).collect();
            bytes.splice(at..at, run);
        }
        _ => {
            let end = (at + rng.random_range(1..64)).min(bytes.len());
            let slice = bytes[at..end].to_vec();
            let to = rng.random_range(0..=bytes.len());
            bytes.splice(to..to, slice);
        }
    }
}

#[test]
fn the_wire_scan_passes_every_well_typed_message_and_survives_any_bytes() {
    let requests = requests();
    let mut rng = rng(1);
    let mut seeds = vec![deep_policy(3_000), deep_policy(99), deep_policy(101), unknown_numbers(20_000), Vec::new()];
    for case in 0..cases() {
        let descriptor = &requests[rng.random_range(0..requests.len())];
        let valid = random_message(&mut rng, descriptor, 4).encode_to_vec();
        let found = super::scan(descriptor, &valid);
        assert!(found.is_empty(), "case {case}: a well-typed {} was refused: {found:?}", descriptor.full_name());

        let mut bytes = if rng.random_bool(0.3) { seeds[rng.random_range(0..seeds.len())].clone() } else { valid };
        for _ in 0..rng.random_range(1..4) {
            mutate(&mut rng, &mut bytes);
        }
        let found = super::scan(descriptor, &bytes);
        assert!(found.kept().len() <= MAX_VIOLATIONS, "case {case}");
        assert!(found.total() <= bytes.len(), "case {case}: each violation is at least a byte of input");
        // Where the decoder accepts the bytes and the scan finds nothing, the decoder kept
        // nothing it does not know.
        if found.is_empty()
            && let Ok(decoded) = DynamicMessage::decode(descriptor.clone(), bytes.as_slice())
        {
            assert_eq!(decoded.unknown_fields().count(), 0, "case {case}");
        }
        if case % 100 == 0 {
            seeds.push(bytes);
        }
    }
    let crash = super::scan(&message("bettercompute.platform.v1.CreatePoolRequest"), &deep_policy(3_000));
    assert!(crash.is_empty(), "past the decoder's depth the scan stops: {crash:?}");
}

/// A random JSON value that often has the shape of `descriptor` and sometimes not.
fn random_json(rng: &mut StdRng, descriptor: &MessageDescriptor, depth: usize) -> serde_json::Value {
    use serde_json::{Value as Json, json};
    let mut object = serde_json::Map::new();
    for field in descriptor.fields() {
        if !rng.random_bool(0.4) {
            continue;
        }
        let value = match (rng.random_range(0..10), field.kind()) {
            (0, _) => json!(rng.random::<i64>()),
            (1, _) => json!([random_text(rng), 1, null]),
            (2, _) => Json::Null,
            (_, Kind::Message(m)) if depth > 0 && !field.is_list() && !field.is_map() => {
                random_json(rng, &m, depth - 1)
            }
            (_, Kind::Message(_)) if field.is_map() => json!({ random_text(rng): random_text(rng) }),
            (_, Kind::String) if field.is_list() => json!([random_text(rng), random_text(rng)]),
            (_, Kind::String) => json!(random_text(rng)),
            (_, Kind::Bool) => json!(rng.random::<bool>()),
            (_, Kind::Enum(e)) => json!(e.values().next().map(|v| v.name().to_owned())),
            _ => json!(rng.random_range(-5i64..100_000)),
        };
        object.insert(if rng.random_bool(0.5) { field.json_name().to_owned() } else { field.name().to_owned() }, value);
    }
    if rng.random_bool(0.2) {
        object.insert(random_text(rng), json!({"x": [1, 2]}));
    }
    Json::Object(object)
}

fn deep_json(depth: usize) -> Vec<u8> {
    let mut text = String::from(r#"{"name": "deep", "policy": "#);
    text.push_str(&r#"{"k": "#.repeat(depth));
    text.push_str(&"}".repeat(depth + 1));
    text.into_bytes()
}

#[test]
fn decode_json_answers_every_body_with_a_message_or_a_bounded_error() {
    let requests = requests();
    let validator = Validator::from_pool(descriptor_pool()).unwrap();
    let mut rng = rng(2);
    let many_keys = format!("{{{}}}", (0..5_000).map(|i| format!("\"k{i}\":0")).collect::<Vec<_>>().join(","));
    let mut seeds = vec![deep_json(3_000), deep_json(100), many_keys.into_bytes(), b"{}".to_vec(), b"[]".to_vec()];
    for case in 0..cases() {
        let descriptor = &requests[rng.random_range(0..requests.len())];
        let mut body = if rng.random_bool(0.3) {
            seeds[rng.random_range(0..seeds.len())].clone()
        } else {
            random_json(&mut rng, descriptor, 3).to_string().into_bytes()
        };
        if rng.random_bool(0.5) {
            mutate(&mut rng, &mut body);
        }
        match decode_json(descriptor, &body, &validator) {
            Ok(message) => {
                // What was accepted reads back the same from its own JSON.
                let json = serde_json::to_value(&message).unwrap();
                let again = decode_json(descriptor, json.to_string().as_bytes(), &validator)
                    .unwrap_or_else(|error| panic!("case {case}: {json} was accepted, then refused: {error}"));
                assert_eq!(serde_json::to_value(&again).unwrap(), json, "case {case}");
            }
            Err(error) => {
                let fields = error.details.get("fields").and_then(|f| f.as_array()).map_or(0, Vec::len);
                assert!(fields <= MAX_VIOLATIONS, "case {case}: {fields} fields");
                assert!(error.message.len() < 64 * 1024, "case {case}: a {}-byte message", error.message.len());
            }
        }
        if case % 100 == 0 {
            seeds.push(body);
        }
    }
}

#[test]
fn the_validator_bounds_what_it_reports_and_finds_repeats_as_a_pairwise_scan_would() {
    let requests = requests();
    let validator = Validator::from_pool(descriptor_pool()).unwrap();
    let mut rng = rng(3);
    for case in 0..cases() {
        let descriptor = &requests[rng.random_range(0..requests.len())];
        let message = random_message(&mut rng, descriptor, 3);
        let found = validator.validate(&message);
        assert!(found.kept().len() <= MAX_VIOLATIONS, "case {case}");
    }

    // `unique`: the hash set agrees with comparing every pair, on small lists.
    let account = message("bettercompute.platform.v1.CreateAccountRequest");
    let zones = account.get_field_by_name("zones").unwrap();
    for case in 0..cases() {
        let items: Vec<String> =
            (0..rng.random_range(0..8)).map(|_| format!("us-central{}-a", rng.random_range(0..6))).collect();
        let pairwise = (1..items.len()).any(|i| items[..i].contains(&items[i]));
        let mut request = DynamicMessage::new(account.clone());
        request.set_field(&zones, Value::List(items.iter().cloned().map(Value::String).collect()));
        let said = validator.validate(&request).kept().iter().any(|v| v.description.contains("repeat"));
        assert_eq!(said, pairwise, "case {case}: {items:?}");
    }

    // The probe's 120k items: past `max_items`, one violation and nothing else looked at.
    let mut request = DynamicMessage::new(account.clone());
    request.set_field(&zones, Value::List((0..120_000).map(|i| Value::String(format!("z{i}"))).collect()));
    let found = validator.validate(&request);
    let on_zones: Vec<_> = found.kept().iter().filter(|v| v.field.starts_with("zones")).collect();
    assert_eq!(on_zones.len(), 1, "{on_zones:?}");
    assert!(on_zones[0].description.contains("at most 64 items (it has 120000)"), "{on_zones:?}");
}
