//! Node versions follow the control plane: after the tenant moves the control plane, the
//! reconciler upgrades each node pool to its version (GKE `nodePools.update` with
//! `nodeVersion`), one pool at a time; the cluster stays `updating` until the nodes followed,
//! then is `ready` with `nodeVersion` showing it and `kubernetes.cluster.updated` published.
//! (A version the provider moved to by itself is followed the same way: clusters.rs.)

use std::time::{Duration, Instant};

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{Env, standard};

crate::on_both_backends!(node_pools_follow_the_control_plane_one_at_a_time);

async fn node_pools_follow_the_control_plane_one_at_a_time(backend: Backend) {
    let mut env = Env::start(backend).await;
    env.start_worker();
    let mut request = standard("follow", "f1");
    request["version"] = json!("1.31");
    request["releaseChannel"] = json!("stable");
    let created = env.ok("/api/compute/kubernetesClusters/create", request).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let (ready, _) = env.wait_state(&id, "ready", Duration::from_secs(20)).await;
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
    let mut lagged = false;
    let converged: Value = loop {
        let cluster = env.ok("/api/compute/kubernetesClusters/get", cluster_ref.clone()).await;
        let (control, nodes) =
            (cluster["kubernetesVersion"].as_str().unwrap(), cluster["nodeVersion"].as_str().unwrap());
        if control != nodes {
            lagged = true;
            assert_eq!(cluster["state"], "updating", "ready while the nodes lag: {cluster}");
        }
        let upgrading = cluster["nodePools"].as_array().unwrap().iter().filter(|p| p["state"] == "updating").count();
        assert!(upgrading <= 1, "two pools upgrading at once: {cluster}");
        if cluster["state"] == "ready" && control == "1.32.6-gke.1200" {
            break cluster;
        }
        assert_ne!(cluster["state"], "error", "{cluster}");
        assert!(started.elapsed() < Duration::from_secs(60), "not converged: {cluster}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
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
    let (failed, _) = env.wait_state(&id, "error", Duration::from_secs(20)).await;
    assert!(failed["message"].as_str().unwrap().contains("1.29"), "{failed}");
    assert_eq!(failed["kubernetesVersion"], "1.32.6-gke.1200");
    let mut offered = cluster_ref.clone();
    offered["version"] = json!("1.32");
    env.ok("/api/compute/kubernetesClusters/update", offered).await;
    let (mended, _) = env.wait_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!((mended["kubernetesVersion"].as_str(), mended["message"].as_str()), (Some("1.32.6-gke.1200"), Some("")));
}
