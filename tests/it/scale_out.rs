//! Scale-out as it is deployed: two `bc-server` and two `bc-worker` processes, the real
//! binaries, on one Postgres database. The same create through both servers at once makes one
//! object; clusters created through both servers converge with both workers taking a share and
//! no object in two passes at once; a server stopped with SIGTERM under load drains (`/readyz`
//! fails first, calls in flight finish, no acknowledged write is lost, every call answers
//! success or `UNAVAILABLE`); a worker stopped with SIGTERM hands its leases back at once, and
//! one killed with SIGKILL keeps them until they expire.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use better_compute::secrets::SecretKey;
use better_compute::store::now_micros;
use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::{Value, json};
use sqlx::Row;

use crate::harness::probe_every;
use crate::harness::{
    Catalog, FAST_WORKER_ARGS, ServerProcess, System, WorkerProcess, eventually, poll, tenant_principal,
};
use better_compute::store::Backend;

/// The platform's GKE pool offered to `acme`, on the fake cloud.
const POOL: &str = "pool_0000000000000000000000gke1";
const GKE_ACCOUNT: &str = "acct_0000000000000000000000gke1";
const CREATE: &str = "/api/compute/kubernetesClusters/create";
const UPDATE: &str = "/api/compute/kubernetesClusters/update";
const DELETE: &str = "/api/compute/kubernetesClusters/delete";
const GET: &str = "/api/compute/kubernetesClusters/get";
/// The clients' calls the balancer carries before a server is stopped: load on the servers.
const CALLS_BETWEEN_STOPS: usize = 40;

/// Two servers on one database, the tenant `acme` with an admin, and the GKE pool on a fake
/// cloud whose operations finish at once.
struct TwoServers {
    servers: [ServerProcess; 2],
    /// acme's admin: a bearer token.
    acme: String,
    /// The fake cloud the pool's account points at.
    cloud: FakeCloud,
}

async fn two_servers() -> TwoServers {
    // A second of drain: longer than the balancer's readiness checks in the drain test.
    let first =
        System::on(Backend::Postgres).process(&["--max-clusters-per-tenant", "1000000", "--drain-secs", "1"]).await;
    let second = first.another().await;
    let cloud = FakeCloud::start(FakeCloudConfig {
        operation_duration: Duration::ZERO,
        activation_delay: Duration::ZERO,
        ..FakeCloudConfig::default()
    })
    .await
    .unwrap();
    first.ok("/api/platform/tenants/create", &first.admin_token, json!({"id": "acme"})).await;
    let key = SecretKey::from_base64(&first.secret_key).unwrap();
    Catalog::new()
        .gke_account(GKE_ACCOUNT, None, &["europe-west1-b", "europe-west1-c", "us-central1-a"])
        .pool(POOL, GKE_ACCOUNT, "metered", &[])
        .offer(POOL, "acme")
        .seed(&first.store, &key, &cloud)
        .await;
    let acme = tenant_principal(&first.store, "acme", "admin").await;
    TwoServers { servers: [first, second], acme, cloud }
}

impl TwoServers {
    /// A worker process on the servers' database with the key that opens the accounts'
    /// credentials, and `args` besides [`FAST_WORKER_ARGS`].
    async fn worker(&self, args: &[&str]) -> WorkerProcess {
        let server = &self.servers[0];
        let all: Vec<&str> = FAST_WORKER_ARGS.iter().chain(args).copied().collect();
        server.worker_process(&all).await
    }

    /// Connections to the database, to look behind the API.
    async fn database(&self) -> sqlx::PgPool {
        sqlx::PgPool::connect(&self.servers[0].database_url).await.unwrap()
    }
}

fn autopilot(name: &str) -> Value {
    json!({"tenantId": "acme", "poolId": POOL, "name": name, "mode": "autopilot", "location": "europe-west1",
           "idempotencyKey": name})
}

/// How a call through the API ended.
#[derive(Debug)]
enum Answer {
    /// 200, with the answer.
    Ok(Value),
    /// Refused cleanly: `UNAVAILABLE` (503), or the connection refused before anything was sent.
    Unavailable,
    /// Anything else: a status, an error code, or a connection lost with the call in flight.
    Other(String),
}

