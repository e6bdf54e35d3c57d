//! The DigitalOcean adapter: `/v2` load balancers, droplets (instances), VPCs (networks) and
//! certificates.
//!
//! It honors rate limits: a `429` is waited out for its `retry-after` when that is short, and
//! otherwise returned as transient with the wait; `ratelimit-*` headers are kept so a caller
//! can see how much budget is left.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::cloud::{
    Certificate, CertificateSpec, Certificates, ForwardingRule, HealthCheck, Instance, InstanceSpec, Instances,
    LoadBalancer, LoadBalancerSpec, LoadBalancers, Network, NetworkSpec, Networks,
};
use super::error::{ProviderError, ProviderResult};

const PROVIDER: &str = "digitalocean";

/// The page size of list calls (DigitalOcean's maximum is 200).
const PER_PAGE: usize = 100;

/// How to reach DigitalOcean.
#[derive(Clone)]
pub struct DigitalOceanConfig {
    /// `https://api.digitalocean.com` in production.
    pub base_url: String,
    /// The API token: a secret, hidden from `Debug`.
    pub token: String,
    /// The longest `retry-after` waited out inside one call; longer ones are returned.
    pub max_rate_limit_wait: Duration,
}

impl std::fmt::Debug for DigitalOceanConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DigitalOceanConfig").field("base_url", &self.base_url).finish_non_exhaustive()
    }
}

/// What the last answer said of the rate limit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct RateLimit {
    /// Requests allowed per window.
    pub limit: u64,
    /// Requests left in the window.
    pub remaining: u64,
    /// When the window resets (Unix seconds).
    pub reset: u64,
}

/// The DigitalOcean adapter.
#[derive(Clone, Debug)]
pub struct DigitalOcean {
    config: DigitalOceanConfig,
    http: reqwest::Client,
    rate_limit: Arc<Mutex<Option<RateLimit>>>,
}

impl DigitalOcean {
    /// An adapter over `http`.
    pub fn new(config: DigitalOceanConfig, http: reqwest::Client) -> Self {
        Self { config, http, rate_limit: Arc::new(Mutex::new(None)) }
    }

    /// The rate limit as of the last answer.
    pub fn rate_limit(&self) -> Option<RateLimit> {
        *self.rate_limit.lock().expect("the rate-limit lock is never poisoned")
    }

    /// One call; `None` for an empty answer (204).
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> ProviderResult<Option<Value>> {
        let url = format!("{}/v2/{path}", self.config.base_url.trim_end_matches('/'));
        loop {
            let mut request = self.http.request(method.clone(), &url).bearer_auth(&self.config.token);
            if let Some(body) = body {
                request = request.json(body);
            }
            let response = request.send().await.map_err(|error| ProviderError::transport(PROVIDER, error))?;
            let status = response.status().as_u16();
            self.remember_rate_limit(&response);
            let retry_after = number_header(&response, "retry-after").map(Duration::from_secs);
            let bytes = response.bytes().await.map_err(|error| ProviderError::transport(PROVIDER, error))?;
            if status == 429 {
                let wait = retry_after.unwrap_or(Duration::from_secs(1));
                if wait <= self.config.max_rate_limit_wait {
                    tokio::time::sleep(wait).await;
                    continue;
                }
            }
            if (200..300).contains(&status) {
                if bytes.is_empty() {
                    return Ok(None);
                }
                return serde_json::from_slice(&bytes).map(Some).map_err(|e| ProviderError::decode(PROVIDER, path, e));
            }
            let mut error = classify(status, &bytes);
            error.retry_after = retry_after;
            return Err(error);
        }
    }

    async fn value(&self, method: Method, path: &str, body: Option<&Value>) -> ProviderResult<Value> {
        self.call(method, path, body)
            .await?
            .ok_or_else(|| ProviderError::decode(PROVIDER, path, "an empty answer where a body was expected"))
    }

