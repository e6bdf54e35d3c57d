//! What exists inside one fake cluster, and the writes the API server makes to it: create,
//! replace, server-side apply and merge patches (each recording its field manager), delete (a
//! namespace takes what is in it), with the defaults and conversions the real server applies
//! (a Secret's `stringData` into `data`, a namespace's phase, a DaemonSet's and a Deployment's
//! defaults).

use std::collections::{BTreeMap, HashMap};
use std::time::SystemTime;

use base64::Engine;
use serde_json::{Map, Value, json};

use super::fields::{self, Conflict};
use super::resources::{Resource, resource as resource_named};
use super::selectors::Selector;
use crate::clock;

/// The namespaces every cluster starts with.
const BUILT_IN_NAMESPACES: [&str; 4] = ["default", "kube-system", "kube-public", "kube-node-lease"];

/// A TokenRequest token, bound (as a real API server binds it) to its service account's uid:
/// once that account is deleted, or replaced by one of the same name, the token is refused.
pub struct BoundToken {
    pub namespace: String,
    pub name: String,
    pub uid: Value,
    pub expiry: SystemTime,
}

/// (resource plural, namespace, name): namespace empty for cluster-scoped kinds.
pub type ObjectKey = (String, String, String);

/// What exists inside one fake cluster (Nodes come from its pools).
pub struct KubeObjects {
    /// Every stored object.
    pub objects: BTreeMap<ObjectKey, Value>,
    /// TokenRequest token -> the account it was minted for.
    pub tokens: HashMap<String, BoundToken>,
    resource_version: u64,
    /// The bcd daemons the fake kubelets run here, as `inspect` shows them.
    pub daemons: Vec<Value>,
}

impl Default for KubeObjects {
    fn default() -> Self {
        let mut objects =
            KubeObjects { objects: BTreeMap::new(), tokens: HashMap::new(), resource_version: 0, daemons: Vec::new() };
        for name in BUILT_IN_NAMESPACES {
            let namespace = json!({"metadata": {"name": name}});
            let namespace = objects.stamp(resource_named("namespaces"), "", namespace, None);
            objects.objects.insert(("namespaces".into(), String::new(), name.into()), namespace);
        }
        objects
    }
}

/// Why a write was refused: the status, the reason and the message of a Kubernetes `Status`,
/// and its `details.causes`.
#[derive(Debug)]
pub struct Refusal {
    pub code: u16,
    pub reason: &'static str,
    pub message: String,
    pub causes: Vec<Value>,
}

impl Refusal {
    pub fn new(code: u16, reason: &'static str, message: impl Into<String>) -> Refusal {
        Refusal { code, reason, message: message.into(), causes: Vec::new() }
    }

    fn not_found(resource: &Resource, name: &str) -> Refusal {
        Refusal::new(404, "NotFound", format!("{} \"{name}\" not found", qualified(resource)))
    }

    fn conflicts(conflicts: &[Conflict]) -> Refusal {
        let causes: Vec<Value> = conflicts
            .iter()
            .map(|c| {
                json!({"reason": "FieldManagerConflict", "field": c.field,
                       "message": format!("conflict with \"{}\" using {}", c.manager, c.api_version)})
            })
            .collect();
        let listed: Vec<String> = conflicts
            .iter()
            .map(|c| format!("conflict with \"{}\" using {}: {}", c.manager, c.api_version, c.field))
            .collect();
        let count =
            if conflicts.len() == 1 { "1 conflict".to_owned() } else { format!("{} conflicts", conflicts.len()) };
        Refusal {
            code: 409,
            reason: "Conflict",
            message: format!("Apply failed with {count}: {}", listed.join("\n")),
            causes,
        }
    }
}

/// `daemonsets.apps`, `secrets`: a resource as messages name it.
pub fn qualified(resource: &Resource) -> String {
    match resource.group_version.rsplit_once('/') {
        Some((group, _)) => format!("{}.{group}", resource.plural),
        None => resource.plural.to_owned(),
    }
}

/// How a write changes an object.
pub enum Write {
    /// POST: a new object.
    Create,
    /// PUT: the whole object.
    Replace,
    /// PATCH `application/apply-patch+yaml`.
    Apply { force: bool },
    /// PATCH `application/merge-patch+json` (and strategic merge, read as a merge patch).
    Merge,
}

