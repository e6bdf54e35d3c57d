//! Rotating the keys that seal secrets at rest: the re-seal seals what an old key sealed again
//! with the sealing key and never overwrites a newer value (on both stores); with two
//! `bc-server` and two `bc-worker` processes running, a new key rotated in through the key file
//! (opening everywhere, then sealing everywhere, then the old one removed) fails no pass and
//! leaves every value sealed with the new key; and `bc-worker` without a key refuses to start.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use better_compute::reconcile::{Resealer, SweepReport};
use better_compute::secrets::SecretKey;
use better_compute::store::{Backend, SEALED_COLUMNS, SealedColumn};
use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::json;

use crate::harness::{
    Catalog, FAST_WORKER_ARGS, PROJECT, ServerProcess, System, WorkerProcess, poll, tenant_principal,
};

const GKE_ACCOUNT: &str = "acct_0000000000000000000000gke1";
const DO_LEGACY: &str = "acct_00000000000000000000000do1";
const DO_FOREIGN: &str = "acct_00000000000000000000000do2";
const DO_RACED: &str = "acct_00000000000000000000000do3";
const POOL: &str = "pool_0000000000000000000000gke1";

/// The column of the accounts' credentials.
fn credentials_column() -> &'static SealedColumn {
    SEALED_COLUMNS.iter().find(|column| column.table == "provider_accounts").unwrap()
}

/// The stored credentials of account `id`.
async fn stored_credentials(pool: &sqlx::AnyPool, id: &str) -> String {
    sqlx::query_scalar("SELECT credentials FROM provider_accounts WHERE id = $1")
        .bind(id)
        .fetch_one(pool)
        .await
        .unwrap()
}

/// Writes `sealed` as account `id`'s credentials, behind the store's back.
async fn store_credentials(pool: &sqlx::AnyPool, id: &str, sealed: &str) {
    sqlx::query("UPDATE provider_accounts SET credentials = $2 WHERE id = $1")
        .bind(id)
        .bind(sealed)
        .execute(pool)
        .await
        .unwrap();
}

crate::on_both_backends!(the_re_seal_seals_old_values_again_with_the_secret_key_and_never_overwrites_a_newer_one);

async fn the_re_seal_seals_old_values_again_with_the_secret_key_and_never_overwrites_a_newer_one(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    let cloud = FakeCloud::start(FakeCloudConfig::default()).await.unwrap();
    let (old, new) = (SecretKey::generate_base64(), SecretKey::generate_base64());
    let old_key = SecretKey::from_list(&old).unwrap();
    Catalog::new()
        .gke_account(GKE_ACCOUNT, None, &["us-central1-a"])
        .digitalocean_account(DO_LEGACY, None, &["nyc3"])
        .digitalocean_account(DO_FOREIGN, None, &["nyc3"])
        .digitalocean_account(DO_RACED, None, &["nyc3"])
        .seed(&store, &old_key, &cloud)
        .await;
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
    // One value sealed before keys had ids, one sealed with a key no process has.
    let legacy = stored_credentials(&pool, DO_LEGACY).await;
    store_credentials(&pool, DO_LEGACY, legacy.split_once(':').unwrap().1).await;
    let foreign = SecretKey::from_list(&SecretKey::generate_base64()).unwrap().seal("dop_v1_lost", DO_FOREIGN).unwrap();
    store_credentials(&pool, DO_FOREIGN, &foreign).await;

    // Upgraded to keys with ids, the one key rewrites nothing: a value sealed before ids that
    // it opens is left as it is (a process of the release before could not open it otherwise).
    let upgraded = Resealer::new(store.clone(), old_key.clone(), Duration::from_secs(3600)).sweep().await;
    assert_eq!(upgraded, SweepReport { resealed: 0, stale: 1, unopenable: 1, failed: 0 });
    assert_eq!(stored_credentials(&pool, DO_LEGACY).await, legacy.split_once(':').unwrap().1);

    let rotated = SecretKey::from_list(&format!("{new},{old}")).unwrap();
    let mut resealer = Resealer::new(store.clone(), rotated.clone(), Duration::from_secs(3600));
    let report = resealer.sweep().await;
    // Every sealed column was swept: a column named wrong would count as failed.
    assert_eq!(report, SweepReport { resealed: 3, stale: 1, unopenable: 1, failed: 0 });
    let new_id = rotated.sealing_key_id();
    let only_new = SecretKey::from_list(&new).unwrap();
    for account in [GKE_ACCOUNT, DO_LEGACY, DO_RACED] {
        let sealed = stored_credentials(&pool, account).await;
        assert_eq!(SecretKey::sealed_key_id(&sealed), Some(new_id.as_str()), "{account}");
        store.account_credentials(&only_new, account).await.unwrap_or_else(|e| panic!("{account}: {e}"));
    }
    assert_eq!(stored_credentials(&pool, DO_FOREIGN).await, foreign, "what no key opens is left alone");

    // A value read by the sweep and changed before its write: the newer value stays.
    let read = old_key.seal(FakeCloudConfig::default().digitalocean_token.as_str(), DO_RACED).unwrap();
    store_credentials(&pool, DO_RACED, &read).await;
    let column = credentials_column();
    let page = store.sealed_values_not_sealed_with(column, &new_id, "", 100).await.unwrap();
    assert!(page.iter().any(|value| value.row_id == DO_RACED && value.sealed == read), "{page:?}");
    let newer = rotated.seal("dop_v1_newer", DO_RACED).unwrap();
    store_credentials(&pool, DO_RACED, &newer).await;
    let resealed = rotated.reseal(&read, DO_RACED).unwrap().unwrap();
    assert!(!store.sealed_value_replace(column, DO_RACED, &read, &resealed).await.unwrap());
    assert_eq!(stored_credentials(&pool, DO_RACED).await, newer);

    let again = resealer.sweep().await;
    assert_eq!(again, SweepReport { resealed: 0, stale: 1, unopenable: 1, failed: 0 });
    pool.close().await;
}

