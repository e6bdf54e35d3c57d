//! The `bcd` binary as a machine runs it, against the real `bc-server` over TLS: with a wrong CA
//! pin it sends nothing; pinned, it joins, heartbeats, learns its cordon, rides out a restart of
//! the server, and stops saying why (forgetting the credential) once its node is deleted or its
//! machine released. Neither the token nor the node's credential reaches the daemon's output or
//! the server's log.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};

use crate::harness::poll;
use crate::harness::{DO_TOKEN, Running, ServerProcess, System, bcd_binary, eventually, run_ok, tenant_principal};
use better_compute::store::Backend;

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// What bcd logs when a heartbeat finds no server (the first failure of a run of them).
const HEARTBEAT_FAILED: &str = "retrying with backoff";

/// A server over TLS (nodes heartbeat every second) with acme's own pool, acme's admin, and a
/// join token of two uses on the pool.
struct Setup {
    server: ServerProcess,
    pool: String,
    admin: String,
    token_id: String,
    token: String,
}

async fn setup() -> Setup {
    setup_on(System::on(Backend::Postgres).tls().process(&["--node-heartbeat-interval-secs", "1"]).await).await
}

async fn setup_on(server: ServerProcess) -> Setup {
    let operator = server.admin_token.clone();
    server.ok("/api/platform/tenants/create", &operator, json!({"id": "acme"})).await;
    let account = server
        .ok(
            "/api/platform/accounts/create",
            &operator,
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": DO_TOKEN,
                "regions": ["nyc3"]}),
        )
        .await;
    let pool = server
        .ok(
            "/api/platform/pools/create",
            &operator,
            json!({"accountId": account["id"], "name": "own", "billingMode": "none"}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let admin = tenant_principal(&server.store, "acme", "admin").await;
    let made = server
        .ok(
            "/api/compute/joinTokens/create",
            &admin,
            json!({"poolId": pool, "idempotencyKey": "rack-1", "maxUses": 2, "labels": {"rack": "r1"}}),
        )
        .await;
    let (token_id, token) = (made["id"].as_str().unwrap().to_owned(), made["token"].as_str().unwrap().to_owned());
    Setup { server, pool, admin, token_id, token }
}

impl Setup {
    /// `bcd join` with `pin`, its output to `log`.
    fn join(&self, state_dir: &Path, pin: &str, log: &Path) -> Command {
        let mut command = self.join_unpinned(state_dir, log);
        command.args(["--ca-sha256", pin]);
        command
    }

    /// `bcd join`, its output to `log`: over plain HTTP, saying so (`--insecure-plaintext`).
    fn join_plaintext(&self, state_dir: &Path, log: &Path) -> Command {
        let mut command = self.join_unpinned(state_dir, log);
        command.arg("--insecure-plaintext");
        command
    }

    /// `bcd join`, its output to `log`.
    fn join_unpinned(&self, state_dir: &Path, log: &Path) -> Command {
        let log = std::fs::File::create(log).unwrap();
        let mut command = Command::new(bcd_binary());
        command
            .args(["join", "--endpoint", &self.server.endpoint, "--label", "role=test"])
            .args(["--machine-id", "bcd-test-machine-0001", "--state-dir"])
            .arg(state_dir)
            .env("BCD_TOKEN", &self.token)
            .env("RUST_LOG", "info")
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log));
        command
    }

    async fn nodes(&self) -> Vec<Value> {
        let listed = self.server.ok("/api/compute/nodes/list", &self.admin, json!({"poolId": self.pool})).await;
        listed["nodes"].as_array().cloned().unwrap_or_default()
    }

    async fn token_uses(&self) -> i64 {
        let token = self
            .server
            .ok("/api/compute/joinTokens/get", &self.admin, json!({"poolId": self.pool, "joinTokenId": self.token_id}))
            .await;
        token["uses"].as_i64().unwrap_or(0)
    }

    /// Waits until the node's `lastHeartbeatAt` is no longer `after`: a heartbeat came.
    async fn next_heartbeat(&self, after: &str) -> String {
        eventually(Duration::from_secs(30), "a heartbeat", || async {
            let nodes = self.nodes().await;
            let last = nodes.first()?["lastHeartbeatAt"].as_str()?.to_owned();
            (last != after).then_some(last)
        })
        .await
    }
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn with_a_wrong_ca_pin_bcd_sends_nothing_and_says_why() {
    let setup = setup().await;
    let dir = tempfile::tempdir().unwrap();
    let impostor = better_compute::tls::LocalCa::generate("another CA").unwrap();
    let log = dir.path().join("bcd.log");
    let status = setup.join(&dir.path().join("state"), &impostor.sha256(), &log).status().unwrap();
    let output = read(&log);
    assert_eq!(status.code(), Some(1), "bcd fails: {output}");
    assert!(output.contains("pinned SHA-256"), "bcd says the pin did not match: {output}");
    assert!(!output.contains(&setup.token), "bcd never prints the token: {output}");
    assert_eq!(setup.token_uses().await, 0, "the join was never sent");
    assert!(setup.nodes().await.is_empty());
    assert!(!dir.path().join("state/node.json").exists(), "nothing is kept of a join that did not happen");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pinned_bcd_joins_heartbeats_is_cordoned_survives_a_restart_and_stops_when_deleted() {
    let mut setup = setup().await;
    let dir = tempfile::tempdir().unwrap();
    let (state_dir, log) = (dir.path().join("state"), dir.path().join("bcd.log"));
    let pin = setup.server.ca.as_ref().unwrap().sha256();
    let mut bcd = Running(setup.join(&state_dir, &pin, &log).spawn().unwrap());

    // It joins: a ready node with the token's labels and its own, and its capacity.
    let node = eventually(Duration::from_secs(30), "the node to join", || async {
        setup.nodes().await.into_iter().find(|node| node["state"] == "ready")
    })
    .await;
    let node_id = node["id"].as_str().unwrap().to_owned();
    assert_eq!(node["machineId"], "bcd-test-machine-0001");
    assert_eq!(node["labels"], json!({"rack": "r1", "role": "test"}));
    assert!(node["capacity"]["cpuMillis"].as_i64().unwrap() >= 1000, "{node}");
    assert!(node["capacity"]["memoryBytes"].as_i64().unwrap() > 0, "{node}");
    assert_eq!(setup.token_uses().await, 1);
    let mut last = setup.next_heartbeat(node["lastHeartbeatAt"].as_str().unwrap()).await;
    let heartbeated = setup.nodes().await.remove(0);
    assert!(heartbeated["allocatable"]["memoryBytes"].as_i64().unwrap() > 0, "a heartbeat carries allocatable");
    assert!(
        heartbeated["conditions"].as_array().unwrap().iter().any(|c| c["type"] == "DiskPressure"),
        "a heartbeat carries conditions: {heartbeated}"
    );

    // The credential is kept where only bcd's user reads it.
    let state: Value = serde_json::from_str(&read(&state_dir.join("node.json"))).unwrap();
    let credential = state["credential"].as_str().unwrap().to_owned();
    assert!(credential.starts_with("bcn_"));
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&state_dir.join("node.json")), 0o600);
        assert_eq!(mode(&state_dir), 0o700);
    }

    // The pool's view counts it, with its capacity.
    let pool =
        setup.server.ok("/api/platform/pools/get", &setup.server.admin_token, json!({"poolId": setup.pool})).await;
    assert_eq!(pool["nodes"]["ready"], 1, "{pool}");
    assert_eq!(pool["nodes"]["capacity"]["cpuMillis"], heartbeated["capacity"]["cpuMillis"], "{pool}");

    // A cordon reaches the daemon through its next heartbeat.
    setup.server.ok("/api/compute/nodes/cordon", &setup.admin, json!({"poolId": setup.pool, "nodeId": node_id})).await;
    eventually(Duration::from_secs(30), "bcd to learn its cordon", || async {
        read(&log).contains("cordoned").then_some(())
    })
    .await;

    // The server restarts; the daemon rides it out and heartbeats again.
    let failed_before = read(&log).matches(HEARTBEAT_FAILED).count();
    setup.server.kill();
    eventually(Duration::from_secs(30), "bcd to find the server gone", || async {
        (read(&log).matches(HEARTBEAT_FAILED).count() > failed_before).then_some(())
    })
    .await;
    assert!(bcd.0.try_wait().unwrap().is_none(), "bcd keeps running while the server is down: {}", read(&log));
    setup.server.spawn().await;
    last = setup.next_heartbeat(&last).await;
    setup.next_heartbeat(&last).await;

    let rss = std::fs::read_to_string(format!("/proc/{}/status", bcd.0.id())).unwrap_or_default();
    let rss = rss.lines().find(|line| line.starts_with("VmRSS:")).unwrap_or("VmRSS: unknown").to_owned();
    eprintln!("bcd's resident memory after a join, heartbeats and a server restart: {rss}");

    // Deleted, its credential is void: the daemon stops and says why.
    setup.server.ok("/api/compute/nodes/delete", &setup.admin, json!({"poolId": setup.pool, "nodeId": node_id})).await;
    let status = poll(Duration::from_secs(30), "bcd to stop after its node was deleted", || {
        let exited = bcd.0.try_wait().unwrap().ok_or_else(|| read(&log));
        async move { exited }
    })
    .await;
    let output = read(&log);
    assert_eq!(status.code(), Some(1), "{output}");
    assert!(output.contains(&format!("node {node_id} was deleted")), "bcd says the node was deleted: {output}");
    assert!(!state_dir.join("node.json").exists(), "bcd forgets the dead credential");

    for secret in [setup.token.as_str(), credential.as_str()] {
        let body = secret.split_once('.').unwrap().1;
        assert!(!output.contains(body), "bcd's output holds a secret: {output}");
        assert!(!setup.server.log_text().contains(body), "the server's log holds a secret");
    }
}

