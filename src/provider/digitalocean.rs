//! The DigitalOcean adapter: `/v2` load balancers, droplets (instances), VPCs (networks),
//! certificates and volumes with their actions.
//!
//! It honors rate limits: its calls wait their turn in the account's pacer (see
//! [`super::pacing`]), which also learns from the `ratelimit-*` headers and `retry-after`; a `429`
//! is waited out (three times at most) when its `retry-after` is short, and otherwise returned as
//! `throttled` with the wait.

use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use reqwest::Method;
use serde::Deserialize;
use serde_json::{Value, json};

use super::cloud::{
    Certificate, CertificateSpec, Certificates, Domain, Firewall, ForwardingRule, GlobalSettings, HealthCheck,
    Instance, InstanceSpec, Instances, LoadBalancer, LoadBalancerSpec, LoadBalancers, Network, NetworkSpec, Networks,
    StickySessions, Volume, VolumeAction, VolumeChange, VolumeSpec, Volumes,
};
use super::error::{ProviderError, ProviderResult};
use super::pacing::{AccountPacer, AfterCall, Answered};
use crate::domain::health_check;
use crate::secrets::Secret;

const PROVIDER: &str = "digitalocean";

/// The page size of list calls (DigitalOcean's maximum is 200).
const PER_PAGE: usize = 100;

/// The health check DigitalOcean gives a load balancer sent none ([`health_check::DEFAULTS`]).
pub fn load_balancer_health_check_defaults() -> HealthCheck {
    let defaults = health_check::DEFAULTS;
    HealthCheck {
        protocol: defaults.protocol.to_owned(),
        port: defaults.port,
        path: defaults.path.to_owned(),
        check_interval_seconds: defaults.interval_seconds,
        response_timeout_seconds: defaults.timeout_seconds,
        unhealthy_threshold: defaults.unhealthy_threshold,
        healthy_threshold: defaults.healthy_threshold,
    }
}

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
    /// The API token: the configured one, replaced when the account's credentials rotate.
    token: Arc<RwLock<Secret>>,
    /// The account's pacer; none for an adapter made without a store (tests of the adapter).
    pacer: Option<AccountPacer>,
}

impl DigitalOcean {
    /// An adapter over `http`.
    pub fn new(config: DigitalOceanConfig, http: reqwest::Client) -> Self {
        let token = Arc::new(RwLock::new(Secret::new(config.token.clone())));
        Self { config, http, rate_limit: Arc::new(Mutex::new(None)), token, pacer: None }
    }

    /// The adapter with its calls paced by `pacer`.
    pub fn paced(self, pacer: AccountPacer) -> Self {
        Self { pacer: Some(pacer), ..self }
    }

    /// The rate limit as of the last answer.
    pub fn rate_limit(&self) -> Option<RateLimit> {
        *self.rate_limit.lock().expect("the rate-limit lock is never poisoned")
    }

    /// One call; `None` for an empty answer (204).
    async fn call(&self, method: Method, path: &str, body: Option<&Value>) -> ProviderResult<Option<Value>> {
        let url = format!("{}/v2/{path}", self.config.base_url.trim_end_matches('/'));
        let mut rotated = false;
        let mut throttled = 0;
        loop {
            let ticket = match &self.pacer {
                Some(pacer) => Some(pacer.admit(PROVIDER).await?),
                None => None,
            };
            if let Some(credentials) = ticket.as_ref().and_then(|ticket| ticket.credentials.as_ref()) {
                *self.token.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = credentials.clone();
            }
            let token = self.token.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone();
            let mut request = self.http.request(method.clone(), &url).bearer_auth(token.expose());
            if let Some(body) = body {
                request = request.json(body);
            }
            let answer = self.send(request, path).await;
            let Some((pacer, ticket)) = self.pacer.as_ref().zip(ticket) else {
                match answer {
                    Err(error) if self.wait_again(&error, &mut throttled) => {
                        tokio::time::sleep(self.short_wait(&error).unwrap_or_default()).await;
                        continue;
                    }
                    answer => return answer.map(|(body, _)| body),
                }
            };
            let told = match &answer {
                Ok((_, spent_until)) => Answered::Ok { pace_until: *spent_until },
                Err(error) => Answered::Failed(error),
            };
            let after = pacer.answered(&ticket, told).await;
            match answer {
                Err(_) if after == AfterCall::Again && !rotated => rotated = true,
                // The pacer waits out the provider's Retry-After for every caller of the account.
                Err(error) if self.wait_again(&error, &mut throttled) => {}
                answer => return answer.map(|(body, _)| body),
            }
        }
    }

