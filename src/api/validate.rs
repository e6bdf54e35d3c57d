//! The request validator: evaluates the `buf.validate` rules written on the fields of `proto/`,
//! read from the descriptors, so every constraint is enforced once for gRPC, gRPC-web and JSON.
//!
//! It evaluates the subset of protovalidate the API uses: `required`; string lengths, `pattern`,
//! `in`/`not_in`, `const` and the IP and CIDR formats; numeric ranges, `in` and `const`;
//! repeated and map sizes with rules on their items; enum `defined_only` and `in`. Building it
//! fails on any other rule, so a rule written in a proto is never silently ignored.
//!
//! A field that is not set (absent, or at its zero value when it has no presence) is skipped
//! unless `required`: the reference pages' optional fields are constrained only when given.

use std::borrow::Cow;
use std::collections::{HashMap, HashSet};
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

use prost_reflect::{DescriptorPool, DynamicMessage, FieldDescriptor, Kind, MapKey, ReflectMessage, Value};
use regex::Regex;

use crate::error::{FieldViolation, Violations};

/// Rules of one field (or of the items of a list, or the keys or values of a map). The OpenAPI
/// document reads them too (`super::openapi`), so a rule is read from the descriptors once.
#[derive(Debug, Default)]
pub(crate) struct FieldRules {
    pub(crate) required: bool,
    pub(crate) scalar: Vec<ScalarRule>,
    pub(crate) list: Option<Box<SizeRules>>,
    pub(crate) map: Option<Box<MapRules>>,
}

#[derive(Debug)]
pub(crate) struct SizeRules {
    pub(crate) min: Option<u64>,
    pub(crate) max: Option<u64>,
    pub(crate) unique: bool,
    pub(crate) items: FieldRules,
}

#[derive(Debug)]
pub(crate) struct MapRules {
    pub(crate) min: Option<u64>,
    pub(crate) max: Option<u64>,
    pub(crate) keys: FieldRules,
    pub(crate) values: FieldRules,
}

#[derive(Debug)]
pub(crate) enum ScalarRule {
    MinLen(u64),
    MaxLen(u64),
    Len(u64),
    Pattern(Regex),
    StringIn(Vec<String>),
    StringNotIn(Vec<String>),
    StringConst(String),
    Format(Format),
    Min { bound: f64, inclusive: bool },
    Max { bound: f64, inclusive: bool },
    NumberIn(Vec<f64>),
    NumberNotIn(Vec<f64>),
    NumberConst(f64),
    BoolConst(bool),
    EnumDefined,
}

#[derive(Clone, Copy, Debug)]
pub(crate) enum Format {
    Ip,
    Ipv4,
    Ipv6,
    IpPrefix,
    Ipv4Prefix,
    Ipv6Prefix,
    /// An IPv4 address with a prefix length, host bits allowed (`10.0.0.5/24`).
    Ipv4WithPrefixLen,
}

/// The validator over every message of a descriptor pool.
#[derive(Debug, Default)]
pub struct Validator {
    /// The rules of each field, by message full name.
    messages: HashMap<String, Vec<(FieldDescriptor, FieldRules)>>,
}

impl Validator {
    /// Reads the rules of every message in `pool`. Fails on a rule it cannot evaluate.
    pub fn from_pool(pool: &DescriptorPool) -> Result<Self, String> {
        let Some(extension) = pool.get_extension_by_name("buf.validate.field") else {
            return Ok(Self::default());
        };
        let mut messages = HashMap::new();
        let mut unsupported = Vec::new();
        for message in pool.all_messages() {
            if message.full_name().starts_with("google.") || message.full_name().starts_with("buf.") {
                continue;
            }
            let mut fields = Vec::new();
            for field in message.fields() {
                let options = field.options();
                if !options.has_extension(&extension) {
                    fields.push((field, FieldRules::default()));
                    continue;
                }
                let Value::Message(rules) = options.get_extension(&extension).into_owned() else { continue };
                let path = format!("{}.{}", message.full_name(), field.name());
                fields.push((field, compile_field_rules(&rules, &path, &mut unsupported)));
            }
            messages.insert(message.full_name().to_owned(), fields);
        }
        if unsupported.is_empty() {
            Ok(Self { messages })
        } else {
            Err(format!("buf.validate rules the validator does not evaluate: {}", unsupported.join(", ")))
        }
    }

