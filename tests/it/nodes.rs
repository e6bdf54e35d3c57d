//! Nodes through `POST /api/compute/nodes/...`: a join consumes one use of its token in the
//! transaction that records the node (50 racing joins on 5 uses make 5 nodes), a refused join
//! says why once the secret matched (and nothing when it did not), a machine joins its node
//! again with the node's credential, heartbeats carry the cordon, a deleted node's credential is void, the worker (not a
//! reader) finds a silent node, and only the pool's people steer its nodes.

use std::time::Duration;

use better_compute::reconcile::WorkerConfig;
use better_compute::store::{Backend, EventFilter};
use serde_json::{Value, json};

use crate::harness::{OwnPool, System, eventually, tenant_principal};

crate::on_both_backends!(
    a_join_makes_a_ready_node_and_a_machine_joins_its_node_again,
    a_refused_join_says_why_once_the_secret_matched,
    heartbeats_carry_the_cordon_and_a_deleted_nodes_credential_is_void,
    the_worker_marks_a_silent_node_not_ready_and_a_heartbeat_brings_it_back,
    only_the_pools_people_steer_its_nodes,
    the_pools_view_counts_its_nodes_by_state_and_sums_what_the_live_ones_have,
    a_released_machines_daemon_is_told_to_leave,
);

mod postgres_only {
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn fifty_racing_joins_on_five_uses_make_five_nodes() {
        super::fifty_racing_joins_on_five_uses_make_five_nodes().await;
    }
}

const JOIN: &str = "/api/compute/nodes/join";
const HEARTBEAT: &str = "/api/compute/nodes/heartbeat";

/// A server with acme's own pool and acme's admin.
async fn setup(backend: Backend) -> OwnPool {
    System::on(backend).own_pool("own", json!({})).await
}

impl OwnPool {
    /// A token of the pool with `max_uses`: its id and bearer form.
    async fn token(&self, key: &str, max_uses: i64) -> (String, String) {
        let (status, made) = self
            .server
            .post(
                "/api/compute/joinTokens/create",
                Some(&self.admin),
                json!({"poolId": self.pool, "idempotencyKey": key, "maxUses": max_uses, "labels": {"rack": "r1"}}),
            )
            .await;
        assert_eq!(status, 200, "{made}");
        (made["id"].as_str().unwrap().to_owned(), made["token"].as_str().unwrap().to_owned())
    }
}

fn machine(id: &str) -> Value {
    json!({"machineId": id, "hostname": "node-1", "architecture": "amd64", "os": "Debian GNU/Linux 13",
        "kernel": "6.12.0", "bcdVersion": "0.1.0", "labels": {"zone": "a"},
        "capacity": {"cpuMillis": 8000, "memoryBytes": 34359738368_i64, "ephemeralStorageBytes": 107374182400_i64,
            "gpus": [{"model": "NVIDIA L4", "count": 1}]}})
}