    /// Whether to wait out `error` within the call: a 429 asking for a short wait, at most three.
    fn wait_again(&self, error: &ProviderError, throttled: &mut u32) -> bool {
        *throttled += 1;
        error.status == Some(429) && *throttled <= 3 && self.short_wait(error).is_some()
    }

    /// The wait of a 429 short enough to wait within the call.
    fn short_wait(&self, error: &ProviderError) -> Option<Duration> {
        let wait = error.retry_after.unwrap_or(Duration::from_secs(1));
        (wait <= self.config.max_rate_limit_wait).then_some(wait)
    }

    /// Sends `request`: its body (`None` when empty) and, when DigitalOcean said no calls are left
    /// in its window, when the window resets (µs).
    async fn send(&self, request: reqwest::RequestBuilder, path: &str) -> ProviderResult<(Option<Value>, Option<i64>)> {
        let response = request.send().await.map_err(|error| ProviderError::transport(PROVIDER, error))?;
        let status = response.status().as_u16();
        let limit = self.remember_rate_limit(&response);
        // The reset is in whole seconds, cut down: a second more, so the window has freed a call.
        let spent_until = limit
            .filter(|limit| limit.remaining == 0)
            .map(|limit| (i64::try_from(limit.reset).unwrap_or(0) + 1) * 1_000_000);
        let retry_after = number_header(&response, "retry-after").map(Duration::from_secs);
        let bytes = response.bytes().await.map_err(|error| ProviderError::transport(PROVIDER, error))?;
        if (200..300).contains(&status) {
            if bytes.is_empty() {
                return Ok((None, spent_until));
            }
            let body = serde_json::from_slice(&bytes).map_err(|e| ProviderError::decode(PROVIDER, path, e))?;
            return Ok((Some(body), spent_until));
        }
        let mut error = classify(status, &bytes);
        error.retry_after = retry_after.or_else(|| {
            // A 429 without Retry-After: until the window DigitalOcean named resets.
            let reset = limit.filter(|_| status == 429)?.reset;
            let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).ok()?.as_secs();
            Some(Duration::from_secs(reset.saturating_sub(now).max(1)))
        });
        Err(error)
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