    /// The rules of each field of the message named `full_name` (none for `google.*` and `buf.*`).
    pub(crate) fn rules_of(&self, full_name: &str) -> Option<&[(FieldDescriptor, FieldRules)]> {
        self.messages.get(full_name).map(Vec::as_slice)
    }

    /// The violations in `message` (the first [`MAX_VIOLATIONS`](crate::error::MAX_VIOLATIONS),
    /// counting the rest), with field paths by JSON names (`nodePools[2].nodeCount`).
    pub fn validate(&self, message: &DynamicMessage) -> Violations {
        let mut out = Violations::new();
        let masked = super::update_mask::paths(message);
        self.check_message(message, "", &masked, &mut out);
        out
    }

    /// The violations of the top-level fields of `message` named (by proto name) in `names`
    /// that are set; the others are not looked at.
    pub fn validate_fields(&self, message: &DynamicMessage, names: &[&str]) -> Violations {
        let mut out = Violations::new();
        let Some(fields) = self.messages.get(message.descriptor().full_name()) else { return out };
        for (field, rules) in fields.iter().filter(|(field, _)| names.contains(&field.name())) {
            if message.has_field(field) {
                let value = message.get_field(field);
                self.check_value(&value, field, &field.kind(), rules, field.json_name(), &mut out);
            }
        }
        out
    }

    /// `masked` names the top-level fields an update's mask sets: a list or map named there is
    /// held to its size rules even when empty (`[]` clears it, and `min_items` can refuse that).
    fn check_message(&self, message: &DynamicMessage, path: &str, masked: &[String], out: &mut Violations) {
        for unknown in message.unknown_fields() {
            out.push_with(|| {
                FieldViolation::new(
                    join(path, &format!("#{}", unknown.number())),
                    format!("is not a field of {}", message.descriptor().name()),
                )
            });
        }
        let Some(fields) = self.messages.get(message.descriptor().full_name()) else { return };
        for (field, rules) in fields {
            let field_path = join(path, field.json_name());
            if !message.has_field(field) {
                if rules.required {
                    out.push(FieldViolation::new(field_path, "is required"));
                } else if (field.is_list() || field.is_map()) && masked.iter().any(|m| m == field.name()) {
                    self.check_value(&message.get_field(field), field, &field.kind(), rules, &field_path, out);
                }
                continue;
            }
            let value = message.get_field(field);
            self.check_value(&value, field, &field.kind(), rules, &field_path, out);
        }
    }

    fn check_value(
        &self,
        value: &Value,
        field: &FieldDescriptor,
        kind: &Kind,
        rules: &FieldRules,
        path: &str,
        out: &mut Violations,
    ) {
        match value {
            Value::List(items) => {
                if let Some(list) = &rules.list {
                    // Past `max_items` the size is the answer: the items are not looked at.
                    if !check_size(items.len() as u64, list.min, list.max, "items", path, out) {
                        return;
                    }
                    if list.unique && repeats(items) {
                        out.push(FieldViolation::new(path, "must not repeat an item"));
                    }
                }
                let item_rules = rules.list.as_ref().map(|l| &l.items);
                for (index, item) in items.iter().enumerate() {
                    let item_path = format!("{path}[{index}]");
                    self.check_item(item, field, kind, item_rules, &item_path, out);
                }
            }
            Value::Map(entries) => {
                let Kind::Message(entry) = kind else { return };
                let value_kind = entry.map_entry_value_field().kind();
                if let Some(map) = &rules.map
                    && !check_size(entries.len() as u64, map.min, map.max, "entries", path, out)
                {
                    return;
                }
                for (key, item) in entries {
                    let key_text = match key {
                        MapKey::String(s) => s.clone(),
                        other => format!("{other:?}"),
                    };
                    let item_path = format!("{path}[{key_text:?}]");
                    if let Some(map) = &rules.map {
                        let key_value = map_key_value(key);
                        check_scalar(&key_value, &map.keys.scalar, field, &format!("{item_path} (key)"), out);
                    }
                    self.check_item(item, field, &value_kind, rules.map.as_ref().map(|m| &m.values), &item_path, out);
                }
            }
            _ => self.check_item(value, field, kind, Some(rules), path, out),
        }
    }

