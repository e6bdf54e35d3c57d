//! The capabilities of a plain cloud: load balancers, instances, networks (VPCs), certificates
//! and block-storage volumes. DigitalOcean implements them; the shapes follow its `/v2` resources.

use serde::{Deserialize, Serialize};

use super::error::ProviderResult;

/// One forwarding rule of a load balancer.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ForwardingRule {
    /// `http`, `https`, `http2`, `http3`, `tcp`, `udp`.
    pub entry_protocol: String,
    /// The port the balancer listens on.
    pub entry_port: u16,
    /// The protocol towards the targets.
    pub target_protocol: String,
    /// The targets' port.
    pub target_port: u16,
    /// The certificate for `https` entry, if any.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub certificate_id: String,
    /// Pass TLS through to the targets.
    #[serde(default)]
    pub tls_passthrough: bool,
}

/// How the balancer checks its targets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthCheck {
    /// `http`, `https` or `tcp`.
    pub protocol: String,
    /// The port to check.
    pub port: u16,
    /// The path for HTTP checks.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub path: String,
    /// Seconds between checks (0: the provider's default, not sent).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub check_interval_seconds: u32,
    /// Seconds before a check fails (0: the provider's default).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub response_timeout_seconds: u32,
    /// Failures before a target is out (0: the provider's default).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unhealthy_threshold: u32,
    /// Successes before a target is in (0: the provider's default).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub healthy_threshold: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// Sticky sessions by cookie.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StickySessions {
    /// The cookie's name.
    pub cookie_name: String,
    /// Its lifetime in seconds.
    pub cookie_ttl_seconds: u32,
}

/// Who may reach a balancer, in the provider's form (`ip:1.2.3.4`, `cidr:1.2.0.0/16`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Firewall {
    /// Allowed sources (empty: anyone not denied).
    #[serde(default)]
    pub allow: Vec<String>,
    /// Denied sources.
    #[serde(default)]
    pub deny: Vec<String>,
}

impl Firewall {
    /// The provider's form of IPv4 CIDRs: `cidr:10.0.0.0/8`.
    pub fn rules_of(cidrs: &[String]) -> Vec<String> {
        cidrs.iter().map(|cidr| format!("cidr:{cidr}")).collect()
    }
}

/// A domain a global balancer serves.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Domain {
    /// The fully qualified name.
    pub name: String,
    /// The certificate for it, if any.
    #[serde(default)]
    pub certificate_id: String,
}

/// How a global balancer forwards to its regional targets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GlobalSettings {
    /// `http`, `https` or `http2`.
    pub target_protocol: String,
    /// The targets' port.
    pub target_port: u16,
}

/// What a load balancer should be: the full representation (updates replace it whole, so every
/// field is sent every time). Targets are explicit machine ids (or, for a global balancer,
/// balancer ids): there is deliberately no way to target by tag.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadBalancerSpec {
    /// The provider-side name.
    pub name: String,
    /// The region slug (`nyc3`); empty for a global balancer.
    pub region: String,
    /// Size in nodes.
    pub size_unit: u32,
    /// `REGIONAL` or `GLOBAL`.
    pub kind: String,
    /// The VPC to live in; empty: the region's default.
    pub vpc_uuid: String,
    /// `IPV4` or `DUALSTACK` (fixed at creation).
    pub network_stack: String,
    /// The rules.
    pub forwarding_rules: Vec<ForwardingRule>,
    /// The health check, or the provider's default.
    pub health_check: Option<HealthCheck>,
    /// Sticky sessions; `None`: none.
    pub sticky_sessions: Option<StickySessions>,
    /// Who may reach it.
    pub firewall: Firewall,
    /// HTTP redirected to HTTPS.
    pub redirect_http_to_https: bool,
    /// Targets by instance id (regional).
    pub instance_ids: Vec<u64>,
    /// Targets by balancer id (global).
    pub target_load_balancer_ids: Vec<String>,
    /// Domains (global).
    pub domains: Vec<Domain>,
    /// Forwarding to the targets (global).
    pub global_settings: Option<GlobalSettings>,
}