/// The README's `bcctl dev` section: a token made with `bcctl jointokens create`, the `bcd join` line it
/// prints run as printed (over TLS, pinned), and `bcctl nodes list` showing the node `ready`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_dev_with_tls_joins_a_node_the_way_the_readme_says() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, dev) = System::on(Backend::Sqlite).tls().dev(&dir.path().join(".bc-dev"));
    assert!(dev["endpoint"].as_str().unwrap().starts_with("https://"), "{dev}");
    let pool = dev["pools"]["digitalocean"].as_str().unwrap().to_owned();
    let bcctl = |args: &[&str]| {
        let mut command = Command::new(BC);
        command.current_dir(dir.path()).args(args);
        for variable in ["BC_ENDPOINT", "BC_TOKEN", "BC_CA_SHA256", "BC_CONFIG"] {
            command.env_remove(variable);
        }
        String::from_utf8(run_ok(&mut command).stdout).unwrap()
    };
    let created = bcctl(&["jointokens", "create", "--pool", &pool, "--description", "rack 4", "--label", "rack=r4"]);
    let line = created.lines().find(|line| line.trim_start().starts_with("bcd join")).expect(&created);
    let pin = dev["caSha256"].as_str().unwrap();
    assert!(line.contains(&format!("--ca-sha256 {pin}")), "the printed line pins the CA: {line}");

    let printed: Vec<&str> = line.split_whitespace().skip(1).collect();
    let log = std::fs::File::create(dir.path().join("bcd.log")).unwrap();
    let _bcd = Running(
        Command::new(bcd_binary())
            .args(&printed)
            .args(["--machine-id", "readme-machine-0001", "--state-dir"])
            .arg(dir.path().join("bcd"))
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log))
            .spawn()
            .unwrap(),
    );
    eventually(Duration::from_secs(30), "bcctl nodes list to show the node ready", || async {
        let listed = bcctl(&["nodes", "list", "--pool", &pool]);
        listed.lines().skip(1).any(|row| row.split_whitespace().nth(2) == Some("ready")).then_some(())
    })
    .await;
}

