//! Server-side apply's bookkeeping, as the API server keeps it in `metadata.managedFields`: the
//! set of fields each manager owns (`fieldsV1`, the `f:`/`k:` tree), conflicts between managers,
//! and the merge of an applied configuration into the live object.
//!
//! Lists whose items all carry `name` (containers, env, volumes), `mountPath` or `containerPort`
//! are associative, keyed by that field (`k:{"name":"bcd"}`), as their OpenAPI markers say;
//! every other list is atomic (owned and replaced whole), which is what `args`, `command` and
//! `tolerations` are. `metadata` contributes its labels, annotations and owner references; the
//! identity and what the server writes (uid, resourceVersion, status...) belong to nobody.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use crate::clock;

/// One field path: `f:spec`, `f:containers`, `k:{"name":"bcd"}`, `f:image`; an associative
/// item itself ends in `.`.
pub type Path = Vec<String>;

/// The fields one manager owns (the leaves of its `fieldsV1` tree).
pub type FieldSet = BTreeSet<Path>;

/// An entry of `metadata.managedFields`.
#[derive(Clone, Debug, PartialEq)]
pub struct Managed {
    /// The field manager (`better-compute`, `kubectl`, `kubectl-create`).
    pub manager: String,
    /// `Apply` or `Update`.
    pub operation: String,
    /// The version the fields are of.
    pub api_version: String,
    /// When it last changed.
    pub time: String,
    /// What it owns.
    pub fields: FieldSet,
}

/// A field another manager owns with another value.
#[derive(Debug, PartialEq)]
pub struct Conflict {
    /// `.spec.template.spec.containers[name="bcd"].image`.
    pub field: String,
    /// Who owns it.
    pub manager: String,
    /// The version that manager wrote.
    pub api_version: String,
}

/// The list item key of an associative list, or `None` for an atomic one.
fn list_key(items: &[Value]) -> Option<&'static str> {
    if items.is_empty() {
        return None;
    }
    ["name", "mountPath", "containerPort"]
        .into_iter()
        .find(|key| items.iter().all(|item| item.get(key).is_some_and(|k| !k.is_null())))
}

fn item_segment(key: &str, item: &Value) -> String {
    format!("k:{}", json!({key: item[key]}))
}

/// The fields an object sets.
pub fn fields_of(object: &Value) -> FieldSet {
    let mut set = FieldSet::new();
    let Some(map) = object.as_object() else { return set };
    for (key, value) in map {
        match key.as_str() {
            "apiVersion" | "kind" | "status" => {}
            "metadata" => {
                for field in ["labels", "annotations", "ownerReferences", "finalizers"] {
                    if let Some(inner) = value.get(field).filter(|v| !v.is_null()) {
                        walk(inner, vec!["f:metadata".into(), format!("f:{field}")], &mut set);
                    }
                }
            }
            _ => walk(value, vec![format!("f:{key}")], &mut set),
        }
    }
    set
}

fn walk(value: &Value, path: Path, set: &mut FieldSet) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            for (key, inner) in map {
                let mut next = path.clone();
                next.push(format!("f:{key}"));
                walk(inner, next, set);
            }
        }
        Value::Array(items) => match list_key(items) {
            Some(key) => {
                for item in items {
                    let mut at = path.clone();
                    at.push(item_segment(key, item));
                    let mut dot = at.clone();
                    dot.push(".".into());
                    set.insert(dot);
                    walk(item, at, set);
                }
            }
            None => {
                set.insert(path);
            }
        },
        _ => {
            set.insert(path);
        }
    }
}

/// The `fieldsV1` tree of a set.
pub fn to_fields_v1(set: &FieldSet) -> Value {
    let mut root = Map::new();
    for path in set {
        let mut node = &mut root;
        for segment in path {
            node = node.entry(segment.clone()).or_insert_with(|| json!({})).as_object_mut().expect("made as objects");
        }
    }
    Value::Object(root)
}

/// The set a `fieldsV1` tree names.
pub fn from_fields_v1(tree: &Value) -> FieldSet {
    fn visit(tree: &Map<String, Value>, path: &mut Path, set: &mut FieldSet) {
        for (segment, inner) in tree {
            path.push(segment.clone());
            match inner.as_object() {
                Some(children) if !children.is_empty() => visit(children, path, set),
                _ => {
                    set.insert(path.clone());
                }
            }
            path.pop();
        }
    }
    let mut set = FieldSet::new();
    if let Some(tree) = tree.as_object() {
        visit(tree, &mut Vec::new(), &mut set);
    }
    set
}

