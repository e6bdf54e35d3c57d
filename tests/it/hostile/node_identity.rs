//! Who a joining machine is, as a hostile holder of a pool's join token meets it: a live node
//! (or a bare-metal machine's node) is joined again only by the machine that proves it is that
//! node, with the node's credential or a token made for its machine id; the quantities a node
//! reports are held to what hardware has, and the pool's sum of them never overflows; and `bcd`
//! never sends a join token over plain HTTP unless told to, nor ignores a CA pin.

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::{DO_TOKEN, OwnPool, Running, System, bcd_binary, eventually};

crate::on_both_backends!(
    another_token_of_the_pool_cannot_take_over_a_live_node,
    a_metal_machines_node_is_joined_only_with_the_token_made_for_it,
    a_node_reports_no_more_than_hardware_has_and_the_pools_sum_never_overflows,
);

const JOIN: &str = "/api/compute/nodes/join";
const HEARTBEAT: &str = "/api/compute/nodes/heartbeat";

fn machine(id: &str, hostname: &str, labels: Value) -> Value {
    json!({"machineId": id, "hostname": hostname, "architecture": "amd64", "labels": labels,
        "capacity": {"cpuMillis": 8000, "memoryBytes": 34359738368_i64, "ephemeralStorageBytes": 107374182400_i64,
            "gpus": [{"model": "NVIDIA L4", "count": 1}]}})
}

/// A token of the metal setup's pool (acme's own) with `max_uses`: its id and bearer form.
async fn token(s: &OwnPool, key: &str, max_uses: i64) -> (String, String) {
    let (status, made) = s
        .as_admin(
            "/api/compute/joinTokens/create",
            json!({"poolId": s.pool, "idempotencyKey": key, "maxUses": max_uses, "labels": {"rack": "r1"}}),
        )
        .await;
    assert_eq!(status, 200, "{made}");
    (made["id"].as_str().unwrap().to_owned(), made["token"].as_str().unwrap().to_owned())
}

async fn node(s: &OwnPool, id: &str) -> Value {
    let (status, node) = s.as_admin("/api/compute/nodes/get", json!({"poolId": s.pool, "nodeId": id})).await;
    assert_eq!(status, 200, "{node}");
    node
}

async fn uses(s: &OwnPool, token: &str) -> i64 {
    let (_, got) = s.as_admin("/api/compute/joinTokens/get", json!({"poolId": s.pool, "joinTokenId": token})).await;
    got["uses"].as_i64().unwrap()
}