async fn a_join_makes_a_ready_node_and_a_machine_joins_its_node_again(backend: Backend) {
    let s = setup(backend).await;
    let (token, bearer) = s.token("two", 2).await;
    let (status, joined) = s.server.post(JOIN, Some(&bearer), machine("0123456789abcdef")).await;
    assert_eq!(status, 200, "{joined}");
    let node = joined["nodeId"].as_str().unwrap().to_owned();
    assert!(node.starts_with("node_") && node.len() == 31, "{node}");
    assert_eq!(joined["poolId"], json!(s.pool));
    assert_eq!(joined["heartbeatIntervalSeconds"], 10);
    let credential = joined["credential"].as_str().unwrap().to_owned();
    assert!(credential.starts_with(&format!("bcn_{}.", &node[5..])), "{credential}");

    let (status, got) = s.as_admin("/api/compute/nodes/get", json!({"poolId": s.pool, "nodeId": node})).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!((got["state"].as_str(), got["cordoned"].as_bool()), (Some("ready"), Some(false)));
    assert_eq!(got["labels"], json!({"rack": "r1", "zone": "a"}), "the token's labels and its own");
    assert_eq!(got["capacity"]["gpus"][0]["model"], "NVIDIA L4");
    assert_eq!(got["joinTokenId"], json!(token));
    assert_eq!(got["address"], "127.0.0.1");
    let (_, used) = s.as_admin("/api/compute/joinTokens/get", json!({"poolId": s.pool, "joinTokenId": token})).await;
    assert_eq!(used["uses"], 1);
    assert_eq!(used["joins"][0]["nodeId"], json!(node));
    assert_eq!(used["joins"][0]["address"], "127.0.0.1");

    // The machine joins its node again, proving it is that node with the node's credential (as
    // bcd does from its state directory): a new credential, the old one void.
    let mut rejoin = machine("0123456789abcdef");
    rejoin["nodeCredential"] = json!(credential);
    let (status, again) = s.server.post(JOIN, Some(&bearer), rejoin).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["nodeId"], json!(node));
    assert_ne!(again["credential"], json!(credential));
    let (status, old) = s.server.post(HEARTBEAT, Some(&credential), json!({"nodeId": node})).await;
    assert_eq!((status, old["error"]["code"].as_str()), (401, Some("UNAUTHENTICATED")), "{old}");
    let fresh = again["credential"].as_str().unwrap();
    let (status, beat) = s.server.post(HEARTBEAT, Some(fresh), json!({"nodeId": node})).await;
    assert_eq!(status, 200, "{beat}");
    let (_, list) = s.as_admin("/api/compute/nodes/list", json!({"poolId": s.pool})).await;
    assert_eq!(list["nodes"].as_array().unwrap().len(), 1, "{list}");
    // Its token is used up now.
    let (_, used) = s.as_admin("/api/compute/joinTokens/get", json!({"poolId": s.pool, "joinTokenId": token})).await;
    assert_eq!((used["uses"].as_i64(), used["state"].as_str()), (Some(2), Some("exhausted")));
    let filter =
        EventFilter { subject: s.pool.clone(), type_prefix: "compute.".into(), limit: 100, ..Default::default() };
    let types: Vec<String> =
        s.server.store.event_list_after(&filter).await.unwrap().into_iter().map(|e| e.event_type).collect();
    assert_eq!(
        types,
        ["compute.joinToken.created", "compute.node.joined", "compute.node.joined", "compute.joinToken.exhausted"]
    );
    s.server.stop().await;
}

async fn a_refused_join_says_why_once_the_secret_matched(backend: Backend) {
    let s = setup(backend).await;
    let (token, bearer) = s.token("one", 1).await;
    let (status, _) = s.server.post(JOIN, Some(&bearer), machine("machine-0001")).await;
    assert_eq!(status, 200);
    let (status, refused) = s.server.post(JOIN, Some(&bearer), machine("machine-0002")).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (401, Some("UNAUTHENTICATED")), "{refused}");
    assert_eq!(refused["error"]["details"]["reason"], "exhausted");
    assert!(refused["error"]["message"].as_str().unwrap().contains("exhausted after 1 uses"), "{refused}");

    let (revoked_id, revoked) = s.token("revoked", 5).await;
    s.as_admin("/api/compute/joinTokens/revoke", json!({"poolId": s.pool, "joinTokenId": revoked_id})).await;
    let (_, refused) = s.server.post(JOIN, Some(&revoked), machine("machine-0003")).await;
    assert_eq!(refused["error"]["details"]["reason"], "revoked", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("was revoked at 20"), "{refused}");

    let (expired_id, expired) = s.token("expired", 5).await;
    s.execute(&format!("UPDATE join_tokens SET expires_at = 1000000 WHERE id = '{expired_id}'")).await;
    let (_, refused) = s.server.post(JOIN, Some(&expired), machine("machine-0004")).await;
    assert_eq!(refused["error"]["details"]["reason"], "expired", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("expired at 1970-01-01T00:00:01Z"), "{refused}");

    // A wrong secret or an unknown token learns nothing of the token.
    let wrong = format!("{}.{}", bearer.split_once('.').unwrap().0, "0".repeat(64));
    let unknown = format!("bcjt_{}.{}", "0".repeat(26), "0".repeat(64));
    for (what, credential) in
        [("a wrong secret", wrong.as_str()), ("an unknown token", &unknown), ("an API key", &s.admin)]
    {
        let (status, refused) = s.server.post(JOIN, Some(credential), machine("machine-0005")).await;
        assert_eq!(status, 401, "{what}: {refused}");
        assert_eq!(refused["error"]["message"], "invalid join token", "{what}");
        assert!(refused["error"]["details"]["reason"].is_null(), "{what}: {refused}");
        assert!(!refused.to_string().contains(&token), "{what}: {refused}");
    }
    let (_, list) = s.as_admin("/api/compute/nodes/list", json!({"poolId": s.pool})).await;
    assert_eq!(list["nodes"].as_array().unwrap().len(), 1, "{list}");
    s.server.stop().await;
}