    fn check_item(
        &self,
        value: &Value,
        field: &FieldDescriptor,
        kind: &Kind,
        rules: Option<&FieldRules>,
        path: &str,
        out: &mut Violations,
    ) {
        // No store keeps NUL in text (Postgres refuses it), so no field may carry one.
        if value.as_str().is_some_and(|text| text.contains('\0')) {
            out.push(FieldViolation::new(path, "must not contain NUL (U+0000) characters"));
        }
        if let Some(rules) = rules {
            check_scalar(value, &rules.scalar, field, path, out);
        }
        if let (Value::Message(message), Kind::Message(_)) = (value, kind) {
            self.check_message(message, path, &[], out);
        }
    }
}

impl FieldRules {
    /// Whether these scalar rules refuse `value` in `field`: the OpenAPI document asks whether a
    /// field left at its zero value (which the validator skips) would break them if checked.
    pub(crate) fn scalar_refuses(&self, value: &Value, field: &FieldDescriptor) -> bool {
        let mut out = Violations::new();
        check_scalar(value, &self.scalar, field, "", &mut out);
        !out.is_empty()
    }
}

fn join(path: &str, name: &str) -> String {
    if path.is_empty() { name.to_owned() } else { format!("{path}.{name}") }
}

fn map_key_value(key: &MapKey) -> Value {
    match key {
        MapKey::Bool(b) => Value::Bool(*b),
        MapKey::I32(v) => Value::I32(*v),
        MapKey::I64(v) => Value::I64(*v),
        MapKey::U32(v) => Value::U32(*v),
        MapKey::U64(v) => Value::U64(*v),
        MapKey::String(s) => Value::String(s.clone()),
    }
}

/// Whether `items` holds one item twice (text and numbers alike, by their value).
fn repeats(items: &[Value]) -> bool {
    let mut seen = HashSet::with_capacity(items.len());
    items.iter().any(|item| {
        let key = match item {
            Value::String(text) => Cow::Borrowed(text.as_str()),
            other => Cow::Owned(format!("{other:?}")),
        };
        !seen.insert(key)
    })
}

/// Checks a list's or a map's size; false when it is over `max` (nothing else about it is
/// worth looking at then).
fn check_size(len: u64, min: Option<u64>, max: Option<u64>, noun: &str, path: &str, out: &mut Violations) -> bool {
    match (min, max) {
        (Some(min), Some(max)) if len < min || len > max => {
            out.push(FieldViolation::new(path, format!("must have {min} to {max} {noun} (it has {len})")))
        }
        (Some(min), None) if len < min => {
            out.push(FieldViolation::new(path, format!("must have at least {min} {noun} (it has {len})")))
        }
        (None, Some(max)) if len > max => {
            out.push(FieldViolation::new(path, format!("must have at most {max} {noun} (it has {len})")))
        }
        _ => {}
    }
    max.is_none_or(|max| len <= max)
}

fn number_of(value: &Value) -> Option<f64> {
    Some(match value {
        Value::I32(v) => f64::from(*v),
        Value::I64(v) => *v as f64,
        Value::U32(v) => f64::from(*v),
        Value::U64(v) => *v as f64,
        Value::F32(v) => f64::from(*v),
        Value::F64(v) => *v,
        Value::EnumNumber(v) => f64::from(*v),
        _ => return None,
    })
}

fn show(number: f64) -> String {
    if number.fract() == 0.0 { format!("{}", number as i64) } else { number.to_string() }
}

