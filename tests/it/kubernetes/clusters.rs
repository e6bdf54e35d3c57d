//! The core path: create → reconcile at the fake GKE → ready; get, list, update, delete; node
//! pools; credentials that kubectl uses; events; billing; the token nowhere but the answer.

use std::process::Command;
use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};
use sqlx::{Connection, Row};

use super::{Env, POOL, standard};
use crate::harness::poll;

crate::on_both_backends!(
    a_standard_cluster_becomes_ready_serves_kubectl_and_is_deleted_without_a_trace,
    node_pools_are_added_resized_and_removed_and_a_refused_pool_fails_its_cluster,
    updates_converge_in_place_and_a_provider_upgrade_is_published,
);

fn kubectl(kubeconfig: &std::path::Path, args: &[&str]) -> std::process::Output {
    tokio::task::block_in_place(|| {
        Command::new("kubectl").arg("--kubeconfig").arg(kubeconfig).args(args).output().expect("kubectl is installed")
    })
}

async fn events(env: &Env, cluster: &str) -> Vec<Value> {
    let listed = env.ok("/api/compute/events/list", json!({"tenantId": "acme", "limit": 1000})).await;
    listed["events"].as_array().unwrap().iter().filter(|e| e["subject"] == cluster).cloned().collect()
}

fn types(events: &[Value]) -> Vec<String> {
    events.iter().map(|e| e["type"].as_str().unwrap().to_owned()).collect()
}

/// Every text cell of every table, for looking for a secret.
async fn every_stored_text(env: &Env) -> String {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&env.db.url).await.unwrap();
    let tables_sql = match env.db.backend {
        Backend::Postgres => "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'",
        Backend::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    };
    let tables: Vec<String> =
        sqlx::query(tables_sql).fetch_all(&mut conn).await.unwrap().iter().map(|row| row.get(0)).collect();
    let mut all = String::new();
    // sqlx's own bookkeeping holds no data of ours (and SQLite datetimes the Any driver cannot read).
    for table in tables.into_iter().filter(|t| !t.starts_with("_sqlx")) {
        let cast = match env.db.backend {
            Backend::Postgres => format!("SELECT CAST(t.* AS TEXT) FROM {table} t"),
            Backend::Sqlite => format!("SELECT * FROM {table}"),
        };
        let rows = sqlx::query(sqlx::AssertSqlSafe(cast)).fetch_all(&mut conn).await.unwrap();
        for row in rows {
            for i in 0..row.len() {
                if let Ok(text) = row.try_get::<String, _>(i) {
                    all.push_str(&text);
                    all.push('\n');
                }
            }
        }
    }
    all
}