/// `bcd run` resumes from the state `bcd join` kept, `bcd status` shows the node, and `bcd leave`
/// leaves the pool and forgets the node (over plain HTTP, as on a trusted network, which bcd
/// is told with `--insecure-plaintext`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bcd_run_resumes_status_shows_the_node_and_leave_leaves() {
    let setup = setup_on(System::on(Backend::Postgres).process(&["--node-heartbeat-interval-secs", "1"]).await).await;
    let dir = tempfile::tempdir().unwrap();
    let (state_dir, log) = (dir.path().join("state"), dir.path().join("bcd.log"));
    let joined = Running(setup.join_plaintext(&state_dir, &log).spawn().unwrap());
    let node = eventually(Duration::from_secs(30), "the node to join", || async {
        setup.nodes().await.into_iter().find(|node| node["state"] == "ready")
    })
    .await;
    let node_id = node["id"].as_str().unwrap().to_owned();
    assert!(joined.terminate().success(), "bcd stops cleanly on SIGTERM: {}", read(&log));

    let bcd =
        |args: &[&str]| Command::new(bcd_binary()).args(args).arg("--state-dir").arg(&state_dir).output().unwrap();
    let status = bcd(&["status"]);
    let printed = String::from_utf8_lossy(&status.stdout);
    assert!(status.status.success(), "{printed}{}", String::from_utf8_lossy(&status.stderr));
    assert!(printed.contains(&node_id) && printed.contains("ready"), "{printed}");

    let last = setup.nodes().await[0]["lastHeartbeatAt"].as_str().unwrap().to_owned();
    let run_log = std::fs::File::create(dir.path().join("run.log")).unwrap();
    let resumed = Running(
        Command::new(bcd_binary())
            .args(["run", "--state-dir"])
            .arg(&state_dir)
            .stdout(Stdio::from(run_log.try_clone().unwrap()))
            .stderr(Stdio::from(run_log))
            .spawn()
            .unwrap(),
    );
    setup.next_heartbeat(&last).await;
    assert!(resumed.terminate().success());
    assert_eq!(setup.token_uses().await, 1, "a resumed daemon needs no token");

    let left = bcd(&["leave"]);
    assert!(left.status.success(), "{}", String::from_utf8_lossy(&left.stderr));
    assert!(String::from_utf8_lossy(&left.stdout).contains(&format!("node {node_id} left")));
    assert_eq!(setup.nodes().await[0]["state"], "left");
    assert!(!state_dir.join("node.json").exists(), "the state is forgotten");
    let again = bcd(&["run"]);
    assert_eq!(again.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&again.stderr).contains("bcd join"), "it says how to join");
}

