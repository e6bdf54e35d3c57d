//! The generated clients and the OpenAPI document against `bcctl dev`, each run as a user would:
//! the Python client over gRPC, the TypeScript client over gRPC-web (Node), the API guide's
//! Rust example (docs/api.md), `openapi-spec-validator` on the document and schemathesis against `/openapi.json`.
//!
//! Python comes from the venv tests/run builds (`BC_TEST_PYTHON`), Node packages from
//! `npm ci` in clients/typescript (tests/run does it); a missing one fails the test, loudly.

use std::path::{Path, PathBuf};
use std::process::Command;

use better_compute::proto::platform::{GetTenantRequest, Tenant, tenants_client::TenantsClient};
use serde_json::Value;

use crate::harness::{System, curl, python, repo_root, run_ok};
use better_compute::store::Backend;

/// The Rust example of docs/api.md, word for word (a test below keeps the two equal).
async fn get_tenant(endpoint: String, token: &str, id: &str) -> Result<Tenant, Box<dyn std::error::Error>> {
    let channel = tonic::transport::Channel::from_shared(endpoint)?.connect().await?;
    let bearer: tonic::metadata::MetadataValue<_> = format!("Bearer {token}").parse()?;
    let mut tenants = TenantsClient::with_interceptor(channel, move |mut request: tonic::Request<()>| {
        request.metadata_mut().insert("authorization", bearer.clone());
        Ok(request)
    });
    Ok(tenants.get(GetTenantRequest { tenant_id: id.into() }).await?.into_inner())
}

fn endpoint_and_token(dev: &Value) -> (String, String) {
    (dev["endpoint"].as_str().unwrap().to_owned(), dev["adminToken"].as_str().unwrap().to_owned())
}

#[test]
fn the_python_client_creates_and_reads_a_tenant_over_grpc() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, file) = System::on(Backend::Sqlite).dev(dir.path());
    let (endpoint, token) = endpoint_and_token(&file);
    let script = repo_root().join("tests/python/client_tenants.py");
    let output = run_ok(Command::new(python()).arg(&script).args([&endpoint, &token, "pyclientco"]));
    let seen: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!((seen["id"].as_str(), seen["displayName"].as_str()), (Some("pyclientco"), Some("Python client")));
    assert_eq!(seen["conflict"], "CONFLICT");
    assert_eq!(seen["invalidFields"], serde_json::json!(["id"]));
    assert_eq!(seen["retries"], serde_json::json!({"2": 3, "100": 4}), "2 failures then success; 1 + 3 retries");

    // What Python wrote, read back over JSON.
    let read = curl(&[
        "-s",
        &format!("{endpoint}/api/platform/tenants/get"),
        "-H",
        &format!("Authorization: Bearer {token}"),
        "-d",
        r#"{"tenantId":"pyclientco"}"#,
    ]);
    assert!(read.contains("\"Python client\""), "{read}");
}

#[test]
fn the_typescript_client_creates_and_reads_a_tenant_over_grpc_web() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, file) = System::on(Backend::Sqlite).dev(dir.path());
    let (endpoint, token) = endpoint_and_token(&file);
    let package = repo_root().join("clients/typescript");
    assert!(
        package.join("node_modules/@connectrpc/connect-web").is_dir(),
        "clients/typescript/node_modules is missing: run `npm ci` there (tests/run does)"
    );
    let mut npm = Command::new("npm");
    npm.args(["test", "--silent"])
        .current_dir(&package)
        .env("BC_ENDPOINT", &endpoint)
        .env("BC_TOKEN", &token)
        .env("BC_TENANT", "tsclientco");
    let output = npm.output().unwrap_or_else(|error| panic!("npm is required for the TypeScript client: {error}"));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "npm test failed:\n{text}\n{}", String::from_utf8_lossy(&output.stderr));
    assert!(text.contains("# pass 2") && text.contains("# fail 0"), "{text}");

    let read = curl(&[
        "-s",
        &format!("{endpoint}/api/platform/tenants/get"),
        "-H",
        &format!("Authorization: Bearer {token}"),
        "-d",
        r#"{"tenantId":"tsclientco"}"#,
    ]);
    assert!(read.contains("\"TypeScript client\""), "{read}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_readme_rust_example_reads_a_tenant() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, file) = System::on(Backend::Sqlite).dev(dir.path());
    let (endpoint, token) = endpoint_and_token(&file);
    let created = curl(&[
        "-s",
        &format!("{endpoint}/api/platform/tenants/create"),
        "-H",
        &format!("Authorization: Bearer {token}"),
        "-d",
        r#"{"id":"rustco","displayName":"Rust Co"}"#,
    ]);
    assert!(created.contains("\"rustco\""), "{created}");
    let rustco = get_tenant(endpoint.clone(), &token, "rustco").await.unwrap();
    assert_eq!((rustco.id.as_str(), rustco.display_name.as_str(), rustco.version), ("rustco", "Rust Co", 1));
    let refused = get_tenant(endpoint, "bck_nobody.nothing", "rustco").await.unwrap_err();
    let status = refused.downcast_ref::<tonic::Status>().expect("a refused call is a tonic::Status");
    assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
}