/// A load balancer as the provider reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LoadBalancer {
    /// The provider's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// `new`, `active` or `errored`.
    pub status: String,
    /// The public IPv4 address, once it has one.
    pub ip: String,
    /// The public IPv6 address, once it has one (dual-stack).
    pub ipv6: String,
    /// Its region slug.
    pub region: String,
    /// The tag it targets by, if someone set one (never better-compute).
    pub tag: String,
    /// Its current full representation.
    pub spec: LoadBalancerSpec,
}

/// Load balancers.
#[async_trait::async_trait]
pub trait LoadBalancers: Send + Sync {
    /// Starts creating a balancer; it is `new` until it has an address.
    async fn load_balancer_create(&self, spec: &LoadBalancerSpec) -> ProviderResult<LoadBalancer>;
    /// Reads one.
    async fn load_balancer_get(&self, id: &str) -> ProviderResult<LoadBalancer>;
    /// Lists all of them, every page.
    async fn load_balancer_list(&self) -> ProviderResult<Vec<LoadBalancer>>;
    /// Replaces its representation.
    async fn load_balancer_update(&self, id: &str, spec: &LoadBalancerSpec) -> ProviderResult<LoadBalancer>;
    /// Deletes it.
    async fn load_balancer_delete(&self, id: &str) -> ProviderResult<()>;
}

/// What an instance should be.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct InstanceSpec {
    /// Its name.
    pub name: String,
    /// The region slug.
    pub region: String,
    /// The size slug (`s-1vcpu-1gb`).
    pub size: String,
    /// The image slug (`ubuntu-24-04-x64`).
    pub image: String,
    /// The VPC to live in, empty for the region's default.
    pub vpc_uuid: String,
    /// Tags (balancers select by tag).
    pub tags: Vec<String>,
    /// Cloud-init user data.
    pub user_data: String,
}

/// An instance as the provider reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Instance {
    /// The provider's id.
    pub id: u64,
    /// Its name.
    pub name: String,
    /// `new`, `active`, `off`, `archive`.
    pub status: String,
    /// Its region slug.
    pub region: String,
    /// Public IPv4, once it has one.
    pub public_ipv4: String,
    /// Private IPv4 in its VPC, once it has one.
    pub private_ipv4: String,
    /// Its tags.
    pub tags: Vec<String>,
}

/// Instances (virtual machines).
#[async_trait::async_trait]
pub trait Instances: Send + Sync {
    /// Starts creating one.
    async fn instance_create(&self, spec: &InstanceSpec) -> ProviderResult<Instance>;
    /// Reads one.
    async fn instance_get(&self, id: u64) -> ProviderResult<Instance>;
    /// Lists those carrying `tag` (all when empty), every page.
    async fn instance_list(&self, tag: &str) -> ProviderResult<Vec<Instance>>;
    /// Deletes one.
    async fn instance_delete(&self, id: u64) -> ProviderResult<()>;
}

/// What a network should be.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct NetworkSpec {
    /// Its name (unique per account).
    pub name: String,
    /// The region slug.
    pub region: String,
    /// Its range in CIDR notation, empty to let the provider pick.
    pub ip_range: String,
    /// A description.
    pub description: String,
}

/// A network as the provider reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Network {
    /// The provider's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its region slug.
    pub region: String,
    /// Its range.
    pub ip_range: String,
}

/// Networks (VPCs).
#[async_trait::async_trait]
pub trait Networks: Send + Sync {
    /// Creates one.
    async fn network_create(&self, spec: &NetworkSpec) -> ProviderResult<Network>;
    /// Reads one.
    async fn network_get(&self, id: &str) -> ProviderResult<Network>;
    /// Lists all, every page.
    async fn network_list(&self) -> ProviderResult<Vec<Network>>;
    /// Deletes one.
    async fn network_delete(&self, id: &str) -> ProviderResult<()>;
}

