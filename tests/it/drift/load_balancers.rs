//! A forwarding rule added to a DigitalOcean load balancer in its control panel: `correct`
//! replaces the load balancer's rules with the tenant's again; `report` leaves the rule, shows
//! `forwarding` drift until the tenant changes the load balancer, whose new spec is applied
//! whole (the hand-made rule goes with it).

use std::time::Duration;

use better_compute::reconcile::WorkerConfig;
use better_compute::store::{Backend, LOAD_BALANCER_KIND};
use serde_json::{Value, json};

use super::{events_of, no_drift, only_drift, set_drift_policy};
use crate::harness::{Catalog, Env, System, fast_config, passes_recorded, poll};

crate::on_both_backends!(
    a_rule_added_at_the_provider_is_removed_under_correct,
    a_rule_added_at_the_provider_is_reported_until_the_tenant_changes_the_load_balancer,
);

const POOL: &str = "pool_0000000000000000000000dg01";
const ACCOUNT: &str = "acct_0000000000000000000000dg01";
const REGION: &str = "nyc3";
const LIMIT: Duration = Duration::from_secs(30);
const DRIFT: &str = "providerLoadBalancer.drift";
const GET: &str = "/api/compute/loadBalancers/get";

async fn start(backend: Backend) -> Env {
    let catalog = Catalog::new()
        .digitalocean_account(ACCOUNT, None, &[REGION])
        .pool(POOL, ACCOUNT, "none", &[])
        .offer(POOL, "acme")
        .quota(POOL, "acme", "loadBalancers", 5);
    // Settled passes often, so that a change at the provider is seen soon.
    let config = WorkerConfig {
        settled: Some(Duration::from_millis(500)),
        metering_interval: Duration::from_secs(3600),
        ..fast_config()
    };
    let mut env =
        System::on(backend).catalog(catalog).worker_config(config).reconciling(&[LOAD_BALANCER_KIND]).start().await;
    env.start_worker();
    env
}

/// Makes acme's load balancer (HTTP 80 to 8080) and waits until it is ready; returns its id
/// and its id at the provider.
async fn ready_load_balancer(env: &Env, name: &str) -> (String, String) {
    env.instance("acme", POOL, REGION, None).await;
    let body = json!({
        "tenantId": "acme", "poolId": POOL, "name": name, "region": REGION, "targets": {"pool": true},
        "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080}],
        "idempotencyKey": name,
    });
    let id = env.ok("/api/compute/loadBalancers/create", body).await["id"].as_str().unwrap().to_owned();
    wait_view(env, &id, "ready", |lb| lb["state"] == "ready").await;
    let provider_id = env.store.load_balancer_fetch(&id).await.unwrap().unwrap().provider_id;
    (id, provider_id)
}

async fn wait_view(env: &Env, id: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let body = json!({"tenantId": "acme", "loadBalancerId": id});
    env.get_until(&env.acme_admin, "loadBalancers", body, LIMIT, what, check).await
}

/// The provider's load balancer `provider_id`.
fn fake(env: &Env, provider_id: &str) -> Value {
    let all = env.cloud.inspect()["digitalocean"]["loadBalancers"].as_array().cloned().unwrap_or_default();
    all.into_iter().find(|lb| lb["id"] == provider_id).unwrap()
}

fn entry_ports(fake: &Value) -> Vec<u64> {
    let mut ports: Vec<u64> =
        fake["forwardingRules"].as_array().unwrap().iter().map(|r| r["entry_port"].as_u64().unwrap()).collect();
    ports.sort();
    ports
}

fn add_ssh_rule(env: &Env, provider_id: &str) {
    let rule = json!({"entry_protocol": "tcp", "entry_port": 2222, "target_protocol": "tcp", "target_port": 22});
    assert!(env.cloud.do_add_forwarding_rule(provider_id, rule));
}

async fn a_rule_added_at_the_provider_is_removed_under_correct(backend: Backend) {
    let env = start(backend).await;
    let (id, provider_id) = ready_load_balancer(&env, "corrected").await;
    add_ssh_rule(&env, &provider_id);

    let event = poll(LIMIT, "a drift event", || async {
        let events = events_of(&env, "acme", &id, DRIFT).await;
        events.first().cloned().ok_or_else(|| format!("{events:?}"))
    })
    .await;
    assert_eq!(event["data"]["action"], "corrected", "{event}");
    let fields = event["data"]["fields"].as_array().unwrap();
    assert_eq!(fields.len(), 1, "{event}");
    assert_eq!(fields[0]["field"], "forwarding");
    assert_eq!(fields[0]["applied"]["rules"].as_array().unwrap().len(), 1, "{event}");
    assert_eq!(fields[0]["found"]["rules"].as_array().unwrap().len(), 2, "{event}");
    poll(LIMIT, "the hand-made rule gone", || async {
        let ports = entry_ports(&fake(&env, &provider_id));
        if ports == [80] { Ok(()) } else { Err(format!("{ports:?}")) }
    })
    .await;
    wait_view(&env, &id, "ready without drift", |lb| lb["state"] == "ready" && no_drift(lb)).await;
    passes_recorded(&env.db.url, &id, 2).await;
    assert_eq!(events_of(&env, "acme", &id, DRIFT).await.len(), 1, "corrected once");
}

async fn a_rule_added_at_the_provider_is_reported_until_the_tenant_changes_the_load_balancer(backend: Backend) {
    let env = start(backend).await;
    set_drift_policy(&env, POOL, json!({"drift": "report"})).await;
    let (id, provider_id) = ready_load_balancer(&env, "reported").await;
    let updates = fake(&env, &provider_id)["updates"].as_u64().unwrap();
    add_ssh_rule(&env, &provider_id);

    let drifted = wait_view(&env, &id, "drift shown", |lb| !no_drift(lb)).await;
    let (field, applied, found, action) = only_drift(&drifted);
    assert_eq!((field.as_str(), action.as_str()), ("forwarding", "reported"), "{drifted}");
    assert_eq!(applied["rules"].as_array().unwrap().len(), 1, "{drifted}");
    let found_rules = found["rules"].as_array().unwrap();
    assert!(found_rules.iter().any(|r| r["entryPort"] == 2222 && r["targetPort"] == 22), "{drifted}");
    assert_eq!(drifted["state"], "ready");

    // Further passes leave the provider as it is and tell the drift no more.
    passes_recorded(&env.db.url, &id, 3).await;
    let left = fake(&env, &provider_id);
    assert_eq!(entry_ports(&left), [80, 2222]);
    assert_eq!(left["updates"].as_u64().unwrap(), updates, "no update was sent");
    assert!(!no_drift(&env.ok(GET, json!({"tenantId": "acme", "loadBalancerId": id})).await));
    let events = events_of(&env, "acme", &id, DRIFT).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0]["data"]["action"], "reported");

    // The tenant changes the load balancer: the new spec is applied whole, no drift left.
    let change = json!({"tenantId": "acme", "loadBalancerId": id, "sourceRanges": {"deny": ["192.0.2.0/24"]}});
    let updating = env.ok("/api/compute/loadBalancers/update", change).await;
    assert_eq!(updating["state"], "updating");
    wait_view(&env, &id, "the change applied", |lb| lb["state"] == "ready" && no_drift(lb)).await;
    let applied = fake(&env, &provider_id);
    assert_eq!(applied["firewall"]["deny"], json!(["cidr:192.0.2.0/24"]), "{applied}");
    assert_eq!(entry_ports(&applied), [80], "{applied}");
}
