//! The operation log is bounded: the newest 200 calls of a resource are kept, and calls past
//! their keeping time go, on both stores.

use better_compute::store::{Backend, OPERATIONS_KEPT_PER_RESOURCE, OperationRow, Store};

use crate::harness::System;

fn call(resource: &str, at: i64) -> OperationRow {
    OperationRow {
        id: format!("opl_{at:026}"),
        resource_id: resource.to_owned(),
        work_kind: "kubernetes.clusters".to_owned(),
        at_micros: at,
        duration_micros: 1000,
        call: "gke.clusters.get".to_owned(),
        provider_operation_id: String::new(),
        outcome: "ok".to_owned(),
        error_class: String::new(),
        message: String::new(),
    }
}

async fn kept(store: &Store, resource: &str) -> Vec<i64> {
    let rows = store.operation_log_list(resource, None, 1000).await.unwrap();
    rows.iter().map(|row| row.at_micros).collect()
}

async fn the_log_keeps_the_newest_calls_and_forgets_old_ones(backend: Backend) {
    let env = System::on(backend).start().await;
    let store = &env.store;
    let many: Vec<OperationRow> = (1..=OPERATIONS_KEPT_PER_RESOURCE + 5).map(|at| call("kcl_many", at)).collect();
    store.operation_log_append("kcl_many", "kubernetes.clusters", &many).await.unwrap();
    let times = kept(store, "kcl_many").await;
    assert_eq!(times.len() as i64, OPERATIONS_KEPT_PER_RESOURCE);
    assert_eq!((times[0], *times.last().unwrap()), (OPERATIONS_KEPT_PER_RESOURCE + 5, 6), "newest first, oldest gone");

    // Another resource's calls are its own, and a prune by time takes every resource's old ones.
    store.operation_log_append("kcl_other", "kubernetes.clusters", &[call("kcl_other", 3)]).await.unwrap();
    assert_eq!(kept(store, "kcl_other").await, [3]);
    let pruned = store.operation_log_prune(100).await.unwrap();
    assert_eq!(pruned, 94 + 1, "the calls 6 to 99 of one resource and the one of the other");
    assert_eq!(kept(store, "kcl_many").await.last(), Some(&100));
    assert!(kept(store, "kcl_other").await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_keeps_the_newest_calls_and_forgets_old_ones_on_postgres() {
    the_log_keeps_the_newest_calls_and_forgets_old_ones(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_log_keeps_the_newest_calls_and_forgets_old_ones_on_sqlite() {
    the_log_keeps_the_newest_calls_and_forgets_old_ones(Backend::Sqlite).await;
}
