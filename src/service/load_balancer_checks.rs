//! The checks of a load balancer's create and update that no annotation can express: the shape
//! of its forwarding rules, targets and domains for its scope; the placement of the pool for a
//! load balancer (`region` rather than `location`); and what the load balancer rests on, read
//! from the tenant's rows: the subnet, the named instances (each also decided as
//! `compute:instances:update` with the caller's own credential), the targeted regional load
//! balancers and the certificates. Each refusal carries its documented code.
//!
//! The checks gather what they find in [`super::findings::Findings`] with the schema stage's violations, so that
//! a request learns every violated field at once; a refusal that ends them (a row not found)
//! answers only when no field is wrong.

use super::Service;
use super::checks::{LOAD_BALANCERS, check_capability, check_location, check_offer, check_pool_active, of_tenant};
use super::findings::Findings;
use crate::authz::Target;
use crate::domain::states::ProvisionState;
use crate::error::{Code, Error, FieldViolation, Result};
use crate::store::{LoadBalancerSettings, TargetInstance, TargetsRow, VisiblePool};

/// The authorization resource type of an instance (the vps module's).
const INSTANCE_RESOURCE: &str = "compute-instance";

/// The secondary decision on each named instance.
const INSTANCE_UPDATE: &str = "compute:instances:update";

/// Where a load balancer's named instances put it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct InstancePlacement {
    /// The subnet they share (`None`: no tenant network).
    pub subnet_id: Option<String>,
}

/// Where a regional load balancer is: its tenant, its pool's account and its region.
#[derive(Clone, Copy, Debug)]
pub(super) struct Placed<'a> {
    /// The tenant.
    pub tenant: &'a str,
    /// The pool's account.
    pub account: &'a str,
    /// The region.
    pub region: &'a str,
}

/// `check_location`'s refusal names `location`; a load balancer's field is `region`.
fn as_region(mut error: Error) -> Error {
    if error.code != Code::InvalidInput {
        return error;
    }
    error.message = error.message.replace("location: ", "region: ");
    if let Some(serde_json::Value::Array(fields)) = error.details.get_mut("fields") {
        for field in fields {
            if field["field"] == "location" {
                field["field"] = "region".into();
            }
        }
    }
    error
}

/// The shape checks: forwarding rules (certificates or passthrough where TLS ends, protocols
/// that pair, no entry twice), targets and domains by scope. Every violation at once.
pub(super) fn check_shape(global: bool, targets: &TargetsRow, settings: &LoadBalancerSettings) -> Vec<FieldViolation> {
    let mut violations = Vec::new();
    let named = [targets.pool, !targets.instance_ids.is_empty(), !targets.load_balancer_ids.is_empty()];
    let count = named.iter().filter(|n| **n).count();
    if global {
        if targets.pool || !targets.instance_ids.is_empty() {
            violations.push(FieldViolation::new(
                "targets",
                "a global load balancer targets regional load balancers (loadBalancerIds), not instances",
            ));
        } else if targets.load_balancer_ids.is_empty() {
            violations.push(FieldViolation::new(
                "targets.loadBalancerIds",
                "a global load balancer targets 1 to 100 regional load balancers of the tenant",
            ));
        }
    } else if !targets.load_balancer_ids.is_empty() {
        violations.push(FieldViolation::new(
            "targets.loadBalancerIds",
            "a regional load balancer targets instances (pool: true, or instanceIds); \
             loadBalancerIds are for global ones",
        ));
    } else if count != 1 {
        violations.push(FieldViolation::new(
            "targets",
            "name exactly one of pool: true (the tenant's instances in the pool and region) or instanceIds",
        ));
    }
    let mut seen: Vec<(&str, i32)> = Vec::new();
    for (i, rule) in settings.forwarding.iter().enumerate() {
        let path = format!("forwarding[{i}]");
        let entry = rule.entry_protocol.as_str();
        let tls_ends_here = matches!(entry, "https" | "http2");
        if seen.contains(&(entry, rule.entry_port)) {
            violations.push(FieldViolation::new(
                format!("{path}.entryPort"),
                format!("{entry} on port {} is forwarded by an earlier rule; each entry once", rule.entry_port),
            ));
        }
        seen.push((entry, rule.entry_port));
        if (entry == "udp") != (rule.target_protocol == "udp") {
            violations.push(FieldViolation::new(
                format!("{path}.targetProtocol"),
                "udp must be both the entry and the target protocol",
            ));
        }
        if rule.tls_passthrough && !rule.certificate_id.is_empty() {
            violations.push(FieldViolation::new(
                format!("{path}.tlsPassthrough"),
                "a rule either ends TLS with certificateId or passes it through, not both",
            ));
        } else if rule.tls_passthrough && (entry != "https" || rule.target_protocol != "https") {
            violations.push(FieldViolation::new(
                format!("{path}.tlsPassthrough"),
                "TLS passes through only from an https entry to an https target",
            ));
        } else if tls_ends_here && rule.certificate_id.is_empty() && !rule.tls_passthrough {
            violations.push(FieldViolation::new(
                format!("{path}.certificateId"),
                format!(
                    "an {entry} entry needs a certificateId of the tenant on the same account \
                     (or, for https, tlsPassthrough)"
                ),
            ));
        } else if !tls_ends_here && !rule.certificate_id.is_empty() {
            violations.push(FieldViolation::new(
                format!("{path}.certificateId"),
                format!("a certificate ends TLS on an https or http2 entry, not on {entry}"),
            ));
        }
    }
    if settings.redirect_http_to_https
        && !settings.forwarding.iter().any(|r| matches!(r.entry_protocol.as_str(), "https" | "http2"))
    {
        violations.push(FieldViolation::new(
            "redirectHttpToHttps",
            "redirecting to HTTPS needs a forwarding rule with an https or http2 entry",
        ));
    }
    if !global && !settings.domains.is_empty() {
        violations.push(FieldViolation::new("domains", "domains are served by global load balancers only"));
    }
    let mut names: Vec<&str> = Vec::new();
    for (i, domain) in settings.domains.iter().enumerate() {
        if names.contains(&domain.name.as_str()) {
            violations.push(FieldViolation::new(format!("domains[{i}].name"), "each domain once"));
        }
        names.push(&domain.name);
    }
    violations
}