/// The managers an object records.
pub fn managers_of(object: &Value) -> Vec<Managed> {
    let entries = object["metadata"]["managedFields"].as_array().cloned().unwrap_or_default();
    entries
        .iter()
        .map(|entry| Managed {
            manager: entry["manager"].as_str().unwrap_or_default().to_owned(),
            operation: entry["operation"].as_str().unwrap_or("Update").to_owned(),
            api_version: entry["apiVersion"].as_str().unwrap_or_default().to_owned(),
            time: entry["time"].as_str().unwrap_or_default().to_owned(),
            fields: from_fields_v1(&entry["fieldsV1"]),
        })
        .collect()
}

/// `metadata.managedFields` for `managers` (those that own nothing are dropped, as the server
/// drops them).
pub fn managed_fields_json(managers: &[Managed]) -> Value {
    let entries: Vec<Value> = managers
        .iter()
        .filter(|m| !m.fields.is_empty())
        .map(|m| {
            json!({"manager": m.manager, "operation": m.operation, "apiVersion": m.api_version, "time": m.time,
                   "fieldsType": "FieldsV1", "fieldsV1": to_fields_v1(&m.fields)})
        })
        .collect();
    Value::Array(entries)
}

/// The value at `path` in `object`, if it is there.
fn value_at<'a>(object: &'a Value, path: &[String]) -> Option<&'a Value> {
    let mut at = object;
    for segment in path {
        at = step(at, segment)?;
    }
    Some(at)
}

fn step<'a>(at: &'a Value, segment: &str) -> Option<&'a Value> {
    if let Some(field) = segment.strip_prefix("f:") {
        return at.get(field);
    }
    if let Some(key) = segment.strip_prefix("k:") {
        let key: Map<String, Value> = serde_json::from_str(key).ok()?;
        return at.as_array()?.iter().find(|item| key.iter().all(|(k, v)| item.get(k) == Some(v)));
    }
    (segment == ".").then_some(at)
}

/// How a path reads in a conflict: `.spec.containers[name="bcd"].image`.
pub fn display(path: &[String]) -> String {
    let mut text = String::new();
    for segment in path {
        if let Some(field) = segment.strip_prefix("f:") {
            text.push('.');
            text.push_str(field);
        } else if let Some(key) = segment.strip_prefix("k:") {
            let key: Map<String, Value> = serde_json::from_str(key).unwrap_or_default();
            let parts: Vec<String> = key.iter().map(|(k, v)| format!("{k}={v}")).collect();
            text.push_str(&format!("[{}]", parts.join(",")));
        }
    }
    text
}

/// Applies `applied` as `manager`: the merged object and the managers after it, or the
/// conflicts with other managers when `force` is not set.
pub fn apply(
    live: Option<&Value>,
    applied: &Value,
    manager: &str,
    api_version: &str,
    force: bool,
) -> Result<(Value, Vec<Managed>), Vec<Conflict>> {
    let new_set = fields_of(applied);
    let mut managers = live.map(managers_of).unwrap_or_default();
    let is_self = |m: &Managed| m.manager == manager && m.operation == "Apply";
    let empty = json!({});
    let live_object = live.unwrap_or(&empty);
    let mut conflicts = Vec::new();
    for other in managers.iter().filter(|m| !is_self(m)) {
        for path in other.fields.intersection(&new_set).filter(|p| p.last().is_some_and(|s| s != ".")) {
            if value_at(live_object, path) != value_at(applied, path) {
                let field = display(path);
                conflicts.push(Conflict {
                    field,
                    manager: other.manager.clone(),
                    api_version: other.api_version.clone(),
                });
            }
        }
    }
    if !conflicts.is_empty() && !force {
        return Err(conflicts);
    }
    if force {
        for other in managers.iter_mut().filter(|m| !is_self(m)) {
            let taken: Vec<Path> = other
                .fields
                .intersection(&new_set)
                .filter(|p| value_at(live_object, p) != value_at(applied, p))
                .cloned()
                .collect();
            taken.iter().for_each(|path| {
                other.fields.remove(path);
            });
        }
    }
    let previous = managers.iter().find(|m| is_self(m)).map(|m| m.fields.clone()).unwrap_or_default();
    let mut merged = live.cloned().unwrap_or_else(|| json!({}));
    // What this manager applied before and no longer does goes, unless someone else owns it;
    // fields before list items, so that an item's removal is the last word.
    let dropped: Vec<&Path> = previous
        .difference(&new_set)
        .filter(|path| !managers.iter().filter(|m| !is_self(m)).any(|m| m.fields.contains(*path)))
        .collect();
    let (items, fields): (Vec<&Path>, Vec<&Path>) =
        dropped.into_iter().partition(|p| p.last().is_some_and(|s| s == "."));
    for path in fields.into_iter().chain(items) {
        remove_at(&mut merged, path);
    }
    merge(&mut merged, applied);
    managers.retain(|m| !is_self(m));
    managers.push(Managed {
        manager: manager.to_owned(),
        operation: "Apply".into(),
        api_version: api_version.to_owned(),
        time: clock::now(),
        fields: new_set,
    });
    managers.retain(|m| !m.fields.is_empty());
    Ok((merged, managers))
}

