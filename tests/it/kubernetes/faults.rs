//! The fault test: with the fake GKE failing 30% of its calls and the worker killed at random
//! 20 times, 50 clusters created and then deleted leave exactly zero clusters at the fake cloud,
//! and no cluster was ever there twice. Prints the counts.

use std::cell::{Cell, RefCell};
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use better_compute::reconcile::WorkerConfig;
use better_compute::store::{Backend, CLUSTER_KIND};
use serde_json::json;

use super::{Env, standard};
use crate::harness;

const CLUSTERS: usize = 50;
const KILLS: usize = 20;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_clusters_survive_failing_calls_and_killed_workers_and_leave_nothing_behind() {
    let setup =
        super::setup(Backend::Postgres).max_clusters_per_tenant(100).fake_operations(Duration::from_millis(100));
    let env = setup.start().await;
    env.cloud.set_error_rate("/v1/", 0.3, 503);

    // Watch the fake cloud: which provider names carried which cluster label, ever.
    let seen: RefCell<BTreeMap<String, BTreeSet<String>>> = RefCell::default();
    // The most clusters at the provider at once.
    let max_at_provider = Cell::new(0);
    let observe = || {
        let clusters = env.fake_clusters();
        let mut labels = BTreeSet::new();
        for cluster in &clusters {
            let label = cluster["labels"]["better-compute-cluster"].as_str().unwrap_or_default().to_owned();
            assert!(labels.insert(label.clone()), "two clusters at the provider carry {label}");
            // The fake gives every creation its own id: two ids under one label is a second cluster.
            seen.borrow_mut().entry(label).or_default().insert(cluster["id"].as_str().unwrap().to_owned());
        }
        max_at_provider.set(max_at_provider.get().max(clusters.len()));
        clusters.len()
    };

    // The killer: 20 workers in a row, each cancelled at a random moment; then one that stays.
    let config = WorkerConfig { lease: Duration::from_millis(600), ..env.worker_config.clone() };
    let reconcilers = harness::reconcilers(env.resources(), Some(&[CLUSTER_KIND]));
    let killer = harness::workers_killed_at_random(&env.store, config, reconcilers, KILLS, 100..700);

    let started = Instant::now();
    let mut ids = Vec::new();
    for i in 0..CLUSTERS {
        let mut request = standard(&format!("fault-{i}"), &format!("fault-{i}"));
        request["nodePools"] = json!([{"name": "p", "machineType": "e2-medium", "nodeCount": 1}]);
        ids.push(env.ok("/api/compute/kubernetesClusters/create", request).await["id"].as_str().unwrap().to_owned());
    }
    let (env, observe) = (&env, &observe);
    harness::poll_explained(
        Duration::from_secs(240),
        "every cluster ready",
        || async move {
            observe();
            let listed = env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme"})).await;
            let clusters = listed["clusters"].as_array().unwrap();
            let ready = clusters.iter().filter(|c| c["state"] == "ready").count();
            if ready == CLUSTERS {
                return Ok(());
            }
            let waiting: Vec<String> = clusters
                .iter()
                .filter(|c| c["state"] != "ready")
                .map(|c| format!("{} {} {}", c["id"], c["state"], c["message"]))
                .collect();
            Err(format!("{ready} of {CLUSTERS} ready; waiting: {waiting:?}"))
        },
        async || diagnosis(env).await,
    )
    .await;
    let all_ready = started.elapsed();
    for id in &ids {
        env.ok("/api/compute/kubernetesClusters/delete", json!({"tenantId": "acme", "clusterId": id})).await;
    }
    harness::poll_explained(
        Duration::from_secs(480) - all_ready,
        "every cluster deleted",
        || async move {
            observe();
            let listed = env.ok("/api/compute/kubernetesClusters/list", json!({"tenantId": "acme"})).await;
            let left: Vec<String> = listed["clusters"]
                .as_array()
                .map(|clusters| {
                    clusters.iter().map(|c| format!("{} {} {}", c["id"], c["state"], c["message"])).collect()
                })
                .unwrap_or_default();
            if left.is_empty() { Ok(()) } else { Err(format!("clusters left: {left:?}")) }
        },
        async || diagnosis(env).await,
    )
    .await;
    let survivor = killer.await.unwrap();
    let left = observe();
    let (seen, max_at_provider) = (seen.into_inner(), max_at_provider.get());
    survivor.abort();
    let twice = seen.values().filter(|names| names.len() > 1).count();
    println!(
        "fault test: {CLUSTERS} clusters, {KILLS} worker kills, 30% GKE failures: all ready after {all_ready:?}, \
         all deleted after {:?}; at most {max_at_provider} at the provider at once, {} distinct seen, \
         {left} left at the provider, {twice} created twice",
        started.elapsed(),
        seen.len()
    );
    assert_eq!(left, 0, "clusters leaked at the provider");
    assert_eq!(twice, 0, "a cluster was created twice at the provider");
    assert!(seen.len() <= CLUSTERS);
    assert!(max_at_provider <= CLUSTERS);
}

/// What a stuck run looks like: the work items that are left and the clusters at the provider.
async fn diagnosis(env: &Env) -> String {
    use sqlx::{Connection, Row};
    let mut conn = sqlx::AnyConnection::connect(&env.db.url).await.unwrap();
    let rows = sqlx::query(
        "SELECT object_id, due_at, lease_owner, lease_expires_at, attempts, last_error, state, generation \
         FROM work_items WHERE kind = 'kubernetes.clusters' ORDER BY object_id",
    )
    .fetch_all(&mut conn)
    .await
    .unwrap();
    let now = better_compute::store::now_micros();
    let items: Vec<String> = rows
        .iter()
        .map(|row| {
            let due: i64 = row.get(1);
            let lease: Option<i64> = row.get(3);
            format!(
                "{} due in {} ms, lease {:?} until {:?} ms, attempts {}, error {:?}, state {}, generation {}",
                row.get::<String, _>(0),
                (due - now) / 1000,
                row.get::<Option<String>, _>(2),
                lease.map(|l| (l - now) / 1000),
                row.get::<i64, _>(4),
                row.get::<Option<String>, _>(5),
                row.get::<String, _>(6),
                row.get::<i64, _>(7),
            )
        })
        .collect();
    // Sessions of this database that are not idle: a pass waiting on a lock shows here.
    let sessions: Vec<String> = sqlx::query(
        "SELECT state, wait_event_type, CAST(EXTRACT(EPOCH FROM now() - state_change) AS BIGINT), query \
         FROM pg_stat_activity WHERE datname = current_database() AND state <> 'idle'",
    )
    .fetch_all(&mut conn)
    .await
    .map(|rows| {
        rows.iter()
            .map(|row| {
                format!(
                    "{:?} waiting on {:?} for {:?} s: {:?}",
                    row.get::<Option<String>, _>(0),
                    row.get::<Option<String>, _>(1),
                    row.get::<Option<i64>, _>(2),
                    row.get::<Option<String>, _>(3),
                )
            })
            .collect()
    })
    .unwrap_or_else(|error| vec![error.to_string()]);
    let provider: Vec<String> =
        env.fake_clusters().iter().map(|c| format!("{} {} {}", c["name"], c["status"], c["labels"])).collect();
    format!(
        "work items:\n{}\nsessions:\n{}\nat the provider:\n{}",
        items.join("\n"),
        sessions.join("\n"),
        provider.join("\n")
    )
}