/// The most items of each list the service's own checks look at: the documented bounds. A
/// request over one was refused by the schema stage already, and its lists are not walked (nor
/// their ids looked up) only to say more.
const MAX_FORWARDING: usize = 15;
const MAX_DOMAINS: usize = 20;
const MAX_NAMED_TARGETS: usize = 100;

/// Whether every list of a load balancer's targets and settings is within its documented bound.
pub(super) fn lists_within_bounds(targets: &TargetsRow, settings: &LoadBalancerSettings) -> bool {
    settings.forwarding.len() <= MAX_FORWARDING
        && settings.domains.len() <= MAX_DOMAINS
        && targets.instance_ids.len() <= MAX_NAMED_TARGETS
        && targets.load_balancer_ids.len() <= MAX_NAMED_TARGETS
}

impl Service {
    /// The pool checks of a create in the catalog's order: visible (`NOT_FOUND`), providing load
    /// balancers (`UNSUPPORTED`), active, the region one of the account's (`INVALID_INPUT` naming
    /// `region`; a global load balancer has none), the offer, the budget. A region already found
    /// wrong is not looked for in the account.
    pub(super) async fn load_balancer_placement(
        &self,
        findings: &mut Findings<'_>,
        tenant: &str,
        pool_id: &str,
        region: Option<&str>,
    ) -> Result<VisiblePool> {
        if findings.schema_refused("poolId") {
            // Without the pool there is no account to check the rest against: what is found
            // so far is the answer.
            return Err(findings.refuse(Error::not_found("pool", pool_id)));
        }
        let pool = self.check_pool_visible(tenant, pool_id).await.map_err(|error| findings.refuse(error))?;
        check_capability(&pool, LOAD_BALANCERS).map_err(|error| findings.refuse(error))?;
        check_pool_active(&pool).map_err(|error| findings.refuse(error))?;
        let region = match region {
            Some(_) if findings.names("region") => None,
            Some(region) => findings.check(check_location(&pool, region).map_err(as_region))?.map(|at| at.region),
            None => Some(String::new()),
        };
        // The offer's state is checked whatever the region; its excluded regions only for a
        // region of the account.
        findings.check(check_offer(&pool, region.as_deref().unwrap_or_default()).map_err(as_region))?;
        self.check_budget(tenant, &pool).await.map_err(|error| findings.refuse(error))?;
        Ok(pool)
    }

