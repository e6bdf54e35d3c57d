//! What a DaemonSet asks of the fake kubelets, read from the object as a real kubelet reads it:
//! which nodes it selects (`nodeSelector`, required node affinity, taints it tolerates), and how
//! its `bcd` container starts (`--label k=v` in its args; `BCD_ENDPOINT`, `BCD_CA_SHA256`,
//! `BCD_TOKEN` from a Secret key, `BCD_MACHINE_ID` from `spec.nodeName`).

use base64::Engine;
use serde_json::{Map, Value};

use crate::kubeapi::KubeObjects;
use bcd::tls::CaPin;

/// How an embedded bcd starts.
#[derive(Clone, Debug, PartialEq)]
pub struct Launch {
    pub endpoint: String,
    pub token: String,
    pub ca_sha256: Option<CaPin>,
    pub labels: Vec<(String, String)>,
    pub machine_id: String,
}

/// Why a container cannot start yet: a kubelet's waiting reason and its message.
#[derive(Clone, Debug, PartialEq)]
pub struct NotYet {
    pub reason: &'static str,
    pub message: String,
}

impl NotYet {
    fn config(message: String) -> NotYet {
        NotYet { reason: "CreateContainerConfigError", message }
    }
}

/// Whether a pod template's spec schedules onto a node with `labels` and `taints`.
pub fn selects(spec: &Value, labels: &Map<String, Value>, taints: &[Value]) -> bool {
    let selector_holds = spec["nodeSelector"]
        .as_object()
        .is_none_or(|selector| selector.iter().all(|(key, value)| labels.get(key) == Some(value)));
    let terms = spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    // Terms are ORed, a term's expressions ANDed; no terms: no constraint.
    let affinity_holds = terms.is_empty() || terms.iter().any(|term| term_holds(term, labels));
    let tolerated = taints.iter().all(|taint| {
        let effect = taint["effect"].as_str().unwrap_or_default();
        effect == "PreferNoSchedule"
            || spec["tolerations"].as_array().into_iter().flatten().any(|toleration| tolerates(toleration, taint))
    });
    selector_holds && affinity_holds && tolerated
}

fn term_holds(term: &Value, labels: &Map<String, Value>) -> bool {
    term["matchExpressions"].as_array().into_iter().flatten().all(|expression| {
        let value = labels.get(expression["key"].as_str().unwrap_or_default()).and_then(Value::as_str);
        let listed = |v: &str| expression["values"].as_array().into_iter().flatten().any(|x| x == v);
        match expression["operator"].as_str().unwrap_or_default() {
            "In" => value.is_some_and(listed),
            "NotIn" => !value.is_some_and(listed),
            "Exists" => value.is_some(),
            "DoesNotExist" => value.is_none(),
            _ => false,
        }
    })
}

fn tolerates(toleration: &Value, taint: &Value) -> bool {
    let effect_matches = toleration["effect"].as_str().is_none_or(|e| e.is_empty() || taint["effect"] == e);
    let key = toleration["key"].as_str().unwrap_or_default();
    let key_matches = key.is_empty() || taint["key"] == key;
    let value_matches = match toleration["operator"].as_str().unwrap_or("Equal") {
        "Exists" => true,
        _ => taint["value"].as_str().unwrap_or_default() == toleration["value"].as_str().unwrap_or_default(),
    };
    effect_matches && key_matches && value_matches
}

/// The container that runs bcd: the one named `bcd`, else the first.
fn container(spec: &Value) -> Option<&Value> {
    let containers = spec["containers"].as_array()?;
    containers.iter().find(|c| c["name"] == "bcd").or_else(|| containers.first())
}

/// Every `--label k=v` (or `--label=k=v`) of the args.
fn labels(args: &[Value]) -> Vec<(String, String)> {
    let args: Vec<&str> = args.iter().filter_map(Value::as_str).collect();
    let mut labels = Vec::new();
    for (index, arg) in args.iter().enumerate() {
        let pair = match arg.strip_prefix("--label=") {
            Some(pair) => Some(pair),
            None if *arg == "--label" => args.get(index + 1).copied(),
            None => None,
        };
        if let Some((key, value)) = pair.and_then(|p| p.split_once('=')) {
            labels.push((key.to_owned(), value.to_owned()));
        }
    }
    labels
}