/// A heartbeat answered `leave` (the node's bare-metal machine was released): bcd stops cleanly
/// and forgets the node, so nothing it kept speaks for the machine any more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bcd_told_to_leave_stops_and_forgets_the_node() {
    let setup = setup_on(System::on(Backend::Postgres).process(&["--node-heartbeat-interval-secs", "1"]).await).await;
    let dir = tempfile::tempdir().unwrap();
    let (state_dir, log) = (dir.path().join("state"), dir.path().join("bcd.log"));
    let mut bcd = Running(setup.join_plaintext(&state_dir, &log).spawn().unwrap());
    let node = eventually(Duration::from_secs(30), "the node to join", || async {
        setup.nodes().await.into_iter().find(|node| node["state"] == "ready")
    })
    .await;
    let node_id = node["id"].as_str().unwrap().to_owned();
    assert!(state_dir.join("node.json").exists());
    // The node as a released machine's: the row the metal reconciler keeps, now releasing.
    sqlx::any::install_default_drivers();
    let mut db = <sqlx::AnyConnection as sqlx::Connection>::connect(&setup.server.database_url).await.unwrap();
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO metal_machines (node_id, pool_id, tenant_id, name, driver, address, username, \
         password_sealed, ca_certificate, insecure, power_state, provision_state, previous_state, rescued_from, \
         last_error, image, created_by, idempotency_key, request_digest, version, created_at, updated_at) \
         VALUES ('{node_id}', '{}', 'acme', 'm1', 'redfish', 'https://127.0.0.1:1', 'admin', '', '', 0, 'on', \
         'releasing', 'deployed', '', '', 'https://images.example/node.iso', 'test', 'm1', '', 1, 1, 1)",
        setup.pool
    )))
    .execute(&mut db)
    .await
    .unwrap();
    let status = poll(Duration::from_secs(30), "bcd to stop when told to leave", || {
        let exited = bcd.0.try_wait().unwrap().ok_or_else(|| read(&log));
        async move { exited }
    })
    .await;
    let output = read(&log);
    assert_eq!(status.code(), Some(0), "a stop asked for is a clean one: {output}");
    assert!(output.contains("asks this machine to leave"), "{output}");
    assert!(!state_dir.join("node.json").exists(), "the node is forgotten");
}