    /// A subnet of the tenant on `account` in `region`: another tenant's (or none) is
    /// `NOT_FOUND`; one on another account or in another region `INVALID_INPUT`.
    pub(super) async fn load_balancer_check_subnet(
        &self,
        findings: &mut Findings<'_>,
        tenant: &str,
        subnet_id: &str,
        account: &str,
        region: &str,
    ) -> Result<()> {
        if findings.schema_refused("subnetId") {
            return Ok(());
        }
        let found = self.store.load_balancer_subnet(subnet_id).await?;
        let subnet = of_tenant(tenant, "subnet", subnet_id, found, |s| &s.tenant_id).map_err(|e| findings.refuse(e))?;
        if subnet.account_id != account {
            findings.add([FieldViolation::new(
                "subnetId",
                format!(
                    "subnet {subnet_id:?} is on another account than the pool's; \
                     name a subnet of a network on the pool's account"
                ),
            )]);
        } else if subnet.region != region {
            findings.add([FieldViolation::new(
                "subnetId",
                format!("subnet {subnet_id:?} is in region {:?}, not in the load balancer's {region:?}", subnet.region),
            )]);
        }
        Ok(())
    }

    /// The named instances: each must be the tenant's, checked before any decision: another
    /// tenant's instance is `ACCESS_DENIED` (the page's code), and so is an unknown id, word for
    /// word, so that the answer tells nothing of what other tenants have. Each is then decided as
    /// `compute:instances:update` with the caller's own credential, must not be being deleted
    /// (`INVALID_STATE`), be on the pool's account and in the region (`INVALID_INPUT`), and all on
    /// one subnet: `subnet` when the load balancer has one (`Some(None)`: none, on no tenant
    /// network), else the one they share (`INVALID_INPUT` for two). None when they are not so.
    ///
    /// The decisions are audited (written), so this check runs last, and only on a request with
    /// nothing else wrong; what an instance is like is told only to a caller that may update it.
    pub(super) async fn load_balancer_check_instances(
        &self,
        findings: &mut Findings<'_>,
        method: &str,
        place: Placed<'_>,
        ids: &[String],
        subnet: Option<Option<&str>>,
    ) -> Result<Option<InstancePlacement>> {
        debug_assert!(!findings.any(), "decisions are audited: nothing else may be wrong");
        let Placed { tenant, account, region } = place;
        let found = self.store.load_balancer_instances(ids).await?;
        let mut instances: Vec<TargetInstance> = Vec::new();
        for id in ids {
            match found.iter().find(|i| &i.id == id && i.tenant_id == tenant) {
                Some(instance) => instances.push(instance.clone()),
                None => return Err(not_an_instance_of(tenant, id)),
            }
        }
        for instance in &instances {
            let target = Target {
                resource_type: INSTANCE_RESOURCE.to_owned(),
                id: instance.id.clone(),
                tenant_id: Some(instance.tenant_id.clone()),
                ..Default::default()
            };
            self.authorize(findings.ctx(), method, INSTANCE_UPDATE, target).await?;
        }
        let mut violations = Vec::new();
        for (i, instance) in instances.iter().enumerate() {
            let path = format!("targets.instanceIds[{i}]");
            if matches!(instance.state, ProvisionState::Deleting | ProvisionState::Deleted) {
                return Err(Error::invalid_state(format!("instance {:?} is being deleted", instance.id))
                    .with_detail("instanceId", instance.id.as_str())
                    .with_detail("state", instance.state.as_str()));
            }
            if instance.account_id != account {
                violations.push(FieldViolation::new(
                    &path,
                    format!("instance {:?} is on another account than the load balancer's pool", instance.id),
                ));
            } else if instance.region != region {
                violations.push(FieldViolation::new(
                    &path,
                    format!("instance {:?} is in region {:?}, not in {region:?}", instance.id, instance.region),
                ));
            }
        }
        if !violations.is_empty() {
            findings.add(violations);
            return Ok(None);
        }
        match subnet {
            Some(expected) => {
                let off: Vec<FieldViolation> = instances
                    .iter()
                    .enumerate()
                    .filter(|(_, instance)| instance.subnet_id.as_deref() != expected)
                    .map(|(i, instance)| {
                        let wanted = match expected {
                            Some(subnet) => format!("on its subnet {subnet:?}"),
                            None => "on no tenant network, as the load balancer lives on the account's default network"
                                .to_owned(),
                        };
                        FieldViolation::new(
                            format!("targets.instanceIds[{i}]"),
                            format!(
                                "instance {:?} is {}; a load balancer reaches only instances {wanted}",
                                instance.id,
                                instance
                                    .subnet_id
                                    .as_deref()
                                    .map_or("on no tenant network".to_owned(), |s| format!("on subnet {s:?}"))
                            ),
                        )
                    })
                    .collect();
                if off.is_empty() {
                    Ok(Some(InstancePlacement { subnet_id: expected.map(str::to_owned) }))
                } else {
                    findings.add(off);
                    Ok(None)
                }
            }
            None => {
                let mut subnets: Vec<Option<&str>> = Vec::new();
                for instance in &instances {
                    if !subnets.contains(&instance.subnet_id.as_deref()) {
                        subnets.push(instance.subnet_id.as_deref());
                    }
                }
                if subnets.len() > 1 {
                    let names: Vec<String> =
                        subnets.iter().map(|s| s.map_or("no tenant network".to_owned(), |s| s.to_owned())).collect();
                    findings.add([FieldViolation::new(
                        "targets.instanceIds",
                        format!(
                            "the named instances are on different networks ({}); \
                             a load balancer lives in one VPC: name instances of one subnet",
                            names.join(", ")
                        ),
                    )]);
                    return Ok(None);
                }
                Ok(Some(InstancePlacement { subnet_id: subnets.first().copied().flatten().map(str::to_owned) }))
            }
        }
    }

