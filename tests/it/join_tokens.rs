//! Join tokens through `POST /api/compute/joinTokens/...`: the bearer form shown once, retries
//! and reused keys, the bounds of a create, revocation, who may decide on a pool's tokens (its
//! tenant's admins and operators, nobody it is only offered to), and a secret that reaches no
//! event, audit row or log line.

use better_compute::store::{AuditFilter, Backend, EventFilter, EventRow, Store};
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::harness::{Client, DO_TOKEN, Platform, System, TestServer, tenant_principal, violated_fields};

crate::on_both_backends!(
    a_token_is_shown_once_and_a_retry_says_so,
    a_create_out_of_bounds_is_refused_naming_the_field,
    a_revoked_token_stays_revoked_and_lists_newest_first,
    revoking_an_expired_token_returns_it_as_it_is,
    only_the_pools_tenant_admins_and_operators_decide,
);

const CREATE: &str = "/api/compute/joinTokens/create";
const LIST: &str = "/api/compute/joinTokens/list";
const GET: &str = "/api/compute/joinTokens/get";
const REVOKE: &str = "/api/compute/joinTokens/revoke";

/// The platform of the catalog tests, plus a DigitalOcean account and pool of acme's own.
struct Pools {
    /// acme's own pool.
    own: String,
    /// A platform pool offered to acme.
    offered: String,
}

async fn pools(client: &Client<'_>) -> Pools {
    let platform = Platform::create(client).await;
    let account = client
        .ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": DO_TOKEN,
                "regions": ["nyc3"]}),
        )
        .await;
    let own = client
        .ok("/api/platform/pools/create", json!({"accountId": account["id"], "name": "own", "billingMode": "none"}))
        .await;
    Pools { own: own["id"].as_str().unwrap().to_owned(), offered: platform.do_pool }
}

/// The join token events on a pool's subject, oldest first.
async fn token_events(store: &Store, pool: &str) -> Vec<EventRow> {
    let filter = EventFilter {
        type_prefix: "compute.joinToken.".to_owned(),
        subject: pool.to_owned(),
        limit: 100,
        ..Default::default()
    };
    store.event_list_after(&filter).await.unwrap()
}

async fn post(server: &TestServer, token: &str, path: &str, body: Value) -> (u16, Value) {
    server.post(path, Some(token), body).await
}

async fn a_token_is_shown_once_and_a_retry_says_so(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let pools = pools(&client).await;
    let admin = tenant_principal(&server.store, "acme", "admin").await;
    let body = json!({"poolId": pools.own, "description": "rack 4", "labels": {"rack": "r4"},
        "taints": [{"key": "dedicated", "value": "ci", "effect": "NoSchedule"}], "idempotencyKey": "rack-4"});
    let (status, made) = post(&server, &admin, CREATE, body.clone()).await;
    assert_eq!(status, 200, "{made}");
    let id = made["id"].as_str().unwrap();
    assert!(id.starts_with("jt_") && id.len() == 29, "{id}");
    let bearer = made["token"].as_str().unwrap();
    let (head, secret) = bearer.split_once('.').unwrap();
    assert_eq!(head, format!("bcjt_{}", &id[3..]), "the bearer names the token");
    assert_eq!(made["state"], "active");
    assert_eq!((made["maxUses"].as_i64(), made["uses"].as_i64()), (Some(1), Some(0)), "one use by default");
    assert_eq!(made["labels"], json!({"rack": "r4"}));
    assert_eq!(made["taints"][0]["effect"], "NoSchedule");
    assert_eq!(made["tokenNotice"], "");
    assert!(made["expiresAt"].is_string() && made["revokedAt"].is_null(), "{made}");

    // Only the SHA-256 of the secret is kept; the token lives a day by default.
    let stored = server.store.join_token_fetch(id).await.unwrap().unwrap();
    assert_eq!(stored.expires_at - stored.created_at, 86_400 * 1_000_000);
    let digest: String = Sha256::digest(secret.as_bytes()).iter().map(|b| format!("{b:02x}")).collect();
    assert_eq!(stored.secret_sha256, digest);

    // A retry, also one spelling out the defaults, is the same token without its bearer form.
    let mut spelled = body.clone();
    spelled["maxUses"] = json!(1);
    spelled["ttlSeconds"] = json!(86_400);
    for retry in [body.clone(), spelled] {
        let (status, again) = post(&server, &admin, CREATE, retry).await;
        assert_eq!(status, 200, "{again}");
        assert_eq!(again["id"], made["id"]);
        assert_eq!(again["token"], "", "the secret is never shown again");
        assert!(again["tokenNotice"].as_str().unwrap().contains("never shown again"), "{again}");
    }
    // The same key for another request is a conflict that names the token.
    let mut changed = body.clone();
    changed["maxUses"] = json!(5);
    let (status, conflict) = post(&server, &admin, CREATE, changed).await;
    assert_eq!(status, 409, "{conflict}");
    assert_eq!(conflict["error"]["details"]["reason"], "idempotencyKeyReused");
    assert_eq!(conflict["error"]["details"]["joinTokenId"], made["id"]);
    assert!(!conflict.to_string().contains(secret));

    let (status, got) = post(&server, &admin, GET, json!({"poolId": pools.own, "joinTokenId": id})).await;
    assert_eq!(status, 200, "{got}");
    assert_eq!((got["token"].as_str(), got["joins"].as_array().map(Vec::len)), (Some(""), Some(0)));
    server.stop().await;
}

