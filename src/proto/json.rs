//! Messages as JSON, the one way the gateway, its event streams and `bcctl -o json` write them:
//! proto3's JSON mapping, with a number that holds an integer written as one (`2`, not `2.0`).
//!
//! A `google.protobuf.Struct` (an event's data, a pool's policy) carries every number as a
//! double, so an integer stored as `2` arrives as `2.0` whoever sent it; only the writer can give
//! it back its form, and every JSON a user reads comes from a message through here (the console
//! reads the gateway). Go's protojson writes integral doubles the same way.

use std::io;

use prost_reflect::{DynamicMessage, SerializeOptions};
use serde_json::Value;
use serde_json::ser::{CompactFormatter, Formatter};

/// 64-bit integers as numbers, every field written, defaults included.
const OPTIONS: SerializeOptions = SerializeOptions::new().stringify_64_bit_integers(false).skip_default_fields(false);

/// Integers within this bound are exact in a double; beyond it, a double is written as one.
const EXACT: f64 = 9_007_199_254_740_992.0;

/// serde_json's compact formatter, but an integral double is written without a fraction.
struct Integral;

impl Formatter for Integral {
    fn write_f64<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f64) -> io::Result<()> {
        if value.fract() == 0.0 && value.abs() <= EXACT {
            write!(writer, "{}", value as i64)
        } else {
            CompactFormatter.write_f64(writer, value)
        }
    }

    fn write_f32<W: ?Sized + io::Write>(&mut self, writer: &mut W, value: f32) -> io::Result<()> {
        self.write_f64(writer, f64::from(value))
    }
}

/// `message` as JSON, appended to `out`.
pub fn write(message: &DynamicMessage, out: &mut Vec<u8>) -> serde_json::Result<()> {
    message.serialize_with_options(&mut serde_json::Serializer::with_formatter(out, Integral), &OPTIONS)
}

/// `message` as a JSON value (its integers as integers, so any later writer keeps them).
pub fn to_value(message: &DynamicMessage) -> serde_json::Result<Value> {
    let mut bytes = Vec::new();
    write(message, &mut bytes)?;
    serde_json::from_slice(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message;

    fn struct_json(fields: &serde_json::Value) -> String {
        let data = crate::error::json_to_struct(fields.as_object().unwrap());
        let descriptor = crate::proto::descriptor_pool().get_message_by_name("google.protobuf.Struct").unwrap();
        let message = DynamicMessage::decode(descriptor, data.encode_to_vec().as_slice()).unwrap();
        let mut out = Vec::new();
        write(&message, &mut out).unwrap();
        assert_eq!(&to_value(&message).unwrap(), fields, "the value keeps the integers as well");
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn integers_in_a_struct_stay_integers_and_fractions_keep_theirs() {
        let fields = serde_json::json!({
            "version": 2, "ttlSeconds": 3600, "limits": {"maxMachines": 10, "share": 0.25},
            "big": 1e20, "negative": -3, "list": [1, 1.5]
        });
        let written = struct_json(&fields);
        // Number equality tells `2` from `2.0`.
        assert_eq!(serde_json::from_str::<Value>(&written).unwrap(), fields, "{written}");
        assert!(written.contains("\"maxMachines\":10,") || written.contains("\"maxMachines\":10}"), "{written}");
    }
}
