//! Credentials of accounts never appear in a response, an event or a log line; at rest they
//! are ciphertext that only the server's key opens.

use std::process::{Command, Stdio};

use better_compute::store::{Backend, EventFilter};
use serde_json::json;

use crate::harness::serving;
use crate::harness::{Client, DO_TOKEN, GKE_SECRET, Platform, Running, System, curl, gke_key, test_secret_key};

const BC_SERVER: &str = env!("CARGO_BIN_EXE_bc-server");
const ROTATED: &str = "dop_v1_ROTATEDSECRET5e8a";

crate::on_both_backends!(credentials_never_come_back_and_are_sealed_at_rest);

async fn credentials_never_come_back_and_are_sealed_at_rest(backend: Backend) {
    let server = System::on(backend).server().await;
    let db = server.db.clone();
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    // Every call that touches accounts, the ones that fail included.
    client.ok("/api/platform/accounts/get", json!({"accountId": platform.do_account})).await;
    client.ok("/api/platform/accounts/list", json!({"includeDeleted": true})).await;
    let rotated = client
        .ok("/api/platform/accounts/update", json!({"accountId": platform.do_account, "credentials": ROTATED}))
        .await;
    assert_eq!(rotated["credentialsSet"], true);
    client
        .ok("/api/platform/accounts/update", json!({"accountId": platform.gke_account, "credentials": gke_key()}))
        .await;
    client
        .fails(
            "/api/platform/accounts/update",
            json!({"accountId": platform.gke_account, "credentials": DO_TOKEN}),
            400,
            "INVALID_INPUT",
        )
        .await;
    client
        .fails(
            "/api/platform/accounts/create",
            json!({"provider": "gke", "name": "x", "credentials": DO_TOKEN, "zones": ["us-central1-a"], "colour": 1}),
            400,
            "INVALID_INPUT",
        )
        .await;
    client.ok("/api/compute/pools/list", json!({"tenantId": "acme"})).await;
    client.ok("/api/platform/pools/list", json!({})).await;

    let transcript = client.transcript();
    assert!(transcript.contains(&platform.do_account), "the transcript holds the answers");
    for secret in [DO_TOKEN, GKE_SECRET, ROTATED, "dop_v1"] {
        assert!(!transcript.contains(secret), "{secret} reached a response");
    }

    let events = server.store.event_list_after(&EventFilter { limit: 1000, ..Default::default() }).await.unwrap();
    assert!(events.iter().any(|e| e.event_type == "platform.account.updated"));
    let events = serde_json::to_string(&events.iter().map(|e| &e.data).collect::<Vec<_>>()).unwrap();
    for secret in [DO_TOKEN, GKE_SECRET, ROTATED] {
        assert!(!events.contains(secret), "{secret} reached an event");
    }

    // At rest: ciphertext, which the reconcilers' helper opens with the key (and only with it).
    sqlx::any::install_default_drivers();
    let pool = sqlx::AnyPool::connect(&db.url).await.unwrap();
    let stored: Vec<String> =
        sqlx::query_scalar("SELECT credentials FROM provider_accounts").fetch_all(&pool).await.unwrap();
    assert_eq!(stored.len(), 2);
    for text in &stored {
        for secret in [DO_TOKEN, GKE_SECRET, ROTATED, "service_account"] {
            assert!(!text.contains(secret), "{secret} is stored in clear");
        }
    }
    pool.close().await;
    let opened = server.store.account_credentials(&test_secret_key(), &platform.do_account).await.unwrap();
    assert_eq!((opened.credentials.expose(), opened.provider.as_str()), (ROTATED, "digitalocean"));
    assert_eq!(opened.locations, ["nyc3", "ams3", "sfo3"]);
    assert!(!format!("{opened:?}").contains(ROTATED), "the opened credentials do not print");
    let other_key = better_compute::secrets::SecretKey::from_bytes(&[9u8; 32]).unwrap();
    assert!(server.store.account_credentials(&other_key, &platform.do_account).await.is_err());
}

/// `bc-server` with debug logs, through a run that writes, reads and refuses accounts: its log
/// file never holds a credential.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_logs_of_a_server_run_never_carry_credentials() {
    let db = System::on(Backend::Postgres).database().await;
    db.store().await;
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("server.log");
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let token = format!("bck_{}.{}", "2".repeat(26), "t0ken".repeat(5));
    let server = Running(
        Command::new(BC_SERVER)
            .args(["--database-url", &db.url, "--listen", &format!("127.0.0.1:{port}")])
            .env("BC_SECRET_KEY", better_compute::secrets::SecretKey::generate_base64())
            .env("BC_BOOTSTRAP_TOKEN", &token)
            .env("RUST_LOG", "debug")
            .env("BC_LOG_FORMAT", "json")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let endpoint = format!("http://127.0.0.1:{port}");
    serving(&endpoint, &log).await;
    let auth = format!("Authorization: Bearer {token}");
    let call = |path: &str, body: serde_json::Value| {
        curl(&["-s", &format!("{endpoint}/api/platform/{path}"), "-H", &auth, "-d", &body.to_string()])
    };
    let created = call(
        "accounts/create",
        json!({"provider": "digitalocean", "name": "logged", "credentials": DO_TOKEN, "regions": ["nyc3"]}),
    );
    let account: serde_json::Value = serde_json::from_str(&created).unwrap();
    let id = account["id"].as_str().unwrap_or_else(|| panic!("{created}"));
    call(
        "accounts/create",
        json!({"provider": "gke", "name": "gke", "credentials": gke_key(), "zones": ["us-central1-a"]}),
    );
    call("accounts/update", json!({"accountId": id, "credentials": ROTATED}));
    call("accounts/update", json!({"accountId": id, "credentials": format!("{DO_TOKEN} with spaces")}));
    call("accounts/create", json!({"provider": "gke", "name": "bad", "credentials": DO_TOKEN, "zones": ["nowhere"]}));
    call("accounts/get", json!({"accountId": id}));
    assert!(server.terminate().success());

    let logs = std::fs::read_to_string(&log).unwrap();
    assert!(logs.contains("account created"), "the run was logged: {logs}");
    for secret in [DO_TOKEN, GKE_SECRET, ROTATED] {
        assert!(!logs.contains(secret), "{secret} reached the logs");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_server_refuses_to_serve_without_a_secret_key() {
    let db = System::on(Backend::Postgres).database().await;
    db.store().await;
    for key in [None, Some("c2hvcnQ=")] {
        let mut command = Command::new(BC_SERVER);
        command.args(["--database-url", &db.url, "--listen", "127.0.0.1:0"]).env_remove("BC_SECRET_KEY");
        if let Some(key) = key {
            command.env("BC_SECRET_KEY", key);
        }
        let output = command.output().unwrap();
        assert!(!output.status.success());
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("--secret-key"), "{stderr}");
        assert!(!stderr.contains("c2hvcnQ="), "the key is not echoed: {stderr}");
    }
}
