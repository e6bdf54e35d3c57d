//! `bettercompute.compute.v1.LoadBalancers`: decode, call the service, turn rows into views.

use super::handlers::thin_service;
use super::plans::plan_view;
use super::views::meta_view;
use crate::proto::compute::{
    CreateLoadBalancerRequest, DeleteLoadBalancerRequest, GetLoadBalancerRequest, ListLoadBalancersRequest,
    ListLoadBalancersResponse, LoadBalancer, LoadBalancerDomain, LoadBalancerForwardingRule, LoadBalancerHealthCheck,
    LoadBalancerSourceRanges, LoadBalancerStickySessions, LoadBalancerTargets, Plan, PlanLoadBalancerRequest,
    UpdateLoadBalancerRequest, load_balancers_server,
};
use crate::store::LoadBalancerRow;

fn load_balancer_view(row: LoadBalancerRow) -> LoadBalancer {
    let provider_name = row.provider_name();
    // The values in force: what the tenant left out shows as the provider's default, never 0.
    let check = row.settings.health_check_in_force();
    let settings = row.settings;
    let targets = row.targets;
    LoadBalancer {
        description: row.description,
        scope: row.scope,
        region: row.region,
        subnet_id: row.subnet_id.unwrap_or_default(),
        targets: Some(LoadBalancerTargets {
            pool: targets.pool.then_some(true),
            instance_ids: targets.instance_ids,
            load_balancer_ids: targets.load_balancer_ids,
        }),
        forwarding: settings
            .forwarding
            .into_iter()
            .map(|r| LoadBalancerForwardingRule {
                entry_protocol: r.entry_protocol,
                entry_port: r.entry_port,
                target_protocol: r.target_protocol,
                target_port: r.target_port,
                certificate_id: r.certificate_id,
                tls_passthrough: r.tls_passthrough,
            })
            .collect(),
        health_check: Some(LoadBalancerHealthCheck {
            protocol: check.protocol,
            port: check.port,
            path: check.path,
            interval_seconds: check.interval_seconds,
            timeout_seconds: check.timeout_seconds,
            healthy_threshold: check.healthy_threshold,
            unhealthy_threshold: check.unhealthy_threshold,
        }),
        sticky_sessions: settings
            .sticky_sessions
            .map(|s| LoadBalancerStickySessions { cookie_name: s.cookie_name, ttl_seconds: s.ttl_seconds }),
        source_ranges: Some(LoadBalancerSourceRanges {
            allow: settings.source_ranges.allow,
            deny: settings.source_ranges.deny,
        }),
        redirect_http_to_https: settings.redirect_http_to_https,
        domains: settings
            .domains
            .into_iter()
            .map(|d| LoadBalancerDomain { name: d.name, certificate_id: d.certificate_id })
            .collect(),
        reached_ids: row.reached_ids,
        address: row.address,
        address_v6: row.address_v6,
        provider_name,
        ..meta_view(row.meta)
    }
}

thin_service! {
    impl load_balancers_server::LoadBalancers: LoadBalancer by load_balancer_view;
    // Create and update report the schema stage's violations with those of their own rules.
    create(CreateLoadBalancerRequest) load_balancer_create + rules, get(GetLoadBalancerRequest) load_balancer_get,
    update(UpdateLoadBalancerRequest) load_balancer_update + rules,
    delete(DeleteLoadBalancerRequest) load_balancer_delete;
    list(ListLoadBalancersRequest) load_balancer_list -> ListLoadBalancersResponse { load_balancers };
    answers { plan(PlanLoadBalancerRequest) load_balancer_plan -> Plan by plan_view };
}