async fn a_standard_cluster_becomes_ready_serves_kubectl_and_is_deleted_without_a_trace(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let created = env.ok("/api/compute/kubernetesClusters/create", standard("web", "k1")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("kcl_"), "{created}");
    assert_eq!(created["state"], "pending");
    assert_eq!(created["releaseChannel"], "regular", "the default channel");
    assert_eq!(created["privateNodes"], false);
    assert_eq!(created["version"], 1);
    assert_eq!(created["nodePools"].as_array().unwrap().len(), 2);
    assert!(created["nodePools"][0]["id"].as_str().unwrap().starts_with("knp_"));
    assert_eq!(created["nodePools"][1]["diskGiB"], 0, "zero means the provider's default");
    let provider_name = format!("bc-k-{}", &id[4..28]);
    assert_eq!(created["providerName"], provider_name.as_str());

    // The same key and request: the same cluster.
    let again = env.ok("/api/compute/kubernetesClusters/create", standard("web", "k1")).await;
    assert_eq!(again["id"], id.as_str());

    let (ready, took) = env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    println!("standard cluster with two node pools ready in {took:?}");
    assert!(took < Duration::from_secs(10), "ready in {took:?}");
    assert!(ready["endpoint"].as_str().unwrap().starts_with("127.0.0.1:"), "{ready}");
    assert_eq!(ready["kubernetesVersion"], "1.32.6-gke.1200", "the regular channel's default");
    assert_eq!(ready["nodeVersion"], "1.32.6-gke.1200");
    assert!(ready["nodePools"].as_array().unwrap().iter().all(|p| p["state"] == "ready"), "{ready}");
    assert_eq!(ready["nodePools"][0]["currentNodeCount"], 2);

    let fake = env.fake_clusters();
    assert_eq!(fake.len(), 1);
    assert_eq!(fake[0]["name"], provider_name.as_str());
    assert_eq!(fake[0]["labels"]["better-compute-cluster"], id.as_str());
    assert_eq!(fake[0]["releaseChannel"], "REGULAR");

    let listed = env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme"})).await;
    assert_eq!(listed["clusters"].as_array().unwrap().len(), 1);
    let other = env
        .ok(
            "/api/compute/kubernetesClusters/list",
            json!({"tenantId": "acme", "poolId": "pool_00000000000000000000000zzz"}),
        )
        .await;
    assert_eq!(other["clusters"].as_array().map_or(0, Vec::len), 0, "poolId narrows the list");

    // Credentials: a kubeconfig kubectl uses.
    let issued = env
        .ok(
            "/api/compute/kubernetesClusters/credentials",
            json!({"tenantId": "acme", "clusterId": id, "role": "admin"}),
        )
        .await;
    assert_eq!(issued["role"], "admin");
    let kubeconfig: Value = serde_yaml::from_str(issued["kubeconfig"].as_str().unwrap()).unwrap();
    assert_eq!(kubeconfig["clusters"].as_array().unwrap().len(), 1);
    assert_eq!(kubeconfig["users"].as_array().unwrap().len(), 1);
    assert_eq!(kubeconfig["contexts"].as_array().unwrap().len(), 1);
    assert_eq!(kubeconfig["current-context"], provider_name.as_str());
    let user = kubeconfig["users"][0]["name"].as_str().unwrap().to_owned();
    assert!(user.starts_with("bc-u-") && user.ends_with("-admin") && user.len() == 5 + 16 + 6, "{user}");
    let token = kubeconfig["users"][0]["user"]["token"].as_str().unwrap().to_owned();
    assert!(token.len() > 16);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, issued["kubeconfig"].as_str().unwrap()).unwrap();
    let nodes = kubectl(&path, &["get", "nodes", "-o", "name"]);
    assert!(nodes.status.success(), "kubectl: {}", String::from_utf8_lossy(&nodes.stderr));
    let listing = String::from_utf8_lossy(&nodes.stdout).to_string();
    assert_eq!(listing.lines().count(), 3, "two general nodes and one batch node: {listing}");

    // A view kubeconfig has its own account and cannot list nodes; the admin one still can.
    let view =
        env.ok("/api/compute/kubernetesClusters/credentials", json!({"tenantId": "acme", "clusterId": id})).await;
    assert_eq!(view["role"], "view");
    let view_path = dir.path().join("view");
    std::fs::write(&view_path, view["kubeconfig"].as_str().unwrap()).unwrap();
    assert!(!kubectl(&view_path, &["get", "nodes"]).status.success());
    assert!(kubectl(&path, &["get", "nodes"]).status.success(), "a later view kubeconfig never narrows admin");

    let delete = json!({"tenantId": "acme", "clusterId": id});
    let deleting = env.ok("/api/compute/kubernetesClusters/delete", delete.clone()).await;
    assert_eq!(deleting["state"], "deleting");
    let unchanged = env.ok("/api/compute/kubernetesClusters/delete", delete.clone()).await;
    assert_eq!(unchanged["version"], deleting["version"], "deleting again changes nothing");
    let (deleted, _) = env.wait_cluster_state(&id, "deleted", Duration::from_secs(20)).await;
    assert!(deleted["deletedAt"].is_string());
    assert!(deleted["nodePools"].as_array().unwrap().iter().all(|p| p["state"] == "deleted"), "{deleted}");
    assert!(env.fake_clusters().is_empty());
    assert!(env.store.authz_resource_fetch("compute-kubernetes-cluster", &id).await.unwrap().is_none());
    let listed = env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme"})).await;
    assert_eq!(listed["clusters"].as_array().map_or(0, Vec::len), 0);
    let with_deleted =
        env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme", "includeDeleted": true})).await;
    assert_eq!(with_deleted["clusters"].as_array().unwrap().len(), 1);
    // A deleted cluster's name is free again.
    env.ok("/api/compute/kubernetesClusters/create", standard("web", "k2")).await;

    let events = events(&env, &id).await;
    let kinds = types(&events);
    for expected in [
        "kubernetes.cluster.created",
        "kubernetes.nodepool.ready",
        "kubernetes.cluster.ready",
        "kubernetes.cluster.credentials-issued",
        "kubernetes.cluster.deleting",
        "kubernetes.cluster.deleted",
    ] {
        assert!(kinds.iter().any(|k| k == expected), "{expected} missing from {kinds:?}");
    }
    assert_eq!(kinds.iter().filter(|k| *k == "kubernetes.cluster.ready").count(), 1, "ready once");
    let issued_event = events.iter().find(|e| e["type"] == "kubernetes.cluster.credentials-issued").unwrap();
    assert_eq!(issued_event["data"]["role"], "admin");
    assert_eq!(issued_event["data"]["ttlSeconds"].as_f64(), Some(3600.0));
    assert!(issued_event["data"]["identity"].as_str().unwrap().ends_with(&user));
    assert!(issued_event["data"]["subject"].as_str().unwrap().starts_with("prn_"));
    assert!(issued_event["data"]["expiresAt"].as_str().is_some_and(|t| t.ends_with('Z')), "{issued_event}");

    // Billing: from acceptance to deletion, to the tenant.
    let billables: Vec<(String, Option<i64>)> = sqlx::query_as::<_, (String, Option<i64>)>(
        "SELECT tenant_id, billing_end FROM usage_billables WHERE meter = 'kubernetes.cluster.hours' AND resource_id = $1",
    )
    .bind(&id)
    .fetch_all(&mut sqlx::AnyConnection::connect(&env.db.url).await.unwrap())
    .await
    .unwrap();
    assert_eq!(billables.len(), 1);
    assert_eq!(billables[0].0, "acme");
    assert!(billables[0].1.is_some(), "billing ends at deletion");

    // The token appears nowhere but in the answer.
    let stored = every_stored_text(&env).await;
    assert!(!stored.contains(&token), "the token is in a store row");
    let all_events = env.ok("/api/compute/events/list", json!({"tenantId": "acme", "limit": 1000})).await;
    assert!(!all_events.to_string().contains(&token), "the token is in an event");
}