impl KubeObjects {
    pub fn inspect(&self) -> Value {
        let objects: Vec<Value> = self
            .objects
            .iter()
            .filter(|((plural, _, name), _)| plural != "namespaces" || !BUILT_IN_NAMESPACES.contains(&name.as_str()))
            .map(|((plural, namespace, name), o)| {
                json!({"resource": plural, "namespace": namespace, "name": name, "labels": o["metadata"]["labels"]})
            })
            .collect();
        json!({"objects": objects, "tokens": self.tokens.len(), "daemons": self.daemons})
    }

    /// The objects of `resource` in `namespace` (every namespace when empty) that the selectors
    /// select.
    pub fn list(&self, resource: &Resource, namespace: &str, labels: &Selector, fields: &Selector) -> Vec<Value> {
        self.objects
            .iter()
            .filter(|((plural, ns, _), object)| {
                plural == resource.plural
                    && (namespace.is_empty() || ns == namespace)
                    && labels.matches_labels(&object["metadata"]["labels"])
                    && fields.matches_fields(object)
            })
            .map(|(_, object)| object.clone())
            .collect()
    }

    pub fn get(&self, resource: &Resource, namespace: &str, name: &str) -> Option<&Value> {
        self.objects.get(&(resource.plural.to_owned(), namespace.to_owned(), name.to_owned()))
    }

    /// The current resourceVersion, for lists.
    pub fn resource_version(&self) -> String {
        self.resource_version.to_string()
    }

    /// Writes `body` as `manager`: the object and whether it was created.
    pub fn write(
        &mut self,
        resource: &'static Resource,
        namespace: &str,
        name: Option<&str>,
        body: Value,
        manager: &str,
        write: Write,
    ) -> Result<(Value, bool), Refusal> {
        let name = match (name, body["metadata"]["name"].as_str()) {
            (Some(path), Some(named)) if path != named => {
                return Err(Refusal::new(
                    400,
                    "BadRequest",
                    format!("the name of the object ({named}) does not match the name on the URL ({path})"),
                ));
            }
            (Some(name), _) | (None, Some(name)) => name.to_owned(),
            (None, None) => {
                return Err(Refusal::new(422, "Invalid", "metadata.name: Required value: name is required"));
            }
        };
        if resource.namespaced && self.get(resource_named("namespaces"), "", namespace).is_none() {
            return Err(Refusal::not_found(resource_named("namespaces"), namespace));
        }
        let key = (resource.plural.to_owned(), namespace.to_owned(), name.clone());
        let live = self.objects.get(&key).cloned();
        let version = resource.group_version;
        let (object, managers) = match (write, &live) {
            (Write::Create, Some(_)) => {
                return Err(Refusal::new(
                    409,
                    "AlreadyExists",
                    format!("{} \"{name}\" already exists", qualified(resource)),
                ));
            }
            (Write::Replace | Write::Merge, None) => return Err(Refusal::not_found(resource, &name)),
            (Write::Create | Write::Replace, _) => {
                let managers = fields::update(live.as_ref(), &body, manager, version);
                (body, managers)
            }
            (Write::Merge, Some(existing)) => {
                let mut patched = existing.clone();
                merge_patch(&mut patched, &body);
                let managers = fields::update(live.as_ref(), &patched, manager, version);
                (patched, managers)
            }
            (Write::Apply { force }, _) => {
                fields::apply(live.as_ref(), &body, manager, version, force).map_err(|c| Refusal::conflicts(&c))?
            }
        };
        let mut object = object;
        object["metadata"]["name"] = json!(name);
        object["metadata"]["managedFields"] = fields::managed_fields_json(&managers);
        let object = self.stamp(resource, namespace, object, live.as_ref());
        self.objects.insert(key, object.clone());
        Ok((object, live.is_none()))
    }

    /// Deletes an object; a namespace takes every object in it.
    pub fn delete(&mut self, resource: &Resource, namespace: &str, name: &str) -> Result<Value, Refusal> {
        let key = (resource.plural.to_owned(), namespace.to_owned(), name.to_owned());
        let Some(mut object) = self.objects.remove(&key) else { return Err(Refusal::not_found(resource, name)) };
        if resource.plural == "namespaces" {
            self.objects.retain(|(_, ns, _), _| ns != name);
            self.tokens.retain(|_, token| token.namespace != name);
            object["status"]["phase"] = json!("Terminating");
        }
        self.resource_version += 1;
        Ok(object)
    }

    /// Writes what the server itself keeps up to date (a pod's or a DaemonSet's status) when it
    /// changed; the object gets a new resourceVersion then.
    pub fn put_observed(&mut self, key: ObjectKey, mut object: Value) {
        if let Some(existing) = self.objects.get(&key) {
            let mut unversioned = existing.clone();
            unversioned["metadata"]["resourceVersion"] = Value::Null;
            object["metadata"]["resourceVersion"] = Value::Null;
            if unversioned == object {
                return;
            }
        }
        self.resource_version += 1;
        object["metadata"]["resourceVersion"] = json!(self.resource_version.to_string());
        self.objects.insert(key, object);
    }

