//! The digest of a create request, which tells a retry from another request reusing its
//! idempotency key. It is taken of the request message itself, so no field can be left out of
//! it: its idempotency key cleared, the defaults its fields document (`field_default`) filled
//! in, so that spelling out a default is the same request, and written in a canonical form
//! (JSON with sorted keys, empty fields left out), so that the order of a map's entries is not.

use prost_reflect::{DynamicMessage, Kind, MessageDescriptor, ReflectMessage, Value};
use sha2::{Digest as _, Sha256};

/// The field every create request names its idempotency key in.
const IDEMPOTENCY_KEY: &str = "idempotency_key";

/// What a create request's rows keep to recognise a retry: the digest of this release and,
/// for rows written before it, the digest they were written with.
#[derive(Clone, Debug)]
pub struct RequestDigest {
    /// The digest of the request as this release takes it.
    pub current: String,
    /// The digest an earlier release wrote for the same request, if it took another one.
    pub legacy: Option<String>,
}

impl RequestDigest {
    /// Whether a row with `stored` as its digest was made by this request.
    pub fn recognises(&self, stored: &str) -> bool {
        stored == self.current || self.legacy.as_deref() == Some(stored)
    }
}

/// The digest of `request`, whose message type is `full_name` in the API's descriptors.
pub fn of<M: prost::Message>(full_name: &str, request: &M) -> String {
    let pool = crate::proto::descriptor_pool();
    let descriptor = pool.get_message_by_name(full_name).unwrap_or_else(|| panic!("{full_name} is in the API"));
    let mut message = DynamicMessage::decode(descriptor, request.encode_to_vec().as_slice())
        .expect("a message decodes as its own type");
    message.clear_field_by_name(IDEMPOTENCY_KEY);
    fill_defaults(&mut message);
    let json = serde_json::to_value(&message).expect("a message serializes");
    let digest = Sha256::digest(canonical(&json).as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Sets every field left empty that documents a default to that default, in nested messages too.
fn fill_defaults(message: &mut DynamicMessage) {
    let descriptor: MessageDescriptor = message.descriptor();
    let extension = crate::proto::descriptor_pool().get_extension_by_name("bettercompute.options.v1.field_default");
    for field in descriptor.fields() {
        if let Kind::Message(_) = field.kind() {
            if !message.has_field(&field) {
                continue;
            }
            match message.get_field_mut(&field) {
                Value::Message(inner) => fill_defaults(inner),
                Value::List(items) => items.iter_mut().filter_map(Value::as_message_mut).for_each(fill_defaults),
                _ => {}
            }
            continue;
        }
        let Some(extension) = &extension else { continue };
        let options = field.options();
        if message.has_field(&field) || !options.has_extension(extension) {
            continue;
        }
        let default = options.get_extension(extension);
        let Some(text) = default.as_str().filter(|t| !t.is_empty()) else { continue };
        let value = match field.kind() {
            Kind::String => Value::String(text.to_owned()),
            Kind::Bool => Value::Bool(text == "true"),
            Kind::Int32 => Value::I32(text.parse().unwrap_or_default()),
            Kind::Int64 => Value::I64(text.parse().unwrap_or_default()),
            Kind::Enum(values) => match values.get_value_by_name(text) {
                Some(value) => Value::EnumNumber(value.number()),
                None => continue,
            },
            _ => continue,
        };
        message.set_field(&field, value);
    }
}

/// `value` as JSON text with every object's keys in order.
fn canonical(value: &serde_json::Value) -> String {
    fn sorted(value: &serde_json::Value) -> serde_json::Value {
        match value {
            serde_json::Value::Object(object) => {
                let mut keys: Vec<&String> = object.keys().collect();
                keys.sort();
                serde_json::Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&object[k]))).collect())
            }
            serde_json::Value::Array(items) => serde_json::Value::Array(items.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }
    sorted(value).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::compute::{CreateKubernetesClusterRequest, CreateKubernetesNodePoolRequest};

    const CLUSTER: &str = "bettercompute.compute.v1.CreateKubernetesClusterRequest";

    fn cluster(key: &str) -> CreateKubernetesClusterRequest {
        CreateKubernetesClusterRequest {
            tenant_id: "acme".into(),
            pool_id: "pool_0000000000000000000000gke1".into(),
            name: "web".into(),
            mode: "autopilot".into(),
            location: "europe-west1".into(),
            idempotency_key: key.into(),
            ..Default::default()
        }
    }

    #[test]
    fn the_key_is_not_part_of_the_request_and_a_spelled_out_default_is_the_same_request() {
        let plain = of(CLUSTER, &cluster("a"));
        assert_eq!(of(CLUSTER, &cluster("b")), plain);
        let spelled = CreateKubernetesClusterRequest { release_channel: "regular".into(), ..cluster("a") };
        assert_eq!(of(CLUSTER, &spelled), plain);
        let other = CreateKubernetesClusterRequest { release_channel: "stable".into(), ..cluster("a") };
        assert_ne!(of(CLUSTER, &other), plain);
    }

    #[test]
    fn every_field_counts_and_a_maps_order_does_not() {
        let plain = of(CLUSTER, &cluster("a"));
        let described = CreateKubernetesClusterRequest { description: "x".into(), ..cluster("a") };
        assert_ne!(of(CLUSTER, &described), plain);
        const POOL: &str = "bettercompute.compute.v1.CreateKubernetesNodePoolRequest";
        let labels = |pairs: &[(&str, &str)]| CreateKubernetesNodePoolRequest {
            labels: pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            ..Default::default()
        };
        let many: Vec<(String, String)> = (0..64).map(|i| (format!("k{i}"), format!("v{i}"))).collect();
        let forward: Vec<(&str, &str)> = many.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        let backward: Vec<(&str, &str)> = forward.iter().rev().copied().collect();
        assert_eq!(of(POOL, &labels(&forward)), of(POOL, &labels(&backward)));
        assert_ne!(of(POOL, &labels(&forward)), of(POOL, &labels(&forward[1..])));
    }

    #[test]
    fn a_row_of_an_earlier_release_is_recognised_by_its_own_digest() {
        let digest = RequestDigest { current: "new".into(), legacy: Some("old".into()) };
        assert!(digest.recognises("new") && digest.recognises("old") && !digest.recognises("other"));
    }
}
