//! The scan of a binary request before it is decoded: names each field sent with a wire type
//! its declared type cannot have (a number where a string belongs, say) and each field number
//! the message does not have, so that neither reaches the decoder. It allocates only for what
//! it reports, follows nested messages no deeper than the decoder would, and reports at most
//! [`MAX_VIOLATIONS`](crate::error::MAX_VIOLATIONS) fields (counting the rest).

use bytes::Buf;
use prost::encoding::{DecodeContext, WireType, decode_key, decode_varint, skip_field};
use prost_reflect::{FieldDescriptor, Kind, MessageDescriptor};

use crate::error::{FieldViolation, Violations};

#[cfg(test)]
mod fuzz;

/// The deepest nesting the scan follows: prost's decoder refuses messages nested deeper (its
/// recursion limit), with its own message.
pub const MAX_DEPTH: usize = 100;

/// The fields of `bytes` that are mistyped or unknown to `descriptor`, searched into nested
/// messages, with their paths by JSON names (`policy.fields.#7`). A malformed encoding ends
/// the scan: the decoder names it.
pub fn scan(descriptor: &MessageDescriptor, bytes: &[u8]) -> Violations {
    let mut found = Violations::new();
    scan_message(descriptor, bytes, 1, &mut Vec::new(), &mut found);
    found
}

/// Scans one message; false when its encoding is malformed.
fn scan_message(
    descriptor: &MessageDescriptor,
    mut buf: &[u8],
    depth: usize,
    path: &mut Vec<FieldDescriptor>,
    found: &mut Violations,
) -> bool {
    while buf.has_remaining() {
        let Ok((number, wire_type)) = decode_key(&mut buf) else { return false };
        let start = buf;
        if skip_field(wire_type, number, &mut buf, DecodeContext::default()).is_err() {
            return false;
        }
        let Some(field) = descriptor.get_field(number) else {
            found.push_with(|| {
                FieldViolation::new(
                    path_of(path, &format!("#{number}")),
                    format!("is not a field of {}", descriptor.name()),
                )
            });
            continue;
        };
        let kind = field.kind();
        let expected = wire_type_of(&kind);
        // Repeated numbers may also come packed.
        let packed_ok = field.is_list() && wire_type == WireType::LengthDelimited;
        if wire_type != expected && !packed_ok {
            found.push_with(|| {
                FieldViolation::new(
                    path_of(path, field.json_name()),
                    format!("has the wrong type: sent as {}, declared {}", describe(wire_type), describe_kind(&kind)),
                )
            });
            continue;
        }
        if let (Kind::Message(inner), WireType::LengthDelimited) = (&kind, wire_type)
            && depth < MAX_DEPTH
        {
            let mut body = start;
            let Ok(len) = decode_varint(&mut body) else { return false };
            let Some(body) = usize::try_from(len).ok().and_then(|len| body.get(..len)) else { return false };
            path.push(field);
            let well_formed = scan_message(inner, body, depth + 1, path, found);
            path.pop();
            if !well_formed {
                return false;
            }
        }
    }
    true
}

/// The JSON path of `leaf` under the fields in `path`; built only for a field reported.
fn path_of(path: &[FieldDescriptor], leaf: &str) -> String {
    let mut text = String::new();
    for field in path {
        text.push_str(field.json_name());
        text.push('.');
    }
    text.push_str(leaf);
    text
}

fn wire_type_of(kind: &Kind) -> WireType {
    match kind {
        Kind::Int32
        | Kind::Int64
        | Kind::Uint32
        | Kind::Uint64
        | Kind::Sint32
        | Kind::Sint64
        | Kind::Bool
        | Kind::Enum(_) => WireType::Varint,
        Kind::Fixed64 | Kind::Sfixed64 | Kind::Double => WireType::SixtyFourBit,
        Kind::Fixed32 | Kind::Sfixed32 | Kind::Float => WireType::ThirtyTwoBit,
        Kind::String | Kind::Bytes | Kind::Message(_) => WireType::LengthDelimited,
    }
}

fn describe(wire_type: WireType) -> &'static str {
    match wire_type {
        WireType::Varint => "an integer",
        WireType::SixtyFourBit => "a 64-bit number",
        WireType::ThirtyTwoBit => "a 32-bit number",
        WireType::LengthDelimited => "bytes",
        WireType::StartGroup | WireType::EndGroup => "a group",
    }
}

fn describe_kind(kind: &Kind) -> String {
    match kind {
        Kind::String => "a string".to_owned(),
        Kind::Bytes => "bytes".to_owned(),
        Kind::Bool => "a boolean".to_owned(),
        Kind::Message(message) => format!("a {}", message.name()),
        Kind::Enum(e) => format!("a {}", e.name()),
        Kind::Float | Kind::Double => "a number".to_owned(),
        _ => "an integer".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::descriptor_pool;

    #[test]
    fn a_number_sent_for_a_string_is_named() {
        let descriptor =
            descriptor_pool().get_message_by_name("bettercompute.platform.v1.UpdateTenantRequest").unwrap();
        // Field 1 (tenantId) is fine; field 2 (displayName) arrives as a varint.
        let bytes = [0x0a, 0x01, b'a', 0x10, 0x05];
        let found = scan(&descriptor, &bytes);
        let violation = &found.kept()[0];
        assert_eq!(violation.field, "displayName");
        assert!(violation.description.contains("sent as an integer, declared a string"), "{}", violation.description);
        assert!(scan(&descriptor, &bytes[..3]).is_empty());
    }
}