fn check_scalar(value: &Value, rules: &[ScalarRule], field: &FieldDescriptor, path: &str, out: &mut Violations) {
    let text = value.as_str();
    let number = number_of(value);
    let mut fail = |description: String| out.push(FieldViolation::new(path, description));
    // Range rules read better as one sentence: "must be from 0 to 1000".
    let min = rules.iter().find_map(|r| match r {
        ScalarRule::Min { bound, inclusive } => Some((*bound, *inclusive)),
        _ => None,
    });
    let max = rules.iter().find_map(|r| match r {
        ScalarRule::Max { bound, inclusive } => Some((*bound, *inclusive)),
        _ => None,
    });
    if let Some(n) = number {
        let below = min.is_some_and(|(b, inclusive)| if inclusive { n < b } else { n <= b });
        let above = max.is_some_and(|(b, inclusive)| if inclusive { n > b } else { n >= b });
        if below || above {
            let got = show(n);
            fail(match (min, max) {
                (Some((lo, true)), Some((hi, true))) => {
                    format!("must be from {} to {} (got {got})", show(lo), show(hi))
                }
                _ => {
                    let mut parts = Vec::new();
                    if let Some((lo, inclusive)) = min {
                        parts.push(format!("{} {}", if inclusive { "at least" } else { "greater than" }, show(lo)));
                    }
                    if let Some((hi, inclusive)) = max {
                        parts.push(format!("{} {}", if inclusive { "at most" } else { "less than" }, show(hi)));
                    }
                    format!("must be {} (got {got})", parts.join(" and "))
                }
            });
        }
    }
    for rule in rules {
        match (rule, text, number) {
            (ScalarRule::MinLen(min), Some(s), _) if (s.chars().count() as u64) < *min => {
                fail(format!("must be at least {min} characters long (it has {})", s.chars().count()))
            }
            (ScalarRule::MaxLen(max), Some(s), _) if s.chars().count() as u64 > *max => {
                fail(format!("must be at most {max} characters long (it has {})", s.chars().count()))
            }
            (ScalarRule::Len(len), Some(s), _) if s.chars().count() as u64 != *len => {
                fail(format!("must be exactly {len} characters long (it has {})", s.chars().count()))
            }
            (ScalarRule::Pattern(regex), Some(s), _) if !regex.is_match(s) => {
                fail(format!("must match {} (got {:?})", regex.as_str(), echo(s)))
            }
            (ScalarRule::StringIn(allowed), Some(s), _) if !allowed.iter().any(|a| a == s) => {
                fail(format!("must be one of {} (got {:?})", allowed.join(", "), echo(s)))
            }
            (ScalarRule::StringNotIn(refused), Some(s), _) if refused.iter().any(|a| a == s) => {
                fail(format!("must not be {s:?}"))
            }
            (ScalarRule::StringConst(expected), Some(s), _) if s != expected => fail(format!("must be {expected:?}")),
            (ScalarRule::Format(format), Some(s), _) if !format.accepts(s) => fail(format.describe().to_owned()),
            (ScalarRule::NumberIn(allowed), _, Some(n)) if !allowed.contains(&n) => fail(format!(
                "must be one of {} (got {})",
                allowed.iter().map(|a| show(*a)).collect::<Vec<_>>().join(", "),
                show(n)
            )),
            (ScalarRule::NumberNotIn(refused), _, Some(n)) if refused.contains(&n) => {
                fail(format!("must not be {}", show(n)))
            }
            (ScalarRule::NumberConst(expected), _, Some(n)) if n != *expected => {
                fail(format!("must be {}", show(*expected)))
            }
            (ScalarRule::BoolConst(expected), _, _) if value.as_bool() != Some(*expected) => {
                fail(format!("must be {expected}"))
            }
            (ScalarRule::EnumDefined, _, _) => {
                if let (Value::EnumNumber(n), Kind::Enum(e)) = (value, field.kind())
                    && e.get_value(*n).is_none()
                {
                    {
                        fail(format!(
                            "must be one of {}",
                            e.values().map(|v| v.name().to_owned()).collect::<Vec<_>>().join(", ")
                        ));
                    }
                }
            }
            _ => {}
        }
    }
}

/// A value as quoted back in a message: long ones are cut.
fn echo(text: &str) -> String {
    const MAX: usize = 48;
    if text.chars().count() <= MAX {
        text.to_owned()
    } else {
        format!("{}...", text.chars().take(MAX).collect::<String>())
    }
}

