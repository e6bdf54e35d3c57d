//! The DigitalOcean and Compute Engine kinds (volumes, networks, instances, certificates): how
//! each names its provider objects, and the plans of their updates and deletes.

use serde_json::json;

use super::{Action, Effect, Plan, json};
use crate::store::{CertificateRow, InstanceRow, NetworkRow, VolumeRow};

/// DigitalOcean, as plans name it.
pub(super) const DIGITALOCEAN: &str = "digitalocean";

/// The provider-side name of object `id`: `prefix`, a dash, and 24 characters of the id after
/// its own prefix (`bc-v-0123...`); deterministic, so a pass that crashed after the provider
/// accepted a create finds the object by name instead of making a second one.
pub fn provider_name(prefix: &str, id: &str) -> String {
    let body = id.split_once('_').map_or(id, |(_, body)| body);
    format!("{prefix}-{}", &body[..body.len().min(24)])
}

/// The provider-side name of volume `id`.
pub fn volume_name(id: &str) -> String {
    provider_name("bc-v", id)
}

/// The tag of instance `id`'s droplet (the droplet is named as the instance).
pub fn instance_name(id: &str) -> String {
    provider_name("bc-i", id)
}

/// The provider-side name of certificate `id`.
pub fn certificate_name(id: &str) -> String {
    provider_name("bc-c", id)
}

/// The provider-side name of network `id`.
pub fn network_name(id: &str) -> String {
    provider_name("bc-n", id)
}

/// The provider-side name of subnet `id`.
pub fn subnet_name(id: &str) -> String {
    provider_name("bc-s", id)
}

/// A delete's one changed field: the resource goes, with what `detail` says.
pub(super) fn deleted(plan: &mut Plan, state: &str, detail: String) {
    plan.change("state", json!(state), json!("deleted"), Effect::Delete, detail);
}

/// The plan of a volume update: a larger size is a resize of the provider's volume where it
/// stands (the data stays; the filesystem is grown from inside the instance); the description
/// is the tenant's own (DigitalOcean keeps the one given at creation).
pub fn volume_update(before: &VolumeRow, after: &VolumeRow) -> Plan {
    let mut plan = Plan::default();
    let name = volume_name(&before.id);
    if after.size_gigabytes != before.size_gigabytes {
        plan.change(
            "sizeGigabytes",
            json(&before.size_gigabytes),
            json(&after.size_gigabytes),
            Effect::InPlace,
            format!("DigitalOcean resizes volume {name} to {} GiB where it stands", after.size_gigabytes),
        );
        plan.ask(Action::Update, DIGITALOCEAN, "volume", name);
        plan.disrupt("the instance sees the larger disk at once; grow its filesystem to use the space");
    }
    plan.compare("description", &before.description, &after.description, Effect::None, || {
        "recorded only: DigitalOcean is not asked".into()
    });
    plan
}

/// The plan of deleting a volume: detached first when attached, then deleted with its data.
pub fn volume_delete(volume: &VolumeRow) -> Plan {
    let mut plan = Plan::default();
    let name = volume_name(&volume.id);
    if let Some(instance) = &volume.instance_id {
        plan.disrupt(format!("the volume is detached from instance {instance}"));
    }
    plan.ask(Action::Delete, DIGITALOCEAN, "volume", name.clone());
    deleted(&mut plan, volume.state.as_str(), format!("DigitalOcean deletes volume {name} and its data"));
    plan.disrupt(format!("the {} GiB of data on the volume are gone for good", volume.size_gigabytes));
    plan
}

/// The plan of deleting an instance: its droplet (named as the instance, found by its tag
/// `bc-i-...`), and its address with it.
pub fn instance_delete(instance: &InstanceRow) -> Plan {
    let mut plan = Plan::default();
    let tag = instance_name(&instance.id);
    plan.ask(Action::Delete, DIGITALOCEAN, "droplet", tag.clone());
    deleted(&mut plan, instance.state.as_str(), format!("DigitalOcean deletes droplet {} (tag {tag})", instance.name));
    if !instance.public_ipv4.is_empty() {
        plan.disrupt(format!("address {} stops answering and may go to another customer", instance.public_ipv4));
    }
    plan.disrupt("load balancers stop sending traffic to the instance");
    plan
}

/// The plan of deleting a certificate.
pub fn certificate_delete(certificate: &CertificateRow) -> Plan {
    let mut plan = Plan::default();
    let name = certificate_name(&certificate.id);
    plan.ask(Action::Delete, DIGITALOCEAN, "certificate", name.clone());
    deleted(&mut plan, certificate.state.as_str(), format!("DigitalOcean deletes certificate {name}"));
    plan
}

/// The plan of a network update: the description is the tenant's own.
pub fn network_update(before: &NetworkRow, after: &NetworkRow) -> Plan {
    let mut plan = Plan::default();
    plan.compare("description", &before.description, &after.description, Effect::None, || {
        "recorded only: the provider is not asked".into()
    });
    plan
}

/// The plan of deleting a network: every subnet, then the network.
pub fn network_delete(network: &NetworkRow) -> Plan {
    let mut plan = Plan::default();
    // A GKE account's networks are Compute Engine's.
    let provider = if network.provider == "gke" { "gce" } else { DIGITALOCEAN };
    let (network_kind, subnet_kind) = if provider == "gce" { ("network", "subnetwork") } else { ("vpc", "vpc") };
    for subnet in network.subnets.iter().filter(|s| s.deleted_at.is_none()) {
        plan.ask(Action::Delete, provider, subnet_kind, subnet_name(&subnet.id));
    }
    if provider == "gce" {
        plan.ask(Action::Delete, provider, network_kind, network_name(&network.id));
    }
    deleted(&mut plan, network.state.as_str(), "the provider deletes the network's subnets and the network".into());
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_names_take_24_characters_of_the_id() {
        assert_eq!(provider_name("bc-n", "net_0123456789abcdefghjkmnpqrs"), "bc-n-0123456789abcdefghjkmnpq");
        assert_eq!(volume_name("pvol_0123456789abcdefghjkmnpqrs"), "bc-v-0123456789abcdefghjkmnpq");
    }
}
