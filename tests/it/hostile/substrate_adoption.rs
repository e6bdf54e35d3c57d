//! Substrates that would adopt a cluster the system manages for another tenant, and the uses and scope of the join token they host.
//!
//! An operator's pool adopted tenant acme's cluster (made through the clusters API): acme's
//! admin kubeconfig then read the pool's `bcd-join-token` Secret, good for 100,000 joins, and
//! joined a machine of its own into the platform's pool. Now a substrate adopts only a cluster
//! of its pool's own tenant or one the system does not manage (refused at the call, and by the
//! reconciler before it writes anything into the cluster), its hosted token has only the uses
//! its node pools need, and only a node its cluster's API lists in those node pools joins with it.

use better_compute::ids::PoolId;
use better_compute::store::{Backend, NewPool, now_micros, provider_name};
use serde_json::{Value, json};

use crate::harness::{Catalog, Env, poll};
use crate::substrates::{CONVERGE, GKE_ACCOUNT, ZONE, flavor, setup, setup_with, substrate_policy};

crate::on_both_backends!(
    a_pool_adopts_a_managed_cluster_only_of_its_own_tenant,
    a_substrate_recorded_before_its_cluster_was_managed_leaves_the_cluster_untouched,
    the_hosted_token_has_only_the_uses_the_node_pools_need,
    only_a_node_of_the_substrates_node_pools_joins_with_the_hosted_token,
);

/// A platform pool offered to acme, where acme makes its cluster.
const OFFERED_POOL: &str = "pool_0000000000000000000000gke1";
/// acme's own GKE account, and globex's.
const ACME_GKE: &str = "acct_0000000000000000000000gke2";
const GLOBEX_GKE: &str = "acct_0000000000000000000000gke3";

const CREATE_POOL: &str = "/api/platform/pools/create";
const JOIN: &str = "/api/compute/nodes/join";

fn catalog() -> Catalog {
    Catalog::new()
        .gke_account(GKE_ACCOUNT, None, &[ZONE])
        .gke_account(ACME_GKE, Some("acme"), &[ZONE])
        .gke_account(GLOBEX_GKE, Some("globex"), &[ZONE])
        .pool(OFFERED_POOL, GKE_ACCOUNT, "none", &[])
        .offer(OFFERED_POOL, "acme")
}

/// acme's cluster on the offered pool, recorded (the worker need not run): its id and its name
/// at the provider.
async fn acmes_cluster(env: &Env) -> (String, String) {
    let request = json!({
        "tenantId": "acme", "poolId": OFFERED_POOL, "name": "shared", "mode": "standard", "location": ZONE,
        "idempotencyKey": "shared",
        "nodePools": [{"name": "apps", "machineType": "e2-standard-4", "nodeCount": 1}],
    });
    let cluster = env.ok("/api/compute/kubernetesClusters/create", request).await;
    let id = cluster["id"].as_str().unwrap().to_owned();
    let name = provider_name(&id);
    (id, name)
}

/// A substrate on `account` adopting `cluster`.
fn adopting(account: &str, cluster: &str) -> Value {
    json!({"substrate": {"kind": "kubernetes", "account": account,
        "cluster": {"adopt": {"name": cluster, "location": ZONE}},
        "flavors": [flavor("general", "e2-medium", 1)]}})
}

fn assert_refused_as_managed(status: u16, answer: &Value) {
    assert_eq!(status, 409, "{answer}");
    assert_eq!(answer["error"]["code"], "INVALID_STATE", "{answer}");
    assert_eq!(answer["error"]["details"]["field"], "policy.substrate.cluster.adopt.name", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("manages") && message.contains("own tenant"), "{answer}");
}

async fn a_pool_adopts_a_managed_cluster_only_of_its_own_tenant(backend: Backend) {
    let env = setup_with(backend, catalog()).start().await;
    let (_, name) = acmes_cluster(&env).await;
    let admin = env.server.admin_token.clone();

    // The platform's pool, and globex's, cannot adopt acme's cluster.
    for (account, pool_name) in [(GKE_ACCOUNT, "platform"), (GLOBEX_GKE, "globex")] {
        let body = json!({"accountId": account, "name": pool_name, "billingMode": "none",
            "policy": adopting(account, &name)});
        let (status, answer) = env.server.post(CREATE_POOL, Some(&admin), body).await;
        assert_refused_as_managed(status, &answer);
    }
    // Nor by giving a pool that has no substrate yet one that adopts it.
    let plain = env
        .server
        .admin_ok(CREATE_POOL, json!({"accountId": GKE_ACCOUNT, "name": "plain", "billingMode": "none"}))
        .await;
    let update = json!({"poolId": plain["id"], "updateMask": "policy", "policy": adopting(GKE_ACCOUNT, &name)});
    let (status, answer) = env.server.post("/api/platform/pools/update", Some(&admin), update).await;
    assert_refused_as_managed(status, &answer);
    let listed = env.server.admin_ok("/api/compute/kubernetesSubstrates/list", json!({"poolId": plain["id"]})).await;
    assert_eq!(listed["substrates"].as_array().map_or(0, Vec::len), 0, "nothing recorded: {listed}");

    // acme's own pool adopts acme's cluster.
    let body = json!({"accountId": ACME_GKE, "name": "acme-own", "billingMode": "none",
        "policy": adopting(ACME_GKE, &name)});
    env.server.admin_ok(CREATE_POOL, body).await;
}