impl Format {
    fn accepts(self, text: &str) -> bool {
        match self {
            Format::Ip => text.parse::<IpAddr>().is_ok(),
            Format::Ipv4 => text.parse::<Ipv4Addr>().is_ok(),
            Format::Ipv6 => text.parse::<Ipv6Addr>().is_ok(),
            Format::IpPrefix => parse_prefix(text).is_some(),
            Format::Ipv4Prefix => parse_prefix(text).is_some_and(|ip| ip.is_ipv4()),
            Format::Ipv6Prefix => parse_prefix(text).is_some_and(|ip| ip.is_ipv6()),
            Format::Ipv4WithPrefixLen => crate::domain::cidr::mask_ipv4_prefix(text).is_some(),
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Format::Ip => "must be an IP address",
            Format::Ipv4 => "must be an IPv4 address such as 203.0.113.7",
            Format::Ipv6 => "must be an IPv6 address",
            Format::IpPrefix => "must be a CIDR block with its host bits zero, such as 10.0.0.0/16",
            Format::Ipv4Prefix => "must be an IPv4 CIDR block with its host bits zero, such as 10.0.0.0/16",
            Format::Ipv6Prefix => "must be an IPv6 CIDR block with its host bits zero, such as 2001:db8::/32",
            Format::Ipv4WithPrefixLen => "must be an IPv4 address with a prefix length, such as 203.0.113.0/24",
        }
    }
}

/// Parses `address/length` where the address has no bits set past the prefix.
pub fn parse_prefix(text: &str) -> Option<IpAddr> {
    let (address, length) = text.split_once('/')?;
    if length.is_empty() || length.len() > 3 || !length.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let length: u32 = length.parse().ok()?;
    let address: IpAddr = address.parse().ok()?;
    let host_bits_zero = match address {
        IpAddr::V4(v4) if length <= 32 => u32::from(v4).checked_shl(length).unwrap_or(0) == 0,
        IpAddr::V6(v6) if length <= 128 => u128::from(v6).checked_shl(length).unwrap_or(0) == 0,
        _ => false,
    };
    host_bits_zero.then_some(address)
}