/// The managers after `manager` wrote `new` over `live` with a create, an update or a patch:
/// it owns what it changed, which the others lose, and what it wrote before and still holds.
pub fn update(live: Option<&Value>, new: &Value, manager: &str, api_version: &str) -> Vec<Managed> {
    let new_set = fields_of(new);
    let mut managers = live.map(managers_of).unwrap_or_default();
    let empty = json!({});
    let live_object = live.unwrap_or(&empty);
    let changed: FieldSet =
        new_set.iter().filter(|path| value_at(live_object, path) != value_at(new, path)).cloned().collect();
    for entry in &mut managers {
        entry.fields = entry.fields.iter().filter(|p| new_set.contains(*p) && !changed.contains(*p)).cloned().collect();
    }
    let is_self = |m: &Managed| m.manager == manager && m.operation == "Update";
    let kept = managers.iter().find(|m| is_self(m)).map(|m| m.fields.clone()).unwrap_or_default();
    managers.retain(|m| !is_self(m));
    if !changed.is_empty() || !kept.is_empty() {
        managers.push(Managed {
            manager: manager.to_owned(),
            operation: "Update".into(),
            api_version: api_version.to_owned(),
            time: clock::now(),
            fields: kept.union(&changed).cloned().collect(),
        });
    }
    managers.retain(|m| !m.fields.is_empty());
    managers
}

/// Merges an applied configuration into an object: maps by key, associative lists by item key,
/// everything else replaced.
fn merge(live: &mut Value, applied: &Value) {
    match (live, applied) {
        (Value::Object(live), Value::Object(applied)) => {
            for (key, value) in applied {
                match live.get_mut(key) {
                    Some(existing) if !value.is_null() => merge(existing, value),
                    _ => {
                        live.insert(key.clone(), value.clone());
                    }
                }
            }
        }
        (Value::Array(live), Value::Array(applied)) if list_key(applied).is_some() && list_key(live).is_some() => {
            let key = list_key(applied).expect("checked");
            let mut result = Vec::new();
            for item in applied {
                let mut merged =
                    live.iter().find(|l| l.get(key) == item.get(key)).cloned().unwrap_or_else(|| json!({}));
                merge(&mut merged, item);
                result.push(merged);
            }
            // Items others put there stay after the applied ones.
            for item in live.iter() {
                if !applied.iter().any(|a| a.get(key) == item.get(key)) {
                    result.push(item.clone());
                }
            }
            *live = result;
        }
        (live, applied) => *live = applied.clone(),
    }
}

