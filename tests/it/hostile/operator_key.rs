//! The operator key a first start makes never reaches the log stream: with standard error not a
//! terminal (as under a log collector) it goes to a file readable by its owner only, and one log
//! line says where, without the key.

use std::process::{Command, Stdio};

use crate::harness::serving;
use crate::harness::{Running, System, TestDb, curl, run_ok};
use better_compute::store::Backend;

const BC_SERVER: &str = env!("CARGO_BIN_EXE_bc-server");

/// Starts `bc-server` on `db` with its output in `log`, and waits for `/readyz`.
async fn serve(db: &TestDb, key_file: &std::path::Path, log: &std::path::Path) -> (Running, String) {
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let output = std::fs::OpenOptions::new().create(true).append(true).open(log).unwrap();
    let server = Running(
        Command::new(BC_SERVER)
            .args(["--database-url", &db.url, "--listen", &format!("127.0.0.1:{port}"), "--log-format", "json"])
            .args(["--secret-key", &better_compute::secrets::SecretKey::generate_base64()])
            .arg("--operator-key-file")
            .arg(key_file)
            .env_remove("BC_BOOTSTRAP_TOKEN")
            .stdout(Stdio::from(output.try_clone().unwrap()))
            .stderr(Stdio::from(output))
            .spawn()
            .unwrap(),
    );
    let endpoint = format!("http://127.0.0.1:{port}");
    serving(&endpoint, log).await;
    (server, endpoint)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_start_writes_the_operator_key_to_an_owner_only_file_and_never_to_the_log() {
    let db = System::on(Backend::Postgres).database().await;
    run_ok(Command::new(BC_SERVER).args(["migrate", "--database-url", &db.url]));
    let dir = tempfile::tempdir().unwrap();
    let (key_file, log) = (dir.path().join("operator-key"), dir.path().join("server.log"));
    let (server, endpoint) = serve(&db, &key_file, &log).await;

    let key = std::fs::read_to_string(&key_file).unwrap().trim().to_owned();
    assert!(key.starts_with("bck_"), "the file holds the key: {key:?}");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&key_file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600, "the key file is readable by its owner only");
    let listed = curl(&[
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{endpoint}/api/platform/tenants/list"),
        "-d",
        "{}",
    ]);
    assert_eq!(listed, "401");
    let auth = format!("Authorization: Bearer {key}");
    let listed = curl(&[
        "-s",
        "-o",
        "/dev/null",
        "-w",
        "%{http_code}",
        &format!("{endpoint}/api/platform/tenants/list"),
        "-H",
        &auth,
        "-d",
        "{}",
    ]);
    assert_eq!(listed, "200", "the written key is the operator's");
    assert!(server.terminate().success());

    let output = std::fs::read_to_string(&log).unwrap();
    let secret = key.split_once('.').unwrap().1;
    assert!(!output.contains(secret) && !output.contains("bck_"), "the key reached the log stream:\n{output}");
    let said = output.lines().find(|line| line.contains("operator API key")).expect("a line says where the key is");
    let said: serde_json::Value = serde_json::from_str(said).expect("a JSON log line");
    assert_eq!(said["file"], key_file.display().to_string(), "{said}");

    // A later start makes no key and leaves the file as it is.
    let (server, _) = serve(&db, &key_file, &log).await;
    assert!(server.terminate().success());
    assert_eq!(std::fs::read_to_string(&key_file).unwrap().trim(), key);
    let output = std::fs::read_to_string(&log).unwrap();
    assert_eq!(output.matches("created the operator API key").count(), 1, "{output}");
}