async fn a_create_out_of_bounds_is_refused_naming_the_field(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let pools = pools(&client).await;
    let admin = tenant_principal(&server.store, "acme", "admin").await;
    let cases = [
        (json!({"ttlSeconds": 599}), "ttlSeconds"),
        (json!({"ttlSeconds": 2_592_001}), "ttlSeconds"),
        (json!({"maxUses": 10_001}), "maxUses"),
        (json!({"maxUses": -1}), "maxUses"),
        (json!({"labels": {"Bad Key": "x"}}), "labels"),
        (json!({"taints": [{"key": "a", "effect": "Sometimes"}]}), "taints[0].effect"),
        (json!({"description": "d".repeat(257)}), "description"),
    ];
    for (fields, named) in cases {
        let mut body = json!({"poolId": pools.own, "idempotencyKey": "bounds"});
        body.as_object_mut().unwrap().extend(fields.as_object().unwrap().clone());
        let (status, refused) = post(&server, &admin, CREATE, body.clone()).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{body}: {refused}");
        let fields = violated_fields(&refused["error"]["details"]);
        assert!(fields.iter().any(|f| f.starts_with(named)), "{body}: {fields:?}");
    }
    let (status, made) =
        post(&server, &admin, CREATE, json!({"poolId": pools.own, "idempotencyKey": "k", "ttlSeconds": 600})).await;
    assert_eq!(status, 200, "600 s is the shortest life: {made}");
    let (status, missing) = post(&server, &admin, CREATE, json!({"poolId": pools.own})).await;
    assert_eq!(status, 400, "{missing}");
    assert_eq!(violated_fields(&missing["error"]["details"]), ["idempotencyKey"]);
    server.stop().await;
}

