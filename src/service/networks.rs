//! Tenant networks: the rules of create, list, get, update (the description) and delete, and
//! the check a cluster's `networkId` runs. The primary decision (`compute:networks:* @
//! compute-network`) was taken by the API layer; what is here are the checks no annotation can
//! express, one transaction per change.

use super::checks::NETWORKS;
use super::resource_calls::{CreateRequest, ListRequest, resource_requests};
use super::update_mask::Named;
use super::vps::{LIST_LIMIT, check_region, deadline, legacy_digest};
use super::{Context, Service};
use crate::domain::cidr::ipv4_range;
use crate::domain::states::ProvisionState;
use crate::error::{Error, FieldViolation, Result};
use crate::ids::SubnetId;
use crate::proto::compute::{
    CreateNetworkRequest, DeleteNetworkRequest, GetNetworkRequest, ListNetworksRequest, UpdateNetworkRequest,
};
use crate::store::{NETWORK_RESOURCE, NetworkRow, NewNetwork, SubnetRow, now_micros};

/// Whether a range lies within the private ranges of RFC 1918.
fn is_private(first: u32, last: u32) -> bool {
    [(0x0a00_0000u32, 8u32), (0xac10_0000, 12), (0xc0a8_0000, 16)].iter().any(|(net, bits)| {
        let mask = u32::MAX << (32 - bits);
        first & mask == *net && last & mask == *net
    })
}

/// The prefix lengths a provider accepts for a subnet: DigitalOcean's VPCs take /16 to /28,
/// Compute Engine's subnetworks /8 to /29.
fn prefix_bounds(provider: &str) -> (u32, u32) {
    if provider == "digitalocean" { (16, 28) } else { (8, 29) }
}

/// The checks of a create's subnets that need no store: unique names, ranges private, of a size
/// the provider takes, and not overlapping each other.
pub fn check_subnets(request: &CreateNetworkRequest, provider: &str) -> Vec<FieldViolation> {
    let mut violations = Vec::new();
    let (shortest, longest) = prefix_bounds(provider);
    let mut seen: Vec<(usize, u32, u32)> = Vec::new();
    for (i, subnet) in request.subnets.iter().enumerate() {
        if let Some(first) = request.subnets[..i].iter().position(|s| s.name == subnet.name) {
            violations.push(FieldViolation::new(
                format!("subnets[{i}].name"),
                format!(
                    "{:?} is already the name of subnets[{first}]; subnet names are unique in a network",
                    subnet.name
                ),
            ));
        }
        let field = format!("subnets[{i}].ipRange");
        let Some((first, last, length)) = ipv4_range(&subnet.ip_range) else { continue };
        if !is_private(first, last) {
            violations.push(FieldViolation::new(
                &field,
                format!(
                    "{} is not a private range; use one within 10.0.0.0/8, 172.16.0.0/12 or 192.168.0.0/16",
                    subnet.ip_range
                ),
            ));
        } else if !(shortest..=longest).contains(&length) {
            violations.push(FieldViolation::new(
                &field,
                format!("a {provider} subnet's range is /{shortest} to /{longest}, not /{length}"),
            ));
        }
        if let Some((other, _, _)) = seen.iter().find(|(_, a, b)| *a <= last && first <= *b) {
            violations.push(FieldViolation::new(
                &field,
                format!(
                    "{} overlaps {} of subnets[{other}] ({:?}); ranges within a network must not overlap",
                    subnet.ip_range, request.subnets[*other].ip_range, request.subnets[*other].name
                ),
            ));
        }
        seen.push((i, first, last));
    }
    violations
}

/// The digest earlier releases kept of a create request (its fields listed by hand), with which
/// the networks they made are still recognised on a retry.
fn legacy_request_digest(request: &CreateNetworkRequest) -> String {
    let subnets: Vec<serde_json::Value> = request
        .subnets
        .iter()
        .map(|s| serde_json::json!({"name": s.name, "region": s.region, "ipRange": s.ip_range}))
        .collect();
    legacy_digest(&serde_json::json!({
        "projectId": request.project_id, "poolId": request.pool_id, "name": request.name,
        "description": request.description, "subnets": subnets,
    }))
}

resource_requests!(create: CreateNetworkRequest, list: ListNetworksRequest);

