//! Load balancers: the rules of create, list, get, update and delete. The primary decision
//! (`compute:load-balancers:* @ compute-provider-load-balancer`) was taken by the API layer
//! before any of this runs; what is here are the checks no annotation can express
//! (`load_balancer_checks`) and one transaction per change, which books the quota on create.
//! What the load balancer reaches is not resolved here: the reconciler computes it from the
//! tenant's rows on every pass.

use sha2::{Digest, Sha256};

use super::findings::Findings;
use super::load_balancer_checks::{Placed, check_shape, lists_within_bounds};
use super::resource_calls::{CreateRequest, ListRequest, resource_requests};
use super::update_mask::Named;
use super::{Context, Service};
use crate::error::{Error, FieldViolation, Result};
use crate::proto::compute::{
    CreateLoadBalancerRequest, DeleteLoadBalancerRequest, GetLoadBalancerRequest, ListLoadBalancersRequest,
    LoadBalancerDomain, LoadBalancerForwardingRule, LoadBalancerHealthCheck, LoadBalancerSourceRanges,
    LoadBalancerStickySessions, LoadBalancerTargets, UpdateLoadBalancerRequest,
};
use crate::store::{
    DomainRow, ForwardingRow, HealthCheckRow, LOAD_BALANCER_RESOURCE, LoadBalancerRow, LoadBalancerSettings,
    NewLoadBalancer, SourceRangesRow, StickySessionsRow, TargetsRow, now_micros,
};

/// The most load balancers `list` returns.
const LIST_LIMIT: i64 = 1000;

/// How long a load balancer may stay `pending`, `updating` or `deleting` before it is reported
/// stuck.
const STATE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(3600);

const CREATE: &str = "bettercompute.compute.v1.LoadBalancers/Create";
const UPDATE: &str = "bettercompute.compute.v1.LoadBalancers/Update";

pub(super) fn forwarding_rows(rules: &[LoadBalancerForwardingRule]) -> Vec<ForwardingRow> {
    rules
        .iter()
        .map(|r| ForwardingRow {
            entry_protocol: r.entry_protocol.clone(),
            entry_port: r.entry_port,
            target_protocol: r.target_protocol.clone(),
            target_port: r.target_port,
            certificate_id: r.certificate_id.clone(),
            tls_passthrough: r.tls_passthrough,
        })
        .collect()
}

fn health_check_row(check: &LoadBalancerHealthCheck) -> HealthCheckRow {
    HealthCheckRow {
        protocol: check.protocol.clone(),
        port: check.port,
        path: check.path.clone(),
        interval_seconds: check.interval_seconds,
        timeout_seconds: check.timeout_seconds,
        healthy_threshold: check.healthy_threshold,
        unhealthy_threshold: check.unhealthy_threshold,
    }
}

fn sticky_row(sticky: &LoadBalancerStickySessions) -> StickySessionsRow {
    StickySessionsRow { cookie_name: sticky.cookie_name.clone(), ttl_seconds: sticky.ttl_seconds }
}

fn ranges_row(ranges: &LoadBalancerSourceRanges) -> SourceRangesRow {
    SourceRangesRow { allow: ranges.allow.clone(), deny: ranges.deny.clone() }
}

fn domain_rows(domains: &[LoadBalancerDomain]) -> Vec<DomainRow> {
    domains.iter().map(|d| DomainRow { name: d.name.clone(), certificate_id: d.certificate_id.clone() }).collect()
}

fn targets_row(targets: &LoadBalancerTargets) -> TargetsRow {
    TargetsRow {
        pool: targets.pool.unwrap_or(false),
        instance_ids: targets.instance_ids.clone(),
        load_balancer_ids: targets.load_balancer_ids.clone(),
    }
}