async fn a_revoked_token_stays_revoked_and_lists_newest_first(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let pools = pools(&client).await;
    let admin = tenant_principal(&server.store, "acme", "admin").await;
    let mut ids = Vec::new();
    for key in ["first", "second"] {
        let (status, made) = post(&server, &admin, CREATE, json!({"poolId": pools.own, "idempotencyKey": key})).await;
        assert_eq!(status, 200, "{made}");
        ids.push(made["id"].as_str().unwrap().to_owned());
    }
    let one = json!({"poolId": pools.own, "joinTokenId": ids[0]});
    let (status, revoked) = post(&server, &admin, REVOKE, one.clone()).await;
    assert_eq!(status, 200, "{revoked}");
    assert_eq!(revoked["state"], "revoked");
    let at = revoked["revokedAt"].clone();
    assert!(at.is_string(), "{revoked}");
    let (status, again) = post(&server, &admin, REVOKE, one).await;
    assert_eq!((status, &again["revokedAt"]), (200, &at), "a revoked token is returned as it is");

    let (status, list) = post(&server, &admin, LIST, json!({"poolId": pools.own})).await;
    assert_eq!(status, 200, "{list}");
    let listed: Vec<(&str, &str)> = list["joinTokens"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["id"].as_str().unwrap(), t["state"].as_str().unwrap()))
        .collect();
    assert_eq!(listed, [(ids[1].as_str(), "active"), (ids[0].as_str(), "revoked")], "newest first");
    assert!(list["joinTokens"].as_array().unwrap().iter().all(|t| t["token"] == ""), "{list}");

    // A token named under another pool is not there.
    let (status, other) = post(&server, &admin, GET, json!({"poolId": pools.offered, "joinTokenId": ids[0]})).await;
    assert_eq!(status, 403, "acme decides nothing on the offered pool: {other}");
    let (status, other) =
        server.post(GET, Some(&server.admin_token), json!({"poolId": pools.offered, "joinTokenId": ids[0]})).await;
    assert_eq!((status, other["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{other}");

    // The events say what happened on the pool, never the secret's digest.
    let events = token_events(&server.store, &pools.own).await;
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(
        types,
        ["compute.joinToken.created", "compute.joinToken.created", "compute.joinToken.revoked"],
        "{types:?}"
    );
    server.stop().await;
}

/// An expired token already refuses every join: revoking it answers the token as it is
/// (`expired`, no `revokedAt`, no event), as revoking a revoked one does.
async fn revoking_an_expired_token_returns_it_as_it_is(backend: Backend) {
    let s = System::on(backend).own_pool("own", json!({})).await;
    let (status, token) = s.as_admin(CREATE, json!({"poolId": s.pool, "idempotencyKey": "expires"})).await;
    assert_eq!(status, 200, "{token}");
    let id = token["id"].as_str().unwrap();
    s.execute(&format!("UPDATE join_tokens SET expires_at = 1000000 WHERE id = '{id}'")).await;
    let one = json!({"poolId": s.pool, "joinTokenId": id});
    let (status, answer) = s.as_admin(REVOKE, one.clone()).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!((answer["state"].as_str(), &answer["revokedAt"]), (Some("expired"), &Value::Null), "{answer}");
    let (_, got) = s.as_admin(GET, one).await;
    assert_eq!((got["state"].as_str(), &got["revokedAt"]), (Some("expired"), &Value::Null), "{got}");
    let types: Vec<String> = token_events(&s.server.store, &s.pool).await.into_iter().map(|e| e.event_type).collect();
    assert_eq!(types, ["compute.joinToken.created"], "nothing was revoked");
    s.server.stop().await;
}

async fn only_the_pools_tenant_admins_and_operators_decide(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let pools = pools(&client).await;
    let admin = tenant_principal(&server.store, "acme", "admin").await;
    let (_, made) = post(&server, &admin, CREATE, json!({"poolId": pools.own, "idempotencyKey": "k"})).await;
    let token = made["id"].as_str().unwrap().to_owned();
    let calls = |pool: &str| {
        [
            (CREATE, json!({"poolId": pool, "idempotencyKey": "other"})),
            (LIST, json!({"poolId": pool})),
            (GET, json!({"poolId": pool, "joinTokenId": token})),
            (REVOKE, json!({"poolId": pool, "joinTokenId": token})),
        ]
    };
    let editor = tenant_principal(&server.store, "acme", "editor").await;
    let viewer = tenant_principal(&server.store, "acme", "viewer").await;
    let globex = tenant_principal(&server.store, "globex", "admin").await;
    for (who, caller, pool) in [
        ("acme's editor", &editor, &pools.own),
        ("acme's viewer", &viewer, &pools.own),
        ("globex's admin", &globex, &pools.own),
        ("acme's admin on a pool it is only offered", &admin, &pools.offered),
    ] {
        for (path, body) in calls(pool) {
            let (status, refused) = post(&server, caller, path, body).await;
            assert_eq!(
                (status, refused["error"]["code"].as_str()),
                (403, Some("ACCESS_DENIED")),
                "{who} {path}: {refused}"
            );
            // Only a refusal on a platform pool says that an operator's key is what it takes.
            let message = refused["error"]["message"].as_str().unwrap();
            assert_eq!(
                message.contains("only an operator's key may"),
                pool == &pools.offered,
                "{who} {path}: {message}"
            );
        }
    }
    // acme's admin on its own pool, and the operator on any pool, decide.
    for (path, body) in calls(&pools.own) {
        let (status, answer) = post(&server, &admin, path, body).await;
        assert_eq!(status, 200, "acme's admin {path}: {answer}");
    }
    let (status, answer) =
        post(&server, &server.admin_token.clone(), CREATE, json!({"poolId": pools.offered, "idempotencyKey": "op"}))
            .await;
    assert_eq!(status, 200, "the operator on a platform pool: {answer}");
    server.stop().await;
}

/// A real `bc-server`: the bearer form reaches the create's answer and nowhere else (its log,
/// the events, the audit trail).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tokens_secret_reaches_no_log_event_or_audit_row() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let admin = &server.admin_token;
    let post = |path: &'static str, body: Value| {
        let http = reqwest::Client::new();
        let url = format!("{}{path}", server.endpoint);
        async move {
            let response = http.post(url).bearer_auth(admin).json(&body).send().await.unwrap();
            let status = response.status().as_u16();
            (status, response.json::<Value>().await.unwrap())
        }
    };
    post("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let (_, account) = post(
        "/api/platform/accounts/create",
        json!({"tenantId": "acme", "provider": "digitalocean", "name": "d", "credentials": DO_TOKEN, "regions": ["nyc3"]}),
    )
    .await;
    let (_, pool) =
        post("/api/platform/pools/create", json!({"accountId": account["id"], "name": "p", "billingMode": "none"}))
            .await;
    let (status, made) = post(CREATE, json!({"poolId": pool["id"], "idempotencyKey": "k", "maxUses": 3})).await;
    assert_eq!(status, 200, "{made}");
    let bearer = made["token"].as_str().unwrap().to_owned();
    let secret = bearer.split_once('.').unwrap().1.to_owned();
    // A node joins with it and heartbeats with its own credential, which is secret too.
    let http = reqwest::Client::new();
    let machine = json!({"machineId": "machine-0001", "hostname": "n1", "architecture": "amd64"});
    let joined: Value = http
        .post(format!("{}/api/compute/nodes/join", server.endpoint))
        .bearer_auth(&bearer)
        .json(&machine)
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let credential = joined["credential"].as_str().unwrap_or_else(|| panic!("{joined}")).to_owned();
    let beat = http
        .post(format!("{}/api/compute/nodes/heartbeat", server.endpoint))
        .bearer_auth(&credential)
        .json(&json!({"nodeId": joined["nodeId"]}))
        .send()
        .await
        .unwrap();
    assert_eq!(beat.status().as_u16(), 200);
    let node_secret = credential.split_once('.').unwrap().1.to_owned();
    post(REVOKE, json!({"poolId": pool["id"], "joinTokenId": made["id"]})).await;

    let log = server.log_text();
    assert!(log.contains(made["id"].as_str().unwrap()), "the log names the token: {log}");
    assert!(log.contains(joined["nodeId"].as_str().unwrap()), "the log names the node: {log}");
    let filter = EventFilter { subject: pool["id"].as_str().unwrap().to_owned(), limit: 100, ..Default::default() };
    let events = server.store.event_list_after(&filter).await.unwrap();
    assert_eq!(events.len(), 4, "{events:?}");
    let audit = server.store.audit_list(&AuditFilter { limit: 1000, ..Default::default() }).await.unwrap();
    assert!(audit.iter().any(|row| row.method.ends_with("JoinTokens/Create")));
    for (what, secret) in [("the token's secret", &secret), ("the node's credential", &node_secret)] {
        assert!(!log.contains(secret.as_str()), "{what} is in the log");
        for event in &events {
            assert!(!event.data.to_string().contains(secret.as_str()), "{what}: {:?}", event.data);
        }
        assert!(!format!("{audit:?}").contains(secret.as_str()), "{what} is in the audit trail");
    }
    server.assert_up();
}