async fn a_substrate_recorded_before_its_cluster_was_managed_leaves_the_cluster_untouched(backend: Backend) {
    let mut env = setup_with(backend, catalog()).start().await;
    env.start_worker();
    let (id, name) = acmes_cluster(&env).await;
    env.wait_state("kubernetesClusters", "clusterId", &id, "ready").await;

    // A platform pool whose substrate adopts the cluster, recorded as a pool written before the
    // cluster was managed would be: straight in the store, past the call's check.
    let pool = PoolId::random().to_string();
    env.store
        .pool_create(&NewPool {
            id: pool.clone(),
            account_id: GKE_ACCOUNT.to_owned(),
            name: "early".to_owned(),
            description: String::new(),
            billing_mode: "none".to_owned(),
            policy: adopting(GKE_ACCOUNT, &name),
            prices: Default::default(),
            now: now_micros(),
        })
        .await
        .unwrap();
    let failed = env.substrate_until(&pool, "in error", |s| s["state"] == "error").await;
    let message = failed["message"].as_str().unwrap();
    assert!(message.contains("manages") && message.contains(&name), "{failed}");

    // Nothing of the pool's reached acme's cluster, and no token was made to put there.
    let cluster = env.fake_gke_clusters().into_iter().find(|c| c["name"] == name.as_str()).unwrap();
    let pools: Vec<&str> = cluster["nodePools"].as_array().unwrap().iter().filter_map(|p| p["name"].as_str()).collect();
    assert_eq!(pools, ["apps"], "{cluster}");
    assert_eq!(env.substrate(&pool).await["joinTokenId"], "", "{failed}");
    let tokens = env.server.admin_ok("/api/compute/joinTokens/list", json!({"poolId": pool})).await;
    assert_eq!(tokens["joinTokens"].as_array().map_or(0, Vec::len), 0, "{tokens}");
    env.stop_worker().await;
}

/// A platform pool whose substrate makes a cluster with two fixed nodes, ready with both
/// joined: the pool and the substrate.
async fn ready_substrate(env: &Env) -> (String, Value) {
    let create = json!({"create": {"location": ZONE, "releaseChannel": "regular"}});
    let pool = env.substrate_pool("hosted", substrate_policy(create, vec![flavor("general", "e2-medium", 2)])).await;
    let ready = env
        .substrate_until(&pool, "ready with both nodes", |s| {
            s["state"] == "ready" && s["flavors"][0]["joinedNodes"] == 2
        })
        .await;
    (pool, ready)
}

async fn hosted_token(env: &Env, pool: &str) -> Value {
    let substrate = env.substrate(pool).await;
    let body = json!({"poolId": pool, "joinTokenId": substrate["joinTokenId"]});
    env.server.admin_ok("/api/compute/joinTokens/get", body).await
}

async fn the_hosted_token_has_only_the_uses_the_node_pools_need(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.start_worker();
    let (pool, _) = ready_substrate(&env).await;
    let token = hosted_token(&env, &pool).await;
    let max_uses = token["maxUses"].as_i64().unwrap();
    // Two nodes, and a margin for the machines that replace them: never thousands.
    assert!((2..=4).contains(&max_uses), "{token}");
    env.stop_worker().await;
}

/// A daemon's join as `machine_id`, with the flavor's label as the substrate's DaemonSet gives it.
fn joining(machine_id: &str) -> Value {
    json!({"machineId": machine_id, "hostname": machine_id, "architecture": "amd64", "os": "Debian GNU/Linux 13",
        "kernel": "6.12.0", "bcdVersion": "0.1.0", "labels": {"better-compute.dev/flavor": "general"},
        "capacity": {"cpuMillis": 2000, "memoryBytes": 4294967296_i64, "ephemeralStorageBytes": 53687091200_i64}})
}

async fn only_a_node_of_the_substrates_node_pools_joins_with_the_hosted_token(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.start_worker();
    let (pool, ready) = ready_substrate(&env).await;
    // The bearer form the cluster's Secret holds, as anyone who reads that Secret has it.
    let row = env.store.substrate_fetch(&pool).await.unwrap();
    let bearer = env.key.open(&row.join_token_sealed.0, &pool).unwrap().expose().to_owned();
    let before = hosted_token(&env, &pool).await["uses"].clone();

    let cluster = ready["clusterName"].as_str().unwrap();
    let node_pool = ready["flavors"][0]["nodePool"].as_str().unwrap();
    // Any machine, and one named as the node pool's nodes are but not one of them.
    for machine in ["rogue-machine-1".to_owned(), format!("gke-{cluster}-{node_pool}-0099")] {
        let (status, answer) = env.server.post(JOIN, Some(&bearer), joining(&machine)).await;
        assert_eq!(status, 403, "{machine}: {answer}");
        assert_eq!(answer["error"]["code"], "ACCESS_DENIED", "{answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(&machine) && message.contains(node_pool), "{answer}");
    }
    assert_eq!(hosted_token(&env, &pool).await["uses"], before, "a refused join uses nothing");
    poll(CONVERGE, "the pool's nodes are the cluster's two", || async {
        let nodes = env.server.admin_ok("/api/compute/nodes/list", json!({"poolId": pool})).await;
        let machines: Vec<&str> =
            nodes["nodes"].as_array().unwrap().iter().filter_map(|n| n["machineId"].as_str()).collect();
        let ours = machines.iter().all(|m| m.starts_with(&format!("gke-{cluster}-{node_pool}-000")));
        if machines.len() == 2 && ours { Ok(()) } else { Err(format!("{machines:?}")) }
    })
    .await;
    env.stop_worker().await;
}