async fn another_token_of_the_pool_cannot_take_over_a_live_node(backend: Backend) {
    let s = System::on(backend).own_pool("metal", json!({})).await;
    let (_, victims) = token(&s, "victim", 3).await;
    let (attackers_id, attackers) = token(&s, "attacker", 3).await;
    let (status, joined) =
        s.server.post(JOIN, Some(&victims), machine("victim-machine-0001", "victim", json!({}))).await;
    assert_eq!(status, 200, "{joined}");
    let node_id = joined["nodeId"].as_str().unwrap().to_owned();
    let credential = joined["credential"].as_str().unwrap().to_owned();

    // Another token of the pool, the victim's machine id: refused, and nothing changes.
    let hostile = machine("victim-machine-0001", "attacker", json!({"evil": "yes"}));
    let (status, refused) = s.server.post(JOIN, Some(&attackers), hostile.clone()).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("victim-machine-0001") && message.contains("credential"), "{message}");
    assert!(message.contains("delete"), "it says how to join this machine anew: {message}");
    assert_eq!(refused["error"]["details"]["machineId"], "victim-machine-0001", "{refused}");
    assert!(!refused.to_string().contains(credential.split_once('.').unwrap().1), "{refused}");
    assert_eq!(uses(&s, &attackers_id).await, 0, "a refused join uses nothing of its token");
    let kept = node(&s, &node_id).await;
    assert_eq!((kept["hostname"].as_str(), kept["labels"].get("evil")), (Some("victim"), None), "{kept}");
    let (status, beat) = s.server.post(HEARTBEAT, Some(&credential), json!({"nodeId": node_id})).await;
    assert_eq!(status, 200, "the real node's credential still speaks for it: {beat}");

    // A credential that is not the node's proves nothing, not even another node's of the pool.
    let (_, other) = s.server.post(JOIN, Some(&victims), machine("other-machine-0001", "other", json!({}))).await;
    let wrong_secret = format!("{}.{}", credential.split_once('.').unwrap().0, "0".repeat(64));
    for presented in [other["credential"].as_str().unwrap(), wrong_secret.as_str(), "bcn_garbage"] {
        let mut body = hostile.clone();
        body["nodeCredential"] = json!(presented);
        let (status, refused) = s.server.post(JOIN, Some(&attackers), body).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{refused}");
    }
    assert_eq!(uses(&s, &attackers_id).await, 0);

    // The machine itself, presenting its credential, joins its node again: the old one is void.
    let mut again = machine("victim-machine-0001", "victim", json!({}));
    again["nodeCredential"] = json!(credential);
    let (status, rejoined) = s.server.post(JOIN, Some(&victims), again).await;
    assert_eq!((status, rejoined["nodeId"].as_str()), (200, Some(node_id.as_str())), "{rejoined}");
    let (status, _) = s.server.post(HEARTBEAT, Some(&credential), json!({"nodeId": node_id})).await;
    assert_eq!(status, 401, "the old credential is void once the node joined again");

    // A node that left has no daemon to speak for it: joining its machine again makes a new
    // node, never the old one.
    let fresh = rejoined["credential"].as_str().unwrap();
    let (status, _) = s.server.post("/api/compute/nodes/leave", Some(fresh), json!({"nodeId": node_id})).await;
    assert_eq!(status, 200);
    let (status, anew) = s.server.post(JOIN, Some(&attackers), hostile).await;
    assert_eq!(status, 200, "{anew}");
    assert_ne!(anew["nodeId"], json!(node_id), "{anew}");
    let old = node(&s, &node_id).await;
    assert_eq!((old["state"].as_str(), old["hostname"].as_str()), (Some("left"), Some("victim")), "{old}");
    s.server.stop().await;
}

async fn a_metal_machines_node_is_joined_only_with_the_token_made_for_it(backend: Backend) {
    let s = System::on(backend).own_pool("metal", json!({})).await;
    let enrolled = s.enroll("rack1-1").await;
    let node_id = enrolled["id"].as_str().unwrap().to_owned();
    // The machine id anyone who lists the pool's nodes sees.
    let machine_id = node(&s, &node_id).await["machineId"].as_str().unwrap().to_owned();
    let (token_id, bearer) = token(&s, "attacker", 2).await;
    let (status, refused) =
        s.server.post(JOIN, Some(&bearer), machine(&machine_id, "attacker", json!({"evil": "yes"}))).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains(&machine_id), "{refused}");
    assert_eq!(uses(&s, &token_id).await, 0);
    let kept = node(&s, &node_id).await;
    assert_eq!((kept["state"].as_str(), kept["hostname"].as_str()), (Some("enrolled"), Some("rack1-1")), "{kept}");

    // A token made for the machine (as a deploy makes it) joins it, and no other machine id.
    let bound = bound_token(&s, &machine_id).await;
    let (status, refused) = s.server.post(JOIN, Some(&bound), machine("some-other-machine", "m", json!({}))).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains(&machine_id), "{refused}");
    let (status, joined) = s.server.post(JOIN, Some(&bound), machine(&machine_id, "rack1-1", json!({}))).await;
    assert_eq!((status, joined["nodeId"].as_str()), (200, Some(node_id.as_str())), "{joined}");
    assert_eq!(node(&s, &node_id).await["state"], "ready");
    // Deployed, the machine's node is as safe from the pool's other tokens as any live node.
    let (status, refused) = s.server.post(JOIN, Some(&bearer), machine(&machine_id, "attacker", json!({}))).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{refused}");
    s.server.stop().await;
}