    /// Every page of a list, following `links.pages.next` by page number.
    async fn list_all(&self, path: &str, field: &str) -> ProviderResult<Vec<Value>> {
        let separator = if path.contains('?') { '&' } else { '?' };
        let mut items = Vec::new();
        for page in 1.. {
            let body =
                self.value(Method::GET, &format!("{path}{separator}page={page}&per_page={PER_PAGE}"), None).await?;
            let batch = body[field].as_array().cloned().unwrap_or_default();
            let more = body["links"]["pages"]["next"].is_string() && !batch.is_empty();
            items.extend(batch);
            if !more {
                break;
            }
        }
        Ok(items)
    }

    fn remember_rate_limit(&self, response: &reqwest::Response) {
        if let (Some(limit), Some(remaining), Some(reset)) = (
            number_header(response, "ratelimit-limit"),
            number_header(response, "ratelimit-remaining"),
            number_header(response, "ratelimit-reset"),
        ) {
            *self.rate_limit.lock().expect("the rate-limit lock is never poisoned") =
                Some(RateLimit { limit, remaining, reset });
        }
    }
}

fn number_header(response: &reqwest::Response, name: &str) -> Option<u64> {
    response.headers().get(name)?.to_str().ok()?.trim().parse().ok()
}

/// DigitalOcean's error body: `{"id": "not_found", "message": "...", "request_id": "..."}`.
pub fn classify(status: u16, body: &[u8]) -> ProviderError {
    #[derive(Deserialize, Default)]
    #[serde(default)]
    struct Body {
        id: String,
        message: String,
        request_id: Option<String>,
    }
    let parsed: Body = serde_json::from_slice(body).unwrap_or_default();
    let message = if parsed.message.is_empty() { format!("HTTP {status}") } else { parsed.message };
    ProviderError {
        status: Some(status),
        reason: parsed.id,
        request_id: parsed.request_id,
        ..ProviderError::new(ProviderError::kind_of_status(status), PROVIDER, message)
    }
}

fn decode<T: serde::de::DeserializeOwned>(value: &Value, what: &str) -> ProviderResult<T> {
    T::deserialize(value).map_err(|error| ProviderError::decode(PROVIDER, what, error))
}