async fn node_pools_are_added_resized_and_removed_and_a_refused_pool_fails_its_cluster(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let created = env.ok("/api/compute/kubernetesClusters/create", standard("pools", "p1")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;

    // The worker pauses, so the cluster is seen before the change converged.
    env.stop_worker().await;
    let added = env
        .ok(
            "/api/compute/kubernetesNodePools/create",
            json!({"tenantId": "acme", "clusterId": id, "name": "extra", "machineType": "e2-medium", "nodeCount": 1,
                   "idempotencyKey": "extra"}),
        )
        .await;
    let pool_id = added["id"].as_str().unwrap().to_owned();
    assert!(pool_id.starts_with("knp_"));
    assert_eq!(added["state"], "pending");
    let cluster = env.ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": id})).await;
    assert_eq!(cluster["state"], "updating", "the cluster is updating until the pool converged");
    env.start_worker();
    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!(ready["nodePools"].as_array().unwrap().len(), 3);

    let pool_ref = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": pool_id});
    let mut resize = pool_ref.clone();
    resize["nodeCount"] = json!(4);
    let resized = env.ok("/api/compute/kubernetesNodePools/update", resize).await;
    assert_eq!(resized["state"], "updating");
    assert_eq!(resized["version"], 2);
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    let pool = env.ok("/api/compute/kubernetesNodePools/get", pool_ref.clone()).await;
    assert_eq!((pool["state"].as_str(), pool["currentNodeCount"].as_i64()), (Some("ready"), Some(4)));

    // A pool the provider refuses fails the pool and the cluster, named in the message.
    env.cloud.fail_next(
        "nodePool",
        "create",
        "*",
        fakecloud::Failure::Refuse { status: 400, message: "machine type unavailable".into() },
    );
    let bad = env
        .ok(
            "/api/compute/kubernetesNodePools/create",
            json!({"tenantId": "acme", "clusterId": id, "name": "gpu", "machineType": "a2-highgpu-1g", "nodeCount": 1,
                   "idempotencyKey": "gpu"}),
        )
        .await;
    let (failed, _) = env.wait_cluster_state(&id, "error", Duration::from_secs(20)).await;
    assert!(failed["message"].as_str().unwrap().contains("\"gpu\""), "{failed}");
    let bad_ref = json!({"tenantId": "acme", "clusterId": id, "nodePoolId": bad["id"]});
    let bad_pool = env.ok("/api/compute/kubernetesNodePools/get", bad_ref.clone()).await;
    assert_eq!(bad_pool["state"], "error");
    // Deleting the failed pool clears the cluster's error.
    env.ok("/api/compute/kubernetesNodePools/delete", bad_ref).await;
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;

    let deleting = env.ok("/api/compute/kubernetesNodePools/delete", pool_ref.clone()).await;
    assert_eq!(deleting["state"], "deleting");
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    let gone = env.ok("/api/compute/kubernetesNodePools/get", pool_ref).await;
    assert_eq!(gone["state"], "deleted");
    let fake = env.fake_clusters();
    let mut names: Vec<&str> =
        fake[0]["nodePools"].as_array().unwrap().iter().map(|p| p["name"].as_str().unwrap()).collect();
    names.sort();
    assert_eq!(names, ["batch", "general"]);
    let kinds = types(&events(&env, &id).await);
    for expected in ["kubernetes.nodepool.error", "kubernetes.nodepool.deleted", "kubernetes.cluster.updated"] {
        assert!(kinds.iter().any(|k| k == expected), "{expected} missing from {kinds:?}");
    }
}

async fn updates_converge_in_place_and_a_provider_upgrade_is_published(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let mut request = standard("upd", "u1");
    request["version"] = json!("1.31");
    request["releaseChannel"] = json!("stable");
    let created = env.ok("/api/compute/kubernetesClusters/create", request).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!(ready["kubernetesVersion"], "1.31.9-gke.1300", "the pin");
    assert_eq!(ready["requestedVersion"], "1.31");

    let cluster_ref = json!({"tenantId": "acme", "clusterId": id});
    let mut change = cluster_ref.clone();
    change["version"] = json!("1.32");
    change["releaseChannel"] = json!("regular");
    change["authorizedNetworks"] = json!(["203.0.113.0/24"]);
    let updating = env.ok("/api/compute/kubernetesClusters/update", change).await;
    assert_eq!(updating["state"], "updating");
    assert_eq!(updating["version"], 2);
    let (ready, _) = env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!(ready["kubernetesVersion"], "1.32.6-gke.1200");
    let fake = &env.fake_clusters()[0];
    assert_eq!(fake["releaseChannel"], "REGULAR");
    assert_eq!(fake["authorizedNetworks"]["cidrBlocks"][0]["cidrBlock"], "203.0.113.0/24");

    // The description is ours alone: no provider change, no updating.
    let mut describe = cluster_ref.clone();
    describe["description"] = json!("the web tier");
    let described = env.ok("/api/compute/kubernetesClusters/update", describe).await;
    assert_eq!((described["state"].as_str(), described["version"].as_i64()), (Some("ready"), Some(3)));

    // A downgrade the provider refuses shows as error with its message.
    let mut downgrade = cluster_ref.clone();
    downgrade["version"] = json!("1.31");
    env.ok("/api/compute/kubernetesClusters/update", downgrade).await;
    let (failed, _) = env.wait_cluster_state(&id, "error", Duration::from_secs(20)).await;
    assert!(failed["message"].as_str().unwrap().contains("downgraded"), "{failed}");
    let mut back = cluster_ref.clone();
    back["version"] = json!("1.32");
    env.ok("/api/compute/kubernetesClusters/update", back).await;
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;

    // The provider moves the control plane (a release-channel upgrade) past the pin: the move is
    // recorded, not undone, the nodes follow it, and `updated` is published once they have.
    let provider_name = format!("bc-k-{}", &id[4..28]);
    assert!(env.cloud.upgrade_cluster(super::PROJECT, "europe-west1", &provider_name, "1.33.2-gke.1100"));
    let moved = poll(Duration::from_secs(30), "the upgrade followed", || async {
        let cluster = env.ok("/api/compute/kubernetesClusters/get", cluster_ref.clone()).await;
        assert_ne!(cluster["state"], "error", "the provider's move is not undone: {cluster}");
        if cluster["kubernetesVersion"] == "1.33.2-gke.1100" && cluster["state"] == "ready" {
            Ok(cluster)
        } else {
            Err(cluster.to_string())
        }
    })
    .await;
    assert_eq!(moved["nodeVersion"], "1.33.2-gke.1100", "the nodes followed the control plane: {moved}");
    assert_eq!(moved["requestedVersion"], "1.32", "the pin is kept");
    for pool in env.fake_clusters()[0]["nodePools"].as_array().unwrap() {
        assert_eq!(pool["version"], "1.33.2-gke.1100", "{pool}");
    }
    let events = events(&env, &id).await;
    let error =
        events.iter().find(|e| e["type"] == "kubernetes.cluster.error").expect("the refused downgrade published");
    assert!(error["data"]["message"].as_str().unwrap().contains("downgraded"), "{error}");
    assert_eq!(events.iter().filter(|e| e["type"] == "kubernetes.cluster.error").count(), 1, "{:?}", types(&events));
    let moved = events
        .iter()
        .rev()
        .find(|e| e["type"] == "kubernetes.cluster.updated")
        .expect("kubernetes.cluster.updated after the provider's move");
    assert_eq!(
        (moved["data"]["kubernetesVersion"].as_str(), moved["data"]["nodeVersion"].as_str()),
        (Some("1.33.2-gke.1100"), Some("1.33.2-gke.1100")),
        "{moved}"
    );
    // Empty authorized networks: any address may reach the endpoint again.
    let mut open = cluster_ref.clone();
    open["setAuthorizedNetworks"] = json!(true);
    let opened = env.ok("/api/compute/kubernetesClusters/update", open).await;
    assert_eq!(
        (opened["state"].as_str(), opened["authorizedNetworks"].as_array().map_or(0, Vec::len)),
        (Some("updating"), 0)
    );
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    assert_eq!(env.fake_clusters()[0]["authorizedNetworks"]["enabled"], false);
    assert_eq!(env.fake_clusters().len(), 1, "never a second cluster");
    let _ = POOL;
}