#[test]
fn the_api_guides_rust_example_is_the_tested_one() {
    let guide = std::fs::read_to_string(repo_root().join("docs/api.md")).unwrap();
    let example = guide
        .split("```rust\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("docs/api.md has a ```rust example");
    let source = include_str!("clients.rs");
    for line in example.lines().filter(|l| !l.trim().is_empty()) {
        assert!(source.lines().any(|s| s == line), "docs/api.md line not in tests/it/clients.rs: {line}");
    }
}

/// The document served at `/openapi.json` of a running `bcctl dev`, saved to a file.
fn served_document(endpoint: &str, dir: &Path) -> PathBuf {
    let path = dir.join("openapi.json");
    let text = curl(&["-s", "-f", &format!("{endpoint}/openapi.json")]);
    let served: Value = serde_json::from_str(&text).unwrap_or_else(|_| panic!("/openapi.json: {text}"));
    let committed: Value =
        serde_json::from_str(&std::fs::read_to_string(repo_root().join("clients/openapi/openapi.json")).unwrap())
            .unwrap();
    assert!(served == committed, "the served document differs from clients/openapi/openapi.json: run clients/generate");
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn the_served_document_is_the_committed_one_and_a_valid_openapi_3_1() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, file) = System::on(Backend::Sqlite).dev(dir.path());
    let (endpoint, _) = endpoint_and_token(&file);
    let path = served_document(&endpoint, dir.path());
    let check = "import sys; from openapi_spec_validator import validate; \
                 from openapi_spec_validator.readers import read_from_filename; \
                 spec, _ = read_from_filename(sys.argv[1]); validate(spec); print(spec['openapi'])";
    let output = run_ok(Command::new(python()).args(["-c", check]).arg(&path));
    assert_eq!(String::from_utf8_lossy(&output.stdout).trim(), "3.1.0");
}

/// Schemathesis: every operation, at least 100 generated requests each (valid and invalid), as
/// the operator and as a tenant's admin and viewer from dev.json. Checks: no 5xx, status codes,
/// content types, headers and bodies as documented, invalid requests refused, credentials
/// enforced, other verbs than POST answered 405. Not checked: `positive_data_acceptance` (rules
/// such as Update's "name at least one field" live in services, not in the descriptors). Server-streaming operations are
/// left out: their server-sent events never end, and schemathesis reads a body to its end.
#[test]
fn schemathesis_finds_no_failure_in_100_examples_per_operation() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, file) = System::on(Backend::Sqlite).dev(dir.path());
    let (endpoint, admin) = endpoint_and_token(&file);
    served_document(&endpoint, dir.path());
    let (operations, streams) = file_operations();
    let tenant = &file["tenants"][0];
    let mut tokens = vec![admin];
    for key in ["token", "viewerToken"] {
        let token = tenant[key].as_str().unwrap_or_else(|| panic!("dev.json has no tenant {key}: {file}"));
        tokens.push(token.to_owned());
    }
    let schemathesis = PathBuf::from(python()).with_file_name("schemathesis");
    assert!(schemathesis.exists(), "{} is missing: tests/run installs it", schemathesis.display());
    for (index, token) in tokens.iter().enumerate() {
        let report = dir.path().join(format!("schemathesis-{index}.ndjson"));
        let output = Command::new(&schemathesis)
            .current_dir(dir.path()) // its cache (.schemathesis/) stays out of the repository
            .args(["run", &format!("{endpoint}/openapi.json"), "-H", &format!("Authorization: Bearer {token}")])
            .args(["--checks", "all", "--exclude-checks", "positive_data_acceptance"])
            .args(["--max-examples", "100", "--generation-database", "none", "--no-color"])
            // CI runs the suite's tests side by side on 2 cores: slow is not a failure here.
            .args(["--request-timeout", "30", "--suppress-health-check", "too_slow"])
            .args(streams.iter().flat_map(|path| ["--exclude-path", path.as_str()]))
            .args(["--report", "ndjson", "--report-ndjson-path"])
            .arg(&report)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stdout);
        assert!(output.status.success(), "schemathesis failed as principal {index}:\n{text}");
        let mut fuzzed = std::collections::BTreeMap::new();
        for line in std::fs::read_to_string(&report).unwrap().lines() {
            let event: Value = serde_json::from_str(line).unwrap();
            let finished = &event["ScenarioFinished"];
            if finished["phase"] == "fuzzing" {
                assert_eq!(finished["status"], "success", "{finished}");
                let label = finished["recorder"]["label"].as_str().unwrap().to_owned();
                let cases = finished["recorder"]["cases"].as_object().map_or(0, |c| c.len());
                *fuzzed.entry(label).or_insert(0) += cases;
            }
        }
        for operation in &operations {
            let cases = fuzzed.get(operation).copied().unwrap_or(0);
            assert!(cases >= 100, "{operation}: {cases} examples as principal {index}\n{text}");
        }
    }
}

/// `POST <path>` of every unary operation in the committed document, and the paths of the
/// server-streaming ones.
fn file_operations() -> (Vec<String>, Vec<String>) {
    let text = std::fs::read_to_string(repo_root().join("clients/openapi/openapi.json")).unwrap();
    let document: Value = serde_json::from_str(&text).unwrap();
    let (mut unary, mut streams) = (Vec::new(), Vec::new());
    for (path, item) in document["paths"].as_object().unwrap() {
        if item["post"]["responses"]["200"]["content"].get("text/event-stream").is_some() {
            streams.push(path.clone());
        } else {
            unary.push(format!("POST {path}"));
        }
    }
    assert!(unary.len() >= 5, "{unary:?}");
    (unary, streams)
}
