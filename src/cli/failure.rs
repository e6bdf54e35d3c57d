//! A failed call as `bcctl` prints it: the code and a sentence, each refused field on a line of
//! its own with its whole description, and the details the message does not already say, never
//! a dump of them; the machine-readable reason beside the code (`INVALID_STATE (inUse)`), so a
//! script can tell one refusal from another; and a create refused because its name is taken,
//! said as such.

use bcd::api_error::{ApiError, Code};
use serde_json::Value;

/// Details that only restate the message or the code for programs.
const RESTATED: &[&str] = &["fields", "reason", "truncated"];

/// `status` as `bcctl` prints it.
pub fn describe(status: &tonic::Status) -> String {
    describe_error(&ApiError::from_status(status))
}

/// `error` as `bcctl` prints it.
pub fn describe_error(error: &ApiError) -> String {
    let fields = error.details.get("fields").and_then(Value::as_array).cloned().unwrap_or_default();
    let named: Vec<String> = fields
        .iter()
        .map(|f| {
            let (field, text) =
                (f["field"].as_str().unwrap_or_default(), f["description"].as_str().unwrap_or_default());
            if field.is_empty() { text.to_owned() } else { format!("{field}: {text}") }
        })
        .collect();
    let code = match error.details.get("reason").and_then(Value::as_str) {
        Some(reason) if !reason.is_empty() => format!("{} ({reason})", error.code),
        _ => error.code.to_string(),
    };
    let mut text = match named.as_slice() {
        [] => format!("{code}: {}", error.message),
        [one] => format!("{code}: {one}"),
        many => format!("{code}: the request was refused:\n  {}", many.join("\n  ")),
    };
    if let Some(more) = error.details.get("truncated").and_then(Value::as_i64) {
        text.push_str(&format!("\n  and {more} more"));
    }
    for (key, value) in error.details.iter().filter(|(key, _)| !RESTATED.contains(&key.as_str())) {
        let items: Vec<String> = match value {
            Value::Array(items) => items.iter().filter_map(scalar).collect(),
            other => scalar(other).into_iter().collect(),
        };
        if items.is_empty() || items.iter().all(|item| text.contains(item.as_str())) {
            continue;
        }
        text.push_str(&format!("\n  {key}: {}", items.join(", ")));
    }
    text
}

/// A scalar detail as text; none for an object or a list.
fn scalar(value: &Value) -> Option<String> {
    match value {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// What a refused create of a `what` (`cluster`) named `name` says when the name is taken:
/// `bcctl` made the idempotency key from the name (`key_given` false), so a key the server says
/// was used for another request is the name used before; the `existing` one's id and state
/// come from `get` when it answers. Any other refusal reads as [`describe_error`] says.
pub fn create_refused(
    error: &ApiError,
    what: &str,
    name: &str,
    key_given: bool,
    existing: Option<(&str, &str)>,
) -> String {
    let key_reused = error.details.get("reason").and_then(Value::as_str) == Some("idempotencyKeyReused")
        || error.message.starts_with("idempotency key already used");
    if error.code != Code::Conflict {
        return describe_error(error);
    }
    if key_reused && !key_given {
        return match existing {
            Some((id, "deleted")) => format!(
                "CONFLICT: the name {name:?} was used by {what} {id}, since deleted, with other settings; \
                 give --idempotency-key a new key to make a new {what} with this name"
            ),
            Some((id, state)) => format!(
                "CONFLICT: the name {name:?} is taken: {what} {id} ({state}) has it, with other settings; \
                 choose another --name, or delete {id} first"
            ),
            None => format!(
                "CONFLICT: the name {name:?} was used for another {what} with other settings; choose another --name"
            ),
        };
    }
    if error.details.get("name").and_then(Value::as_str) == Some(name) {
        return format!("CONFLICT: {}; choose another --name, or delete that {what} first", error.message);
    }
    describe_error(error)
}

/// The id a reused-key conflict names: the detail ending in `Id`.
pub fn conflicting_id(error: &ApiError) -> Option<String> {
    error.details.iter().find(|(key, _)| key.ends_with("Id")).and_then(|(_, id)| id.as_str()).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn error(code: Code, message: &str, details: Value) -> ApiError {
        ApiError { code, message: message.to_owned(), details: details.as_object().cloned().unwrap() }
    }

    #[test]
    fn a_refused_field_reads_as_a_sentence_with_what_the_message_left_out() {
        let refused = error(
            Code::InvalidInput,
            "invalid input: location: \"mars-central1\" is not a location of pool \"p\"; use one of its re...",
            json!({"fields": [{"field": "location", "description": "\"mars-central1\" is not a location of pool \"p\"; use one of its regions (us-central1)"}],
                   "regions": ["us-central1"], "zones": ["us-central1-a", "us-central1-b"]}),
        );
        assert_eq!(
            describe_error(&refused),
            "INVALID_INPUT: location: \"mars-central1\" is not a location of pool \"p\"; use one of its regions \
             (us-central1)\n  zones: us-central1-a, us-central1-b"
        );
    }

    #[test]
    fn a_refusal_with_a_reason_names_it_beside_the_code() {
        let in_use = error(
            Code::InvalidState,
            "network \"net_1\" cannot be deleted while instances rest on it",
            json!({"reason": "inUse", "instanceIds": ["inst_1"]}),
        );
        assert_eq!(
            describe_error(&in_use),
            "INVALID_STATE (inUse): network \"net_1\" cannot be deleted while instances rest on it\n  instanceIds: inst_1"
        );
    }

    #[test]
    fn a_reused_name_says_the_name_is_taken_and_what_to_do() {
        let reused = error(
            Code::Conflict,
            "idempotency key already used for instance \"inst_1\" with a different request; use a new key",
            json!({"reason": "idempotencyKeyReused", "instanceId": "inst_1"}),
        );
        assert_eq!(conflicting_id(&reused).as_deref(), Some("inst_1"));
        let said = create_refused(&reused, "instance", "web", false, Some(("inst_1", "ready")));
        assert!(said.contains("the name \"web\" is taken") && said.contains("choose another --name"), "{said}");
        assert!(!said.contains("idempotency key already used"), "{said}");
        let given = create_refused(&reused, "instance", "web", true, None);
        assert!(given.contains("idempotency key already used"), "a key the user gave is named: {given}");
    }
}
