//! A load balancer's rows: its settings and targets as the tenant set them, the row with what
//! the provider last reported, what the reconciler observed, and the vps module's instances,
//! subnets and certificates as a load balancer sees them.

use serde::{Deserialize, Serialize};

use super::NewEvent;
use super::resource::ResourceMeta;
use crate::domain::states::{LoadBalancerState, ProvisionState};

/// One forwarding rule as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct ForwardingRow {
    /// `http`, `https`, `http2`, `tcp` or `udp`.
    pub entry_protocol: String,
    /// The port listened on.
    pub entry_port: i32,
    /// The protocol towards the targets.
    pub target_protocol: String,
    /// The targets' port.
    pub target_port: i32,
    /// `pcert_...`, or empty.
    pub certificate_id: String,
    /// TLS passed through to the targets.
    pub tls_passthrough: bool,
}

/// A health check as stored (zero: the provider's default for that field).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct HealthCheckRow {
    /// `http`, `https` or `tcp`.
    pub protocol: String,
    /// The port checked.
    pub port: i32,
    /// The path of an HTTP check.
    pub path: String,
    /// Seconds between checks.
    pub interval_seconds: i32,
    /// Seconds before a check fails.
    pub timeout_seconds: i32,
    /// Passes before a target is in.
    pub healthy_threshold: i32,
    /// Failures before a target is out.
    pub unhealthy_threshold: i32,
}

/// Sticky sessions as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct StickySessionsRow {
    /// The cookie's name.
    pub cookie_name: String,
    /// Its lifetime in seconds.
    pub ttl_seconds: i32,
}

/// Source ranges as stored: IPv4 CIDRs.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct SourceRangesRow {
    /// Allowed.
    pub allow: Vec<String>,
    /// Denied.
    pub deny: Vec<String>,
}

/// A domain of a global load balancer as stored.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct DomainRow {
    /// The fully qualified name.
    pub name: String,
    /// `pcert_...`, or empty.
    pub certificate_id: String,
}

/// Everything the tenant sets on a load balancer but its targets.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LoadBalancerSettings {
    /// The forwarding rules.
    pub forwarding: Vec<ForwardingRow>,
    /// The health check; `None`: the provider's default.
    pub health_check: Option<HealthCheckRow>,
    /// Sticky sessions; `None`: none.
    pub sticky_sessions: Option<StickySessionsRow>,
    /// Source ranges (empty: anyone).
    pub source_ranges: SourceRangesRow,
    /// HTTP redirected to HTTPS.
    pub redirect_http_to_https: bool,
    /// Domains (global only).
    pub domains: Vec<DomainRow>,
}

impl LoadBalancerSettings {
    /// The certificates the settings name, each once, in order.
    pub fn certificate_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = Vec::new();
        let named =
            self.forwarding.iter().map(|r| &r.certificate_id).chain(self.domains.iter().map(|d| &d.certificate_id));
        for id in named {
            if !id.is_empty() && !ids.contains(id) {
                ids.push(id.clone());
            }
        }
        ids
    }
}

/// What a load balancer targets, as the tenant named it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TargetsRow {
    /// Every instance of the tenant in the pool and region.
    pub pool: bool,
    /// Named instances (regional).
    pub instance_ids: Vec<String>,
    /// Named regional load balancers (global).
    pub load_balancer_ids: Vec<String>,
}

/// A load balancer as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadBalancerRow {
    /// Its common fields (`id` is `plb_...`).
    pub meta: ResourceMeta<LoadBalancerState>,
    /// The pool's billing mode at creation.
    pub billing_mode: String,
    /// Free text.
    pub description: String,
    /// `regional` or `global`.
    pub scope: String,
    /// Its region (empty for a global one).
    pub region: String,
    /// The tenant subnet it lives on.
    pub subnet_id: Option<String>,
    /// What it targets.
    pub targets: TargetsRow,
    /// Its settings.
    pub settings: LoadBalancerSettings,
    /// The provider's id, once it accepted it.
    pub provider_id: String,
    /// Public IPv4.
    pub address: String,
    /// Public IPv6.
    pub address_v6: String,
    /// What the provider was last told to reach: instance ids, or load balancer ids.
    pub reached_ids: Vec<String>,
    /// Whether it was ready once.
    pub ready_once: bool,
}

impl LoadBalancerRow {
    /// The provider-side name: `bc-lb-` and 24 characters of the id.
    pub fn provider_name(&self) -> String {
        load_balancer_provider_name(&self.id)
    }

    /// Whether it is global.
    pub fn is_global(&self) -> bool {
        self.scope == "global"
    }
}

/// `bc-lb-` and 24 characters of the id (after its prefix).
pub fn load_balancer_provider_name(id: &str) -> String {
    let body = id.split_once('_').map_or(id, |(_, body)| body);
    format!("bc-lb-{}", &body[..body.len().min(24)])
}

/// A load balancer to create.
#[derive(Clone, Debug)]
pub struct NewLoadBalancer {
    /// The row (state `pending`; observed fields empty).
    pub row: LoadBalancerRow,
    /// When `pending` counts as stuck.
    pub deadline: Option<i64>,
}

/// What the reconciler observed of a load balancer, and the events that follow.
#[derive(Clone, Debug, Default)]
pub struct LoadBalancerObserved {
    /// The version the observation was made against.
    pub version: i64,
    /// Its new state.
    pub state: LoadBalancerState,
    /// Its message.
    pub message: String,
    /// The provider's id.
    pub provider_id: String,
    /// Public IPv4.
    pub address: String,
    /// Public IPv6.
    pub address_v6: String,
    /// What the provider was told to reach.
    pub reached_ids: Vec<String>,
    /// Ready once (starts billing when newly set and billable).
    pub ready_once: bool,
    /// The drift the pass found (see [`crate::domain::drift`]); empty for none.
    pub drift: Vec<crate::domain::drift::Drift>,
    /// Events to publish with the write.
    pub events: Vec<NewEvent>,
}

/// An instance as a load balancer's checks and targets see it (the vps module's row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetInstance {
    /// `inst_...`.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its pool.
    pub pool_id: String,
    /// Its pool's account.
    pub account_id: String,
    /// Its region.
    pub region: String,
    /// The subnet it is on, if any.
    pub subnet_id: Option<String>,
    /// The droplet id, once the provider assigned one.
    pub machine_id: Option<String>,
    /// Its state (`deleting` from the delete call on).
    pub state: ProvisionState,
}

impl TargetInstance {
    /// Whether a load balancer reaches it: it has a machine and is not being deleted.
    pub fn counts(&self) -> bool {
        self.machine_id.as_deref().is_some_and(|m| !m.is_empty())
            && !matches!(self.state, ProvisionState::Deleting | ProvisionState::Deleted)
    }
}

/// A subnet as a load balancer sees it (the vps module's row, with its network's account).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetSubnet {
    /// `snet_...`.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its network's account.
    pub account_id: String,
    /// Its region.
    pub region: String,
    /// Its state.
    pub state: ProvisionState,
    /// The VPC uuid, once made.
    pub provider_id: String,
}

/// A certificate as a load balancer sees it (the vps module's row).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetCertificate {
    /// `pcert_...`.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its pool's account.
    pub account_id: String,
    /// Its state (`ready` once verified).
    pub state: ProvisionState,
    /// The provider's id, once uploaded.
    pub provider_id: String,
}