impl Service {
    /// A network of `tenant`, deleted or not; `NOT_FOUND` for one of another tenant.
    pub(super) async fn network_of_tenant(&self, tenant: &str, id: &str) -> Result<NetworkRow> {
        super::checks::of_tenant(tenant, "network", id, self.store.network_fetch(id).await?, |row| &row.tenant_id)
    }

    /// Records a network and its subnets and returns it `pending`.
    pub async fn network_create(&self, ctx: &Context, request: CreateNetworkRequest) -> Result<NetworkRow> {
        self.create_resource(ctx, request, legacy_request_digest, |request, id, digest| async move {
            self.network_create_new(ctx, request, &id, &digest).await
        })
        .await
    }

    /// The checks and the insert of a network no earlier call with its key made.
    async fn network_create_new(
        &self,
        ctx: &Context,
        request: CreateNetworkRequest,
        id: &str,
        digest: &str,
    ) -> Result<(NetworkRow, bool)> {
        if request.subnets.is_empty() {
            // The validator reads an empty list as an absent one, so `min_items` is checked here.
            return Err(Error::fields(vec![FieldViolation::new("subnets", "a network takes 1 to 16 subnets")]));
        }
        let tenant = request.tenant_id.clone();
        self.check_project(&tenant, &request.project_id).await?;
        let pool = self.vps_pool(&tenant, &request.pool_id, NETWORKS).await?;
        for (i, subnet) in request.subnets.iter().enumerate() {
            check_region(&pool, &subnet.region, &format!("subnets[{i}].region"))?;
        }
        let violations = check_subnets(&request, &pool.pool.provider);
        if !violations.is_empty() {
            return Err(Error::fields(violations));
        }
        let now = now_micros();
        // Subnets keep the request's order: each is a microsecond younger than the one before.
        let subnets = request
            .subnets
            .iter()
            .zip(0..)
            .map(|(spec, i)| SubnetRow {
                id: SubnetId::random().to_string(),
                network_id: id.to_owned(),
                tenant_id: tenant.clone(),
                name: spec.name.clone(),
                region: spec.region.clone(),
                ip_range: spec.ip_range.clone(),
                state: ProvisionState::Pending,
                message: String::new(),
                provider_id: String::new(),
                created_at: now + i,
                updated_at: now + i,
                deleted_at: None,
            })
            .collect();
        let row = NetworkRow {
            meta: request.meta(ctx, id, &pool.pool.account_id, digest, now),
            provider: pool.pool.provider.clone(),
            description: request.description.clone(),
            provider_id: String::new(),
            subnets,
        };
        let attributes = request.authz_attributes(&pool.pool.account_id);
        let authz = row.meta.authz(NETWORK_RESOURCE, attributes);
        self.store.network_create(&NewNetwork { row, deadline: deadline(now) }, &authz).await
    }

    /// The tenant's networks (those the caller may read), oldest first.
    pub async fn network_list(&self, ctx: &Context, request: ListNetworksRequest) -> Result<Vec<NetworkRow>> {
        let networks = self.store.network_list(&request.filter(LIST_LIMIT)).await?;
        self.readable_resources(ctx, "compute:networks:read", NETWORK_RESOURCE, &request.tenant_id, networks).await
    }

    /// One network with its subnets.
    pub async fn network_get(&self, _ctx: &Context, request: GetNetworkRequest) -> Result<NetworkRow> {
        self.network_of_tenant(&request.tenant_id, &request.network_id).await
    }

    /// Changes the description.
    pub async fn network_update(&self, ctx: &Context, request: UpdateNetworkRequest) -> Result<NetworkRow> {
        let named = Named::of(&request.update_mask);
        named.require_some(&["description"])?;
        let description = named.clearable("description", request.description).unwrap_or_default();
        let network = self.network_of_tenant(&request.tenant_id, &request.network_id).await?;
        if network.delete_requested_at.is_some() || network.deleted_at.is_some() {
            return Err(Error::invalid_state(format!(
                "network {:?} is {} and cannot change",
                network.id, network.state
            ))
            .with_detail("state", network.state.as_str()));
        }
        let updated = self.store.network_update(&network.id, &description, now_micros()).await?;
        tracing::info!(network = %updated.id, version = updated.version, by = %ctx.caller.principal_id, "network updated");
        Ok(updated)
    }

