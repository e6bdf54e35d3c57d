//! The `update_mask` of update requests: which fields an update sets. Proto3 cannot tell an empty
//! list from an absent one, so the mask says it: the JSON gateway fills it from the body's keys
//! (a key given as `[]` or `null` is named), a gRPC caller sets it or leaves it to the fields it
//! gave a value. Either way it reaches the service filled and checked, by proto names, so a
//! service only asks whether a field is named.

use prost_reflect::{DynamicMessage, FieldDescriptor, Kind, MessageDescriptor, ReflectMessage, Value};

use super::validate::Validator;
use crate::error::{FieldViolation, Violations};

/// The mask's field in every update request.
pub const FIELD: &str = "update_mask";

/// The field that makes a call a rehearsal: it says how the call is made, not what it sets.
pub const VALIDATE_ONLY: &str = "validate_only";

/// The mask field of `descriptor`, when its message is an update request.
fn mask_field(descriptor: &MessageDescriptor) -> Option<FieldDescriptor> {
    let field = descriptor.get_field_by_name(FIELD)?;
    matches!(field.kind(), Kind::Message(m) if m.full_name() == "google.protobuf.FieldMask").then_some(field)
}

/// The paths of `message`'s mask, as given (none when the message has no mask).
pub fn paths(message: &DynamicMessage) -> Vec<String> {
    let Some(field) = mask_field(&message.descriptor()) else { return Vec::new() };
    if !message.has_field(&field) {
        return Vec::new();
    }
    match message.get_field(&field).as_ref() {
        Value::Message(mask) => match mask.get_field_by_name("paths").as_deref() {
            Some(Value::List(paths)) => paths.iter().filter_map(|p| p.as_str().map(str::to_owned)).collect(),
            _ => Vec::new(),
        },
        _ => Vec::new(),
    }
}

/// The fields a mask may name: every field but the mask and those that name the object (the
/// required ones: the tenant, the object's id).
fn maskable(descriptor: &MessageDescriptor, validator: &Validator) -> Vec<FieldDescriptor> {
    let required: Vec<String> = validator
        .rules_of(descriptor.full_name())
        .unwrap_or_default()
        .iter()
        .filter(|(_, rules)| rules.required)
        .map(|(field, _)| field.name().to_owned())
        .collect();
    descriptor
        .fields()
        .filter(|f| f.name() != FIELD && f.name() != VALIDATE_ONLY && !required.iter().any(|r| r == f.name()))
        .collect()
}

fn set_paths(message: &mut DynamicMessage, field: &FieldDescriptor, paths: Vec<String>) {
    let Kind::Message(mask_type) = field.kind() else { return };
    let mut mask = DynamicMessage::new(mask_type);
    mask.set_field_by_name("paths", Value::List(paths.into_iter().map(Value::String).collect()));
    message.set_field(field, Value::Message(mask));
}

/// The update request a request wraps (a plan's `update`), when it is set.
fn wrapped_update(message: &DynamicMessage) -> Option<FieldDescriptor> {
    message
        .descriptor()
        .fields()
        .find(|f| matches!(f.kind(), Kind::Message(m) if mask_field(&m).is_some()) && message.has_field(f))
}

/// Fills the masks of a request decoded from the JSON `body`: its own from the body's top-level
/// keys, and that of an update it wraps (a plan's) from that object's keys.
pub fn fill_from_json(message: &mut DynamicMessage, body: &serde_json::Value, validator: &Validator) {
    let Some(object) = body.as_object() else { return };
    let gave_mask = object.contains_key("updateMask") || object.contains_key(FIELD);
    fill_from_json_keys(message, object.keys().map(String::as_str), gave_mask, validator);
    if let Some(field) = wrapped_update(message) {
        let inner = object.get(field.json_name()).or_else(|| object.get(field.name()));
        if let (Some(inner), Value::Message(mut update)) = (inner, message.get_field(&field).into_owned()) {
            fill_from_json(&mut update, inner, validator);
            message.set_field(&field, Value::Message(update));
        }
    }
}

/// Fills the mask of a request decoded from a JSON body from the body's top-level `keys`, unless
/// the body gave one. Keys that are not maskable fields are left out (the rules of the fields
/// that name the object are checked elsewhere).
fn fill_from_json_keys<'a>(
    message: &mut DynamicMessage,
    keys: impl Iterator<Item = &'a str>,
    body_gave_mask: bool,
    validator: &Validator,
) {
    let descriptor = message.descriptor();
    let Some(field) = mask_field(&descriptor) else { return };
    // An empty mask is no mask (it reads back the same from the message's JSON).
    if body_gave_mask && !paths(message).is_empty() {
        return;
    }
    let maskable = maskable(&descriptor, validator);
    let mut paths: Vec<String> = Vec::new();
    for key in keys {
        if let Some(named) = maskable.iter().find(|f| f.json_name() == key || f.name() == key)
            && !paths.iter().any(|p| p == named.name())
        {
            paths.push(named.name().to_owned());
        }
    }
    if paths.is_empty() {
        message.clear_field(&field);
    } else {
        set_paths(message, &field, paths);
    }
}