/// Writes the key file whole, as an operator should (a new file renamed over the old), so that
/// a process never reads half of it.
fn write_keys(path: &Path, keys: &[&str]) {
    let next = path.with_extension("next");
    std::fs::write(&next, keys.iter().map(|key| format!("{key}\n")).collect::<String>()).unwrap();
    std::fs::rename(&next, path).unwrap();
}

/// The lines in which a process said it reloaded its keys.
fn reloads(log: &str) -> Vec<&str> {
    log.lines().filter(|line| line.contains("secret keys reloaded")).collect()
}

/// Waits until every process's last reload seals with `sealing` and opens with `opening`
/// besides (and with nothing else).
async fn all_reloaded(servers: &[ServerProcess; 2], workers: &[WorkerProcess; 2], sealing: &str, opening: &str) {
    let expected = format!("sealing_key_id={sealing} opening_key_ids={opening} ");
    poll(Duration::from_secs(30), &format!("every process reloaded {expected}"), || async {
        let logs: Vec<String> =
            servers.iter().map(ServerProcess::log_text).chain(workers.iter().map(WorkerProcess::log_text)).collect();
        let behind: Vec<&String> =
            logs.iter().filter(|log| reloads(log).last().is_none_or(|line| !line.contains(&expected))).collect();
        if behind.is_empty() { Ok(()) } else { Err(format!("{} processes behind: {behind:?}", behind.len())) }
    })
    .await;
}

/// The value of `metric` summed over its lines in `metrics`.
fn metric_total(metrics: &str, metric: &str) -> Option<f64> {
    let values: Vec<f64> = metrics
        .lines()
        .filter(|line| line.starts_with(metric) && line[metric.len()..].starts_with(['{', ' ']))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .collect();
    (!values.is_empty()).then(|| values.iter().sum())
}

/// Every non-empty value of every sealed column, with its column.
async fn sealed_values(database: &sqlx::PgPool) -> Vec<(String, String)> {
    let mut values = Vec::new();
    for column in SEALED_COLUMNS {
        let sql = format!("SELECT {0} FROM {1} WHERE {0} <> ''", column.column, column.table);
        let found: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_all(database).await.unwrap();
        values.extend(found.into_iter().map(|value| (column.name(), value)));
    }
    values
}

/// What no process may have logged while the keys rotated: a secret that did not open.
const OPEN_FAILURES: &[&str] =
    &["does not open with the configured keys", "not among the configured keys", "opens with no configured key"];

