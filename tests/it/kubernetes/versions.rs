//! Node versions follow the control plane: after the tenant moves the control plane, the
//! reconciler upgrades each node pool to its version (GKE `nodePools.update` with
//! `nodeVersion`), one pool at a time; the cluster stays `updating` until the nodes followed,
//! then is `ready` with `nodeVersion` showing it and `kubernetes.cluster.updated` published.
//! (A version the provider moved to by itself is followed the same way: clusters.rs.)
//! `versions` is a read: only the pool and the location are checked, so a suspended offer, an
//! excluded region or a spent budget, which refuse a create, do not refuse it. A cluster on the
//! `extended` channel, which GKE offers beside the other three, becomes ready.

use std::cell::Cell;
use std::time::{Duration, Instant};

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{DO_POOL, FREE_POOL, POOL, standard};
use crate::harness::poll;

crate::on_both_backends!(
    node_pools_follow_the_control_plane_one_at_a_time,
    versions_are_listed_whatever_refuses_new_clusters,
    a_cluster_on_the_extended_channel_becomes_ready,
);

const VERSIONS: &str = "/api/compute/kubernetesClusters/versions";

async fn versions_are_listed_whatever_refuses_new_clusters(backend: Backend) {
    let env = super::start(backend).await;
    let asked =
        |tenant: &str, pool: &str, location: &str| json!({"tenantId": tenant, "poolId": pool, "location": location});
    let listed = |answer: &Value| answer["validVersions"].as_array().map_or(0, Vec::len);
    let autopilot = |tenant: &str, pool: &str, location: &str| {
        json!({"tenantId": tenant, "poolId": pool, "name": "auto", "mode": "autopilot", "location": location,
               "idempotencyKey": format!("{tenant}-{location}")})
    };

    // globex's offer of the free pool is suspended: a create is refused, versions are not.
    let (status, refused) = env
        .post_as(
            &env.globex_admin,
            "/api/compute/kubernetesClusters/create",
            autopilot("globex", FREE_POOL, "europe-west1"),
        )
        .await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("INVALID_STATE")), "{refused}");
    let (status, versions) = env.post_as(&env.globex_admin, VERSIONS, asked("globex", FREE_POOL, "europe-west1")).await;
    assert_eq!(status, 200, "a suspended offer: {versions}");
    assert!(listed(&versions) >= 3, "{versions}");

    // acme's offer of it excludes us-central1.
    let (status, refused) = env
        .post_as(
            &env.acme_admin,
            "/api/compute/kubernetesClusters/create",
            autopilot("acme", FREE_POOL, "us-central1-a"),
        )
        .await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{refused}");
    let versions = env.ok(VERSIONS, asked("acme", FREE_POOL, "us-central1-a")).await;
    assert!(listed(&versions) >= 3, "an excluded region: {versions}");

    // A budget of 0 is spent at once: metered creates are refused, versions are not.
    let budget = better_compute::store::NewBudget {
        id: better_compute::ids::BudgetId::random().to_string(),
        tenant_id: "acme".into(),
        name: "nothing".into(),
        monthly_limit: 0,
        now: better_compute::store::now_micros(),
    };
    env.store.budget_create(&budget).await.unwrap();
    let (status, refused) =
        env.post_as(&env.acme_admin, "/api/compute/kubernetesClusters/create", standard("spent", "spent")).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (429, Some("QUOTA_EXCEEDED")), "{refused}");
    let versions = env.ok(VERSIONS, asked("acme", POOL, "europe-west1")).await;
    assert!(listed(&versions) >= 3, "a spent budget: {versions}");

    // The pool and the location are still checked.
    let refusals = [
        (asked("acme", "pool_00000000000000000000000xyz", "europe-west1"), 404, "NOT_FOUND"),
        (asked("acme", DO_POOL, "nyc3"), 422, "UNSUPPORTED"),
        (asked("acme", POOL, "asia-east1"), 400, "INVALID_INPUT"),
        (asked("globex", DO_POOL, "nyc3"), 404, "NOT_FOUND"),
    ];
    for (body, status, code) in refusals {
        let token = if body["tenantId"] == "globex" { &env.globex_admin } else { &env.acme_admin };
        let (got, answer) = env.post_as(token, VERSIONS, body.clone()).await;
        assert_eq!((got, answer["error"]["code"].as_str()), (status, Some(code)), "{body}: {answer}");
    }
}

async fn a_cluster_on_the_extended_channel_becomes_ready(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let versions = env.ok(VERSIONS, json!({"tenantId": "acme", "poolId": POOL, "location": "europe-west1"})).await;
    let extended = versions["channels"].as_array().unwrap().iter().find(|c| c["channel"] == "extended").cloned();
    let extended = extended.unwrap_or_else(|| panic!("no extended channel: {versions}"));
    assert!(!extended["defaultVersion"].as_str().unwrap().is_empty(), "{extended}");

    let mut request = standard("ext", "ext");
    request["releaseChannel"] = json!("extended");
    let created = env.ok("/api/compute/kubernetesClusters/create", request).await;
    assert_eq!(created["releaseChannel"], "extended");
    let id = created["id"].as_str().unwrap();
    let (ready, _) = env.wait_cluster_state(id, "ready", Duration::from_secs(20)).await;
    assert_eq!(ready["kubernetesVersion"], extended["defaultVersion"], "the channel's default: {ready}");
    assert_eq!(env.fake_clusters()[0]["releaseChannel"], "EXTENDED");

    // Pinned to an older minor the channel still supports.
    let mut pinned = standard("ext-pinned", "ext-pinned");
    pinned["releaseChannel"] = json!("extended");
    pinned["version"] = json!("1.30");
    let created = env.ok("/api/compute/kubernetesClusters/create", pinned).await;
    let (ready, _) = env.wait_cluster_state(created["id"].as_str().unwrap(), "ready", Duration::from_secs(20)).await;
    assert!(ready["kubernetesVersion"].as_str().unwrap().starts_with("1.30."), "{ready}");
}