/// What a certificate should be.
#[derive(Clone, PartialEq)]
pub enum CertificateSpec {
    /// One we bring: PEMs. The key is a secret: this type's `Debug` hides it.
    Custom {
        /// Its name.
        name: String,
        /// The private key PEM.
        private_key: String,
        /// The leaf certificate PEM.
        leaf_certificate: String,
        /// The chain PEM, may be empty.
        certificate_chain: String,
    },
    /// One the provider obtains from Let's Encrypt for domains it hosts.
    LetsEncrypt {
        /// Its name.
        name: String,
        /// The names it covers.
        dns_names: Vec<String>,
    },
}

impl std::fmt::Debug for CertificateSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CertificateSpec::Custom { name, .. } => {
                f.debug_struct("Custom").field("name", name).field("private_key", &"<hidden>").finish()
            }
            CertificateSpec::LetsEncrypt { name, dns_names } => {
                f.debug_struct("LetsEncrypt").field("name", name).field("dns_names", dns_names).finish()
            }
        }
    }
}

/// A certificate as the provider reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Certificate {
    /// The provider's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// `pending`, `verified` or `error`.
    pub state: String,
    /// `custom` or `lets_encrypt`.
    pub kind: String,
    /// The names it covers.
    pub dns_names: Vec<String>,
    /// When it expires (RFC 3339), once known.
    pub not_after: String,
}

/// Certificates for load balancers.
#[async_trait::async_trait]
pub trait Certificates: Send + Sync {
    /// Uploads or orders one.
    async fn certificate_create(&self, spec: &CertificateSpec) -> ProviderResult<Certificate>;
    /// Reads one.
    async fn certificate_get(&self, id: &str) -> ProviderResult<Certificate>;
    /// Lists all, every page.
    async fn certificate_list(&self) -> ProviderResult<Vec<Certificate>>;
    /// Deletes one.
    async fn certificate_delete(&self, id: &str) -> ProviderResult<()>;
}

/// What a block-storage volume should be when it is made.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VolumeSpec {
    /// The provider-side name.
    pub name: String,
    /// The region slug.
    pub region: String,
    /// GiB.
    pub size_gigabytes: i64,
    /// Free text.
    pub description: String,
    /// `ext4` or `xfs` to have it formatted; empty: unformatted.
    pub filesystem_type: String,
    /// Its tags.
    pub tags: Vec<String>,
}

/// A volume as the provider reports it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Volume {
    /// The provider's id.
    pub id: String,
    /// Its name.
    pub name: String,
    /// Its region slug.
    pub region: String,
    /// GiB.
    pub size_gigabytes: i64,
    /// The machines it is attached to (at most one).
    pub droplet_ids: Vec<u64>,
}

/// An action on a volume (attach, detach, resize), which the provider carries out in time.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VolumeAction {
    /// The provider's id.
    pub id: u64,
    /// `attach_volume`, `detach_volume`, `resize_volume`.
    pub kind: String,
    /// `in-progress`, `completed` or `errored`.
    pub status: String,
}

/// What an action on a volume does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VolumeChange {
    /// Attaches it to a machine.
    Attach {
        /// The machine.
        machine_id: u64,
    },
    /// Detaches it from a machine.
    Detach {
        /// The machine.
        machine_id: u64,
    },
    /// Grows it.
    Resize {
        /// The new size in GiB.
        size_gigabytes: i64,
    },
}

/// Block-storage volumes.
#[async_trait::async_trait]
pub trait Volumes: Send + Sync {
    /// Creates one.
    async fn volume_create(&self, spec: &VolumeSpec) -> ProviderResult<Volume>;
    /// Reads one.
    async fn volume_get(&self, id: &str) -> ProviderResult<Volume>;
    /// The one named `name` in `region`, if any.
    async fn volume_find(&self, name: &str, region: &str) -> ProviderResult<Option<Volume>>;
    /// Deletes one (the provider refuses while it is attached).
    async fn volume_delete(&self, id: &str) -> ProviderResult<()>;
    /// Starts an action on the volume `id` in `region`.
    async fn volume_action(&self, id: &str, region: &str, change: VolumeChange) -> ProviderResult<VolumeAction>;
    /// The actions on volume `id`, every page.
    async fn volume_actions(&self, id: &str) -> ProviderResult<Vec<VolumeAction>>;
}