async fn heartbeats_carry_the_cordon_and_a_deleted_nodes_credential_is_void(backend: Backend) {
    let s = setup(backend).await;
    let (_, bearer) = s.token("k", 1).await;
    let (_, joined) = s.server.post(JOIN, Some(&bearer), machine("machine-0001")).await;
    let node = joined["nodeId"].as_str().unwrap().to_owned();
    let credential = joined["credential"].as_str().unwrap().to_owned();
    let beat = || async {
        let body = json!({"nodeId": node, "capacity": {"cpuMillis": 4000},
            "conditions": [{"type": "DiskPressure", "status": "False"}]});
        s.server.post(HEARTBEAT, Some(&credential), body).await
    };
    let (status, answer) = beat().await;
    assert_eq!((status, answer["cordoned"].as_bool(), answer["state"].as_str()), (200, Some(false), Some("ready")));
    let one = json!({"poolId": s.pool, "nodeId": node});
    let (status, cordoned) = s.as_admin("/api/compute/nodes/cordon", one.clone()).await;
    assert_eq!((status, cordoned["cordoned"].as_bool()), (200, Some(true)), "{cordoned}");
    assert_eq!(beat().await.1["cordoned"], true, "the daemon learns the cordon from its heartbeat");
    s.as_admin("/api/compute/nodes/uncordon", one.clone()).await;
    assert_eq!(beat().await.1["cordoned"], false);
    let (_, got) = s.as_admin("/api/compute/nodes/get", one.clone()).await;
    assert_eq!(got["conditions"][0]["type"], "DiskPressure");
    assert_eq!(got["capacity"]["cpuMillis"], 4000);

    // Another node's credential speaks only for its own node.
    let (status, other) =
        s.server.post(HEARTBEAT, Some(&credential), json!({"nodeId": format!("node_{}", "0".repeat(26))})).await;
    assert_eq!(status, 403, "{other}");

    let (status, deleted) = s.as_admin("/api/compute/nodes/delete", one.clone()).await;
    assert_eq!((status, deleted["state"].as_str()), (200, Some("deleted")), "{deleted}");
    let (status, refused) = beat().await;
    assert_eq!((status, refused["error"]["details"]["reason"].as_str()), (401, Some("deleted")), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("was deleted"), "{refused}");
    let (status, again) = s.as_admin("/api/compute/nodes/delete", one).await;
    assert_eq!((status, again["deletedAt"].clone()), (200, deleted["deletedAt"].clone()), "a deleted node as it is");
    s.server.stop().await;
}

async fn the_worker_marks_a_silent_node_not_ready_and_a_heartbeat_brings_it_back(backend: Backend) {
    let s = setup(backend).await;
    let (_, bearer) = s.token("k", 1).await;
    let (_, joined) = s.server.post(JOIN, Some(&bearer), machine("machine-0001")).await;
    let node = joined["nodeId"].as_str().unwrap().to_owned();
    let one = json!({"poolId": s.pool, "nodeId": node});
    // Its last heartbeat a minute ago: more than three of its 10 s intervals. A reader still
    // sees it ready: only the worker decides.
    s.execute(&format!("UPDATE nodes SET last_heartbeat_at = last_heartbeat_at - 60000000 WHERE id = '{node}'")).await;
    assert_eq!(s.as_admin("/api/compute/nodes/get", one.clone()).await.1["state"], "ready");
    let config = WorkerConfig { node_liveness_interval: Duration::from_millis(100), ..WorkerConfig::default() };
    // The liveness sweep is one of the worker's own kinds: no resource reconciler is needed.
    let running = s.server.start_worker(config, Vec::new());
    eventually(Duration::from_secs(20), "the node notReady", || async {
        (s.as_admin("/api/compute/nodes/get", one.clone()).await.1["state"] == "notReady").then_some(())
    })
    .await;
    let credential = joined["credential"].as_str().unwrap();
    let (status, beat) = s.server.post(HEARTBEAT, Some(credential), json!({"nodeId": node})).await;
    assert_eq!((status, beat["state"].as_str()), (200, Some("ready")), "{beat}");
    let filter =
        EventFilter { subject: s.pool.clone(), type_prefix: "compute.node.".into(), limit: 100, ..Default::default() };
    let types: Vec<String> =
        s.server.store.event_list_after(&filter).await.unwrap().into_iter().map(|e| e.event_type).collect();
    assert_eq!(types, ["compute.node.joined", "compute.node.notReady", "compute.node.ready"]);
    running.stop().await.unwrap();
    s.server.stop().await;
}