    /// The regional load balancers a global one targets: the tenant's (else `NOT_FOUND`), not
    /// being deleted (`INVALID_STATE`), regional and on the same account (`INVALID_INPUT`). An
    /// id the schema stage found malformed is not looked up.
    pub(super) async fn load_balancer_check_targets(
        &self,
        findings: &mut Findings<'_>,
        tenant: &str,
        ids: &[String],
        account: &str,
    ) -> Result<()> {
        for (i, id) in ids.iter().enumerate() {
            let path = format!("targets.loadBalancerIds[{i}]");
            if findings.schema_refused(&path) {
                continue;
            }
            let live = self.store.load_balancer_fetch(id).await?.filter(|lb| lb.deleted_at.is_none());
            let target =
                of_tenant(tenant, "loadBalancer", id, live, |lb| &lb.tenant_id).map_err(|e| findings.refuse(e))?;
            if target.delete_requested_at.is_some() {
                return Err(findings.refuse(
                    Error::invalid_state(format!("load balancer {id:?} is being deleted"))
                        .with_detail("loadBalancerId", id.as_str()),
                ));
            }
            if target.is_global() {
                findings
                    .add([FieldViolation::new(path, format!("load balancer {id:?} is global; target regional ones"))]);
            } else if target.account_id != account {
                findings.add([FieldViolation::new(
                    path,
                    format!("load balancer {id:?} is on another account than this load balancer's pool"),
                )]);
            }
        }
        Ok(())
    }

    /// The certificates the settings name: the tenant's (else `NOT_FOUND`) on `account` (else
    /// `INVALID_INPUT` naming the field). An id the schema stage found malformed is not looked
    /// up.
    pub(super) async fn load_balancer_check_certificates(
        &self,
        findings: &mut Findings<'_>,
        tenant: &str,
        settings: &LoadBalancerSettings,
        account: &str,
    ) -> Result<()> {
        let named: Vec<(String, &String)> = settings
            .forwarding
            .iter()
            .enumerate()
            .map(|(i, r)| (format!("forwarding[{i}].certificateId"), &r.certificate_id))
            .chain(
                settings
                    .domains
                    .iter()
                    .enumerate()
                    .map(|(i, d)| (format!("domains[{i}].certificateId"), &d.certificate_id)),
            )
            .filter(|(path, id)| !id.is_empty() && !findings.schema_refused(path))
            .collect();
        for (path, id) in named {
            let found = self.store.load_balancer_certificate(id).await?;
            let certificate =
                of_tenant(tenant, "certificate", id, found, |c| &c.tenant_id).map_err(|e| findings.refuse(e))?;
            if matches!(certificate.state, ProvisionState::Deleting | ProvisionState::Deleted) {
                return Err(findings.refuse(
                    Error::invalid_state(format!("certificate {id:?} is being deleted; name another one"))
                        .with_detail("certificateId", id.as_str())
                        .with_detail("state", certificate.state.as_str()),
                ));
            }
            if certificate.account_id != account {
                findings.add([FieldViolation::new(
                    path,
                    format!(
                        "certificate {id:?} is on another account than the load balancer's pool; \
                         upload it to that account"
                    ),
                )]);
            }
        }
        Ok(())
    }
}

/// The one refusal of a named instance that is not the tenant's, whether it is another tenant's
/// or does not exist.
fn not_an_instance_of(tenant: &str, id: &str) -> Error {
    Error::access_denied(format!(
        "instance {id:?} is not an instance of tenant {tenant:?}; a load balancer reaches only its tenant's instances"
    ))
    .with_detail("permission", INSTANCE_UPDATE)
    .with_detail("resource", INSTANCE_RESOURCE)
}