fn compile_field_rules(rules: &DynamicMessage, path: &str, unsupported: &mut Vec<String>) -> FieldRules {
    let mut compiled = FieldRules::default();
    for (field, value) in rules.fields() {
        match (field.name(), value) {
            ("required", Value::Bool(required)) => compiled.required = *required,
            ("repeated", Value::Message(list)) => {
                let mut size = SizeRules { min: None, max: None, unique: false, items: FieldRules::default() };
                for (rule, value) in list.fields() {
                    match (rule.name(), value) {
                        ("min_items", Value::U64(n)) => size.min = Some(*n),
                        ("max_items", Value::U64(n)) => size.max = Some(*n),
                        ("unique", Value::Bool(b)) => size.unique = *b,
                        ("items", Value::Message(items)) => {
                            size.items = compile_field_rules(items, &format!("{path}[]"), unsupported)
                        }
                        (other, _) => unsupported.push(format!("{path}: repeated.{other}")),
                    }
                }
                compiled.list = Some(Box::new(size));
            }
            ("map", Value::Message(map)) => {
                let mut rules =
                    MapRules { min: None, max: None, keys: FieldRules::default(), values: FieldRules::default() };
                for (rule, value) in map.fields() {
                    match (rule.name(), value) {
                        ("min_pairs", Value::U64(n)) => rules.min = Some(*n),
                        ("max_pairs", Value::U64(n)) => rules.max = Some(*n),
                        ("keys", Value::Message(keys)) => {
                            rules.keys = compile_field_rules(keys, &format!("{path}{{}}"), unsupported)
                        }
                        ("values", Value::Message(values)) => {
                            rules.values = compile_field_rules(values, &format!("{path}{{}}"), unsupported)
                        }
                        (other, _) => unsupported.push(format!("{path}: map.{other}")),
                    }
                }
                compiled.map = Some(Box::new(rules));
            }
            ("string", Value::Message(string)) => compile_string_rules(string, path, &mut compiled, unsupported),
            ("enum", Value::Message(rules)) => {
                for (rule, value) in rules.fields() {
                    match (rule.name(), value) {
                        ("defined_only", Value::Bool(true)) => compiled.scalar.push(ScalarRule::EnumDefined),
                        ("defined_only", Value::Bool(false)) => {}
                        ("in", Value::List(items)) => {
                            compiled.scalar.push(ScalarRule::NumberIn(items.iter().filter_map(number_of).collect()))
                        }
                        ("not_in", Value::List(items)) => {
                            compiled.scalar.push(ScalarRule::NumberNotIn(items.iter().filter_map(number_of).collect()))
                        }
                        (other, _) => unsupported.push(format!("{path}: enum.{other}")),
                    }
                }
            }
            ("bool", Value::Message(rules)) => {
                for (rule, value) in rules.fields() {
                    match (rule.name(), value) {
                        ("const", Value::Bool(b)) => compiled.scalar.push(ScalarRule::BoolConst(*b)),
                        (other, _) => unsupported.push(format!("{path}: bool.{other}")),
                    }
                }
            }
            (
                "int32" | "int64" | "uint32" | "uint64" | "sint32" | "sint64" | "fixed32" | "fixed64" | "sfixed32"
                | "sfixed64" | "float" | "double",
                Value::Message(rules),
            ) => {
                let kind = field.name();
                for (rule, value) in rules.fields() {
                    match (rule.name(), value) {
                        ("gte", v) => push_bound(&mut compiled, v, true, true),
                        ("gt", v) => push_bound(&mut compiled, v, true, false),
                        ("lte", v) => push_bound(&mut compiled, v, false, true),
                        ("lt", v) => push_bound(&mut compiled, v, false, false),
                        ("const", v) => compiled.scalar.extend(number_of(v).map(ScalarRule::NumberConst)),
                        ("in", Value::List(items)) => {
                            compiled.scalar.push(ScalarRule::NumberIn(items.iter().filter_map(number_of).collect()))
                        }
                        ("not_in", Value::List(items)) => {
                            compiled.scalar.push(ScalarRule::NumberNotIn(items.iter().filter_map(number_of).collect()))
                        }
                        (other, _) => unsupported.push(format!("{path}: {kind}.{other}")),
                    }
                }
            }
            (other, _) => unsupported.push(format!("{path}: {other}")),
        }
    }
    compiled
}

fn push_bound(compiled: &mut FieldRules, value: &Value, lower: bool, inclusive: bool) {
    if let Some(bound) = number_of(value) {
        compiled.scalar.push(if lower {
            ScalarRule::Min { bound, inclusive }
        } else {
            ScalarRule::Max { bound, inclusive }
        });
    }
}

fn compile_string_rules(rules: &DynamicMessage, path: &str, compiled: &mut FieldRules, unsupported: &mut Vec<String>) {
    for (rule, value) in rules.fields() {
        let strings = |value: &Value| -> Vec<String> {
            value.as_list().unwrap_or_default().iter().filter_map(|v| v.as_str().map(str::to_owned)).collect()
        };
        let format = match rule.name() {
            "ip" => Some(Format::Ip),
            "ipv4" => Some(Format::Ipv4),
            "ipv6" => Some(Format::Ipv6),
            "ip_prefix" => Some(Format::IpPrefix),
            "ipv4_prefix" => Some(Format::Ipv4Prefix),
            "ipv6_prefix" => Some(Format::Ipv6Prefix),
            "ipv4_with_prefixlen" => Some(Format::Ipv4WithPrefixLen),
            _ => None,
        };
        if let Some(format) = format {
            if value.as_bool() == Some(true) {
                compiled.scalar.push(ScalarRule::Format(format));
            }
            continue;
        }
        match (rule.name(), value) {
            ("min_len", Value::U64(n)) => compiled.scalar.push(ScalarRule::MinLen(*n)),
            ("max_len", Value::U64(n)) => compiled.scalar.push(ScalarRule::MaxLen(*n)),
            ("len", Value::U64(n)) => compiled.scalar.push(ScalarRule::Len(*n)),
            ("pattern", Value::String(pattern)) => match shared_regex(pattern) {
                Ok(regex) => compiled.scalar.push(ScalarRule::Pattern(regex)),
                Err(error) => unsupported.push(format!("{path}: pattern {pattern:?} ({error})")),
            },
            ("in", v) => compiled.scalar.push(ScalarRule::StringIn(strings(v))),
            ("not_in", v) => compiled.scalar.push(ScalarRule::StringNotIn(strings(v))),
            ("const", Value::String(s)) => compiled.scalar.push(ScalarRule::StringConst(s.clone())),
            (other, _) => unsupported.push(format!("{path}: string.{other}")),
        }
    }
}