async fn call(http: &reqwest::Client, endpoint: &str, token: &str, path: &str, body: &Value) -> Answer {
    let sent = http.post(format!("{endpoint}{path}")).bearer_auth(token).json(body).send().await;
    let response = match sent {
        Ok(response) => response,
        Err(error) if error.is_connect() => return Answer::Unavailable,
        Err(error) => return Answer::Other(format!("{path}: {error:?}")),
    };
    let status = response.status().as_u16();
    let answer: Value = response.json().await.unwrap_or(Value::Null);
    match (status, answer["error"]["code"].as_str()) {
        (200, _) => Answer::Ok(answer),
        (503, Some("UNAVAILABLE")) => Answer::Unavailable,
        _ => Answer::Other(format!("{path} {body}: {status} {answer}")),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fifty_racing_creates_with_one_key_through_two_servers_make_one_cluster_each() {
    let platform = two_servers().await;
    let http = reqwest::Client::new();
    for round in 0..50 {
        // The same create four times at once, two through each server.
        let body = autopilot(&format!("race-{round}"));
        let mut calls = tokio::task::JoinSet::new();
        for server in [0, 1, 0, 1] {
            let (http, endpoint, token, body) =
                (http.clone(), platform.servers[server].endpoint.clone(), platform.acme.clone(), body.clone());
            calls.spawn(async move { call(&http, &endpoint, &token, CREATE, &body).await });
        }
        let ids: BTreeSet<String> = calls
            .join_all()
            .await
            .into_iter()
            .map(|answer| match answer {
                Answer::Ok(cluster) => cluster["id"].as_str().unwrap().to_owned(),
                other => panic!("round {round}: {other:?}"),
            })
            .collect();
        assert_eq!(ids.len(), 1, "round {round}: one cluster, answered four times: {ids:?}");
    }
    let database = platform.database().await;
    let clusters: i64 =
        sqlx::query_scalar("SELECT count(*) FROM kubernetes_clusters").fetch_one(&database).await.unwrap();
    assert_eq!(clusters, 50);
}

/// What `/metrics` counts in the lines of `metric`, summed.
fn metric_total(metrics: &str, metric: &str) -> f64 {
    metrics
        .lines()
        .filter(|line| line.starts_with(metric) && line[metric.len()..].starts_with(['{', ' ']))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn clusters_created_through_two_servers_converge_on_two_workers_sharing_and_no_object_in_two_passes() {
    const CLUSTERS: usize = 500;
    let platform = two_servers().await;
    // `noop` objects beside the clusters: each of their passes records its worker and its start
    // and end, so that passes of one object overlapping in time would show.
    let noop_objects: Vec<String> = (0..40).map(|n| format!("noop-{n}")).collect();
    platform.servers[0].store.work_enqueue_many("noop", &noop_objects, "settled", now_micros()).await.unwrap();
    let workers = [platform.worker(&["--noop-pass-ms", "20"]).await, platform.worker(&["--noop-pass-ms", "20"]).await];

    // Creates through both servers, 16 at a time.
    let http = reqwest::Client::new();
    let mut creating = tokio::task::JoinSet::new();
    for lane in 0..16 {
        let (http, token) = (http.clone(), platform.acme.clone());
        let endpoints = [platform.servers[0].endpoint.clone(), platform.servers[1].endpoint.clone()];
        creating.spawn(async move {
            for n in (lane..CLUSTERS).step_by(16) {
                match call(&http, &endpoints[n % 2], &token, CREATE, &autopilot(&format!("c-{n}"))).await {
                    Answer::Ok(_) => {}
                    other => panic!("create c-{n}: {other:?}"),
                }
            }
        });
    }
    creating.join_all().await;

    let database = platform.database().await;
    poll(Duration::from_secs(120), "every cluster ready", || {
        let database = database.clone();
        async move {
            let ready: i64 = sqlx::query_scalar("SELECT count(*) FROM kubernetes_clusters WHERE state = 'ready'")
                .fetch_one(&database)
                .await
                .unwrap();
            if ready as usize == CLUSTERS { Ok(()) } else { Err(format!("{ready} of {CLUSTERS} ready")) }
        }
    })
    .await;

    // Both workers took a share: each made calls to the fake GKE.
    let provider_calls: Vec<f64> =
        workers.iter().map(|worker| metric_total(&worker.metrics(), "bc_provider_calls_total")).collect();
    assert!(provider_calls.iter().all(|calls| *calls > 0.0), "provider calls per worker: {provider_calls:?}");
    // No cluster was made twice at the provider.
    let made = platform.cloud.inspect()["gke"]["clusters"].as_array().map(Vec::len).unwrap_or_default();
    assert_eq!(made, CLUSTERS, "clusters at the fake GKE");

    // No object was in two passes at once, and both workers ran passes.
    let passes = eventually(Duration::from_secs(30), "noop passes by both workers", || async {
        let passes = platform.servers[0].store.work_noop_passes().await.unwrap();
        let workers: BTreeSet<&str> = passes.iter().map(|(_, worker, ..)| worker.as_str()).collect();
        (workers.len() == 2).then_some(passes.clone())
    })
    .await;
    for pair in passes.windows(2) {
        let ((object, first_worker, _, first_end), (next_object, next_worker, next_start, _)) = (&pair[0], &pair[1]);
        if object == next_object {
            assert!(
                next_start >= first_end,
                "{object}: a pass on {next_worker} began at {next_start} before the pass on {first_worker} ended at {first_end}"
            );
        }
    }
}

/// A balancer in front of the servers: sends each call to the next server whose `/readyz` said
/// 200 at its last look (every 50 ms), as a Kubernetes Service or any L7 balancer does.
struct Balancer {
    endpoints: Vec<String>,
    ready: Vec<AtomicBool>,
    next: std::sync::atomic::AtomicUsize,
}

impl Balancer {
    fn new(endpoints: Vec<String>) -> Arc<Balancer> {
        let ready = endpoints.iter().map(|_| AtomicBool::new(true)).collect();
        Arc::new(Balancer { endpoints, ready, next: Default::default() })
    }

    /// Looks at every server's `/readyz` until `stop`.
    async fn watch(self: Arc<Self>, stop: Arc<AtomicBool>) {
        let http = reqwest::Client::builder().timeout(Duration::from_millis(500)).build().unwrap();
        let (http, balancer) = (&http, &self);
        probe_every(Duration::from_millis(50), &stop, || async move {
            for (endpoint, ready) in balancer.endpoints.iter().zip(&balancer.ready) {
                let answered = http.get(format!("{endpoint}/readyz")).send().await;
                ready.store(answered.is_ok_and(|response| response.status() == 200), Ordering::Relaxed);
            }
        })
        .await;
    }

    /// How many calls it has sent on.
    fn routed(&self) -> usize {
        self.next.load(Ordering::Relaxed)
    }

    /// Waits until server `index` is ready in its eyes and `more` calls went through it since.
    async fn carries(&self, more: usize, index: usize) {
        let from = self.routed();
        eventually(Duration::from_secs(20), "the clients' calls to go through the balancer", || async {
            (self.ready[index].load(Ordering::Relaxed) && self.routed() >= from + more).then_some(())
        })
        .await;
    }

    /// The next ready server (the next of all when none is).
    fn pick(&self) -> &str {
        let start = self.next.fetch_add(1, Ordering::Relaxed);
        let count = self.endpoints.len();
        let chosen = (0..count).map(|n| (start + n) % count).find(|n| self.ready[*n].load(Ordering::Relaxed));
        &self.endpoints[chosen.unwrap_or(start % count)]
    }
}

/// What one client was told: acknowledged writes, and every answer that was neither a success
/// nor `UNAVAILABLE`.
#[derive(Default)]
struct Told {
    /// Per acknowledged cluster: the descriptions it may have now (the last acknowledged, and
    /// any sent after it whose answer was `UNAVAILABLE`), and whether a delete was acknowledged.
    clusters: BTreeMap<String, (BTreeSet<String>, bool)>,
    calls: usize,
    unavailable: usize,
    others: Vec<String>,
}

/// Creates, updates and deletes clusters through `balancer` until `stop`.
async fn drive(lane: usize, balancer: Arc<Balancer>, token: String, stop: Arc<AtomicBool>) -> Told {
    // A connection per call: a kept-alive connection to a server that has gone says nothing
    // about the server's drain.
    let http = reqwest::Client::builder().pool_max_idle_per_host(0).build().unwrap();
    let mut told = Told::default();
    let mut live: Vec<String> = Vec::new();
    let mut step = 0usize;
    while !stop.load(Ordering::Relaxed) {
        step += 1;
        let (path, body) = match step % 4 {
            0 if !live.is_empty() => {
                let id = live.remove(0);
                (DELETE, json!({"tenantId": "acme", "clusterId": id}))
            }
            1 | 2 if !live.is_empty() => {
                let id = &live[step % live.len()];
                (UPDATE, json!({"tenantId": "acme", "clusterId": id, "description": format!("step {step}")}))
            }
            _ => (CREATE, autopilot(&format!("l{lane}-{step}"))),
        };
        told.calls += 1;
        let id = body["clusterId"].as_str().map(str::to_owned);
        match call(&http, balancer.pick(), &token, path, &body).await {
            Answer::Ok(cluster) => {
                let id = cluster["id"].as_str().unwrap().to_owned();
                let entry = told.clusters.entry(id.clone()).or_default();
                match path {
                    CREATE => {
                        entry.0 = BTreeSet::from([String::new()]);
                        live.push(id);
                    }
                    UPDATE => entry.0 = BTreeSet::from([body["description"].as_str().unwrap().to_owned()]),
                    _ => entry.1 = true,
                }
            }
            Answer::Unavailable => {
                told.unavailable += 1;
                if let (UPDATE, Some(id)) = (path, id) {
                    told.clusters.entry(id).or_default().0.insert(body["description"].as_str().unwrap().to_owned());
                }
            }
            Answer::Other(what) => told.others.push(what),
        }
    }
    told
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn servers_stopped_with_sigterm_under_load_drain_and_lose_no_acknowledged_write() {
    let mut platform = two_servers().await;
    let balancer = Balancer::new(platform.servers.iter().map(|server| server.endpoint.clone()).collect());
    let stop = Arc::new(AtomicBool::new(false));
    let watching = tokio::spawn(balancer.clone().watch(stop.clone()));
    let mut clients = tokio::task::JoinSet::new();
    for lane in 0..4 {
        clients.spawn(drive(lane, balancer.clone(), platform.acme.clone(), stop.clone()));
    }
    // Under load: the clients' calls go to both servers.
    balancer.carries(CALLS_BETWEEN_STOPS, 0).await;

    for index in 0..2 {
        let server = &mut platform.servers[index];
        server.sigterm();
        // Draining: `/readyz` fails while the server still runs and still answers calls.
        eventually(Duration::from_secs(5), "/readyz answering 503 while draining", || async {
            let code = server.curl(&["-s", "-o", "/dev/null", "-w", "%{http_code}", "/readyz"]);
            (code == "503").then_some(())
        })
        .await;
        assert!(server.is_alive(), "bc-server exited before its drain ended: {}", server.log_text());
        let cluster = server.ok(CREATE, &platform.acme, autopilot(&format!("while-draining-{index}"))).await;
        assert_eq!(cluster["version"], 1, "{cluster}");
        let status = server.wait_exit(Duration::from_secs(20)).await;
        assert!(status.success(), "bc-server exited with {status}: {}", server.log_text());
        // Stopped: a new call is refused at the door, not half answered.
        let refused = call(&reqwest::Client::new(), &server.endpoint, &platform.acme, GET, &json!({})).await;
        assert!(matches!(refused, Answer::Unavailable), "{refused:?}");
        server.spawn().await;
        // Back behind the balancer, it takes its share of the load before the next one stops.
        balancer.carries(CALLS_BETWEEN_STOPS, index).await;
    }
    stop.store(true, Ordering::Relaxed);
    let told: Vec<Told> = clients.join_all().await;
    watching.await.unwrap();

    let others: Vec<&String> = told.iter().flat_map(|told| &told.others).collect();
    assert!(others.is_empty(), "calls answered neither success nor UNAVAILABLE: {others:#?}");
    let calls: usize = told.iter().map(|told| told.calls).sum();
    assert!(calls > 100, "the clients made {calls} calls");

    // Every acknowledged write is in the store.
    let http = reqwest::Client::new();
    let endpoint = &platform.servers[0].endpoint;
    for (id, (descriptions, deleted)) in told.iter().flat_map(|told| &told.clusters) {
        let body = json!({"tenantId": "acme", "clusterId": id});
        let Answer::Ok(cluster) = call(&http, endpoint, &platform.acme, GET, &body).await else {
            panic!("acknowledged cluster {id} is not in the store")
        };
        let description = cluster["description"].as_str().unwrap_or_default();
        assert!(descriptions.contains(description), "{id}: {description:?}, acknowledged {descriptions:?}");
        if *deleted {
            assert_eq!(cluster["state"], "deleting", "{id}: an acknowledged delete: {cluster}");
        }
    }
}

/// Who holds leases on `noop` objects: object → (owner, lease expiry in µs).
async fn noop_leases(database: &sqlx::PgPool) -> BTreeMap<String, (String, i64)> {
    sqlx::query(
        "SELECT object_id, lease_owner, lease_expires_at FROM work_items \
         WHERE kind = 'noop' AND lease_owner IS NOT NULL",
    )
    .fetch_all(database)
    .await
    .unwrap()
    .iter()
    .map(|row| (row.get::<String, _>(0), (row.get::<String, _>(1), row.get::<i64, _>(2))))
    .collect()
}

/// The objects `owner` holds.
fn held_by<'a>(leases: &'a BTreeMap<String, (String, i64)>, owner: &str) -> BTreeSet<&'a str> {
    leases.iter().filter(|(_, (holder, _))| holder == owner).map(|(object, _)| object.as_str()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_stopped_with_sigterm_hands_its_leases_back_at_once_and_a_killed_one_keeps_them_until_expiry() {
    const LEASE: Duration = Duration::from_secs(6);
    let platform = two_servers().await;
    let objects: Vec<String> = (0..12).map(|n| format!("noop-{n}")).collect();
    platform.servers[0].store.work_enqueue_many("noop", &objects, "settled", now_micros()).await.unwrap();
    let database = platform.database().await;
    // Passes that outlast the test, so that a lease changes hands only through a stop or an
    // expiry; eight at once, so that the first worker leaves four objects to the second.
    let args = ["--noop-pass-ms", "60000", "--lease-ms", "6000", "--concurrency", "8"];

    let mut first = platform.worker(&args).await;
    let first_id = eventually(Duration::from_secs(10), "the first worker holding 8 leases", || async {
        let leases = noop_leases(&database).await;
        let owners: BTreeSet<&String> = leases.values().map(|(owner, _)| owner).collect();
        (leases.len() == 8 && owners.len() == 1).then(|| owners.into_iter().next().unwrap().clone())
    })
    .await;
    let second = platform.worker(&args).await;
    let second_id = eventually(Duration::from_secs(10), "the second worker holding the other 4", || async {
        let leases = noop_leases(&database).await;
        let second = leases.values().find(|(owner, _)| *owner != first_id).map(|(owner, _)| owner.clone())?;
        (held_by(&leases, &second).len() == 4).then_some(second)
    })
    .await;

    // SIGTERM: the first worker gives its leases back as it exits, and the second takes them
    // (as many as it has room for) long before they would have expired.
    let stopped_at = Instant::now();
    first.sigterm();
    let status = first.wait_exit(Duration::from_secs(10)).await;
    assert!(status.success(), "bc-worker exited with {status}: {}", first.log_text());
    assert!(held_by(&noop_leases(&database).await, &first_id).is_empty(), "leases left behind on SIGTERM");
    eventually(Duration::from_secs(10), "the second worker taking 4 of the released objects", || async {
        (held_by(&noop_leases(&database).await, &second_id).len() == 8).then_some(())
    })
    .await;
    assert!(stopped_at.elapsed() < LEASE, "taken over after {:?}: no faster than an expiry", stopped_at.elapsed());

    // SIGKILL: the killed worker's leases stay with it until they expire, then a third worker
    // (with room for all) takes them.
    let third = platform.worker(&["--noop-pass-ms", "60000", "--lease-ms", "6000", "--concurrency", "16"]).await;
    let mut second = second;
    second.kill();
    let killed = noop_leases(&database).await;
    let kept: BTreeMap<String, i64> = killed
        .iter()
        .filter(|(_, (owner, _))| *owner == second_id)
        .map(|(object, (_, expires))| (object.clone(), *expires))
        .collect();
    assert_eq!(kept.len(), 8, "{killed:?}");
    let third_id = poll(LEASE * 3, "the third worker taking the killed worker's leases after expiry", || {
        let (database, kept, second_id) = (database.clone(), &kept, &second_id);
        async move {
            let leases = noop_leases(&database).await;
            let looked_at = now_micros();
            let mut taken_by = BTreeSet::new();
            for (object, expires) in kept {
                let (owner, _) = leases.get(object).cloned().unwrap_or_default();
                if owner != *second_id {
                    assert!(looked_at >= *expires, "{object} was taken by {owner:?} before its lease expired");
                    taken_by.insert(owner);
                }
            }
            match taken_by.len() {
                1 if kept.keys().all(|object| leases.get(object).is_some_and(|(owner, _)| owner != second_id)) => {
                    Ok(taken_by.into_iter().next().unwrap())
                }
                _ => Err(format!("{leases:?}")),
            }
        }
    })
    .await;
    assert_ne!(third_id, first_id);
    drop(third);
}