    /// Removes what the server itself made (a pod of a stopped daemon).
    pub fn remove_observed(&mut self, key: &ObjectKey) {
        if self.objects.remove(key).is_some() {
            self.resource_version += 1;
        }
    }

    /// Fills in what the server owns (uid, resourceVersion, timestamps, generation, status)
    /// and the defaults it applies.
    fn stamp(&mut self, resource: &Resource, namespace: &str, mut object: Value, live: Option<&Value>) -> Value {
        self.resource_version += 1;
        let previous = live.map(|l| l["metadata"].clone()).unwrap_or(Value::Null);
        object["apiVersion"] = json!(resource.group_version);
        object["kind"] = json!(resource.kind);
        let mut metadata = object["metadata"].as_object().cloned().unwrap_or_default();
        if resource.namespaced {
            metadata.insert("namespace".into(), json!(namespace));
        } else {
            metadata.remove("namespace");
        }
        let uid = previous.get("uid").cloned().unwrap_or_else(|| json!(new_uid()));
        metadata.insert("uid".into(), uid);
        let created = previous.get("creationTimestamp").cloned().unwrap_or_else(|| json!(clock::now()));
        metadata.insert("creationTimestamp".into(), created);
        metadata.insert("resourceVersion".into(), json!(self.resource_version.to_string()));
        object["metadata"] = Value::Object(metadata);
        default(resource.kind, &mut object);
        if matches!(resource.kind, "DaemonSet" | "Deployment") {
            let changed = live.is_none_or(|l| l.get("spec") != object.get("spec"));
            let generation = previous["generation"].as_u64().unwrap_or(0) + u64::from(changed);
            object["metadata"]["generation"] = json!(generation);
        }
        // Status is the server's: what the client sent is dropped, as on the main resource.
        let status =
            live.map(|l| l["status"].clone()).filter(|s| !s.is_null()).unwrap_or_else(|| initial_status(resource.kind));
        match object.as_object_mut() {
            Some(map) if status.is_null() => {
                map.remove("status");
            }
            Some(map) => {
                map.insert("status".into(), status);
            }
            None => {}
        }
        object
    }
}

pub fn new_uid() -> String {
    let hex = format!("{:032x}", rand::random::<u128>());
    format!("{}-{}-{}-{}-{}", &hex[..8], &hex[8..12], &hex[12..16], &hex[16..20], &hex[20..])
}

fn initial_status(kind: &str) -> Value {
    match kind {
        "Namespace" => json!({"phase": "Active"}),
        "DaemonSet" => json!({"currentNumberScheduled": 0, "desiredNumberScheduled": 0, "numberMisscheduled": 0,
                              "numberReady": 0}),
        "Pod" => json!({"phase": "Pending", "qosClass": "BestEffort"}),
        _ => Value::Null,
    }
}

/// Sets `key` of `map` unless it is there.
fn or_insert(map: &mut Value, key: &str, value: Value) {
    if let Some(map) = map.as_object_mut() {
        map.entry(key).or_insert(value);
    }
}

/// The defaults and conversions the API server applies to what it stores.
fn default(kind: &str, object: &mut Value) {
    match kind {
        "Secret" => {
            or_insert(object, "type", json!("Opaque"));
            if let Some(Value::Object(strings)) = object.as_object_mut().and_then(|o| o.remove("stringData")) {
                let engine = base64::engine::general_purpose::STANDARD;
                for (key, value) in strings {
                    let text = value.as_str().map(str::to_owned).unwrap_or_else(|| value.to_string());
                    object["data"][key] = json!(engine.encode(text));
                }
            }
        }
        "Namespace" => {
            let name = object["metadata"]["name"].clone();
            object["metadata"]["labels"]["kubernetes.io/metadata.name"] = name;
            object["spec"] = json!({"finalizers": ["kubernetes"]});
        }
        "DaemonSet" => {
            let spec = &mut object["spec"];
            or_insert(spec, "revisionHistoryLimit", json!(10));
            or_insert(
                spec,
                "updateStrategy",
                json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}),
            );
            default_pod_spec(&mut spec["template"]["spec"]);
        }
        "Deployment" => {
            let spec = &mut object["spec"];
            for (key, value) in [
                ("replicas", json!(1)),
                ("revisionHistoryLimit", json!(10)),
                ("progressDeadlineSeconds", json!(600)),
                (
                    "strategy",
                    json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}),
                ),
            ] {
                or_insert(spec, key, value);
            }
            default_pod_spec(&mut spec["template"]["spec"]);
        }
        "Pod" => default_pod_spec(&mut object["spec"]),
        _ => {}
    }
}