    /// Marks a network with nothing on it for deletion; one being deleted is returned as it is.
    pub async fn network_delete(&self, ctx: &Context, request: DeleteNetworkRequest) -> Result<NetworkRow> {
        let network = self.network_of_tenant(&request.tenant_id, &request.network_id).await?;
        let delete = |id: String, now| async move { self.store.network_delete(&id, now, deadline(now)).await };
        self.delete_resource(ctx, "network", network, request.force, delete).await
    }

    /// The network a cluster's `networkId` names, and the subnet its nodes use: a network of
    /// the tenant on the cluster's account (`INVALID_INPUT` otherwise, whether it is another
    /// tenant's, on another account or does not exist), provisioned (`INVALID_STATE` until it is
    /// `ready`), with a ready subnet in the cluster's region (the first by name when there are
    /// several; `INVALID_INPUT` when it has none there).
    pub async fn network_for_cluster(
        &self,
        tenant: &str,
        network_id: &str,
        account_id: &str,
        region: &str,
    ) -> Result<(NetworkRow, SubnetRow)> {
        let refuse = |why: String| Error::fields(vec![FieldViolation::new("networkId", why)]);
        let network = match self.store.network_fetch(network_id).await? {
            Some(network)
                if network.tenant_id == tenant && network.account_id == account_id && network.deleted_at.is_none() =>
            {
                network
            }
            _ => {
                return Err(refuse(format!(
                    "{network_id:?} is not a network of tenant {tenant:?} on the pool's account"
                )));
            }
        };
        if network.state != ProvisionState::Ready {
            return Err(Error::invalid_state(format!(
                "network {network_id:?} is {}: a cluster can use it once it is provisioned (ready)",
                network.state
            ))
            .with_detail("networkId", network_id)
            .with_detail("state", network.state.as_str()));
        }
        let mut in_region: Vec<&SubnetRow> =
            network.subnets.iter().filter(|s| s.region == region && s.state == ProvisionState::Ready).collect();
        in_region.sort_by(|a, b| a.name.cmp(&b.name));
        let Some(subnet) = in_region.first().map(|s| (*s).clone()) else {
            let regions: Vec<String> = network.subnets.iter().map(|s| s.region.clone()).collect();
            return Err(refuse(format!(
                "network {network_id:?} has no ready subnet in the cluster's region {region:?}; its subnets are in {}",
                regions.join(", ")
            ))
            .with_detail("regions", regions));
        };
        Ok((network, subnet))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::compute::SubnetSpec;

    fn request(ranges: &[(&str, &str)]) -> CreateNetworkRequest {
        CreateNetworkRequest {
            subnets: ranges
                .iter()
                .map(|(name, range)| SubnetSpec {
                    name: (*name).to_owned(),
                    region: "nyc3".to_owned(),
                    ip_range: (*range).to_owned(),
                })
                .collect(),
            ..Default::default()
        }
    }

    #[test]
    fn overlapping_ranges_are_named_by_the_later_subnet() {
        let violations =
            check_subnets(&request(&[("a", "10.0.0.0/16"), ("b", "10.1.0.0/24"), ("c", "10.0.4.0/24")]), "gke");
        assert_eq!(violations.len(), 1, "{violations:?}");
        assert_eq!(violations[0].field, "subnets[2].ipRange");
        assert!(violations[0].description.contains("subnets[0]"), "{}", violations[0].description);
    }

    #[test]
    fn ranges_must_be_private_and_of_a_size_the_provider_takes() {
        let public = check_subnets(&request(&[("a", "8.8.0.0/16")]), "gke");
        assert!(public[0].description.contains("not a private range"), "{public:?}");
        let wide = check_subnets(&request(&[("a", "10.0.0.0/12")]), "digitalocean");
        assert!(wide[0].description.contains("/16 to /28"), "{wide:?}");
        assert!(check_subnets(&request(&[("a", "10.0.0.0/12")]), "gke").is_empty());
        let twice = check_subnets(&request(&[("a", "10.0.0.0/24"), ("a", "10.0.1.0/24")]), "gke");
        assert_eq!(twice[0].field, "subnets[1].name");
    }
}
