//! The fault test: with the fake GKE failing 30% of its calls and the worker killed at random
//! again and again, three substrates of two flavors each are made (their nodes joined) and torn
//! down, and leave no cluster, node pool or object behind; no cluster was ever made twice.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use better_compute::reconcile::WorkerConfig;
use better_compute::store::{Backend, SUBSTRATE_KIND};
use serde_json::{Value, json};

use super::{ZONE, flavor, setup, substrate_policy};
use crate::harness::{self, Env, poll};

const SUBSTRATES: usize = 3;
const KILLS: usize = 15;
const LIMIT: Duration = Duration::from_secs(240);

/// Records which cluster ids ever carried each substrate label; returns the clusters now there.
fn observe(env: &Env, seen: &mut BTreeMap<String, BTreeSet<String>>) -> Vec<Value> {
    let clusters = env.fake_gke_clusters();
    for cluster in &clusters {
        let label = cluster["labels"]["better-compute-substrate-pool"].as_str().unwrap_or_default().to_owned();
        seen.entry(label).or_default().insert(cluster["id"].as_str().unwrap().to_owned());
    }
    clusters
}

async fn states(env: &Env, pools: &[String]) -> Vec<String> {
    let mut states = Vec::new();
    for pool in pools {
        let s = env.substrate(pool).await;
        let joined = s["flavors"].as_array().unwrap().iter().all(|f| f["joinedNodes"] == f["providerNodes"]);
        states.push(format!("{}{}", s["state"].as_str().unwrap(), if joined { "" } else { " (joining)" }));
    }
    states
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn substrates_survive_failing_calls_and_killed_workers_and_leave_nothing_behind() {
    let env = setup(Backend::Postgres).start().await;
    env.cloud.set_error_rate("/v1/", 0.3, 503);

    let config = WorkerConfig { lease: Duration::from_millis(600), ..env.worker_config.clone() };
    let reconcilers = harness::reconcilers(env.resources(), Some(&[SUBSTRATE_KIND]));
    let killer = harness::workers_killed_at_random(&env.store, config, reconcilers, KILLS, 200..1500);

    let seen = RefCell::new(BTreeMap::new());
    let mut pools = Vec::new();
    for i in 0..SUBSTRATES {
        let policy = substrate_policy(
            json!({"create": {"location": ZONE, "releaseChannel": "regular"}}),
            vec![flavor("general", "e2-standard-4", 2), flavor("small", "e2-medium", 1)],
        );
        pools.push(env.substrate_pool(&format!("fault-{i}"), policy).await);
    }
    let started = Instant::now();
    let (env, seen, pools) = (&env, &seen, &pools);
    poll(LIMIT, "every substrate ready", || async move {
        observe(env, &mut seen.borrow_mut());
        let now = states(env, pools).await;
        if now.iter().all(|s| s == "ready") { Ok(()) } else { Err(format!("{now:?}")) }
    })
    .await;
    let made = started.elapsed();

    for pool in pools {
        env.archive_pool(pool).await;
    }
    poll(2 * LIMIT - made, "every substrate torn down", || async move {
        let left = observe(env, &mut seen.borrow_mut());
        let now = states(env, pools).await;
        if now.iter().all(|s| s.starts_with("deleted")) && left.is_empty() {
            return Ok(());
        }
        Err(format!("{now:?}, at the provider: {left:?}"))
    })
    .await;
    let seen = seen.take();
    killer.await.unwrap().abort();
    println!(
        "{SUBSTRATES} substrates made in {made:?} and torn down in {:?} under 30% GKE failures and {KILLS} worker kills",
        started.elapsed() - made
    );
    assert!(env.fake_gke_clusters().is_empty(), "no cluster, node pool or object is left");
    for (label, ids) in &seen {
        assert_eq!(ids.len(), 1, "substrate {label} had {} clusters: {ids:?}", ids.len());
    }
    assert_eq!(seen.len(), SUBSTRATES, "{seen:?}");
    for pool in pools {
        assert!(env.pool_nodes(pool, "ready").await.is_empty(), "{pool} has no ready node left");
    }
}