async fn node_pools_follow_the_control_plane_one_at_a_time(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let mut request = standard("follow", "f1");
    request["version"] = json!("1.31");
    request["releaseChannel"] = json!("stable");
    let created = env.ok("/api/compute/kubernetesClusters/create", request).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!(
        (ready["kubernetesVersion"].as_str(), ready["nodeVersion"].as_str()),
        (Some("1.31.9-gke.1300"), Some("1.31.9-gke.1300"))
    );

    let cluster_ref = json!({"tenantId": "acme", "clusterId": id});
    let mut upgrade = cluster_ref.clone();
    upgrade["version"] = json!("1.32");
    let updating = env.ok("/api/compute/kubernetesClusters/update", upgrade).await;
    assert_eq!(updating["state"], "updating");
    // Updating after it was ready once: kubeconfigs are still issued.
    let issued = env.ok("/api/compute/kubernetesClusters/credentials", cluster_ref.clone()).await;
    assert_eq!(issued["role"], "view");

    // Watch it converge: whenever the nodes lag the control plane the cluster is `updating`,
    // and at most one pool is being upgraded at a time.
    let started = Instant::now();
    let lagged = Cell::new(false);
    let converged = poll(Duration::from_secs(60), "the upgrade converged", || async {
        let cluster = env.ok("/api/compute/kubernetesClusters/get", cluster_ref.clone()).await;
        let (control, nodes) =
            (cluster["kubernetesVersion"].as_str().unwrap(), cluster["nodeVersion"].as_str().unwrap());
        if control != nodes {
            lagged.set(true);
            assert_eq!(cluster["state"], "updating", "ready while the nodes lag: {cluster}");
        }
        let upgrading = cluster["nodePools"].as_array().unwrap().iter().filter(|p| p["state"] == "updating").count();
        assert!(upgrading <= 1, "two pools upgrading at once: {cluster}");
        assert_ne!(cluster["state"], "error", "{cluster}");
        if cluster["state"] == "ready" && control == "1.32.6-gke.1200" { Ok(cluster) } else { Err(cluster.to_string()) }
    })
    .await;
    let lagged = lagged.get();
    println!("control plane and two node pools upgraded in {:?} (nodes seen lagging: {lagged})", started.elapsed());
    assert_eq!(converged["nodeVersion"], "1.32.6-gke.1200", "the nodes followed: {converged}");
    assert!(converged["nodePools"].as_array().unwrap().iter().all(|p| p["state"] == "ready"), "{converged}");
    let fake = env.fake_clusters();
    assert_eq!(fake[0]["masterVersion"], "1.32.6-gke.1200");
    for pool in fake[0]["nodePools"].as_array().unwrap() {
        assert_eq!(pool["version"], "1.32.6-gke.1200", "{pool}");
    }

    // `updated` is published once ready again, never while the nodes lag.
    let listed = env.ok("/api/compute/events/list", json!({"tenantId": "acme", "limit": 1000})).await;
    let updated: Vec<&Value> = listed["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["subject"] == id.as_str() && e["type"] == "kubernetes.cluster.updated")
        .collect();
    assert!(!updated.is_empty(), "no kubernetes.cluster.updated");
    for event in &updated {
        assert_eq!(event["data"]["kubernetesVersion"], event["data"]["nodeVersion"], "{event}");
    }
    assert_eq!(updated.last().unwrap()["data"]["nodeVersion"], "1.32.6-gke.1200");
    assert!(
        !listed["events"].as_array().unwrap().iter().any(|e| e["type"] == "kubernetes.cluster.error"),
        "nothing failed on the way"
    );

    // A version the provider does not offer shows as `error` with the provider's words, and
    // moves nothing; asking for an offered one again mends it.
    let mut unoffered = cluster_ref.clone();
    unoffered["version"] = json!("1.29");
    env.ok("/api/compute/kubernetesClusters/update", unoffered).await;
    let (failed, _) = env.wait_cluster_state(&id, "error", Duration::from_secs(20)).await;
    assert!(failed["message"].as_str().unwrap().contains("1.29"), "{failed}");
    assert_eq!(failed["kubernetesVersion"], "1.32.6-gke.1200");
    let mut offered = cluster_ref.clone();
    offered["version"] = json!("1.32");
    env.ok("/api/compute/kubernetesClusters/update", offered).await;
    let (mended, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!((mended["kubernetesVersion"].as_str(), mended["message"].as_str()), (Some("1.32.6-gke.1200"), Some("")));
}