/// How the DaemonSet's bcd starts on `node`, as pod `pod` of `namespace`.
pub fn launch(spec: &Value, objects: &KubeObjects, namespace: &str, node: &str, pod: &str) -> Result<Launch, NotYet> {
    let Some(container) = container(spec) else {
        return Err(NotYet::config("the pod template has no container".into()));
    };
    let mut env = std::collections::BTreeMap::new();
    for variable in container["env"].as_array().into_iter().flatten() {
        let name = variable["name"].as_str().unwrap_or_default().to_owned();
        let value = if let Some(value) = variable["value"].as_str() {
            value.to_owned()
        } else if let Some(reference) = variable["valueFrom"]["secretKeyRef"].as_object() {
            match secret_key(objects, namespace, reference)? {
                Some(value) => value,
                None => continue,
            }
        } else if let Some(path) = variable["valueFrom"]["fieldRef"]["fieldPath"].as_str() {
            match path {
                "spec.nodeName" => node.to_owned(),
                "metadata.name" => pod.to_owned(),
                "metadata.namespace" => namespace.to_owned(),
                other => return Err(NotYet::config(format!("the fake kubelet does not resolve fieldPath {other}"))),
            }
        } else {
            String::new()
        };
        env.insert(name, value);
    }
    let Some(endpoint) = env.get("BCD_ENDPOINT").filter(|e| !e.is_empty()).cloned() else {
        return Err(NotYet::config("bcd's container has no BCD_ENDPOINT".into()));
    };
    let ca_sha256 = match env.get("BCD_CA_SHA256").filter(|p| !p.is_empty()) {
        Some(pin) => Some(pin.parse::<CaPin>().map_err(|e| NotYet::config(format!("BCD_CA_SHA256: {e}")))?),
        None => None,
    };
    Ok(Launch {
        endpoint,
        token: env.get("BCD_TOKEN").cloned().unwrap_or_default(),
        ca_sha256,
        labels: labels(container["args"].as_array().map(Vec::as_slice).unwrap_or_default()),
        machine_id: env.get("BCD_MACHINE_ID").filter(|m| !m.is_empty()).cloned().unwrap_or_else(|| node.to_owned()),
    })
}

/// A `secretKeyRef`'s value: `None` when it is optional and missing.
fn secret_key(
    objects: &KubeObjects,
    namespace: &str,
    reference: &Map<String, Value>,
) -> Result<Option<String>, NotYet> {
    let name = reference.get("name").and_then(Value::as_str).unwrap_or_default();
    let key = reference.get("key").and_then(Value::as_str).unwrap_or_default();
    let optional = reference.get("optional").and_then(Value::as_bool).unwrap_or(false);
    let secrets = crate::kubeapi::resource("secrets");
    let missing = |message: String| if optional { Ok(None) } else { Err(NotYet::config(message)) };
    let Some(secret) = objects.get(secrets, namespace, name) else {
        return missing(format!("secret \"{name}\" not found"));
    };
    let Some(encoded) = secret["data"][key].as_str() else {
        return missing(format!("couldn't find key {key} in Secret {namespace}/{name}"));
    };
    let decoded = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| NotYet::config(format!("Secret {namespace}/{name} key {key}: {e}")))?;
    Ok(Some(String::from_utf8_lossy(&decoded).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_template_selects_by_node_selector_affinity_and_tolerated_taints() {
        let labels = json!({"cloud.google.com/gke-nodepool": "bc-pool-general", "zone": "a"});
        let labels = labels.as_object().unwrap();
        let taint = json!({"key": "dedicated", "value": "batch", "effect": "NoSchedule"});
        let by_pool = json!({"nodeSelector": {"cloud.google.com/gke-nodepool": "bc-pool-general"}});
        assert!(selects(&by_pool, labels, &[]));
        assert!(!selects(&by_pool, labels, std::slice::from_ref(&taint)), "an untolerated taint keeps it off");
        let tolerant = json!({"nodeSelector": {"cloud.google.com/gke-nodepool": "bc-pool-general"},
                              "tolerations": [{"operator": "Exists"}]});
        assert!(selects(&tolerant, labels, &[taint]));
        let affinity = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
            "nodeSelectorTerms": [{"matchExpressions": [{"key": "cloud.google.com/gke-nodepool", "operator": "In",
                                                          "values": ["bc-pool-gpu", "bc-pool-general"]}]}]}}}});
        assert!(selects(&affinity, labels, &[]));
        assert!(!selects(&json!({"nodeSelector": {"zone": "b"}}), labels, &[]));
    }

    #[test]
    fn args_give_every_label_pair() {
        let args = json!(["join", "--label", "better-compute.dev/flavor=general", "--label=rack=r1", "--label"]);
        assert_eq!(
            labels(args.as_array().unwrap()),
            vec![("better-compute.dev/flavor".into(), "general".into()), ("rack".into(), "r1".into())]
        );
    }
}