/// A one-use token of the setup's pool made for `machine_id`, as a metal deploy makes one: its
/// bearer form.
async fn bound_token(s: &OwnPool, machine_id: &str) -> String {
    use better_compute::bearer::Bearer;
    use better_compute::ids::JoinTokenId;
    let bearer: Bearer<JoinTokenId> = Bearer::generate();
    let now = better_compute::store::now_micros();
    let pool = s.server.store.pool_fetch(&s.pool).await.unwrap();
    let token = better_compute::store::JoinTokenRow {
        id: bearer.id.to_string(),
        pool_id: pool.id,
        tenant_id: pool.tenant_id,
        description: "a deploy's".into(),
        max_uses: 1,
        uses: 0,
        expires_at: now + 600_000_000,
        labels: Default::default(),
        taints: Vec::new(),
        secret_sha256: bearer.secret_sha256(),
        created_by: "reconciler:metal.machines".into(),
        idempotency_key: String::new(),
        request_digest: String::new(),
        created_at: now,
        revoked_at: None,
        last_used_at: None,
        joins: Vec::new(),
        machine_id: Some(machine_id.to_owned()),
    };
    s.server.store.join_token_create(&token).await.unwrap();
    bearer.reveal()
}

async fn a_node_reports_no_more_than_hardware_has_and_the_pools_sum_never_overflows(backend: Backend) {
    let s = System::on(backend).own_pool("metal", json!({})).await;
    let (_, bearer) = token(&s, "three", 3).await;
    let huge = 1_i64 << 62;
    for (field, path) in [
        ("capacity.cpuMillis", "/capacity/cpuMillis"),
        ("capacity.memoryBytes", "/capacity/memoryBytes"),
        ("capacity.ephemeralStorageBytes", "/capacity/ephemeralStorageBytes"),
    ] {
        let mut body = machine("machine-0001", "n1", json!({}));
        *body.pointer_mut(path).unwrap() = json!(huge);
        let (status, refused) = s.server.post(JOIN, Some(&bearer), body).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{field}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains(field) && message.contains("at most"), "{field}: {message}");
    }
    let mut joined = Vec::new();
    for id in ["machine-0001", "machine-0002"] {
        let (status, answer) = s.server.post(JOIN, Some(&bearer), machine(id, "n1", json!({}))).await;
        assert_eq!(status, 200, "{answer}");
        joined.push(answer);
    }
    let (node_id, credential) = (joined[0]["nodeId"].clone(), joined[0]["credential"].as_str().unwrap().to_owned());
    for (field, body) in [
        ("capacity.cpuMillis", json!({"nodeId": node_id, "capacity": {"cpuMillis": huge}})),
        ("allocatable.memoryBytes", json!({"nodeId": node_id, "allocatable": {"memoryBytes": huge}})),
        ("capacity.ephemeralStorageBytes", json!({"nodeId": node_id, "capacity": {"ephemeralStorageBytes": huge}})),
    ] {
        let (status, refused) = s.server.post(HEARTBEAT, Some(&credential), body).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{field}: {refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains(field), "{field}: {refused}");
    }
    let pool = || async {
        let (status, pool) = s.as_admin("/api/compute/pools/get", json!({"tenantId": "acme", "poolId": s.pool})).await;
        assert_eq!(status, 200, "{pool}");
        pool["nodes"].clone()
    };
    let nodes = pool().await;
    assert_eq!(nodes["capacity"]["cpuMillis"], 16000, "the refused reports changed nothing: {nodes}");
    assert_eq!(nodes["capacity"]["memoryBytes"], 2 * 34359738368_i64, "{nodes}");

    // Nodes recorded before the bounds held (as the store may still have them) are summed
    // without overflow: the sum stops at the largest figure rather than wrapping or failing.
    let planted = json!({"cpuMillis": huge, "memoryBytes": huge, "ephemeralStorageBytes": huge,
        "gpus": [["NVIDIA L4", i32::MAX]]})
    .to_string();
    s.execute(&format!(
        "UPDATE nodes SET capacity = '{planted}', allocatable = '{planted}' WHERE pool_id = '{}'",
        s.pool
    ))
    .await;
    let nodes = pool().await;
    for what in ["capacity", "allocatable"] {
        assert_eq!(nodes[what]["cpuMillis"], i64::MAX, "{nodes}");
        assert_eq!(nodes[what]["memoryBytes"], i64::MAX, "{nodes}");
        assert_eq!(nodes[what]["gpus"][0]["count"], i32::MAX, "{nodes}");
    }
    s.server.stop().await;
}

