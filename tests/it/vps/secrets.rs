//! A private key sent with a certificate is kept only encrypted: it appears in no response (JSON
//! or gRPC, success or refusal), no event, no store row but as ciphertext that opens to it, and
//! (under `bcctl dev`, server and worker in one process logging at debug) no log line.

use std::process::Command;

use better_compute::proto::compute::certificates_client::CertificatesClient;
use better_compute::proto::compute::{CreateCertificateRequest, GetCertificateRequest, ListCertificatesRequest};
use better_compute::store::Backend;
use serde_json::{Value, json};
use sqlx::Connection;

use super::Env;
use super::certificates::{custom, issue};
use crate::harness::System;

/// The lines of a PEM's base64 body: what would show if the key leaked anywhere.
fn body_lines(pem: &str) -> Vec<String> {
    pem.lines().filter(|l| !l.starts_with("-----") && l.len() >= 16).map(str::to_owned).collect()
}

/// Panics if any line of `key` is in `text`.
fn assert_absent(key: &str, text: &str, what: &str) {
    for line in body_lines(key) {
        assert!(!text.contains(&line), "the private key appears in {what}");
    }
}

/// Every row of every table, as text.
async fn every_row(env: &Env) -> String {
    match env.db.backend {
        Backend::Postgres => {
            let mut connection = sqlx::PgConnection::connect(&env.db.url).await.unwrap();
            let tables: Vec<String> = sqlx::query_scalar(
                "SELECT table_name::text FROM information_schema.tables WHERE table_schema = 'public'",
            )
            .fetch_all(&mut connection)
            .await
            .unwrap();
            assert!(tables.contains(&"certificates".to_owned()), "{tables:?}");
            let mut text = String::new();
            for table in tables {
                let sql = format!("SELECT row_to_json(t)::text FROM \"{table}\" t");
                let rows: Vec<String> =
                    sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_all(&mut connection).await.unwrap();
                text.push_str(&rows.join("\n"));
            }
            text
        }
        Backend::Sqlite => {
            // The database file and its write-ahead log hold every row as stored.
            let path = env.db.url.trim_start_matches("sqlite://").split('?').next().unwrap().to_owned();
            let mut bytes = std::fs::read(&path).unwrap();
            bytes.extend(std::fs::read(format!("{path}-wal")).unwrap_or_default());
            String::from_utf8_lossy(&bytes).into_owned()
        }
    }
}

