//! A cluster's operation log: its GKE calls, newest first, with GKE's operation ids, paged, and
//! read only by whoever may read the cluster.

use std::collections::BTreeSet;

use better_compute::store::Backend;
use serde_json::json;

use crate::kubernetes::{setup, standard};

async fn a_clusters_log_lists_its_gke_calls_with_the_operation_ids(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.start_worker();
    let cluster = env.ok("/api/compute/kubernetesClusters/create", standard("logged", "logged")).await;
    let id = cluster["id"].as_str().unwrap();
    let (ready, _) = env.wait_cluster_state(id, "ready", std::time::Duration::from_secs(30)).await;
    assert!(ready.get("problem").is_none(), "a cluster whose calls succeed shows no problem: {ready}");

    let log = env.operations(id, 200, "").await;
    let calls = log["operations"].as_array().unwrap();
    let names: Vec<&str> = calls.iter().map(|c| c["call"].as_str().unwrap()).collect();
    assert!(names.contains(&"gke.clusters.create"), "{names:?}");
    assert!(names.contains(&"gke.clusters.get"), "{names:?}");
    let times: Vec<i64> = calls.iter().map(|c| super::seconds(&c["time"])).collect();
    assert!(times.windows(2).all(|w| w[0] >= w[1]), "newest first: {times:?}");
    for call in calls {
        assert_eq!(call["resourceId"], id);
        assert!(call["outcome"] == "ok" || call["errorClass"] == "notFound", "{call}");
    }

    // The create's id is the operation GKE started for it, as the fake cloud recorded it.
    let at_gke: BTreeSet<String> = env.fake_clusters()[0]["operations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|op| op["name"].as_str().unwrap().to_owned())
        .collect();
    let create = calls.iter().find(|c| c["call"] == "gke.clusters.create").unwrap();
    let operation_id = create["providerOperationId"].as_str().unwrap();
    assert!(at_gke.contains(operation_id), "{operation_id} not among GKE's operations {at_gke:?}");

    // Paged: one call a page, the next page older, the pages together the whole log.
    let mut token = String::new();
    let mut paged = Vec::new();
    loop {
        let page = env.operations(id, 1, &token).await;
        paged.extend(page["operations"].as_array().unwrap().iter().map(|c| c["id"].clone()));
        token = page["nextPageToken"].as_str().unwrap_or_default().to_owned();
        if token.is_empty() {
            break;
        }
    }
    let whole: Vec<_> = calls.iter().map(|c| c["id"].clone()).collect();
    assert_eq!(paged, whole);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusters_log_lists_its_gke_calls_with_the_operation_ids_on_postgres() {
    a_clusters_log_lists_its_gke_calls_with_the_operation_ids(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_clusters_log_lists_its_gke_calls_with_the_operation_ids_on_sqlite() {
    a_clusters_log_lists_its_gke_calls_with_the_operation_ids(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_is_read_as_the_resource_is_and_not_across_tenants() {
    let mut env = setup(Backend::Postgres).start().await;
    env.start_worker();
    let cluster = env.ok("/api/compute/kubernetesClusters/create", standard("private", "private")).await;
    let id = cluster["id"].as_str().unwrap();
    env.wait_cluster_state(id, "ready", std::time::Duration::from_secs(30)).await;

    // A viewer reads it, as it reads the cluster.
    let body = json!({"tenantId": "acme", "resourceId": id});
    let as_viewer = env.ok_as(&env.acme_viewer, "/api/compute/operations/list", body.clone()).await;
    assert!(!as_viewer["operations"].as_array().unwrap().is_empty());

    // Another tenant's admin gets nothing: refused on acme, and not found under its own tenant.
    let (status, code, _) = env.refused_as(&env.globex_admin, "/api/compute/operations/list", body).await;
    assert_eq!((status, code.as_str()), (403, "ACCESS_DENIED"));
    let theirs = json!({"tenantId": "globex", "resourceId": id});
    let (status, code, error) = env.refused_as(&env.globex_admin, "/api/compute/operations/list", theirs).await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"), "{error}");

    // A malformed id or page token is refused naming the field.
    let bad = json!({"tenantId": "acme", "resourceId": id, "pageToken": "12.evt_x"});
    let (status, _, error) = env.refused("/api/compute/operations/list", bad).await;
    assert_eq!(status, 400);
    assert!(error.to_string().contains("pageToken"), "{error}");
}
