//! Naming the field of a binary request that does not decode: a field sent with a wire type
//! its declared type cannot have (a number where a string belongs, say).

use bytes::Buf;
use prost::encoding::{DecodeContext, WireType, decode_key, skip_field};
use prost_reflect::{Kind, MessageDescriptor};

use crate::error::FieldViolation;

/// The first field of `bytes` whose wire type does not fit its declaration in `descriptor`,
/// searched into nested messages, with its path by JSON names.
pub fn find_mistyped_field(descriptor: &MessageDescriptor, bytes: &[u8]) -> Option<FieldViolation> {
    find_in(descriptor, bytes, "")
}

fn find_in(descriptor: &MessageDescriptor, mut buf: &[u8], path: &str) -> Option<FieldViolation> {
    while buf.has_remaining() {
        let (number, wire_type) = decode_key(&mut buf).ok()?;
        let start = buf;
        skip_field(wire_type, number, &mut buf, DecodeContext::default()).ok()?;
        let Some(field) = descriptor.get_field(number) else { continue };
        let name = if path.is_empty() { field.json_name().to_owned() } else { format!("{path}.{}", field.json_name()) };
        let kind = field.kind();
        let expected = wire_type_of(&kind);
        // Repeated numbers may also come packed.
        let packed_ok = field.is_list() && wire_type == WireType::LengthDelimited;
        if wire_type != expected && !packed_ok {
            return Some(FieldViolation::new(
                name,
                format!("has the wrong type: sent as {}, declared {}", describe(wire_type), describe_kind(&kind)),
            ));
        }
        if let (Kind::Message(inner), WireType::LengthDelimited) = (&kind, wire_type) {
            let mut body = start;
            let len = prost::encoding::decode_varint(&mut body).ok()? as usize;
            if let Some(found) = find_in(inner, body.get(..len)?, &name) {
                return Some(found);
            }
        }
    }
    None
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
        let violation = find_mistyped_field(&descriptor, &bytes).unwrap();
        assert_eq!(violation.field, "displayName");
        assert!(violation.description.contains("sent as an integer, declared a string"), "{}", violation.description);
        assert!(find_mistyped_field(&descriptor, &bytes[..3]).is_none());
    }
}