async fn a_private_key_is_in_no_response_event_or_row_but_encrypted(backend: Backend) {
    let env = super::start(backend).await;
    let (key, leaf) = issue(&["secret.example.com"], 2090);
    let mut responses: Vec<String> = Vec::new();

    // JSON: the create, a refused create (the key with another leaf), get and list.
    let created = env.ok("/api/compute/certificates/create", custom("json", &key, &leaf)).await;
    responses.push(created.to_string());
    let (_, other_leaf) = issue(&["other.example.com"], 2090);
    let (status, refused) =
        env.post_as(&env.acme_admin, "/api/compute/certificates/create", custom("bad", &key, &other_leaf)).await;
    assert_eq!(status, 400, "{refused}");
    responses.push(refused.to_string());
    let id = created["id"].as_str().unwrap();
    let ready = env.wait_state("certificates", "certificateId", id, "ready").await;
    responses.push(ready.to_string());
    responses.push(env.ok("/api/compute/certificates/list", json!({"tenantId": "acme"})).await.to_string());

    // gRPC: the create, get and list.
    let channel = tonic::transport::Channel::from_shared(env.server.endpoint.clone()).unwrap().connect().await.unwrap();
    let bearer = better_compute::cli::BearerToken::new(Some(&env.acme_admin)).unwrap();
    let mut client = CertificatesClient::new(tonic::service::interceptor::InterceptedService::new(channel, bearer));
    let made = client
        .create(CreateCertificateRequest {
            tenant_id: "acme".into(),
            pool_id: super::DO_POOL.into(),
            name: "grpc".into(),
            r#type: "custom".into(),
            private_key: key.clone(),
            leaf_certificate: leaf.clone(),
            idempotency_key: "grpc".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    responses.push(format!("{made:?}"));
    let got = client.get(GetCertificateRequest { tenant_id: "acme".into(), certificate_id: made.id.clone() }).await;
    responses.push(format!("{:?}", got.unwrap().into_inner()));
    let listed = client.list(ListCertificatesRequest { tenant_id: "acme".into(), ..Default::default() }).await;
    responses.push(format!("{:?}", listed.unwrap().into_inner()));
    let refused = client
        .create(CreateCertificateRequest {
            tenant_id: "acme".into(),
            pool_id: super::DO_POOL.into(),
            name: "grpc-bad".into(),
            r#type: "custom".into(),
            private_key: key.clone(),
            leaf_certificate: other_leaf.clone(),
            idempotency_key: "grpc-bad".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    responses.push(format!("{refused:?} {}", String::from_utf8_lossy(refused.details())));
    for response in &responses {
        assert_absent(&key, response, "a response");
    }

    let events = env.ok("/api/compute/events/list", json!({"tenantId": "acme", "limit": 1000})).await;
    assert!(events["events"].as_array().unwrap().len() >= 4, "{events}");
    assert_absent(&key, &events.to_string(), "an event");

    let rows = every_row(&env).await;
    assert_absent(&key, &rows, "a store row");
    // It is there, encrypted, and opens to the key with the server's secret key.
    let sealed: Vec<String> = sqlx::query_scalar(sqlx::AssertSqlSafe(
        "SELECT private_key_encrypted FROM certificates ORDER BY created_at".to_owned(),
    ))
    .fetch_all(&mut sqlx::AnyConnection::connect(&env.db.url).await.unwrap())
    .await
    .unwrap();
    assert_eq!(sealed.len(), 2, "two certificates, the refused ones wrote nothing");
    assert!(rows.contains(&sealed[0]), "the ciphertext is what the store holds");
    assert_eq!(env.key.open(&sealed[0], id).unwrap().expose(), key);
    // Deleted, it is forgotten.
    env.ok("/api/compute/certificates/delete", json!({"tenantId": "acme", "certificateId": id})).await;
    env.wait_state("certificates", "certificateId", id, "deleted").await;
    let kept: String = sqlx::query_scalar(sqlx::AssertSqlSafe(
        "SELECT private_key_encrypted FROM certificates WHERE state = 'deleted'".to_owned(),
    ))
    .fetch_one(&mut sqlx::AnyConnection::connect(&env.db.url).await.unwrap())
    .await
    .unwrap();
    assert_eq!(kept, "", "a deleted certificate keeps no key, not even sealed");
}

crate::on_both_backends!(a_private_key_is_in_no_response_event_or_row_but_encrypted);

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// Runs `bcctl` as acme against `bcctl dev`; panics unless it succeeds; returns its JSON output.
fn bcctl(dev: &Value, args: &[&str]) -> Value {
    let output = Command::new(BC)
        .env("BC_ENDPOINT", dev["endpoint"].as_str().unwrap())
        .env("BC_TOKEN", dev["tenants"][0]["token"].as_str().unwrap())
        .args(["-o", "json"])
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "bcctl {args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_str(&stdout).unwrap_or_else(|_| panic!("bcctl {args:?} printed no JSON: {stdout}"))
}

/// Under `bcctl dev` (server and worker in one process, logging at debug), the CLI makes a network,
/// an instance on its subnet and a custom certificate from PEM files, each followed with
/// `--wait` until ready and then deleted with `--wait`; the certificate's private key is in no
/// line of the log.
#[test]
fn under_bc_dev_the_cli_waits_for_each_resource_and_no_log_line_has_the_private_key() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("bc-dev.log");
    let (running, dev) = System::on(Backend::Sqlite).logging("debug", &log_path).dev(dir.path());
    let pool = dev["pools"]["digitalocean"].as_str().unwrap().to_owned();

    let network = bcctl(
        &dev,
        &[
            "networks",
            "create",
            "--tenant",
            "acme",
            "--pool",
            &pool,
            "--name",
            "web",
            "--subnet",
            "name=front,region=nyc3,range=10.90.0.0/24",
            "--wait",
        ],
    );
    assert_eq!(network["state"], "ready", "{network}");
    let network_id = network["id"].as_str().unwrap();
    let subnet = network["subnets"][0]["id"].as_str().unwrap();
    let instance = bcctl(
        &dev,
        &[
            "instances",
            "create",
            "--tenant",
            "acme",
            "--pool",
            &pool,
            "--name",
            "web-1",
            "--region",
            "nyc3",
            "--subnet",
            subnet,
            "--wait",
        ],
    );
    assert_eq!(instance["state"], "ready", "{instance}");
    assert!(!instance["machineId"].as_str().unwrap().is_empty(), "{instance}");

    let (key, leaf) = issue(&["dev.example.com"], 2090);
    let (key_file, leaf_file) = (dir.path().join("key.pem"), dir.path().join("leaf.pem"));
    std::fs::write(&key_file, &key).unwrap();
    std::fs::write(&leaf_file, &leaf).unwrap();
    let certificate = bcctl(
        &dev,
        &[
            "certificates",
            "create",
            "--tenant",
            "acme",
            "--pool",
            &pool,
            "--name",
            "site",
            "--private-key-file",
            key_file.to_str().unwrap(),
            "--leaf-certificate-file",
            leaf_file.to_str().unwrap(),
            "--wait",
        ],
    );
    assert_eq!((certificate["state"].as_str(), &certificate["dnsNames"]), (Some("ready"), &json!(["dev.example.com"])));
    assert_absent(&key, &certificate.to_string(), "the CLI's output");

    let certificate_id = certificate["id"].as_str().unwrap();
    let gone = bcctl(&dev, &["certificates", "delete", "--tenant", "acme", certificate_id, "--wait"]);
    assert_eq!(gone["state"], "deleted");
    let gone = bcctl(&dev, &["instances", "delete", "--tenant", "acme", instance["id"].as_str().unwrap(), "--wait"]);
    assert_eq!(gone["state"], "deleted");
    let gone = bcctl(&dev, &["networks", "delete", "--tenant", "acme", network_id, "--wait"]);
    assert_eq!(gone["state"], "deleted");
    let listed = bcctl(&dev, &["networks", "list", "--tenant", "acme", "--include-deleted"]);
    assert_eq!(listed["networks"][0]["id"], network["id"]);

    assert!(running.terminate().success());
    let logged = std::fs::read_to_string(&log_path).unwrap();
    assert!(logged.contains("certificate created"), "the log is the server's and the worker's");
    assert!(logged.contains("DEBUG"), "debug lines are in it");
    assert_absent(&key, &logged, "a log line of bcctl dev");
}