/// Removes the field (or, for a path ending in `.`, the list item) at `path`.
fn remove_at(object: &mut Value, path: &[String]) {
    let (path, last) = match path.split_last() {
        Some((last, parent)) if last == "." => match parent.split_last() {
            Some((item, parent)) => (parent, item.as_str()),
            None => return,
        },
        Some((last, parent)) => (parent, last.as_str()),
        None => return,
    };
    let mut at = object;
    for segment in path {
        let next = if let Some(field) = segment.strip_prefix("f:") {
            at.get_mut(field)
        } else if let Some(key) = segment.strip_prefix("k:") {
            let key: Map<String, Value> = serde_json::from_str(key).unwrap_or_default();
            at.as_array_mut().and_then(|items| items.iter_mut().find(|i| key.iter().all(|(k, v)| i.get(k) == Some(v))))
        } else {
            None
        };
        match next {
            Some(next) => at = next,
            None => return,
        }
    }
    if let Some(field) = last.strip_prefix("f:") {
        if let Some(map) = at.as_object_mut() {
            map.remove(field);
        }
    } else if let Some(key) = last.strip_prefix("k:") {
        let key: Map<String, Value> = serde_json::from_str(key).unwrap_or_default();
        if let Some(items) = at.as_array_mut() {
            items.retain(|i| !key.iter().all(|(k, v)| i.get(k) == Some(v)));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn daemonset(image: &str, env: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "bcd", "labels": {"a": "1"}},
               "spec": {"template": {"spec": {"containers": [{"name": "bcd", "image": image, "args": ["join"], "env": env}]}}}})
    }

    #[test]
    fn fields_v1_names_map_keys_and_list_items_by_their_key() {
        let tree = to_fields_v1(&fields_of(&daemonset("a:1", json!([{"name": "X", "value": "1"}]))));
        let container = &tree["f:spec"]["f:template"]["f:spec"]["f:containers"]["k:{\"name\":\"bcd\"}"];
        assert_eq!(container["."], json!({}));
        assert_eq!(container["f:args"], json!({}), "args is atomic");
        assert_eq!(container["f:env"]["k:{\"name\":\"X\"}"]["f:value"], json!({}));
        assert_eq!(tree["f:metadata"]["f:labels"]["f:a"], json!({}));
        assert!(tree["f:metadata"].get("f:name").is_none(), "the identity is nobody's");
        assert_eq!(from_fields_v1(&tree), fields_of(&daemonset("a:1", json!([{"name": "X", "value": "1"}]))));
    }

    #[test]
    fn another_managers_field_with_another_value_conflicts_unless_forced() {
        let created = daemonset("a:1", json!([]));
        let managers = update(None, &created, "kubectl-create", "apps/v1");
        let mut live = created.clone();
        live["metadata"]["managedFields"] = managed_fields_json(&managers);
        let conflicts =
            apply(Some(&live), &daemonset("a:2", json!([])), "better-compute", "apps/v1", false).unwrap_err();
        assert_eq!(
            conflicts,
            vec![Conflict {
                field: ".spec.template.spec.containers[name=\"bcd\"].image".into(),
                manager: "kubectl-create".into(),
                api_version: "apps/v1".into()
            }]
        );
        assert!(
            apply(Some(&live), &daemonset("a:1", json!([])), "better-compute", "apps/v1", false).is_ok(),
            "same values are shared"
        );
        let (merged, managers) =
            apply(Some(&live), &daemonset("a:2", json!([])), "better-compute", "apps/v1", true).unwrap();
        assert_eq!(merged["spec"]["template"]["spec"]["containers"][0]["image"], "a:2");
        let creator = managers.iter().find(|m| m.manager == "kubectl-create").unwrap();
        assert!(!creator.fields.iter().any(|p| p.last().unwrap() == "f:image"), "forcing takes the field");
    }

    #[test]
    fn a_field_no_longer_applied_is_removed_and_others_stay() {
        let first = daemonset("a:1", json!([{"name": "X", "value": "1"}, {"name": "Y", "value": "2"}]));
        let (live, managers) = apply(None, &first, "m", "apps/v1", false).unwrap();
        let mut live = live;
        live["metadata"]["managedFields"] = managed_fields_json(&managers);
        live["spec"]["template"]["spec"]["nodeName"] = json!("kept");
        let second = daemonset("a:1", json!([{"name": "X", "value": "1"}]));
        let (merged, _) = apply(Some(&live), &second, "m", "apps/v1", false).unwrap();
        let env = &merged["spec"]["template"]["spec"]["containers"][0]["env"];
        assert_eq!(env, &json!([{"name": "X", "value": "1"}]));
        assert_eq!(merged["spec"]["template"]["spec"]["nodeName"], "kept", "nobody's fields are left alone");
    }
}