    fn remember_rate_limit(&self, response: &reqwest::Response) -> Option<RateLimit> {
        let (Some(limit), Some(remaining), Some(reset)) = (
            number_header(response, "ratelimit-limit"),
            number_header(response, "ratelimit-remaining"),
            number_header(response, "ratelimit-reset"),
        ) else {
            return None;
        };
        let seen = RateLimit { limit, remaining, reset };
        *self.rate_limit.lock().expect("the rate-limit lock is never poisoned") = Some(seen);
        Some(seen)
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

/// The full representation DigitalOcean's PUT wants (what is left out goes back to its default),
/// also the body of a create. Targets are always explicit: `droplet_ids` (regional) or
/// `target_load_balancer_ids` (global); the body never has a `tag`.
fn load_balancer_body(spec: &LoadBalancerSpec) -> Value {
    let global = spec.kind == "GLOBAL";
    let sticky = match &spec.sticky_sessions {
        Some(s) => json!({"type": "cookies", "cookie_name": s.cookie_name, "cookie_ttl_seconds": s.cookie_ttl_seconds}),
        None => json!({"type": "none"}),
    };
    let mut body = json!({
        "name": spec.name,
        "type": if spec.kind.is_empty() { "REGIONAL" } else { spec.kind.as_str() },
        "size_unit": spec.size_unit.max(1),
        "forwarding_rules": spec.forwarding_rules,
        "sticky_sessions": sticky,
        "firewall": spec.firewall,
        "redirect_http_to_https": spec.redirect_http_to_https,
    });
    if let Some(check) = &spec.health_check {
        body["health_check"] = json!(check);
    }
    if !spec.network_stack.is_empty() {
        body["network_stack"] = json!(spec.network_stack);
    }
    if global {
        body["target_load_balancer_ids"] = json!(spec.target_load_balancer_ids);
        body["domains"] = json!(spec.domains);
        if let Some(settings) = &spec.global_settings {
            body["glb_settings"] = json!(settings);
        }
    } else {
        body["region"] = json!(spec.region);
        body["droplet_ids"] = json!(spec.instance_ids);
        if !spec.vpc_uuid.is_empty() {
            body["vpc_uuid"] = json!(spec.vpc_uuid);
        }
    }
    body
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireLoadBalancer {
    id: String,
    name: String,
    ip: String,
    ipv6: String,
    status: String,
    region: Option<WireRegion>,
    size_unit: u32,
    #[serde(rename = "type")]
    kind: String,
    vpc_uuid: String,
    network_stack: String,
    forwarding_rules: Vec<ForwardingRule>,
    health_check: Option<HealthCheck>,
    sticky_sessions: Option<WireStickySessions>,
    firewall: Option<Firewall>,
    redirect_http_to_https: bool,
    droplet_ids: Vec<u64>,
    tag: String,
    target_load_balancer_ids: Vec<String>,
    domains: Vec<Domain>,
    glb_settings: Option<GlobalSettings>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireStickySessions {
    #[serde(rename = "type")]
    kind: String,
    cookie_name: String,
    cookie_ttl_seconds: u32,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireRegion {
    slug: String,
}

impl From<WireLoadBalancer> for LoadBalancer {
    fn from(lb: WireLoadBalancer) -> Self {
        let region = lb.region.map(|r| r.slug).unwrap_or_default();
        LoadBalancer {
            id: lb.id,
            name: lb.name.clone(),
            status: lb.status,
            ip: lb.ip,
            ipv6: lb.ipv6,
            region: region.clone(),
            tag: lb.tag,
            spec: LoadBalancerSpec {
                name: lb.name,
                region,
                size_unit: lb.size_unit,
                kind: lb.kind,
                vpc_uuid: lb.vpc_uuid,
                network_stack: lb.network_stack,
                forwarding_rules: lb.forwarding_rules,
                health_check: lb.health_check,
                sticky_sessions: lb
                    .sticky_sessions
                    .filter(|s| s.kind == "cookies")
                    .map(|s| StickySessions { cookie_name: s.cookie_name, cookie_ttl_seconds: s.cookie_ttl_seconds }),
                firewall: lb.firewall.unwrap_or_default(),
                redirect_http_to_https: lb.redirect_http_to_https,
                instance_ids: lb.droplet_ids,
                target_load_balancer_ids: lb.target_load_balancer_ids,
                domains: lb.domains,
                global_settings: lb.glb_settings,
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
        crate::measured::provider(PROVIDER, "loadBalancers.create", async {
            let body = self.value(Method::POST, "load_balancers", Some(&load_balancer_body(spec))).await?;
            load_balancer(&body["load_balancer"])
        })
        .await
    }

    async fn load_balancer_get(&self, id: &str) -> ProviderResult<LoadBalancer> {
        crate::measured::provider(PROVIDER, "loadBalancers.get", async {
            let body = self.value(Method::GET, &format!("load_balancers/{id}"), None).await?;
            load_balancer(&body["load_balancer"])
        })
        .await
    }

    async fn load_balancer_list(&self) -> ProviderResult<Vec<LoadBalancer>> {
        crate::measured::provider(PROVIDER, "loadBalancers.list", async {
            self.list_all("load_balancers", "load_balancers").await?.iter().map(load_balancer).collect()
        })
        .await
    }

    async fn load_balancer_update(&self, id: &str, spec: &LoadBalancerSpec) -> ProviderResult<LoadBalancer> {
        crate::measured::provider(PROVIDER, "loadBalancers.update", async {
            let path = format!("load_balancers/{id}");
            let body = self.value(Method::PUT, &path, Some(&load_balancer_body(spec))).await?;
            load_balancer(&body["load_balancer"])
        })
        .await
    }

    async fn load_balancer_delete(&self, id: &str) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "loadBalancers.delete", async {
            self.call(Method::DELETE, &format!("load_balancers/{id}"), None).await.map(drop)
        })
        .await
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
        crate::measured::provider(PROVIDER, "droplets.create", async {
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
        })
        .await
    }

    async fn instance_get(&self, id: u64) -> ProviderResult<Instance> {
        crate::measured::provider(PROVIDER, "droplets.get", async {
            instance(&self.value(Method::GET, &format!("droplets/{id}"), None).await?["droplet"])
        })
        .await
    }

    async fn instance_list(&self, tag: &str) -> ProviderResult<Vec<Instance>> {
        crate::measured::provider(PROVIDER, "droplets.list", async {
            let path = if tag.is_empty() { "droplets".to_owned() } else { format!("droplets?tag_name={tag}") };
            self.list_all(&path, "droplets").await?.iter().map(instance).collect()
        })
        .await
    }

    async fn instance_delete(&self, id: u64) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "droplets.delete", async {
            self.call(Method::DELETE, &format!("droplets/{id}"), None).await.map(drop)
        })
        .await
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
        crate::measured::provider(PROVIDER, "vpcs.create", async {
            let mut body = json!({"name": spec.name, "region": spec.region, "description": spec.description});
            if !spec.ip_range.is_empty() {
                body["ip_range"] = json!(spec.ip_range);
            }
            network(&self.value(Method::POST, "vpcs", Some(&body)).await?["vpc"])
        })
        .await
    }

    async fn network_get(&self, id: &str) -> ProviderResult<Network> {
        crate::measured::provider(PROVIDER, "vpcs.get", async {
            network(&self.value(Method::GET, &format!("vpcs/{id}"), None).await?["vpc"])
        })
        .await
    }

    async fn network_list(&self) -> ProviderResult<Vec<Network>> {
        crate::measured::provider(PROVIDER, "vpcs.list", async {
            self.list_all("vpcs", "vpcs").await?.iter().map(network).collect()
        })
        .await
    }

    async fn network_delete(&self, id: &str) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "vpcs.delete", async {
            self.call(Method::DELETE, &format!("vpcs/{id}"), None).await.map(drop)
        })
        .await
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
        crate::measured::provider(PROVIDER, "certificates.create", async {
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
        })
        .await
    }

    async fn certificate_get(&self, id: &str) -> ProviderResult<Certificate> {
        crate::measured::provider(PROVIDER, "certificates.get", async {
            certificate(&self.value(Method::GET, &format!("certificates/{id}"), None).await?["certificate"])
        })
        .await
    }

    async fn certificate_list(&self) -> ProviderResult<Vec<Certificate>> {
        crate::measured::provider(PROVIDER, "certificates.list", async {
            self.list_all("certificates", "certificates").await?.iter().map(certificate).collect()
        })
        .await
    }

    async fn certificate_delete(&self, id: &str) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "certificates.delete", async {
            self.call(Method::DELETE, &format!("certificates/{id}"), None).await.map(drop)
        })
        .await
    }
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireVolume {
    id: String,
    name: String,
    region: WireRegion,
    size_gigabytes: i64,
    droplet_ids: Option<Vec<u64>>,
}