fn default_pod_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    for (key, value) in [
        ("restartPolicy", json!("Always")),
        ("dnsPolicy", json!("ClusterFirst")),
        ("schedulerName", json!("default-scheduler")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("securityContext", json!({})),
    ] {
        or_insert(spec, key, value);
    }
    for container in spec["containers"].as_array_mut().into_iter().flatten() {
        or_insert(container, "terminationMessagePath", json!("/dev/termination-log"));
        or_insert(container, "terminationMessagePolicy", json!("File"));
        or_insert(container, "imagePullPolicy", json!("IfNotPresent"));
        or_insert(container, "resources", json!({}));
    }
}

/// RFC 7386: maps merge, `null` removes, everything else replaces.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let map = target.as_object_mut().expect("made an object");
    for (key, value) in patch {
        if value.is_null() {
            map.remove(key);
        } else {
            merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kubeapi::resources::resource;

    fn apply(objects: &mut KubeObjects, plural: &str, ns: &str, body: Value, manager: &str) -> Result<Value, Refusal> {
        let name = body["metadata"]["name"].as_str().map(str::to_owned);
        let write = Write::Apply { force: false };
        objects.write(resource(plural), ns, name.as_deref(), body, manager, write).map(|(o, _)| o)
    }

    #[test]
    fn a_secrets_string_data_lands_base64_in_data() {
        let mut objects = KubeObjects::default();
        let body = json!({"metadata": {"name": "t"}, "stringData": {"token": "bcjt_x.y"}, "data": {"a": "Yg=="}});
        let secret = apply(&mut objects, "secrets", "default", body, "m").unwrap();
        assert_eq!(secret["data"], json!({"a": "Yg==", "token": "YmNqdF94Lnk="}));
        assert!(secret.get("stringData").is_none());
        assert_eq!(secret["type"], "Opaque");
    }

    #[test]
    fn deleting_a_namespace_deletes_what_is_in_it_and_writes_need_their_namespace() {
        let mut objects = KubeObjects::default();
        let refused = apply(&mut objects, "secrets", "bc", json!({"metadata": {"name": "t"}}), "m").unwrap_err();
        assert_eq!((refused.code, refused.message.as_str()), (404, "namespaces \"bc\" not found"));
        apply(&mut objects, "namespaces", "", json!({"metadata": {"name": "bc"}}), "m").unwrap();
        apply(&mut objects, "secrets", "bc", json!({"metadata": {"name": "t"}}), "m").unwrap();
        apply(&mut objects, "secrets", "default", json!({"metadata": {"name": "t"}}), "m").unwrap();
        let gone = objects.delete(resource_named("namespaces"), "", "bc").unwrap();
        assert_eq!(gone["status"]["phase"], "Terminating");
        let everywhere = objects.list(resource("secrets"), "", &Selector::default(), &Selector::default());
        assert_eq!(everywhere.len(), 1);
        assert_eq!(everywhere[0]["metadata"]["namespace"], "default");
    }

    #[test]
    fn a_daemonsets_generation_moves_with_its_spec_and_its_status_is_kept() {
        let mut objects = KubeObjects::default();
        let ds = |image: &str| {
            json!({"metadata": {"name": "bcd", "labels": {"x": "1"}},
                   "spec": {"template": {"spec": {"containers": [{"name": "bcd", "image": image}]}}},
                   "status": {"numberReady": 9}})
        };
        let first = apply(&mut objects, "daemonsets", "default", ds("a"), "m").unwrap();
        assert_eq!(first["metadata"]["generation"], 1);
        assert_eq!(first["status"]["numberReady"], 0, "status is the server's");
        assert_eq!(apply(&mut objects, "daemonsets", "default", ds("a"), "m").unwrap()["metadata"]["generation"], 1);
        let second = apply(&mut objects, "daemonsets", "default", ds("b"), "m").unwrap();
        assert_eq!(second["metadata"]["generation"], 2);
        assert_eq!(second["metadata"]["uid"], first["metadata"]["uid"]);
        let conflict = apply(&mut objects, "daemonsets", "default", ds("c"), "other").unwrap_err();
        assert_eq!((conflict.code, conflict.reason), (409, "Conflict"));
        assert_eq!(conflict.causes[0]["field"], ".spec.template.spec.containers[name=\"bcd\"].image");
    }
}