fn load_balancer_body(spec: &LoadBalancerSpec) -> Value {
    let mut body = json!({
        "name": spec.name,
        "region": spec.region,
        "forwarding_rules": spec.forwarding_rules,
    });
    if spec.size_unit > 0 {
        body["size_unit"] = json!(spec.size_unit);
    }
    if !spec.kind.is_empty() {
        body["type"] = json!(spec.kind);
    }
    if !spec.vpc_uuid.is_empty() {
        body["vpc_uuid"] = json!(spec.vpc_uuid);
    }
    if let Some(check) = &spec.health_check {
        body["health_check"] = json!(check);
    }
    if spec.tag.is_empty() {
        body["droplet_ids"] = json!(spec.instance_ids);
    } else {
        body["tag"] = json!(spec.tag);
    }
    body
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireLoadBalancer {
    id: String,
    name: String,
    ip: String,
    status: String,
    region: WireRegion,
    size_unit: u32,
    #[serde(rename = "type")]
    kind: String,
    vpc_uuid: String,
    forwarding_rules: Vec<ForwardingRule>,
    health_check: Option<HealthCheck>,
    droplet_ids: Vec<u64>,
    tag: String,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireRegion {
    slug: String,
}

impl From<WireLoadBalancer> for LoadBalancer {
    fn from(lb: WireLoadBalancer) -> Self {
        LoadBalancer {
            id: lb.id,
            name: lb.name.clone(),
            status: lb.status,
            ip: lb.ip,
            region: lb.region.slug.clone(),
            spec: LoadBalancerSpec {
                name: lb.name,
                region: lb.region.slug,
                size_unit: lb.size_unit,
                kind: lb.kind,
                vpc_uuid: lb.vpc_uuid,
                forwarding_rules: lb.forwarding_rules,
                health_check: lb.health_check,
                instance_ids: lb.droplet_ids,
                tag: lb.tag,
            },
        }
    }
}

fn load_balancer(value: &Value) -> ProviderResult<LoadBalancer> {
    decode::<WireLoadBalancer>(value, "a load balancer").map(LoadBalancer::from)
}

#[async_trait::async_trait]
impl LoadBalancers for DigitalOcean {
    async fn load_balancer_create(&self, spec: &LoadBalancerSpec) -> ProviderResult<LoadBalancer> {
        let body = self.value(Method::POST, "load_balancers", Some(&load_balancer_body(spec))).await?;
        load_balancer(&body["load_balancer"])
    }

    async fn load_balancer_get(&self, id: &str) -> ProviderResult<LoadBalancer> {
        let body = self.value(Method::GET, &format!("load_balancers/{id}"), None).await?;
        load_balancer(&body["load_balancer"])
    }

    async fn load_balancer_list(&self) -> ProviderResult<Vec<LoadBalancer>> {
        self.list_all("load_balancers", "load_balancers").await?.iter().map(load_balancer).collect()
    }

    async fn load_balancer_update(&self, id: &str, spec: &LoadBalancerSpec) -> ProviderResult<LoadBalancer> {
        let path = format!("load_balancers/{id}");
        let body = self.value(Method::PUT, &path, Some(&load_balancer_body(spec))).await?;
        load_balancer(&body["load_balancer"])
    }

    async fn load_balancer_delete(&self, id: &str) -> ProviderResult<()> {
        self.call(Method::DELETE, &format!("load_balancers/{id}"), None).await.map(drop)
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireDroplet {
    id: u64,
    name: String,
    status: String,
    region: WireRegion,
    networks: WireNetworks,
    tags: Vec<String>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireNetworks {
    v4: Vec<WireAddress>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireAddress {
    ip_address: String,
    #[serde(rename = "type")]
    kind: String,
}

fn instance(value: &Value) -> ProviderResult<Instance> {
    let droplet: WireDroplet = decode(value, "a droplet")?;
    let address = |kind: &str| {
        droplet.networks.v4.iter().find(|a| a.kind == kind).map(|a| a.ip_address.clone()).unwrap_or_default()
    };
    Ok(Instance {
        id: droplet.id,
        public_ipv4: address("public"),
        private_ipv4: address("private"),
        name: droplet.name,
        status: droplet.status,
        region: droplet.region.slug,
        tags: droplet.tags,
    })
}

#[async_trait::async_trait]
impl Instances for DigitalOcean {
    async fn instance_create(&self, spec: &InstanceSpec) -> ProviderResult<Instance> {
        let mut body = json!({
            "name": spec.name, "region": spec.region, "size": spec.size, "image": spec.image, "tags": spec.tags,
        });
        if !spec.vpc_uuid.is_empty() {
            body["vpc_uuid"] = json!(spec.vpc_uuid);
        }
        if !spec.user_data.is_empty() {
            body["user_data"] = json!(spec.user_data);
        }
        let answer = self.value(Method::POST, "droplets", Some(&body)).await?;
        instance(&answer["droplet"])
    }

    async fn instance_get(&self, id: u64) -> ProviderResult<Instance> {
        instance(&self.value(Method::GET, &format!("droplets/{id}"), None).await?["droplet"])
    }

    async fn instance_list(&self, tag: &str) -> ProviderResult<Vec<Instance>> {
        let path = if tag.is_empty() { "droplets".to_owned() } else { format!("droplets?tag_name={tag}") };
        self.list_all(&path, "droplets").await?.iter().map(instance).collect()
    }

    async fn instance_delete(&self, id: u64) -> ProviderResult<()> {
        self.call(Method::DELETE, &format!("droplets/{id}"), None).await.map(drop)
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireVpc {
    id: String,
    name: String,
    region: String,
    ip_range: String,
}

fn network(value: &Value) -> ProviderResult<Network> {
    let vpc: WireVpc = decode(value, "a VPC")?;
    Ok(Network { id: vpc.id, name: vpc.name, region: vpc.region, ip_range: vpc.ip_range })
}

#[async_trait::async_trait]
impl Networks for DigitalOcean {
    async fn network_create(&self, spec: &NetworkSpec) -> ProviderResult<Network> {
        let mut body = json!({"name": spec.name, "region": spec.region, "description": spec.description});
        if !spec.ip_range.is_empty() {
            body["ip_range"] = json!(spec.ip_range);
        }
        network(&self.value(Method::POST, "vpcs", Some(&body)).await?["vpc"])
    }

    async fn network_get(&self, id: &str) -> ProviderResult<Network> {
        network(&self.value(Method::GET, &format!("vpcs/{id}"), None).await?["vpc"])
    }

    async fn network_list(&self) -> ProviderResult<Vec<Network>> {
        self.list_all("vpcs", "vpcs").await?.iter().map(network).collect()
    }

    async fn network_delete(&self, id: &str) -> ProviderResult<()> {
        self.call(Method::DELETE, &format!("vpcs/{id}"), None).await.map(drop)
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireCertificate {
    id: String,
    name: String,
    state: String,
    #[serde(rename = "type")]
    kind: String,
    dns_names: Vec<String>,
    not_after: String,
}

fn certificate(value: &Value) -> ProviderResult<Certificate> {
    let cert: WireCertificate = decode(value, "a certificate")?;
    Ok(Certificate {
        id: cert.id,
        name: cert.name,
        state: cert.state,
        kind: cert.kind,
        dns_names: cert.dns_names,
        not_after: cert.not_after,
    })
}

#[async_trait::async_trait]
impl Certificates for DigitalOcean {
    async fn certificate_create(&self, spec: &CertificateSpec) -> ProviderResult<Certificate> {
        let body = match spec {
            CertificateSpec::Custom { name, private_key, leaf_certificate, certificate_chain } => json!({
                "name": name, "type": "custom", "private_key": private_key,
                "leaf_certificate": leaf_certificate, "certificate_chain": certificate_chain,
            }),
            CertificateSpec::LetsEncrypt { name, dns_names } => {
                json!({"name": name, "type": "lets_encrypt", "dns_names": dns_names})
            }
        };
        certificate(&self.value(Method::POST, "certificates", Some(&body)).await?["certificate"])
    }

    async fn certificate_get(&self, id: &str) -> ProviderResult<Certificate> {
        certificate(&self.value(Method::GET, &format!("certificates/{id}"), None).await?["certificate"])
    }

    async fn certificate_list(&self) -> ProviderResult<Vec<Certificate>> {
        self.list_all("certificates", "certificates").await?.iter().map(certificate).collect()
    }

    async fn certificate_delete(&self, id: &str) -> ProviderResult<()> {
        self.call(Method::DELETE, &format!("certificates/{id}"), None).await.map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provider::ErrorKind;

    #[test]
    fn error_bodies_keep_id_message_and_request_id() {
        let error = classify(404, br#"{"id":"not_found","message":"gone","request_id":"r-1"}"#);
        assert_eq!(error.kind, ErrorKind::NotFound);
        assert_eq!((error.reason.as_str(), error.message.as_str()), ("not_found", "gone"));
        assert_eq!(error.request_id.as_deref(), Some("r-1"));
        assert_eq!(classify(429, b"").kind, ErrorKind::Transient);
    }

    #[test]
    fn a_balancer_targets_droplets_or_a_tag_never_both() {
        let by_tag = LoadBalancerSpec { tag: "web".into(), instance_ids: vec![1], ..Default::default() };
        let body = load_balancer_body(&by_tag);
        assert_eq!(body["tag"], "web");
        assert!(body.get("droplet_ids").is_none());
    }

    #[test]
    fn the_config_hides_its_token() {
        let config = DigitalOceanConfig {
            base_url: "http://x".into(),
            token: "dop_v1_secret".into(),
            max_rate_limit_wait: Duration::from_secs(1),
        };
        assert!(!format!("{config:?}").contains("secret"));
    }
}