fn volume(value: &Value) -> ProviderResult<Volume> {
    let wire: WireVolume = decode(value, "a volume")?;
    Ok(Volume {
        id: wire.id,
        name: wire.name,
        region: wire.region.slug,
        size_gigabytes: wire.size_gigabytes,
        droplet_ids: wire.droplet_ids.unwrap_or_default(),
    })
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct WireAction {
    id: u64,
    #[serde(rename = "type")]
    kind: String,
    status: String,
}

fn volume_action(value: &Value) -> ProviderResult<VolumeAction> {
    let wire: WireAction = decode(value, "a volume action")?;
    Ok(VolumeAction { id: wire.id, kind: wire.kind, status: wire.status })
}

/// The body of a volume action: `attach` and `detach` name the droplet, `resize` the new size.
fn volume_action_body(region: &str, change: VolumeChange) -> Value {
    match change {
        VolumeChange::Attach { machine_id } => json!({"type": "attach", "droplet_id": machine_id, "region": region}),
        VolumeChange::Detach { machine_id } => json!({"type": "detach", "droplet_id": machine_id, "region": region}),
        VolumeChange::Resize { size_gigabytes } => {
            json!({"type": "resize", "size_gigabytes": size_gigabytes, "region": region})
        }
    }
}

#[async_trait::async_trait]
impl Volumes for DigitalOcean {
    async fn volume_create(&self, spec: &VolumeSpec) -> ProviderResult<Volume> {
        crate::measured::provider(PROVIDER, "volumes.create", async {
            let mut body = json!({
                "name": spec.name, "region": spec.region, "size_gigabytes": spec.size_gigabytes,
                "description": spec.description, "tags": spec.tags,
            });
            if !spec.filesystem_type.is_empty() {
                body["filesystem_type"] = json!(spec.filesystem_type);
            }
            volume(&self.value(Method::POST, "volumes", Some(&body)).await?["volume"])
        })
        .await
    }

    async fn volume_get(&self, id: &str) -> ProviderResult<Volume> {
        crate::measured::provider(PROVIDER, "volumes.get", async {
            volume(&self.value(Method::GET, &format!("volumes/{id}"), None).await?["volume"])
        })
        .await
    }

    async fn volume_find(&self, name: &str, region: &str) -> ProviderResult<Option<Volume>> {
        crate::measured::provider(PROVIDER, "volumes.find", async {
            let path = format!("volumes?name={name}&region={region}");
            let found = self.list_all(&path, "volumes").await?;
            found.first().map(volume).transpose()
        })
        .await
    }

    async fn volume_delete(&self, id: &str) -> ProviderResult<()> {
        crate::measured::provider(PROVIDER, "volumes.delete", async {
            self.call(Method::DELETE, &format!("volumes/{id}"), None).await.map(drop)
        })
        .await
    }

    async fn volume_action(&self, id: &str, region: &str, change: VolumeChange) -> ProviderResult<VolumeAction> {
        crate::measured::provider(PROVIDER, "volumeActions.create", async {
            let body = volume_action_body(region, change);
            volume_action(&self.value(Method::POST, &format!("volumes/{id}/actions"), Some(&body)).await?["action"])
        })
        .await
    }

    async fn volume_actions(&self, id: &str) -> ProviderResult<Vec<VolumeAction>> {
        crate::measured::provider(PROVIDER, "volumeActions.list", async {
            self.list_all(&format!("volumes/{id}/actions"), "actions").await?.iter().map(volume_action).collect()
        })
        .await
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
    fn a_balancer_body_is_a_full_representation_with_explicit_targets_and_no_tag() {
        let regional = LoadBalancerSpec { name: "a".into(), region: "nyc3".into(), ..Default::default() };
        let body = load_balancer_body(&regional);
        assert!(body.get("tag").is_none(), "{body}");
        assert_eq!(body["droplet_ids"], json!([]), "no targets is sent as an empty list, not left out");
        assert_eq!(body["sticky_sessions"], json!({"type": "none"}));
        assert_eq!(body["firewall"], json!({"allow": [], "deny": []}));
        assert_eq!(body["redirect_http_to_https"], false);
        let global = LoadBalancerSpec {
            name: "g".into(),
            kind: "GLOBAL".into(),
            target_load_balancer_ids: vec!["x".into()],
            ..Default::default()
        };
        let body = load_balancer_body(&global);
        assert!(body.get("droplet_ids").is_none() && body.get("region").is_none() && body.get("tag").is_none());
        assert_eq!(body["target_load_balancer_ids"], json!(["x"]));
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