/// A listener that no server answers on: whether anything ever connected to it.
struct Silent(TcpListener);

impl Silent {
    fn new() -> Silent {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Silent(listener)
    }

    fn endpoint(&self) -> String {
        format!("http://{}", self.0.local_addr().unwrap())
    }

    /// The bytes that reached it (a connection the kernel completed is still waiting in the
    /// backlog after bcd exited).
    fn received(&self) -> Vec<u8> {
        let mut received = Vec::new();
        while let Ok((mut stream, _)) = self.0.accept() {
            stream.set_nonblocking(false).unwrap();
            stream.set_read_timeout(Some(Duration::from_millis(500))).unwrap();
            let _ = stream.read_to_end(&mut received);
        }
        received
    }
}

fn bcd_join(state_dir: &Path, args: &[&str]) -> std::process::Output {
    Command::new(bcd_binary())
        .args(["join", "--machine-id", "plain-machine-0001", "--state-dir"])
        .arg(state_dir)
        .args(args)
        .env("BCD_TOKEN", format!("bcjt_{}.{}", "0".repeat(26), "a".repeat(64)))
        .env_remove("BCD_CA_SHA256")
        .env_remove("BCD_INSECURE_PLAINTEXT")
        .output()
        .unwrap()
}

#[test]
fn bcd_with_a_ca_pin_and_a_plain_endpoint_refuses_and_sends_nothing() {
    let listener = Silent::new();
    let dir = tempfile::tempdir().unwrap();
    let pin = better_compute::tls::LocalCa::generate("a CA").unwrap().sha256();
    // Even told that plain HTTP is fine, a pin says the caller meant TLS: nothing is sent.
    for plaintext in [&[][..], &["--insecure-plaintext"][..]] {
        let endpoint = listener.endpoint();
        let mut args = vec!["--endpoint", endpoint.as_str(), "--ca-sha256", pin.as_str()];
        args.extend(plaintext);
        let out = bcd_join(&dir.path().join("state"), &args);
        let said = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
        assert!(!out.status.success(), "{plaintext:?}: {said}");
        assert!(said.contains("--ca-sha256 pins") && said.contains("https://"), "it says why: {said}");
        assert!(
            listener.received().is_empty(),
            "{plaintext:?}: bcd sent something to a plain endpoint despite the pin"
        );
        assert!(!said.contains(&"a".repeat(64)), "{said}");
    }
}

#[test]
fn bcd_sends_a_join_token_over_plain_http_only_when_told_to() {
    let listener = Silent::new();
    let dir = tempfile::tempdir().unwrap();
    let out = bcd_join(&dir.path().join("state"), &["--endpoint", &listener.endpoint()]);
    let said = String::from_utf8_lossy(&out.stderr).into_owned() + &String::from_utf8_lossy(&out.stdout);
    assert!(!out.status.success(), "{said}");
    assert!(said.contains("--insecure-plaintext") && said.contains("http://"), "it says how: {said}");
    assert!(listener.received().is_empty(), "bcd sent the token over plain HTTP unasked");
}