async fn only_the_pools_people_steer_its_nodes(backend: Backend) {
    let s = setup(backend).await;
    let (_, bearer) = s.token("k", 1).await;
    let (_, joined) = s.server.post(JOIN, Some(&bearer), machine("machine-0001")).await;
    let node = joined["nodeId"].as_str().unwrap().to_owned();
    let globex = tenant_principal(&s.server.store, "globex", "admin").await;
    let viewer = tenant_principal(&s.server.store, "acme", "viewer").await;
    for path in ["list", "get", "cordon", "uncordon", "delete"] {
        let path = format!("/api/compute/nodes/{path}");
        for (who, caller, pool) in [("globex's admin", &globex, &s.pool), ("acme's admin", &s.admin, &s.offered)] {
            let body =
                if path.ends_with("list") { json!({"poolId": pool}) } else { json!({"poolId": pool, "nodeId": node}) };
            let (status, refused) = s.server.post(&path, Some(caller), body).await;
            assert_eq!((status, refused["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{who} {path}");
        }
    }
    let (status, _) = s.server.post("/api/compute/nodes/list", Some(&viewer), json!({"poolId": s.pool})).await;
    assert_eq!(status, 200, "acme's viewer reads its pool's nodes");
    let (status, _) =
        s.server.post("/api/compute/nodes/cordon", Some(&viewer), json!({"poolId": s.pool, "nodeId": node})).await;
    assert_eq!(status, 403, "but does not steer them");
    s.server.stop().await;
}

async fn fifty_racing_joins_on_five_uses_make_five_nodes() {
    let s = setup(Backend::Postgres).await;
    let (token, bearer) = s.token("five", 5).await;
    let mut joins = tokio::task::JoinSet::new();
    let http = reqwest::Client::new();
    for i in 0..50 {
        let request = http
            .post(format!("{}{JOIN}", s.server.endpoint))
            .bearer_auth(&bearer)
            .json(&machine(&format!("machine-{i:04}")));
        joins.spawn(async move {
            let response = request.send().await.unwrap();
            (response.status().as_u16(), response.json::<Value>().await.unwrap())
        });
    }
    let answers = joins.join_all().await;
    let joined = answers.iter().filter(|(status, _)| *status == 200).count();
    let exhausted =
        answers.iter().filter(|(status, a)| *status == 401 && a["error"]["details"]["reason"] == "exhausted").count();
    assert_eq!((joined, exhausted), (5, 45), "{answers:?}");
    let (_, list) = s.as_admin("/api/compute/nodes/list", json!({"poolId": s.pool})).await;
    assert_eq!(list["nodes"].as_array().unwrap().len(), 5);
    let (_, used) = s.as_admin("/api/compute/joinTokens/get", json!({"poolId": s.pool, "joinTokenId": token})).await;
    assert_eq!((used["uses"].as_i64(), used["joins"].as_array().map(Vec::len)), (Some(5), Some(5)));
    s.server.stop().await;
}

async fn the_pools_view_counts_its_nodes_by_state_and_sums_what_the_live_ones_have(backend: Backend) {
    let s = setup(backend).await;
    let (_, bearer) = s.token("three", 3).await;
    let mut joined = Vec::new();
    for id in ["machine-0001", "machine-0002", "machine-0003"] {
        let (status, answer) = s.server.post(JOIN, Some(&bearer), machine(id)).await;
        assert_eq!(status, 200, "{answer}");
        joined.push(answer);
    }
    let (status, left) = s
        .server
        .post("/api/compute/nodes/leave", joined[2]["credential"].as_str(), json!({"nodeId": joined[2]["nodeId"]}))
        .await;
    assert_eq!(status, 200, "{left}");
    s.as_admin("/api/compute/nodes/cordon", json!({"poolId": s.pool, "nodeId": joined[0]["nodeId"]})).await;

    let expected = json!({"ready": 2, "notReady": 0, "left": 1, "deleted": 0, "cordoned": 1, "unhealthy": 0,
        "remediationPaused": "",
        "capacity": {"cpuMillis": 16000, "memoryBytes": 2 * 34359738368_i64, "ephemeralStorageBytes": 2 * 107374182400_i64,
            "gpus": [{"model": "NVIDIA L4", "count": 2}]}});
    let (status, pool) = s.as_admin("/api/compute/pools/get", json!({"tenantId": "acme", "poolId": s.pool})).await;
    assert_eq!(status, 200, "{pool}");
    let mut nodes = pool["nodes"].clone();
    nodes.as_object_mut().unwrap().remove("allocatable");
    assert_eq!(nodes, expected, "the tenant's view of its pool");
    let operator = s.server.admin_ok("/api/platform/pools/get", json!({"poolId": s.pool})).await;
    assert_eq!(operator["nodes"]["ready"], 2, "the operator's view: {operator}");
    assert_eq!(operator["nodes"]["capacity"], expected["capacity"]);
    let (_, listed) = s.as_admin("/api/compute/pools/list", json!({"tenantId": "acme"})).await;
    assert!(
        listed["pools"].as_array().unwrap().iter().all(|pool| pool.get("nodes").is_none()),
        "on get only: {listed}"
    );
    s.server.stop().await;
}

/// A bare-metal machine's node whose machine is no longer deployed (released, or on its way)
/// is answered `leave`, and its heartbeat is not recorded; deployed, it heartbeats as any node.
async fn a_released_machines_daemon_is_told_to_leave(backend: Backend) {
    let s = setup(backend).await;
    let (_, bearer) = s.token("k", 1).await;
    let (_, joined) = s.server.post(JOIN, Some(&bearer), machine("machine-0001")).await;
    let node = joined["nodeId"].as_str().unwrap().to_owned();
    let credential = joined["credential"].as_str().unwrap().to_owned();
    // The node as a machine's: the row the metal reconciler keeps, in the state each step sets.
    s.execute(&format!(
        "INSERT INTO metal_machines (node_id, pool_id, tenant_id, name, driver, address, username, \
         password_sealed, ca_certificate, insecure, power_state, provision_state, previous_state, rescued_from, \
         last_error, image, created_by, idempotency_key, request_digest, version, created_at, updated_at) \
         VALUES ('{node}', '{}', 'acme', 'm1', 'redfish', 'https://127.0.0.1:1', 'admin', '', '', 0, 'on', \
         'deployed', 'deploying', '', '', 'https://images.example/node.iso', 'test', 'm1', '', 1, 1, 1)",
        s.pool
    ))
    .await;
    let beat = || async { s.server.post(HEARTBEAT, Some(&credential), json!({"nodeId": node})).await };
    let (status, deployed) = beat().await;
    assert_eq!((status, deployed["leave"].as_bool()), (200, Some(false)), "{deployed}");
    let before = s.as_admin("/api/compute/nodes/get", json!({"poolId": s.pool, "nodeId": node})).await.1;
    s.execute(&format!("UPDATE metal_machines SET provision_state = 'releasing' WHERE node_id = '{node}'")).await;
    let (status, released) = beat().await;
    assert_eq!((status, released["leave"].as_bool()), (200, Some(true)), "{released}");
    let after = s.as_admin("/api/compute/nodes/get", json!({"poolId": s.pool, "nodeId": node})).await.1;
    assert_eq!(
        after["lastHeartbeatAt"], before["lastHeartbeatAt"],
        "the heartbeat of a released machine is not recorded"
    );
    s.server.stop().await;
}