/// Settles the mask of an update request: a mask given is checked (each path a maskable field,
/// by proto or JSON name, written back by proto name); none given is filled from the fields set.
/// Returns whether the message changed (so that its encoding must be made again).
pub fn settle(message: &mut DynamicMessage, validator: &Validator, out: &mut Violations) -> bool {
    let descriptor = message.descriptor();
    let Some(field) = mask_field(&descriptor) else {
        // A plan settles the update it wraps as the update itself would be settled.
        let Some(wrapped) = wrapped_update(message) else { return false };
        let Value::Message(mut update) = message.get_field(&wrapped).into_owned() else { return false };
        let changed = settle(&mut update, validator, out);
        if changed {
            message.set_field(&wrapped, Value::Message(update));
        }
        return changed;
    };
    let maskable = maskable(&descriptor, validator);
    let given = paths(message);
    if given.is_empty() {
        let set: Vec<String> = maskable.iter().filter(|f| message.has_field(f)).map(|f| f.name().to_owned()).collect();
        if set.is_empty() {
            return false;
        }
        set_paths(message, &field, set);
        return true;
    }
    let mut settled: Vec<String> = Vec::new();
    for path in &given {
        match maskable.iter().find(|f| f.name() == path || f.json_name() == path) {
            Some(named) if !settled.iter().any(|p| p == named.name()) => settled.push(named.name().to_owned()),
            Some(_) => {}
            None => out.push_with(|| {
                let why = if path.contains('.') {
                    "names a part of a field; an update replaces each field it names whole"
                } else if descriptor.get_field_by_name(path).is_some()
                    || descriptor.get_field_by_json_name(path).is_some()
                {
                    "names a field that identifies the object, which an update cannot change"
                } else {
                    "names no field of this request"
                };
                let accepted: Vec<&str> = maskable.iter().map(|f| f.name()).collect();
                FieldViolation::new("updateMask", format!("{path:?} {why}; the mask takes {}", accepted.join(", ")))
            }),
        }
    }
    if settled == given {
        return false;
    }
    set_paths(message, &field, settled);
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn validator_and_update() -> (Validator, MessageDescriptor) {
        let pool = crate::proto::descriptor_pool();
        let validator = Validator::from_pool(pool).expect("the protos' rules compile");
        let update = pool.get_message_by_name("bettercompute.compute.v1.UpdateKubernetesClusterRequest").unwrap();
        (validator, update)
    }

    #[test]
    fn without_a_mask_the_fields_given_a_value_are_the_mask() {
        let (validator, update) = validator_and_update();
        let mut message = DynamicMessage::new(update);
        message.set_field_by_name("tenant_id", Value::String("acme".into()));
        message.set_field_by_name("description", Value::String(String::new()));
        let mut out = Violations::new();
        assert!(settle(&mut message, &validator, &mut out));
        assert!(out.is_empty());
        assert_eq!(paths(&message), vec!["description".to_owned()]);
    }

    #[test]
    fn a_json_key_given_as_an_empty_list_is_named() {
        let (validator, update) = validator_and_update();
        let mut message = DynamicMessage::new(update);
        let body =
            serde_json::json!({"tenantId": "acme", "clusterId": "x", "authorizedNetworks": [], "validateOnly": true});
        fill_from_json(&mut message, &body, &validator);
        assert_eq!(paths(&message), vec!["authorized_networks".to_owned()]);
    }

    #[test]
    fn the_update_a_plan_wraps_gets_its_mask_from_its_own_keys() {
        let (validator, _) = validator_and_update();
        let plan = crate::proto::descriptor_pool()
            .get_message_by_name("bettercompute.compute.v1.PlanKubernetesClusterRequest")
            .unwrap();
        let body = serde_json::json!({"update": {"tenantId": "acme", "clusterId": "x", "description": ""}});
        let mut message = DynamicMessage::deserialize(plan, body.clone()).unwrap();
        fill_from_json(&mut message, &body, &validator);
        let Value::Message(update) = message.get_field_by_name("update").unwrap().into_owned() else { panic!() };
        assert_eq!(paths(&update), vec!["description".to_owned()]);
    }

    #[test]
    fn a_mask_naming_an_identifying_or_unknown_field_or_a_part_is_refused() {
        let (validator, update) = validator_and_update();
        for (path, why) in [("cluster_id", "identifies"), ("colour", "names no field"), ("a.b", "a part")] {
            let mut message = DynamicMessage::new(update.clone());
            set_paths(&mut message, &update.get_field_by_name(FIELD).unwrap(), vec![path.to_owned()]);
            let mut out = Violations::new();
            settle(&mut message, &validator, &mut out);
            let kept = out.kept();
            assert_eq!(kept.len(), 1, "{path}");
            assert_eq!(kept[0].field, "updateMask");
            assert!(kept[0].description.contains(why), "{path}: {}", kept[0].description);
            assert!(kept[0].description.contains("authorized_networks"), "{}", kept[0].description);
        }
    }

    #[test]
    fn json_names_in_a_mask_are_written_back_by_proto_name() {
        let (validator, update) = validator_and_update();
        let mut message = DynamicMessage::new(update.clone());
        set_paths(&mut message, &update.get_field_by_name(FIELD).unwrap(), vec!["authorizedNetworks".to_owned()]);
        let mut out = Violations::new();
        assert!(settle(&mut message, &validator, &mut out));
        assert_eq!(paths(&message), vec!["authorized_networks".to_owned()]);
    }
}