/// `bcd join` run again on a machine whose state directory holds its node presents the node's
/// credential, and so joins that node again; the same machine id without it is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bcd_joining_again_from_its_state_presents_its_nodes_credential() {
    let server = System::on(Backend::Postgres).process(&["--node-heartbeat-interval-secs", "1"]).await;
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
        .await;
    let pool = pool["id"].as_str().unwrap().to_owned();
    let made = server
        .ok("/api/compute/joinTokens/create", &operator, json!({"poolId": pool, "idempotencyKey": "k", "maxUses": 3}))
        .await;
    let token = made["token"].as_str().unwrap().to_owned();
    let dir = tempfile::tempdir().unwrap();
    let join = |state: &str, log: &str| {
        let log = std::fs::File::create(dir.path().join(log)).unwrap();
        let mut command = Command::new(bcd_binary());
        command
            .args(["join", "--endpoint", &server.endpoint, "--insecure-plaintext"])
            .args(["--machine-id", "again-machine-0001", "--state-dir"])
            .arg(dir.path().join(state))
            .env("BCD_TOKEN", &token)
            .stdout(Stdio::from(log.try_clone().unwrap()))
            .stderr(Stdio::from(log));
        command
    };
    let nodes = || async {
        let listed = server.ok("/api/compute/nodes/list", &operator, json!({"poolId": pool})).await;
        listed["nodes"].as_array().cloned().unwrap_or_default()
    };
    let first = Running(join("state", "first.log").spawn().unwrap());
    let node = eventually(Duration::from_secs(30), "the node to join", || async {
        nodes().await.into_iter().find(|node| node["state"] == "ready")
    })
    .await;
    assert!(first.terminate().success());
    let version = node["version"].as_i64().unwrap();

    let second = Running(join("state", "second.log").spawn().unwrap());
    let rejoined = eventually(Duration::from_secs(30), "the node to join again", || async {
        nodes().await.into_iter().find(|again| again["version"].as_i64() > Some(version))
    })
    .await;
    assert_eq!((rejoined["id"].clone(), rejoined["state"].as_str()), (node["id"].clone(), Some("ready")));
    assert!(second.terminate().success());
    assert_eq!(nodes().await.len(), 1);

    // Another state directory (the machine reinstalled, or another claiming its id): refused.
    let mut third = Running(join("elsewhere", "third.log").spawn().unwrap());
    let status = third.wait_exit(Duration::from_secs(30)).await;
    let said = std::fs::read_to_string(dir.path().join("third.log")).unwrap();
    assert_eq!(status.code(), Some(1), "{said}");
    assert!(said.contains("ACCESS_DENIED") && said.contains("again-machine-0001"), "{said}");
    assert_eq!(nodes().await.len(), 1);
}

/// `bcctl dev` without TLS prints a `bcd join` line that says it sends the token in clear
/// (`--insecure-plaintext`), and that line, run as printed, joins.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_dev_without_tls_prints_a_join_line_that_says_it_is_plaintext() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, dev) = System::on(Backend::Sqlite).dev(&dir.path().join(".bc-dev"));
    assert!(dev["endpoint"].as_str().unwrap().starts_with("http://"), "{dev}");
    let pool = dev["pools"]["digitalocean"].as_str().unwrap().to_owned();
    let bcctl = |args: &[&str]| {
        let mut command = Command::new(env!("CARGO_BIN_EXE_bcctl"));
        command.current_dir(dir.path()).args(args);
        for variable in ["BC_ENDPOINT", "BC_TOKEN", "BC_CA_SHA256", "BC_CONFIG"] {
            command.env_remove(variable);
        }
        String::from_utf8(crate::harness::run_ok(&mut command).stdout).unwrap()
    };
    let created = bcctl(&["jointokens", "create", "--pool", &pool]);
    let line = created.lines().find(|line| line.trim_start().starts_with("bcd join")).expect(&created);
    assert!(line.contains(" --insecure-plaintext ") && !line.contains("--ca-sha256"), "{line}");
    let printed: Vec<&str> = line.split_whitespace().skip(1).collect();
    let log = std::fs::File::create(dir.path().join("bcd.log")).unwrap();
    let _bcd = Running(
        Command::new(bcd_binary())
            .args(&printed)
            .args(["--machine-id", "plain-dev-machine-0001", "--state-dir"])
            .arg(dir.path().join("bcd"))
            .env_remove("BCD_INSECURE_PLAINTEXT")
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
