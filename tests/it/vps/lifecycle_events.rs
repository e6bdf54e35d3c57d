//! Every kind the kit's lifecycle owns appends the same lifecycle events: `created`, then
//! `deleting` at the delete call, then `deleted` once the provider object is gone. The kinds are
//! read from the store's one list (`CONVERGED_KINDS`); a kind added there without a case here
//! fails, and so does one the worker's registry does not reconcile.

use better_compute::store::{Backend, CONVERGED_KINDS};
use serde_json::{Value, json};

use super::{DO_POOL, Env, GKE_POOL, do_network, instance};
use crate::harness::reconcilers;
use crate::on_both_backends;

/// How the test makes one resource of a kind: its API collection, its id field, its create
/// request, and the prefix of its event types.
struct Case {
    collection: &'static str,
    id_field: &'static str,
    create: Value,
    events: &'static str,
}

/// The case of work kind `kind`, `None` for a kind this test does not know yet.
fn case(kind: &str) -> Option<Case> {
    let case = match kind {
        "kubernetes.clusters" => Case {
            collection: "kubernetesClusters",
            id_field: "clusterId",
            create: json!({"tenantId": "acme", "poolId": GKE_POOL, "name": "life", "mode": "autopilot",
                           "location": "europe-west1", "idempotencyKey": "life"}),
            events: "kubernetes.cluster",
        },
        "network" => Case {
            collection: "networks",
            id_field: "networkId",
            create: do_network("life", &[("front", "nyc3", "10.40.0.0/24")]),
            events: "network",
        },
        "instance" => Case {
            collection: "instances",
            id_field: "instanceId",
            create: instance("life", "nyc3", ""),
            events: "instance",
        },
        "certificate" => Case {
            collection: "certificates",
            id_field: "certificateId",
            create: json!({"tenantId": "acme", "poolId": DO_POOL, "name": "life", "type": "letsEncrypt",
                           "dnsNames": ["life.example.com"], "idempotencyKey": "life"}),
            events: "certificate",
        },
        "volume" => Case {
            collection: "volumes",
            id_field: "volumeId",
            create: json!({"tenantId": "acme", "poolId": DO_POOL, "name": "life", "region": "nyc3",
                           "sizeGigabytes": 10, "idempotencyKey": "life"}),
            events: "volume",
        },
        "provider-load-balancer" => Case {
            collection: "loadBalancers",
            id_field: "loadBalancerId",
            create: json!({
                "tenantId": "acme", "poolId": DO_POOL, "name": "life", "region": "nyc3", "targets": {"pool": true},
                "forwarding": [{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080}],
                "idempotencyKey": "life",
            }),
            events: "providerLoadBalancer",
        },
        _ => return None,
    };
    Some(case)
}

/// The event types of acme's events about `subject` that start with `prefix.`, oldest first.
async fn lifecycle_events(env: &Env, subject: &str, prefix: &str) -> Vec<String> {
    let wanted = format!("{prefix}.");
    env.event_types(subject).await.into_iter().filter(|kind| kind.starts_with(&wanted)).collect()
}

async fn every_kind_appends_created_then_deleting_then_deleted(backend: Backend) {
    let env = super::start(backend).await;
    let registered: Vec<&str> = reconcilers(env.resources(), None).iter().map(|r| r.kind()).collect();
    for kind in CONVERGED_KINDS {
        assert!(registered.contains(kind), "{kind} is a kind of the kit but the worker's registry lacks it");
        let case = case(kind).unwrap_or_else(|| panic!("{kind}: give the lifecycle test a case for it"));
        let created = env.ok(&format!("/api/compute/{}/create", case.collection), case.create).await;
        let id = created["id"].as_str().unwrap().to_owned();
        env.wait_state(case.collection, case.id_field, &id, "ready").await;
        let deleting = env
            .ok(&format!("/api/compute/{}/delete", case.collection), json!({"tenantId": "acme", case.id_field: id}))
            .await;
        assert_eq!(deleting["state"], "deleting", "{kind}: {deleting}");
        env.wait_state(case.collection, case.id_field, &id, "deleted").await;
        let events = lifecycle_events(&env, &id, case.events).await;
        let lifecycle: Vec<&str> = events
            .iter()
            .map(|kind| kind.rsplit('.').next().unwrap())
            .filter(|step| ["created", "deleting", "deleted"].contains(step))
            .collect();
        assert_eq!(lifecycle, ["created", "deleting", "deleted"], "{kind}: events {events:?}");
    }
}

on_both_backends!(every_kind_appends_created_then_deleting_then_deleted);
