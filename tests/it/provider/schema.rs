//! The fake cloud's real response bodies checked against the official schemas: Google's GKE
//! discovery document and DigitalOcean's OpenAPI specification, loaded from
//! `tests/provider-specs/` (copies of the providers' publications). The checker is small: every
//! field must be one the schema defines, with the type (int64 as a string), enum value and
//! required fields it says.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use better_compute::provider::{
    CertificateSpec, Certificates, ClusterSpec, Domain, Firewall, ForwardingRule, GlobalSettings, HealthCheck,
    InstanceSpec, Instances, LoadBalancerSpec, LoadBalancers, ManagedKubernetes, NetworkSpec, Networks, StickySessions,
    VolumeChange, VolumeSpec, Volumes,
};
use serde_json::Value;

use super::{LOCATION, PROJECT, cloud, digitalocean, gke, wait};

fn specs() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/provider-specs")
}

/// Checks `value` against the discovery document's schema `name`; returns every violation.
fn check_discovery(doc: &Value, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
    if let Some(name) = schema["$ref"].as_str() {
        return check_discovery(doc, &doc["schemas"][name], value, at, errors);
    }
    let expected = schema["type"].as_str().unwrap_or_default();
    let ok = match expected {
        "string" => value.is_string(),
        "integer" => value.is_i64() || value.is_u64(),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "array" => value.is_array(),
        "object" | "any" | "" => true,
        other => panic!("unknown discovery type {other}"),
    };
    if !ok {
        errors.push(format!("{at}: expected {expected} ({}), got {value}", schema["format"].as_str().unwrap_or("")));
        return;
    }
    if let (Some(allowed), Some(text)) = (schema["enum"].as_array(), value.as_str())
        && !allowed.iter().any(|a| a == text)
    {
        errors.push(format!("{at}: {text:?} is not one of the enum"));
    }
    if let Some(items) = value.as_array() {
        for (index, item) in items.iter().enumerate() {
            check_discovery(doc, &schema["items"], item, &format!("{at}[{index}]"), errors);
        }
    }
    if let Some(fields) = value.as_object() {
        for (key, field) in fields {
            let at = format!("{at}.{key}");
            if let Some(property) = schema["properties"].get(key) {
                check_discovery(doc, property, field, &at, errors);
            } else if schema["additionalProperties"].is_object() {
                check_discovery(doc, &schema["additionalProperties"], field, &at, errors);
            } else if schema["properties"].is_object() {
                errors.push(format!("{at}: not a field of the schema"));
            }
        }
    }
}

/// An OpenAPI schema with its `$ref`s resolved relative to the file it came from.
struct OpenApi {
    root: PathBuf,
}

