//! The binaries as a user runs them: `bcctl dev` with curl and Python's gRPC client, the `bcctl` CLI,
//! `bc-server migrate` and `serve`, and `bc-worker`, each started as its own process.

use std::process::{Command, Stdio};

use serde_json::Value;

use crate::harness::{Running, System, curl, postgres_admin_url, python, repo_root, run_ok};
use crate::harness::{serving, worker_idle};
use better_compute::store::Backend;

const BC: &str = env!("CARGO_BIN_EXE_bcctl");
const BC_SERVER: &str = env!("CARGO_BIN_EXE_bc-server");
const BC_WORKER: &str = env!("CARGO_BIN_EXE_bc-worker");

#[test]
fn bc_dev_serves_curl_and_python_grpc_and_keeps_data_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let (dev, file) = System::on(Backend::Sqlite).dev(dir.path());
    let endpoint = file["endpoint"].as_str().unwrap().to_owned();
    let token = file["adminToken"].as_str().unwrap().to_owned();
    assert!(token.starts_with("bck_"));
    for key in ["tenants", "pools", "fakecloud"] {
        assert!(file.get(key).is_some(), "dev.json has {key}: {file}");
    }
    // The demo tenants' admin and viewer keys work, each within its tenant and role.
    let tenants = file["tenants"].as_array().unwrap();
    let ids: Vec<&str> = tenants.iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["acme", "globex"]);
    let acme_admin = tenants[0]["token"].as_str().unwrap();
    let acme_viewer = tenants[0]["viewerToken"].as_str().unwrap();
    let status_of = |token: &str, path: &str, body: &str| {
        curl(&[
            "-s",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("{endpoint}{path}"),
            "-H",
            &format!("Authorization: Bearer {token}"),
            "-d",
            body,
        ])
    };
    assert_eq!(status_of(acme_admin, "/api/platform/principals/list", r#"{"tenantId":"acme"}"#), "200");
    assert_eq!(status_of(acme_viewer, "/api/platform/principals/list", r#"{"tenantId":"acme"}"#), "403");
    assert_eq!(status_of(acme_viewer, "/api/compute/events/list", r#"{"tenantId":"acme"}"#), "200");
    assert_eq!(status_of(acme_admin, "/api/compute/events/list", r#"{"tenantId":"globex"}"#), "403");

    // curl on the JSON path.
    let auth = format!("Authorization: Bearer {token}");
    let created = curl(&[
        "-s",
        &format!("{endpoint}/api/platform/tenants/create"),
        "-H",
        &auth,
        "-d",
        r#"{"id":"curlco","displayName":"Curl Co"}"#,
    ]);
    let created: Value = serde_json::from_str(&created).unwrap();
    assert_eq!((created["id"].as_str(), created["state"].as_str()), (Some("curlco"), Some("active")), "{created}");
    let read =
        curl(&["-s", &format!("{endpoint}/api/platform/tenants/get"), "-H", &auth, "-d", r#"{"tenantId":"curlco"}"#]);
    let read: Value = serde_json::from_str(&read).unwrap();
    assert_eq!(read, created);

    // Python's grpcio, with stubs generated from proto/ by grpcio-tools.
    let script = repo_root().join("tests/python/tenants_grpc.py");
    let host = endpoint.trim_start_matches("http://");
    let output = run_ok(Command::new(python()).arg(&script).args([host, &token, "pyco"]));
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(seen["id"], "pyco");
    assert_eq!(seen["refused"], serde_json::json!(["id", "id"]), "too long and off the pattern");
    let read =
        curl(&["-s", &format!("{endpoint}/api/platform/tenants/get"), "-H", &auth, "-d", r#"{"tenantId":"pyco"}"#]);
    assert!(read.contains("From Python"), "{read}");

    // The bcctl CLI against the same server.
    let listed =
        run_ok(Command::new(BC).args(["--endpoint", &endpoint, "--token", &token, "-o", "json", "tenants", "list"]));
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    let ids: Vec<&str> = listed["tenants"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["acme", "globex", "curlco", "pyco"], "after the demo tenants bcctl dev seeds");
    let table = run_ok(Command::new(BC).args(["--endpoint", &endpoint, "--token", &token, "tenants", "get", "pyco"]));
    let table = String::from_utf8(table.stdout).unwrap();
    assert!(table.starts_with("ID") && table.contains("pyco") && table.contains("From Python"), "{table}");
    let refused =
        Command::new(BC).args(["--endpoint", &endpoint, "--token", &token, "tenants", "get", "nope"]).output().unwrap();
    assert!(!refused.status.success());
    assert!(String::from_utf8_lossy(&refused.stderr).contains("NOT_FOUND"));

    // Restart on the same directory: the data and the operator key are still there.
    assert!(dev.terminate().success(), "bcctl dev exits cleanly on SIGTERM");
    let (_dev, file) = System::on(Backend::Sqlite).dev(dir.path());
    assert_eq!(file["adminToken"].as_str(), Some(token.as_str()));
    assert_eq!(file["tenants"], serde_json::Value::Array(tenants.clone()), "the demo keys are kept");
    let endpoint = file["endpoint"].as_str().unwrap();
    let read =
        curl(&["-s", &format!("{endpoint}/api/platform/tenants/get"), "-H", &auth, "-d", r#"{"tenantId":"curlco"}"#]);
    assert_eq!(serde_json::from_str::<Value>(&read).unwrap(), created);
}

#[test]
fn bc_server_refuses_to_start_without_a_database() {
    let output = Command::new(BC_SERVER).env_remove("BC_DATABASE_URL").env_remove("BC_CONFIG").output().unwrap();
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--database-url"), "{output:?}");
}

#[test]
fn bc_server_documents_every_option_in_help() {
    let output = run_ok(Command::new(BC_SERVER).arg("--help"));
    let help = String::from_utf8(output.stdout).unwrap();
    for option in [
        "--database-url",
        "BC_DATABASE_URL",
        "--listen",
        "--bootstrap-token",
        "--log-format",
        "--config",
        "--secret-key",
        "--max-clusters-per-tenant",
    ] {
        assert!(help.contains(option), "{option} is missing from --help:\n{help}");
    }
}

/// `bc-server migrate` on a Postgres server that has no database of that name makes it and
/// migrates it; one it cannot reach is a failure, not a success that printed an error.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_server_migrate_makes_a_missing_database_and_exits_non_zero_when_it_cannot() {
    use sqlx::Connection;
    let admin = postgres_admin_url();
    let base = admin.rsplit_once('/').map(|(base, _)| base).unwrap();
    let name = format!("bc_test_{}", better_compute::ids::random("db").trim_start_matches("db_"));
    let url = format!("{base}/{name}");

    let made = run_ok(Command::new(BC_SERVER).args(["migrate", "--database-url", &url]));
    let said = String::from_utf8_lossy(&made.stdout).into_owned();
    assert!(said.contains("created the database") && said.contains("migrations applied"), "{said}");
    let store = better_compute::store::Store::connect(&url, 1).await.unwrap();
    assert_eq!(store.pending_migrations().await.unwrap(), Vec::<i64>::new(), "every migration is applied");
    store.close().await;
    let again = run_ok(Command::new(BC_SERVER).args(["migrate", "--database-url", &url]));
    let said = String::from_utf8_lossy(&again.stdout).into_owned();
    assert!(!said.contains("created") && said.contains("(0 new)"), "a second migrate finds it all done: {said}");
    let mut connection = sqlx::PgConnection::connect(&admin).await.unwrap();
    let drop = format!("DROP DATABASE {name} WITH (FORCE)");
    sqlx::query(sqlx::AssertSqlSafe(drop)).execute(&mut connection).await.unwrap();

    let unreachable = Command::new(BC_SERVER)
        .args(["migrate", "--database-url", "postgres://postgres@127.0.0.1:1/bc"])
        .output()
        .unwrap();
    assert_eq!(unreachable.status.code(), Some(1), "{unreachable:?}");
    assert!(String::from_utf8_lossy(&unreachable.stderr).contains("error: "), "{unreachable:?}");
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_server_migrates_then_serves_postgres_with_a_given_bootstrap_token_and_a_config_file() {
    let db = System::on(Backend::Postgres).database().await;
    let refused = Command::new(BC_SERVER).env("BC_DATABASE_URL", &db.url).output().unwrap();
    assert!(!refused.status.success(), "serving an unmigrated database is refused");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("bc-server migrate"));
    run_ok(Command::new(BC_SERVER).args(["migrate", "--database-url", &db.url]));

    let dir = tempfile::tempdir().unwrap();
    let port = free_port();
    let config = dir.path().join("bc.toml");
    std::fs::write(
        &config,
        format!(
            "database-url = \"{}\"\nlisten = \"127.0.0.1:{port}\"\nlog-format = \"json\"\nsecret-key = \"{}\"\n",
            db.url,
            better_compute::secrets::SecretKey::generate_base64()
        ),
    )
    .unwrap();
    let token = format!("bck_{}.{}", "1".repeat(26), "s3cret".repeat(4));
    let log = dir.path().join("server.log");
    let freeze = dir.path().join("freeze.cedar");
    std::fs::write(
        &freeze,
        "@id(\"no-tenant-deletes\")\nforbid (principal, action == BetterCompute::Action::\"platform:tenants:delete\", resource);\n",
    )
    .unwrap();
    let server = Running(
        Command::new(BC_SERVER)
            .arg("--config")
            .arg(&config)
            .env("BC_BOOTSTRAP_TOKEN", &token)
            .env("BC_POLICY_FILES", &freeze)
            .env_remove("BC_DATABASE_URL")
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap(),
    );
    let endpoint = format!("http://127.0.0.1:{port}");
    serving(&endpoint, &log).await;
    let auth = format!("Authorization: Bearer {token}");
    let created = curl(&[
        "-s",
        &format!("{endpoint}/api/platform/tenants/create"),
        "-H",
        &auth,
        "-H",
        "x-request-id: req-test-1",
        "-d",
        r#"{"id":"pgco"}"#,
    ]);
    assert!(created.contains("\"pgco\""), "{created}");
    // The operator's policy file forbids what the built-in ones allow.
    let refused =
        curl(&["-s", &format!("{endpoint}/api/platform/tenants/delete"), "-H", &auth, "-d", r#"{"tenantId":"pgco"}"#]);
    assert!(refused.contains("ACCESS_DENIED"), "{refused}");
    assert!(server.terminate().success());

    // JSON logs carry the request id of each call, and never the token's secret.
    let logs = std::fs::read_to_string(&log).unwrap();
    let call = logs.lines().find(|l| l.contains("call finished")).expect("a call was logged");
    let call: Value = serde_json::from_str(call).unwrap();
    assert_eq!(call["span"]["request_id"], "req-test-1", "{call}");
    assert!(!logs.contains("s3cret"), "the bootstrap secret reached the logs");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bc_worker_checks_migrations_idles_and_stops_on_sigterm() {
    let db = System::on(Backend::Postgres).database().await;
    let key = better_compute::secrets::SecretKey::generate_base64();
    let refused = Command::new(BC_WORKER).args(["--database-url", &db.url, "--secret-key", &key]).output().unwrap();
    assert!(!refused.status.success(), "a worker refuses an unmigrated database");
    assert!(String::from_utf8_lossy(&refused.stderr).contains("migrations"), "refused for the migrations");
    let store = db.store().await;
    let worker = Running(
        Command::new(BC_WORKER)
            .args(["--database-url", &db.url, "--secret-key", &key])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    worker_idle(&store).await;
    assert!(worker.terminate().success());
}