/// The compiled `pattern`, compiled once per process: the API's fields share a few dozen
/// patterns among some three hundred rules (every request's tenant id has the same one), and a
/// compiled pattern holds tens of kilobytes. A `Regex` clone shares its compiled program.
fn shared_regex(pattern: &str) -> Result<Regex, regex::Error> {
    static COMPILED: std::sync::OnceLock<std::sync::Mutex<HashMap<String, Regex>>> = std::sync::OnceLock::new();
    let compiled = COMPILED.get_or_init(Default::default);
    let mut compiled = compiled.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(regex) = compiled.get(pattern) {
        return Ok(regex.clone());
    }
    let regex = Regex::new(pattern)?;
    compiled.insert(pattern.to_owned(), regex.clone());
    Ok(regex)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::descriptor_pool;

    fn validator() -> Validator {
        Validator::from_pool(descriptor_pool()).expect("every rule in proto/ is evaluated")
    }

    fn message(name: &str, json: serde_json::Value) -> DynamicMessage {
        let desc = descriptor_pool().get_message_by_name(name).unwrap();
        DynamicMessage::deserialize(desc, json).unwrap()
    }

    #[test]
    fn every_rule_in_the_protos_is_understood() {
        validator();
    }

    #[test]
    fn required_length_and_pattern_are_enforced_with_json_paths() {
        let v = validator();
        let ok = message("bettercompute.platform.v1.CreateTenantRequest", serde_json::json!({"id": "acme"}));
        assert!(v.validate(&ok).is_empty());
        let missing = message("bettercompute.platform.v1.CreateTenantRequest", serde_json::json!({}));
        assert_eq!(v.validate(&missing).kept(), [FieldViolation::new("id", "is required")]);
        let bad = message(
            "bettercompute.platform.v1.CreateTenantRequest",
            serde_json::json!({"id": "no spaces", "displayName": "x".repeat(129)}),
        );
        let violations = v.validate(&bad).kept().to_vec();
        assert_eq!(violations.len(), 2, "{violations:?}");
        assert_eq!(violations[0].field, "id");
        assert!(violations[0].description.contains("must match"));
        assert_eq!(violations[1].field, "displayName");
        assert!(violations[1].description.contains("at most 128 characters"));
    }

    #[test]
    fn optional_fields_are_checked_only_when_present() {
        let v = validator();
        let absent = message("bettercompute.platform.v1.UpdateTenantRequest", serde_json::json!({"tenantId": "acme"}));
        assert!(v.validate(&absent).is_empty());
        let long = message(
            "bettercompute.platform.v1.UpdateTenantRequest",
            serde_json::json!({"tenantId": "acme", "description": "d".repeat(257)}),
        );
        assert_eq!(v.validate(&long).kept()[0].field, "description");
    }

    #[test]
    fn nul_characters_are_refused_in_every_string() {
        let v = validator();
        let nul = message(
            "bettercompute.platform.v1.CreateTenantRequest",
            serde_json::json!({"id": "acme", "description": "a\u{0}b"}),
        );
        let violations = v.validate(&nul).kept().to_vec();
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].field, "description");
        assert!(violations[0].description.contains("NUL"));
    }

    #[test]
    fn cidr_prefixes_need_zero_host_bits() {
        assert!(parse_prefix("10.0.0.0/8").is_some());
        assert!(parse_prefix("0.0.0.0/0").is_some());
        assert!(parse_prefix("10.0.0.1/8").is_none());
        assert!(parse_prefix("10.0.0.0/33").is_none());
        assert!(parse_prefix("10.0.0.0").is_none());
        assert!(parse_prefix("2001:db8::/32").is_some());
        assert!(parse_prefix("2001:db8::1/32").is_none());
    }
}