impl OpenApi {
    fn load(&self, file: &Path) -> Value {
        let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("cannot read {}: {e}", file.display()));
        serde_yaml::from_str(&text).unwrap_or_else(|e| panic!("cannot parse {}: {e}", file.display()))
    }

    /// The schema a `$ref` names, and the file it lives in.
    fn resolve(&self, from: &Path, reference: &str) -> (PathBuf, Value) {
        let (file, pointer) = reference.split_once('#').unwrap_or((reference, ""));
        let file = if file.is_empty() { from.to_path_buf() } else { from.parent().unwrap().join(file) };
        let document = self.load(&file);
        let schema =
            if pointer.is_empty() { document } else { document.pointer(pointer).cloned().unwrap_or(Value::Null) };
        (file, schema)
    }

    /// Every property a schema defines (through allOf), with the file to resolve it from.
    fn properties(&self, from: &Path, schema: &Value, into: &mut Vec<(String, PathBuf, Value)>, open: &mut bool) {
        if let Some(reference) = schema["$ref"].as_str() {
            let (file, resolved) = self.resolve(from, reference);
            return self.properties(&file, &resolved, into, open);
        }
        if let Some(reference) = schema["properties"]["$ref"].as_str() {
            // DigitalOcean shares whole property maps between models by reference.
            let (file, shared) = self.resolve(from, reference);
            let properties = shared.as_object().cloned().unwrap_or_default();
            into.extend(properties.into_iter().map(|(k, v)| (k, file.clone(), v)));
        } else if let Some(properties) = schema["properties"].as_object() {
            into.extend(properties.iter().map(|(k, v)| (k.clone(), from.to_path_buf(), v.clone())));
        }
        if schema.get("additionalProperties").is_some_and(|a| a != false)
            || schema["oneOf"].is_array()
            || schema["anyOf"].is_array()
        {
            *open = true;
        }
        for part in schema["allOf"].as_array().into_iter().flatten() {
            self.properties(from, part, into, open);
        }
    }

    fn check(&self, from: &Path, schema: &Value, value: &Value, at: &str, errors: &mut Vec<String>) {
        if let Some(reference) = schema["$ref"].as_str() {
            let (file, resolved) = self.resolve(from, reference);
            return self.check(&file, &resolved, value, at, errors);
        }
        if value.is_null() && schema["nullable"] == true {
            return;
        }
        for alternatives in ["oneOf", "anyOf"] {
            if let Some(options) = schema[alternatives].as_array() {
                let fits = options.iter().any(|option| {
                    let mut scratch = Vec::new();
                    self.check(from, option, value, at, &mut scratch);
                    scratch.is_empty()
                });
                if !fits {
                    errors.push(format!("{at}: fits none of {alternatives}"));
                }
                return;
            }
        }
        let expected = schema["type"].as_str().unwrap_or_default();
        let ok = match expected {
            "string" => value.is_string(),
            "integer" => value.is_i64() || value.is_u64(),
            "number" => value.is_number(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            _ => true,
        };
        if !ok {
            errors.push(format!("{at}: expected {expected}, got {value}"));
            return;
        }
        if let (Some(allowed), false) = (schema["enum"].as_array(), value.is_null())
            && !allowed.contains(value)
        {
            errors.push(format!("{at}: {value} is not one of {allowed:?}"));
        }
        if let Some(items) = value.as_array() {
            for (index, item) in items.iter().enumerate() {
                self.check(from, &schema["items"], item, &format!("{at}[{index}]"), errors);
            }
        }
        if let Some(fields) = value.as_object() {
            let (mut properties, mut open) = (Vec::new(), false);
            self.properties(from, schema, &mut properties, &mut open);
            for part in schema["allOf"].as_array().into_iter().flatten() {
                let mut required = BTreeSet::new();
                self.required(from, part, &mut required);
                for name in required.iter().filter(|name| !fields.contains_key(*name)) {
                    errors.push(format!("{at}.{name}: required, missing"));
                }
            }
            for name in schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str) {
                if !fields.contains_key(name) {
                    errors.push(format!("{at}.{name}: required, missing"));
                }
            }
            for (key, field) in fields {
                match properties.iter().find(|(name, _, _)| name == key) {
                    Some((_, file, property)) => self.check(file, property, field, &format!("{at}.{key}"), errors),
                    None if !open && !properties.is_empty() => {
                        errors.push(format!("{at}.{key}: not a field of the schema"))
                    }
                    None => {}
                }
            }
        }
    }

    fn required(&self, from: &Path, schema: &Value, into: &mut BTreeSet<String>) {
        if let Some(reference) = schema["$ref"].as_str() {
            let (file, resolved) = self.resolve(from, reference);
            return self.required(&file, &resolved, into);
        }
        into.extend(schema["required"].as_array().into_iter().flatten().filter_map(Value::as_str).map(str::to_owned));
    }

    /// Checks `value` against the schema `reference` names (a file relative to the specification's
    /// resources, and an optional `#/pointer`).
    fn validate(&self, reference: &str, value: &Value) -> Vec<String> {
        let (path, schema) = self.resolve(&self.root.join("index"), reference);
        assert!(schema.is_object(), "{reference} names no schema");
        let mut errors = Vec::new();
        self.check(&path, &schema, value, "$", &mut errors);
        errors
    }
}

async fn get(url: &str, token: &str) -> Value {
    let response = super::http().get(url).bearer_auth(token).send().await.unwrap();
    response.json().await.unwrap()
}

#[tokio::test]
async fn gke_bodies_validate_against_the_discovery_document() {
    let doc: Value = serde_json::from_str(&std::fs::read_to_string(specs().join("gke/container.v1.json")).unwrap())
        .expect("the discovery document is JSON");
    let cloud = cloud().await;
    let gke = gke(&cloud);
    let op = gke.cluster_create(&ClusterSpec { name: "bc-k-schema".into(), ..Default::default() }).await.unwrap();
    wait(&gke, &op).await;
    let token = gke.tokens().access_token().await.unwrap();
    let base = format!("{}/v1/projects/{PROJECT}/locations/{LOCATION}", cloud.base_url());
    let checks = [
        ("Cluster", get(&format!("{base}/clusters/bc-k-schema"), &token).await),
        ("ListClustersResponse", get(&format!("{base}/clusters"), &token).await),
        ("NodePool", get(&format!("{base}/clusters/bc-k-schema/nodePools/default-pool"), &token).await),
        ("Operation", get(&format!("{base}/operations/{}", op.name), &token).await),
        ("ServerConfig", get(&format!("{base}/serverConfig"), &token).await),
    ];
    for (name, body) in checks {
        let mut errors = Vec::new();
        check_discovery(&doc, &doc["schemas"][name], &body, name, &mut errors);
        assert!(errors.is_empty(), "{name} does not fit the discovery document: {errors:#?}\n{body:#}");
    }
    // The checker itself refuses what the schema does not allow.
    let mut errors = Vec::new();
    check_discovery(
        &doc,
        &doc["schemas"]["NodePool"],
        &serde_json::json!({"initialNodeCount": "3", "bogus": 1}),
        "$",
        &mut errors,
    );
    assert_eq!(errors.len(), 2, "{errors:?}");
}