/// The digest earlier releases kept of a create request (its fields listed by hand), with which
/// the load balancers they made are still recognised on a retry.
fn legacy_request_digest(request: &CreateLoadBalancerRequest) -> String {
    let (targets, settings) = (targets_of(request), settings_of(request));
    let canonical = serde_json::json!({
        "projectId": request.project_id, "poolId": request.pool_id, "name": request.name,
        "description": request.description, "scope": request.scope, "region": request.region,
        "subnetId": request.subnet_id, "targets": targets, "settings": settings,
    });
    Sha256::digest(canonical.to_string().as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// What a create request's `targets` ask for, as the row keeps it.
fn targets_of(request: &CreateLoadBalancerRequest) -> TargetsRow {
    request.targets.as_ref().map(targets_row).unwrap_or_default()
}

/// What a create request's settings ask for, as the row keeps them.
fn settings_of(request: &CreateLoadBalancerRequest) -> LoadBalancerSettings {
    LoadBalancerSettings {
        forwarding: forwarding_rows(&request.forwarding),
        health_check: request.health_check.as_ref().map(health_check_row),
        sticky_sessions: request.sticky_sessions.as_ref().map(sticky_row),
        source_ranges: request.source_ranges.as_ref().map(ranges_row).unwrap_or_default(),
        redirect_http_to_https: request.redirect_http_to_https,
        domains: domain_rows(&request.domains),
    }
}

resource_requests!(create: CreateLoadBalancerRequest, list: ListLoadBalancersRequest);

impl Service {
    /// A load balancer of `tenant`, deleted or not; `NOT_FOUND` for one of another tenant.
    pub(super) async fn load_balancer_of_tenant(&self, tenant: &str, id: &str) -> Result<LoadBalancerRow> {
        super::checks::of_tenant(tenant, "loadBalancer", id, self.store.load_balancer_fetch(id).await?, |row| {
            &row.tenant_id
        })
    }

    fn load_balancer_deadline(now: i64) -> Option<i64> {
        Some(now + STATE_DEADLINE.as_micros() as i64)
    }

    /// Records a load balancer, books its quota and returns it `pending`. Every violated field
    /// is reported at once: the schema stage's (`ctx.schema`) with those of the checks here,
    /// which run as far as they can; nothing is written while there are any.
    pub async fn load_balancer_create(
        &self,
        ctx: &Context,
        request: CreateLoadBalancerRequest,
    ) -> Result<LoadBalancerRow> {
        self.create_resource(ctx, request, legacy_request_digest, |request, id, digest| async move {
            self.load_balancer_create_new(ctx, request, &id, &digest).await
        })
        .await
    }

    /// The checks and the insert of a load balancer no earlier call with its key made.
    async fn load_balancer_create_new(
        &self,
        ctx: &Context,
        request: CreateLoadBalancerRequest,
        id: &str,
        digest: &str,
    ) -> Result<(LoadBalancerRow, bool)> {
        let tenant = request.tenant_id.clone();
        let global = request.scope == "global";
        let (targets, settings) = (targets_of(&request), settings_of(&request));
        let mut findings = Findings::new(ctx);
        if !ctx.schema.is_empty() && !lists_within_bounds(&targets, &settings) {
            findings.report()?;
        }
        if global && !request.region.is_empty() {
            findings.add([FieldViolation::new(
                "region",
                "a global load balancer has no region: it serves from every region its targets are in",
            )]);
        }
        if global && !request.subnet_id.is_empty() {
            findings.add([FieldViolation::new("subnetId", "a global load balancer lives on no subnet")]);
        }
        if !global && request.region.is_empty() {
            findings
                .add([FieldViolation::new("region", "a regional load balancer needs a region of the pool's account")]);
        }
        findings.add(check_shape(global, &targets, &settings));
        if !findings.schema_refused("projectId") {
            self.check_project(&tenant, &request.project_id).await.map_err(|error| findings.refuse(error))?;
        }
        let region = (!global).then_some(request.region.as_str());
        let pool = self.load_balancer_placement(&mut findings, &tenant, &request.pool_id, region).await?;
        let account = pool.pool.account_id.clone();
        let mut subnet_id = (!request.subnet_id.is_empty()).then(|| request.subnet_id.clone());
        if let Some(subnet) = &subnet_id {
            self.load_balancer_check_subnet(&mut findings, &tenant, subnet, &account, &request.region).await?;
        }
        self.load_balancer_check_targets(&mut findings, &tenant, &targets.load_balancer_ids, &account).await?;
        self.load_balancer_check_certificates(&mut findings, &tenant, &settings, &account).await?;
        findings.report()?;
        if !targets.instance_ids.is_empty() {
            let place = Placed { tenant: &tenant, account: &account, region: &request.region };
            let expected = subnet_id.as_deref().map(Some);
            let placement = self
                .load_balancer_check_instances(&mut findings, CREATE, place, &targets.instance_ids, expected)
                .await?;
            findings.report()?;
            if let Some(placement) = placement {
                // Without a subnetId it lives on the subnet its named instances share.
                subnet_id = placement.subnet_id;
            }
        }

        let now = now_micros();
        let row = LoadBalancerRow {
            meta: request.meta(ctx, id, &account, digest, now),
            billing_mode: pool.pool.billing_mode.clone(),
            description: request.description.clone(),
            scope: if global { "global" } else { "regional" }.to_owned(),
            region: request.region.clone(),
            subnet_id,
            targets,
            settings,
            provider_id: String::new(),
            address: String::new(),
            address_v6: String::new(),
            reached_ids: Vec::new(),
            ready_once: false,
        };
        let mut attributes = request.authz_attributes(&account);
        attributes.insert("scope".into(), row.scope.clone().into());
        attributes.insert("region".into(), request.region.clone().into());
        let authz = row.meta.authz(LOAD_BALANCER_RESOURCE, attributes);
        let new = NewLoadBalancer { row, deadline: Self::load_balancer_deadline(now) };
        self.store.load_balancer_create(&new, &authz).await
    }

    /// The tenant's load balancers (those the caller may read), oldest first.
    pub async fn load_balancer_list(
        &self,
        ctx: &Context,
        request: ListLoadBalancersRequest,
    ) -> Result<Vec<LoadBalancerRow>> {
        let lbs = self.store.load_balancer_list(&request.filter(LIST_LIMIT)).await?;
        self.readable_resources(ctx, "compute:load-balancers:read", LOAD_BALANCER_RESOURCE, &request.tenant_id, lbs)
            .await
    }

    /// One load balancer.
    pub async fn load_balancer_get(&self, _ctx: &Context, request: GetLoadBalancerRequest) -> Result<LoadBalancerRow> {
        self.load_balancer_of_tenant(&request.tenant_id, &request.load_balancer_id).await
    }

    /// Replaces each part the update names (its `update_mask`, or the deprecated `setDomains`
    /// and `clearStickySessions`) with the value given: an empty list clears a list, a health
    /// check or sticky sessions named without a value are turned off. The source ranges and the
    /// redirect are refused without a value: a `null` that opened the load balancer to any
    /// address, or stopped redirecting, would change it unasked (`{}` and `false` say so). The load balancer goes `updating` until the
    /// provider applied it, or stays `pending` while the provider never made it (see
    /// `Store::load_balancer_update`). Every violated field is reported at once, as on create.
    pub async fn load_balancer_update(
        &self,
        ctx: &Context,
        request: UpdateLoadBalancerRequest,
    ) -> Result<LoadBalancerRow> {
        let mask = Named::of(&request.update_mask);
        // The API layer always settles the mask; a request that reached the service without one
        // names the fields given a value, as the layer would have.
        let named = |field: &str, given: bool| mask.has(field) || (mask.is_empty() && given);
        let mut findings = Findings::new(ctx);
        let fixed = [
            ("scope", "scope", &request.scope),
            ("region", "region", &request.region),
            ("pool_id", "poolId", &request.pool_id),
            ("subnet_id", "subnetId", &request.subnet_id),
        ];
        for (field, json_name, value) in fixed {
            if named(field, !value.is_empty()) {
                findings.add([FieldViolation::new(
                    json_name,
                    format!(
                        "a load balancer's {json_name} never changes; \
                         make another load balancer with the {json_name} you want"
                    ),
                )]);
            }
        }
        let targets_named = named("targets", request.targets.is_some());
        let forwarding_named = named("forwarding", !request.forwarding.is_empty());
        let health_check_named = named("health_check", request.health_check.is_some());
        let sticky_named = named("sticky_sessions", request.sticky_sessions.is_some()) || request.clear_sticky_sessions;
        let ranges_named = named("source_ranges", request.source_ranges.is_some());
        let redirect_named = named("redirect_http_to_https", request.redirect_http_to_https.is_some());
        let domains_named = named("domains", !request.domains.is_empty()) || request.set_domains;
        let any_part = targets_named
            || forwarding_named
            || health_check_named
            || sticky_named
            || ranges_named
            || redirect_named
            || domains_named;
        if !any_part {
            let accepted = [
                "targets",
                "forwarding",
                "healthCheck",
                "stickySessions",
                "sourceRanges",
                "redirectHttpToHttps",
                "domains",
            ];
            let error = Error::invalid_input(format!("name at least one part to replace: {}", accepted.join(", ")))
                .with_detail("accepted", serde_json::json!(accepted));
            return Err(findings.refuse(error));
        }
        let defaulted = [
            (ranges_named && request.source_ranges.is_none(), "sourceRanges", "{} for any address"),
            (redirect_named && request.redirect_http_to_https.is_none(), "redirectHttpToHttps", "false to stop"),
        ];
        for (_, field, accepted) in defaulted.iter().filter(|(emptied, _, _)| *emptied) {
            findings.add([FieldViolation::new(
                *field,
                format!("is named without a value, which would reset it unasked: give the new value ({accepted}), or leave it out"),
            )]);
        }
        if request.sticky_sessions.is_some() && request.clear_sticky_sessions {
            findings.add([FieldViolation::new(
                "clearStickySessions",
                "either new stickySessions or clearStickySessions, not both",
            )]);
        }
        let targets = request.targets.as_ref().map(targets_row).unwrap_or_default();
        // The lists given, apart: they are checked against their bounds before anything is
        // looked up.
        let lists = LoadBalancerSettings {
            forwarding: forwarding_rows(&request.forwarding),
            domains: domain_rows(&request.domains),
            ..Default::default()
        };
        if !ctx.schema.is_empty() && !lists_within_bounds(&targets, &lists) {
            findings.report()?;
        }
        let found = self.load_balancer_of_tenant(&request.tenant_id, &request.load_balancer_id).await;
        let mut lb = found.map_err(|error| findings.refuse(error))?;
        if lb.delete_requested_at.is_some() || lb.deleted_at.is_some() {
            let error = Error::invalid_state(format!("load balancer {:?} is {} and cannot change", lb.id, lb.state))
                .with_detail("state", lb.state.as_str());
            return Err(findings.refuse(error));
        }
        if targets_named {
            lb.targets = targets;
        }
        if forwarding_named {
            lb.settings.forwarding = lists.forwarding;
        }
        if health_check_named {
            lb.settings.health_check = request.health_check.as_ref().map(health_check_row);
        }
        if sticky_named {
            lb.settings.sticky_sessions = request.sticky_sessions.as_ref().map(sticky_row);
        }
        if ranges_named {
            lb.settings.source_ranges = request.source_ranges.as_ref().map(ranges_row).unwrap_or_default();
        }
        if redirect_named {
            lb.settings.redirect_http_to_https = request.redirect_http_to_https.unwrap_or(false);
        }
        if domains_named {
            lb.settings.domains = lists.domains;
        }
        findings.add(check_shape(lb.is_global(), &lb.targets, &lb.settings));
        let tenant = lb.tenant_id.clone();
        if targets_named {
            self.load_balancer_check_targets(&mut findings, &tenant, &lb.targets.load_balancer_ids, &lb.account_id)
                .await?;
        }
        self.load_balancer_check_certificates(&mut findings, &tenant, &lb.settings, &lb.account_id).await?;
        findings.report()?;
        if targets_named && !lb.targets.instance_ids.is_empty() {
            // Named instances must be on its subnet, or, without one, on no tenant network.
            let place = Placed { tenant: &tenant, account: &lb.account_id, region: &lb.region };
            let subnet = Some(lb.subnet_id.as_deref());
            self.load_balancer_check_instances(&mut findings, UPDATE, place, &lb.targets.instance_ids, subnet).await?;
            findings.report()?;
        }
        let now = now_micros();
        let updated = self.store.load_balancer_update(&lb, now, Self::load_balancer_deadline(now)).await?;
        let by = &ctx.caller.principal_id;
        tracing::info!(load_balancer = %updated.id, version = updated.version, by = %by, "load balancer updated");
        Ok(updated)
    }

    /// Marks a load balancer for deletion; one already deleted is returned as it is. A regional
    /// one a global one of the tenant targets is `INVALID_STATE` (reason `inUse`).
    pub async fn load_balancer_delete(
        &self,
        ctx: &Context,
        request: DeleteLoadBalancerRequest,
    ) -> Result<LoadBalancerRow> {
        let lb = self.load_balancer_of_tenant(&request.tenant_id, &request.load_balancer_id).await?;
        let delete = |id: String, now| async move {
            self.store.load_balancer_delete(&id, now, Self::load_balancer_deadline(now)).await
        };
        self.delete_resource(ctx, "load balancer", lb, request.force, delete).await
    }
}