fn autopilot(name: &str) -> serde_json::Value {
    json!({"tenantId": "acme", "poolId": POOL, "name": name, "mode": "autopilot", "location": "europe-west1",
           "idempotencyKey": name})
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_key_rotates_through_the_key_file_under_two_servers_and_two_workers_without_a_failed_pass() {
    let dir = tempfile::tempdir().unwrap();
    let keys = dir.path().join("secret-keys");
    let (old, new) = (SecretKey::generate_base64(), SecretKey::generate_base64());
    let (old_id, new_id) = (
        SecretKey::from_base64(&old).unwrap().sealing_key_id(),
        SecretKey::from_base64(&new).unwrap().sealing_key_id(),
    );
    write_keys(&keys, &[&old]);
    let key_file = keys.display().to_string();
    let first = System::on(Backend::Postgres)
        .process(&["--secret-key-file", &key_file, "--max-clusters-per-tenant", "100000"])
        .await;
    let second = first.another().await;
    let cloud = FakeCloud::start(FakeCloudConfig {
        operation_duration: Duration::ZERO,
        activation_delay: Duration::ZERO,
        ..FakeCloudConfig::default()
    })
    .await
    .unwrap();
    first.ok("/api/platform/tenants/create", &first.admin_token, json!({"id": "acme"})).await;
    Catalog::new()
        .gke_account(GKE_ACCOUNT, None, &["europe-west1-b", "europe-west1-c"])
        .pool(POOL, GKE_ACCOUNT, "metered", &[])
        .offer(POOL, "acme")
        .seed(&first.store, &SecretKey::from_file(&keys).unwrap(), &cloud)
        .await;
    let acme = tenant_principal(&first.store, "acme", "admin").await;
    // Sweeps every second as well as on each change: a value a server sealed with the old key
    // just before it reloaded is sealed again soon.
    let args: Vec<&str> = FAST_WORKER_ARGS.iter().copied().chain(["--reseal-ms", "1000"]).collect();
    let workers = [first.worker_process(&args).await, first.worker_process(&args).await];
    let servers = [first, second];
    let database = sqlx::PgPool::connect(&servers[0].database_url).await.unwrap();

    // Load through both servers for as long as the keys rotate: clusters created (their passes
    // open the account's credentials) and the account's credentials written again (sealed by
    // whichever key each server seals with at that moment).
    let stop = Arc::new(AtomicBool::new(false));
    let load = {
        let (stop, acme) = (stop.clone(), acme.clone());
        let endpoints = [servers[0].endpoint.clone(), servers[1].endpoint.clone()];
        let admin = servers[0].admin_token.clone();
        let credentials = cloud.service_account_key(PROJECT, "better-compute");
        tokio::spawn(async move {
            let http = reqwest::Client::new();
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let endpoint = &endpoints[n % 2];
                let created = http
                    .post(format!("{endpoint}/api/compute/kubernetesClusters/create"))
                    .bearer_auth(&acme)
                    .json(&autopilot(&format!("c-{n}")))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(created.status(), 200, "create c-{n}: {}", created.text().await.unwrap());
                let updated = http
                    .post(format!("{endpoint}/api/platform/accounts/update"))
                    .bearer_auth(&admin)
                    .json(&json!({"accountId": GKE_ACCOUNT, "credentials": credentials}))
                    .send()
                    .await
                    .unwrap();
                assert_eq!(updated.status(), 200, "update {n}: {}", updated.text().await.unwrap());
                n += 1;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            n
        })
    };
    poll(Duration::from_secs(60), "a cluster ready before the rotation", || async {
        let ready: i64 = sqlx::query_scalar("SELECT count(*) FROM kubernetes_clusters WHERE state = 'ready'")
            .fetch_one(&database)
            .await
            .unwrap();
        if ready > 0 { Ok(()) } else { Err("none ready".to_owned()) }
    })
    .await;

    // 1. Every process gets the new key to open with.
    write_keys(&keys, &[&old, &new]);
    all_reloaded(&servers, &workers, &old_id, &new_id).await;
    // 2. The new key seals everywhere.
    write_keys(&keys, &[&new, &old]);
    all_reloaded(&servers, &workers, &new_id, &old_id).await;
    // 3. The re-seal finishes: nothing is sealed with the old key, as the workers' gauges and
    // logs say and the database shows.
    poll(Duration::from_secs(60), "every sealed value sealed with the new key", || async {
        let values = sealed_values(&database).await;
        let stale: Vec<&(String, String)> =
            values.iter().filter(|(_, value)| SecretKey::sealed_key_id(value) != Some(new_id.as_str())).collect();
        if !stale.is_empty() {
            return Err(format!("{} of {} values not sealed with the new key", stale.len(), values.len()));
        }
        for worker in &workers {
            let gauge = metric_total(&worker.metrics(), "bc_sealed_values_stale");
            if gauge != Some(0.0) {
                return Err(format!("a worker's bc_sealed_values_stale is {gauge:?}"));
            }
        }
        let done = format!("sealing_key_id={new_id}");
        let said = workers
            .iter()
            .any(|worker| worker.log_text().lines().any(|line| line.contains("re-seal done") && line.contains(&done)));
        if said { Ok(values.len()) } else { Err("no worker said the re-seal is done".to_owned()) }
    })
    .await;
    // 4. The old key goes.
    write_keys(&keys, &[&new]);
    all_reloaded(&servers, &workers, &new_id, "").await;
    stop.store(true, Ordering::Relaxed);
    let rounds = load.await.unwrap();
    assert!(rounds > 0, "the load ran through the rotation");

    // Everything still opens: a cluster created now, and every one before, converges.
    servers[1].ok("/api/compute/kubernetesClusters/create", &acme, autopilot("after-the-rotation")).await;
    poll(Duration::from_secs(120), "every cluster ready", || async {
        let (ready, all): (i64, i64) =
            sqlx::query_as("SELECT count(*) FILTER (WHERE state = 'ready'), count(*) FROM kubernetes_clusters")
                .fetch_one(&database)
                .await
                .unwrap();
        if ready == all { Ok(()) } else { Err(format!("{ready} of {all} ready")) }
    })
    .await;
    let values = sealed_values(&database).await;
    assert!(values.iter().all(|(_, value)| SecretKey::sealed_key_id(value) == Some(new_id.as_str())), "{values:?}");

    // No pass failed on a secret, and no process failed to open one.
    let failed: Vec<(String, String, i64, String)> = sqlx::query_as(
        "SELECT kind, object_id, attempts, last_error FROM work_items \
         WHERE last_error LIKE '%INTERNAL%'",
    )
    .fetch_all(&database)
    .await
    .unwrap();
    assert!(failed.is_empty(), "passes failed on a secret: {failed:?}");
    let logs: Vec<String> =
        servers.iter().map(ServerProcess::log_text).chain(workers.iter().map(WorkerProcess::log_text)).collect();
    for log in &logs {
        for failure in OPEN_FAILURES {
            assert!(!log.contains(failure), "a process logged {failure:?}: {log}");
        }
        // A secret that does not open fails its pass as INTERNAL.
        let failed = log.lines().find(|line| line.contains("pass failed") && line.contains("INTERNAL"));
        assert!(failed.is_none(), "a pass failed: {failed:?}");
        assert!(!log.contains(&old) && !log.contains(&new), "a key reached the log");
    }
    for server in &servers {
        server.assert_up();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_worker_refuses_to_start_without_a_secret_key_and_says_how_to_give_one() {
    let db = System::on(Backend::Postgres).database().await;
    db.store().await;
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty-keys");
    std::fs::write(&empty, "# no key yet\n").unwrap();
    let empty = empty.display().to_string();
    let key = SecretKey::generate_base64();
    let cases: [(&[&str], &[&str]); 4] = [
        (&[], &["no secret key", "--secret-key", "--secret-key-file", "openssl rand -base64 32"]),
        (&["--secret-key", "c2hvcnQ="], &["--secret-key", "32 bytes"]),
        (&["--secret-key-file", &empty], &["--secret-key-file", "no key"]),
        (&["--secret-key", &key, "--secret-key-file", &empty], &["--secret-key", "--secret-key-file", "one way"]),
    ];
    for (args, said) in cases {
        let output = Command::new(env!("CARGO_BIN_EXE_bc-worker"))
            .args(["--database-url", &db.url])
            .args(args)
            .env_remove("BC_SECRET_KEY")
            .env_remove("BC_SECRET_KEY_FILE")
            .env_remove("BC_CONFIG")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(!output.status.success(), "{args:?}: bc-worker started: {stderr}");
        for words in said {
            assert!(stderr.contains(words), "{args:?}: {words:?} not in {stderr}");
        }
        assert!(!stderr.contains("c2hvcnQ=") && !stderr.contains(&key), "a key is echoed: {stderr}");
    }
}