#[tokio::test]
async fn digitalocean_bodies_validate_against_the_openapi_specification() {
    let spec = OpenApi { root: specs().join("digitalocean/specification/resources") };
    let cloud = cloud().await;
    let adapter = digitalocean(&cloud);
    let vpc = adapter
        .network_create(&NetworkSpec { name: "bc-net".into(), region: "nyc3".into(), ..Default::default() })
        .await
        .unwrap();
    let droplet = adapter
        .instance_create(&InstanceSpec {
            name: "bc-i".into(),
            region: "nyc3".into(),
            size: "s-1vcpu-1gb".into(),
            image: "ubuntu-24-04-x64".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let lb = adapter
        .load_balancer_create(&LoadBalancerSpec {
            name: "bc-lb".into(),
            region: "nyc3".into(),
            forwarding_rules: vec![ForwardingRule {
                entry_protocol: "http".into(),
                entry_port: 80,
                target_protocol: "http".into(),
                target_port: 8080,
                ..Default::default()
            }],
            instance_ids: vec![droplet.id],
            network_stack: "DUALSTACK".into(),
            health_check: Some(HealthCheck { protocol: "tcp".into(), port: 22, ..Default::default() }),
            sticky_sessions: Some(StickySessions { cookie_name: "c".into(), cookie_ttl_seconds: 60 }),
            firewall: Firewall { allow: vec!["cidr:10.0.0.0/8".into()], deny: vec!["ip:192.0.2.1".into()] },
            redirect_http_to_https: true,
            ..Default::default()
        })
        .await
        .unwrap();
    let global = adapter
        .load_balancer_create(&LoadBalancerSpec {
            name: "bc-lb-global".into(),
            kind: "GLOBAL".into(),
            forwarding_rules: vec![ForwardingRule {
                entry_protocol: "http".into(),
                entry_port: 80,
                target_protocol: "http".into(),
                target_port: 8080,
                ..Default::default()
            }],
            target_load_balancer_ids: vec![lb.id.clone()],
            domains: vec![Domain { name: "example.com".into(), certificate_id: String::new() }],
            global_settings: Some(GlobalSettings { target_protocol: "http".into(), target_port: 8080 }),
            ..Default::default()
        })
        .await
        .unwrap();
    let cert = adapter
        .certificate_create(&CertificateSpec::LetsEncrypt {
            name: "bc-cert".into(),
            dns_names: vec!["example.com".into()],
        })
        .await
        .unwrap();
    let volume = adapter
        .volume_create(&VolumeSpec {
            name: "bc-v".into(),
            region: "nyc3".into(),
            size_gigabytes: 10,
            description: "data".into(),
            filesystem_type: "ext4".into(),
            tags: vec!["better-compute".into()],
        })
        .await
        .unwrap();
    adapter.volume_action(&volume.id, "nyc3", VolumeChange::Attach { machine_id: droplet.id }).await.unwrap();
    let token = fakecloud::FakeCloudConfig::default().digitalocean_token;
    let base = format!("{}/v2", cloud.base_url());
    let checks = [
        (
            "load_balancers/models/load_balancer.yml",
            get(&format!("{base}/load_balancers/{}", lb.id), &token).await["load_balancer"].clone(),
        ),
        (
            "load_balancers/models/load_balancer.yml",
            get(&format!("{base}/load_balancers/{}", global.id), &token).await["load_balancer"].clone(),
        ),
        (
            "droplets/models/droplet.yml",
            get(&format!("{base}/droplets/{}", droplet.id), &token).await["droplet"].clone(),
        ),
        ("vpcs/models/vpc.yml#/vpc", get(&format!("{base}/vpcs/{}", vpc.id), &token).await["vpc"].clone()),
        (
            "certificates/models/certificate.yml",
            get(&format!("{base}/certificates/{}", cert.id), &token).await["certificate"].clone(),
        ),
        (
            "volumes/models/volume_full.yml",
            get(&format!("{base}/volumes/{}", volume.id), &token).await["volume"].clone(),
        ),
        (
            "volumes/models/volumeAction.yml",
            get(&format!("{base}/volumes/{}/actions", volume.id), &token).await["actions"][0].clone(),
        ),
        ("../shared/models/error.yml", get(&format!("{base}/vpcs/missing"), &token).await),
    ];
    for (file, body) in checks {
        assert!(body.is_object(), "{file}: no body");
        let errors = spec.validate(file, &body);
        assert!(errors.is_empty(), "{file} does not fit the specification: {errors:#?}\n{body:#}");
    }
    // The checker itself refuses what the schema does not allow.
    let errors = spec.validate("vpcs/models/vpc.yml#/vpc", &serde_json::json!({"name": 7, "bogus": true}));
    assert_eq!(errors.len(), 2, "{errors:?}");
}
