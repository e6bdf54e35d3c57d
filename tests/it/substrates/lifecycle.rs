//! A substrate's life against the fake GKE: made with two flavors, its nodes joined through the
//! DaemonSets it applied, changed in place (a flavor added, one removed, a machine type
//! changed), a flavor shrunk (the node whose machine went away is `deleted`, not left
//! `notReady`), and torn down when the pool is archived, leaving nothing at the fake cloud.

use std::collections::BTreeSet;

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{CONVERGE, ZONE, flavor, setup, substrate_policy};
use crate::harness::{Env, poll};

crate::on_both_backends!(
    a_made_substrate_joins_its_nodes_changes_in_place_and_leaves_nothing_when_archived,
    a_shrunk_flavor_deletes_the_node_whose_machine_went_away,
);

/// The fake cluster named `name`, if it is there.
fn fake_cluster(env: &Env, name: &str) -> Option<Value> {
    env.fake_gke_clusters().into_iter().find(|c| c["name"] == name)
}

fn node_pool_names(cluster: &Value) -> BTreeSet<String> {
    cluster["nodePools"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap().to_owned()).collect()
}

/// Waits until the substrate is `ready` with every flavor's provider nodes joined, and the
/// pool has exactly `nodes` ready nodes.
async fn wait_ready_with(env: &Env, pool: &str, nodes: usize) -> Value {
    let ready = env
        .substrate_until(pool, "ready with its nodes joined", |s| {
            s["state"] == "ready"
                && s["flavors"].as_array().unwrap().iter().all(|f| f["joinedNodes"] == f["providerNodes"])
        })
        .await;
    poll(CONVERGE, &format!("{nodes} ready nodes in {pool}"), || async {
        let ready = env.pool_nodes(pool, "ready").await;
        if ready.len() == nodes { Ok(()) } else { Err(format!("{} ready", ready.len())) }
    })
    .await;
    ready
}

async fn a_made_substrate_joins_its_nodes_changes_in_place_and_leaves_nothing_when_archived(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.start_worker();
    let create = json!({"create": {"location": ZONE, "releaseChannel": "regular"}});
    let policy =
        substrate_policy(create.clone(), vec![flavor("general", "e2-standard-4", 2), flavor("small", "e2-medium", 1)]);
    let pool = env.substrate_pool("made", policy).await;
    let body = &pool["pool_".len()..];

    let ready = wait_ready_with(&env, &pool, 3).await;
    let cluster_name = ready["clusterName"].as_str().unwrap().to_owned();
    assert_eq!(cluster_name, format!("bc-s-{}", &body[..24]));
    assert_eq!(ready["mode"], "create");
    assert!(!ready["endpoint"].as_str().unwrap().is_empty(), "{ready}");
    assert!(ready["joinTokenId"].as_str().unwrap().starts_with("jt_"), "{ready}");
    assert!(!ready.to_string().contains("bcjt_"), "the token's secret is never shown: {ready}");
    let kinds: Vec<&str> = ready["objects"].as_array().unwrap().iter().map(|o| o["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["Namespace", "ServiceAccount", "Secret", "DaemonSet", "DaemonSet"], "{ready}");
    let cluster = fake_cluster(&env, &cluster_name).expect("the cluster is at the fake cloud");
    assert_eq!(cluster["labels"]["better-compute-substrate-pool"], pool.as_str());
    let expected: BTreeSet<String> = ["general", "small"].iter().map(|f| format!("bc-{}-{f}", &body[..10])).collect();
    assert_eq!(node_pool_names(&cluster), expected);
    // Every node carries its flavor, as the DaemonSet's bcd joined it.
    let nodes = env.pool_nodes(&pool, "ready").await;
    let general = nodes.iter().filter(|n| n["labels"]["better-compute.dev/flavor"] == "general").count();
    assert_eq!(general, 2, "{nodes:?}");

    // In place: a flavor added, one removed, a machine type changed.
    let changed =
        substrate_policy(create, vec![flavor("general", "e2-standard-8", 2), flavor("extra", "e2-medium", 1)]);
    env.set_policy(&pool, changed).await;
    let expected: BTreeSet<String> = ["general", "extra"].iter().map(|f| format!("bc-{}-{f}", &body[..10])).collect();
    poll(CONVERGE, "the node pools follow the flavors", || async {
        let cluster = fake_cluster(&env, &cluster_name).unwrap();
        let general = cluster["nodePools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"].as_str().unwrap().ends_with("-general"))
            .cloned();
        let moved = general.is_some_and(|p| p["machineType"] == "e2-standard-8" && p["status"] == "RUNNING");
        if node_pool_names(&cluster) == expected && moved { Ok(()) } else { Err(cluster["nodePools"].to_string()) }
    })
    .await;
    let updated = wait_ready_with(&env, &pool, 3).await;
    let flavors: Vec<&str> =
        updated["flavors"].as_array().unwrap().iter().map(|f| f["name"].as_str().unwrap()).collect();
    assert_eq!(flavors, ["general", "extra"]);
    let deleted = env.pool_nodes(&pool, "deleted").await;
    assert!(
        deleted.iter().any(|n| n["labels"]["better-compute.dev/flavor"] == "small"),
        "the removed flavor's node left the pool: {deleted:?}"
    );

    env.archive_pool(&pool).await;
    let gone = env.substrate_until(&pool, "deleted", |s| s["state"] == "deleted").await;
    assert!(gone["deletedAt"].is_string(), "{gone}");
    assert!(fake_cluster(&env, &cluster_name).is_none(), "the made cluster is deleted");
    assert!(env.pool_nodes(&pool, "ready").await.is_empty(), "no node of the pool is left ready");
    let token = env
        .server
        .admin_ok("/api/compute/joinTokens/get", json!({"poolId": pool, "joinTokenId": ready["joinTokenId"]}))
        .await;
    assert_eq!(token["state"], "revoked", "the hosted token is revoked: {token}");
    let events = env.substrate_events(&pool).await;
    for change in ["created", "ready", "updated", "deleted"] {
        assert!(events.iter().any(|e| e == &format!("kubernetes.substrate.{change}")), "{change}: {events:?}");
    }
    assert_eq!(events.iter().filter(|e| e.ends_with(".ready")).count(), 1, "ready once, then updated: {events:?}");
    env.stop_worker().await;
}

async fn a_shrunk_flavor_deletes_the_node_whose_machine_went_away(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.start_worker();
    let create = json!({"create": {"location": ZONE, "releaseChannel": "regular"}});
    let pool =
        env.substrate_pool("shrunk", substrate_policy(create.clone(), vec![flavor("general", "e2-medium", 2)])).await;
    wait_ready_with(&env, &pool, 2).await;

    env.set_policy(&pool, substrate_policy(create, vec![flavor("general", "e2-medium", 1)])).await;
    let deleted = poll(CONVERGE, "the removed machine's node deleted", || async {
        let deleted = env.pool_nodes(&pool, "deleted").await;
        if deleted.len() == 1 { Ok(deleted) } else { Err(format!("{} deleted", deleted.len())) }
    })
    .await;
    assert_eq!(deleted[0]["labels"]["better-compute.dev/flavor"], "general", "{deleted:?}");
    let shrunk = wait_ready_with(&env, &pool, 1).await;
    assert_eq!(shrunk["flavors"][0]["providerNodes"], 1, "{shrunk}");
    assert!(env.pool_nodes(&pool, "notReady").await.is_empty(), "no node is left notReady for good");
    env.stop_worker().await;
}
