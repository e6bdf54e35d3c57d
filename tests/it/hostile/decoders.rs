//! Hostile request bodies: the JSON gateway, the binary wire scan and the validator.
//!
//! Each case runs the real `bc-server` as its own process: a crash is the server's, and a
//! resident-memory figure is the server's alone. The decoders' fuzz targets (random mutations
//! from a fixed seed, with the crashes below as seeds) are unit tests beside them, in
//! `src/api/wire/fuzz.rs`.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use better_compute::cli::BearerToken;
use better_compute::error::{Code, Error, MAX_VIOLATIONS};
use better_compute::proto::platform::CreateTenantRequest;
use better_compute::proto::platform::tenants_client::TenantsClient;
use bytes::{Buf, BufMut};
use prost::encoding::{WireType, encode_key, encode_varint};
use serde_json::Value;
use tonic::codec::{Codec, DecodeBuf, Decoder, EncodeBuf, Encoder};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::harness::{ServerProcess, System, curl, tenant_principal};
use better_compute::store::Backend;

/// Sends a request message's bytes as they are, so that a test can send what no generated
/// client would.
#[derive(Clone, Copy, Debug, Default)]
struct RawCodec;

impl Codec for RawCodec {
    type Encode = Vec<u8>;
    type Decode = Vec<u8>;
    type Encoder = RawCodec;
    type Decoder = RawCodec;

    fn encoder(&mut self) -> Self::Encoder {
        RawCodec
    }

    fn decoder(&mut self) -> Self::Decoder {
        RawCodec
    }
}

impl Encoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn encode(&mut self, item: Vec<u8>, dst: &mut EncodeBuf<'_>) -> Result<(), tonic::Status> {
        dst.put_slice(&item);
        Ok(())
    }
}

impl Decoder for RawCodec {
    type Item = Vec<u8>;
    type Error = tonic::Status;

    fn decode(&mut self, src: &mut DecodeBuf<'_>) -> Result<Option<Vec<u8>>, tonic::Status> {
        let bytes = src.copy_to_bytes(src.remaining());
        Ok(Some(bytes.to_vec()))
    }
}

type Authed = InterceptedService<Channel, BearerToken>;

async fn connect(server: &ServerProcess) -> Channel {
    Channel::from_shared(server.endpoint.clone()).unwrap().connect().await.unwrap()
}

/// Calls the gRPC method at `path` with `bytes` as its message, as `token`.
async fn raw_call(
    channel: &Channel,
    token: Option<&str>,
    path: &'static str,
    bytes: Vec<u8>,
) -> Result<Vec<u8>, tonic::Status> {
    let authed: Authed = InterceptedService::new(channel.clone(), BearerToken::new(token).unwrap());
    let mut grpc = tonic::client::Grpc::new(authed);
    grpc.ready().await.unwrap();
    grpc.unary(tonic::Request::new(bytes), path.parse().unwrap(), RawCodec).await.map(tonic::Response::into_inner)
}

fn length_delimited(tag: u32, body: &[u8], out: &mut Vec<u8>) {
    encode_key(tag, WireType::LengthDelimited, out);
    encode_varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

/// A `google.protobuf.Struct` holding `{"k": {"k": ...}}` `depth` levels deep.
fn nested_struct(depth: usize) -> Vec<u8> {
    let mut current = Vec::new();
    for _ in 0..depth {
        // Value { struct_value = 5 }
        let mut value = Vec::new();
        length_delimited(5, &current, &mut value);
        // The map entry { key = 1, value = 2 }
        let mut entry = Vec::new();
        length_delimited(1, b"k", &mut entry);
        length_delimited(2, &value, &mut entry);
        // Struct { fields = 1 }
        current.clear();
        length_delimited(1, &entry, &mut current);
    }
    current
}

/// `Pools/Create` with a well-formed request but for a `policy` nested `depth` deep.
fn pool_create_with_policy(depth: usize) -> Vec<u8> {
    let mut request = Vec::new();
    length_delimited(1, b"acct_00000000000000000000000000", &mut request);
    length_delimited(2, b"deep", &mut request);
    length_delimited(4, b"none", &mut request);
    length_delimited(5, &nested_struct(depth), &mut request);
    request
}

/// A message of `count` varint fields with numbers no request has (1000 to 1999), each 0: three
/// bytes a field.
fn unknown_fields(count: u32) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(count as usize * 3);
    for number in 0..count {
        encode_key(1000 + number % 1000, WireType::Varint, &mut bytes);
        encode_varint(0, &mut bytes);
    }
    bytes
}

/// `{"k0": 0, "k1": 0, ...}` with `count` keys.
pub(super) fn json_with_unknown_keys(count: usize) -> String {
    let mut body = String::with_capacity(count * 12);
    body.push('{');
    for index in 0..count {
        if index > 0 {
            body.push(',');
        }
        body.push_str(&format!("\"k{index}\":0"));
    }
    body.push('}');
    body
}

/// The violations an error lists, after checking that it counts the ones it leaves out.
fn listed_of(details: &Value, found: usize) -> usize {
    let listed = details["fields"].as_array().map_or(0, Vec::len);
    assert!((1..=MAX_VIOLATIONS).contains(&listed), "{listed} listed");
    assert_eq!(details["truncated"], found - listed, "{details}");
    listed
}

/// A JSON call: status, headers and body text.
async fn post(
    server: &ServerProcess,
    path: &str,
    token: Option<&str>,
    headers: &[(&str, &str)],
    body: String,
) -> (u16, reqwest::header::HeaderMap, String) {
    let mut request = reqwest::Client::new()
        .post(format!("{}{path}", server.endpoint))
        .header("content-type", "application/json")
        .body(body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    let response = request.send().await.unwrap();
    let status = response.status().as_u16();
    let headers = response.headers().clone();
    (status, headers, response.text().await.unwrap())
}

/// A JSON call with curl, for a body the server may answer before reading it all (curl stops
/// sending and reads the answer; reqwest reports the broken pipe instead). Returns the status
/// and the body text; `chunked` sends the body with no length.
pub(super) fn post_unread(
    server: &ServerProcess,
    path: &str,
    token: Option<&str>,
    body: &str,
    chunked: bool,
) -> (u16, String) {
    let dir = tempfile::tempdir().unwrap();
    let (input, output) = (dir.path().join("body.json"), dir.path().join("answer.json"));
    std::fs::write(&input, body).unwrap();
    let mut args = vec![
        "-s".to_owned(),
        "-o".to_owned(),
        output.display().to_string(),
        "-w".to_owned(),
        "%{http_code}".to_owned(),
        "-H".to_owned(),
        "content-type: application/json".to_owned(),
        "--data-binary".to_owned(),
        format!("@{}", input.display()),
    ];
    if let Some(token) = token {
        args.extend(["-H".to_owned(), format!("authorization: Bearer {token}")]);
    }
    if chunked {
        args.extend(["-H".to_owned(), "transfer-encoding: chunked".to_owned()]);
    }
    args.push(format!("{}{path}", server.endpoint));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let status = curl(&args).parse().unwrap_or(0);
    (status, std::fs::read_to_string(&output).unwrap_or_default())
}

pub(super) fn json_error(text: &str) -> Value {
    serde_json::from_str::<Value>(text).unwrap_or_else(|_| panic!("an error body: {text}"))["error"].clone()
}

#[tokio::test]
async fn a_struct_nested_3000_deep_is_refused_and_the_server_stays_up() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let channel = connect(&server).await;
    let bytes = pool_create_with_policy(3000);
    assert!(bytes.len() < 64 * 1024, "the attack is small: {} bytes", bytes.len());
    let path = "/bettercompute.platform.v1.Pools/Create";
    // Without a key nothing of the body is looked at.
    let status = raw_call(&channel, None, path, bytes.clone()).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::Unauthenticated, "{status:?}");
    server.assert_up();
    let status = raw_call(&channel, Some(&server.admin_token), path, bytes).await.unwrap_err();
    server.assert_up();
    let error = Error::from_status(&status);
    assert_eq!(error.code, Code::InvalidInput, "{status:?}");

    // Within the decoder's depth a mistyped field is still found and named.
    let mut shallow = pool_create_with_policy(40);
    encode_key(3, WireType::Varint, &mut shallow);
    encode_varint(7, &mut shallow);
    let status = raw_call(&channel, Some(&server.admin_token), path, shallow).await.unwrap_err();
    let error = Error::from_status(&status);
    assert!(error.message.contains("description: has the wrong type"), "{}", error.message);
    server.assert_up();
}

#[tokio::test]
async fn a_json_body_from_a_caller_without_a_key_is_refused_unread() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let body = json_with_unknown_keys(300_000);
    assert!(body.len() < 4 * 1024 * 1024 && body.len() > 3 * 1024 * 1024, "{} bytes", body.len());
    let baseline = server.rss_mib();
    for _ in 0..12 {
        let (status, text) = post_unread(&server, "/api/platform/tenants/create", None, &body, false);
        assert_eq!(status, 401, "{text}");
        assert_eq!(json_error(&text)["code"], "UNAUTHENTICATED");
        assert!(text.len() < 1024, "the refusal is small: {} bytes", text.len());
    }
    server.assert_up();
    let after = server.rss_mib();
    eprintln!("resident memory: {baseline} MiB before, {after} MiB after");
    // Parsing one such body took hundreds of MiB (12 of them, 2.6 GB).
    assert!(after < baseline + 64, "resident memory went from {baseline} MiB to {after} MiB");
}

#[tokio::test]
async fn unknown_json_keys_from_a_caller_with_a_key_answer_a_bounded_list() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let body = json_with_unknown_keys(300_000);
    let baseline = server.rss_mib();
    for _ in 0..12 {
        let (status, _, text) =
            post(&server, "/api/platform/tenants/create", Some(&server.admin_token), &[], body.clone()).await;
        assert_eq!(status, 400, "{}", &text[..text.len().min(500)]);
        assert!(text.len() < 64 * 1024, "the answer is bounded: {} bytes", text.len());
        let error = json_error(&text);
        listed_of(&error["details"], 300_000);
        let fields = error["details"]["fields"].as_array().unwrap();
        let naming_accepted =
            fields.iter().filter(|f| f["description"].as_str().unwrap().contains("accepted:")).count();
        assert_eq!(naming_accepted, 1, "the accepted fields are named once: {error}");
    }
    server.assert_up();
    let after = server.rss_mib();
    eprintln!("resident memory: {baseline} MiB before, {after} MiB after");
    // 12 such requests took the server to 2.6 GB; parsing one still costs some, so the bound
    // is loose but far from that.
    assert!(after < baseline + 200, "resident memory went from {baseline} MiB to {after} MiB");
}

#[tokio::test]
async fn a_unique_list_far_past_its_size_is_refused_at_once_naming_the_size() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let zones: Vec<String> = (0..120_000).map(|i| format!("us-central{i}-a")).collect();
    let body = serde_json::json!({
        "provider": "gke", "name": "a", "credentials": "x", "zones": zones,
    })
    .to_string();
    let cpu_before = server.cpu_time();
    let call = || post(&server, "/api/platform/accounts/create", Some(&server.admin_token), &[], body.clone());
    let calls_done = AtomicBool::new(false);
    let calls = async {
        let answers = tokio::join!(call(), call(), call());
        calls_done.store(true, Ordering::Release);
        answers
    };
    // /healthz is asked again and again for as long as the calls are in, each answer timed.
    let health = async {
        let mut answers = Vec::new();
        while !calls_done.load(Ordering::Acquire) {
            let started = Instant::now();
            let status = reqwest::get(format!("{}/healthz", server.endpoint)).await.unwrap().status().as_u16();
            answers.push((status, started.elapsed()));
        }
        answers
    };
    let ((first, second, third), health) = tokio::join!(calls, health);
    for (status, _, text) in [first, second, third] {
        assert_eq!(status, 400, "{}", &text[..text.len().min(500)]);
        let error = json_error(&text);
        let zones = error["details"]["fields"].as_array().unwrap().iter().find(|f| f["field"] == "zones").cloned();
        let zones = zones.unwrap_or_else(|| panic!("zones is named: {error}"));
        assert!(zones["description"].as_str().unwrap().contains("at most 64 items"), "{zones}");
    }
    // One such call held a thread for 15.8 s, and three made /healthz wait 14 s. Processor time,
    // not the wall clock, so that a busy machine does not fail it: decoding stops at the limit.
    let cpu = server.cpu_time() - cpu_before;
    assert!(cpu < Duration::from_secs(3), "three refusals used {cpu:?} of processor time");
    assert!(!health.is_empty(), "/healthz was asked while the calls were in");
    assert!(
        health.iter().all(|&(status, took)| status == 200 && took < Duration::from_secs(2)),
        "every /healthz answers 200 within 2 s while the calls are in: {health:?}"
    );
    server.assert_up();
}

#[tokio::test]
async fn a_viewer_sending_a_million_unknown_field_numbers_costs_bounded_memory() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let channel = connect(&server).await;
    let mut tenants = TenantsClient::new(InterceptedService::new(
        channel.clone(),
        BearerToken::new(Some(&server.admin_token)).unwrap(),
    ));
    tenants.create(CreateTenantRequest { id: "acme".into(), ..Default::default() }).await.unwrap();
    let viewer = tenant_principal(&server.store, "acme", "viewer").await;
    // A read the viewer may make (its tenant's pools), and 1.3M fields the message does not have.
    let mut bytes = Vec::new();
    length_delimited(1, b"acme", &mut bytes);
    bytes.extend(unknown_fields(1_300_000));
    assert!(bytes.len() <= 4 * 1024 * 1024, "{} bytes", bytes.len());
    let baseline = server.rss_mib();
    for _ in 0..3 {
        let status =
            raw_call(&channel, Some(&viewer), "/bettercompute.compute.v1.Pools/List", bytes.clone()).await.unwrap_err();
        let error = Error::from_status(&status);
        assert_eq!(error.code, Code::InvalidInput, "{status:?}");
        listed_of(&Value::Object(*error.details), 1_300_000);
    }
    server.assert_up();
    let after = server.rss_mib();
    eprintln!("resident memory: {baseline} MiB before, {after} MiB after");
    // One such call drove the server to 3.8 GB.
    assert!(after < baseline + 100, "resident memory went from {baseline} MiB to {after} MiB");
}

#[tokio::test]
async fn thousands_of_violations_over_grpc_end_cleanly_and_the_connection_serves_on() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let channel = connect(&server).await;
    let path = "/bettercompute.platform.v1.Tenants/Create";
    // A valid id, then 5,000 fields the message does not have.
    let mut bytes = Vec::new();
    length_delimited(1, b"acme", &mut bytes);
    bytes.extend(unknown_fields(5_000));
    let status = raw_call(&channel, Some(&server.admin_token), path, bytes).await.unwrap_err();
    let error = Error::from_status(&status);
    assert_eq!((status.code(), error.code), (tonic::Code::InvalidArgument, Code::InvalidInput), "{status:?}");
    let listed = listed_of(&Value::Object(*error.details.clone()), 5_000);
    assert!(error.message.ends_with(" more"), "{}", error.message);
    assert!(listed >= 20, "a useful number are listed: {listed}");

    // The same connection serves the next call.
    let mut tenants =
        TenantsClient::new(InterceptedService::new(channel, BearerToken::new(Some(&server.admin_token)).unwrap()));
    let created = tenants.create(CreateTenantRequest { id: "acme".into(), ..Default::default() }).await.unwrap();
    assert_eq!(created.into_inner().id, "acme");
    server.assert_up();
}

#[tokio::test]
async fn a_json_body_over_the_limit_is_413() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let too_long = format!("{{\"id\": \"{}\"}}", "a".repeat(5 * 1024 * 1024));
    // Declared too long: refused before it is read, with or without a key.
    for token in [None, Some(server.admin_token.as_str())] {
        let (status, text) = post_unread(&server, "/api/platform/tenants/create", token, &too_long, false);
        assert_eq!(status, 413, "{text}");
        let error = json_error(&text);
        assert_eq!(error["code"], "INVALID_INPUT");
        assert_eq!(error["details"]["limitBytes"], 4 * 1024 * 1024, "{error}");
    }
    // Sent in chunks with no length: refused as it is read.
    let (status, text) =
        post_unread(&server, "/api/platform/tenants/create", Some(&server.admin_token), &too_long, true);
    assert_eq!(status, 413, "{text}");
    assert_eq!(json_error(&text)["details"]["limitBytes"], 4 * 1024 * 1024);
    server.assert_up();
}

#[tokio::test]
async fn a_hostile_request_id_is_replaced_and_a_plain_one_kept() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let long = "a".repeat(129);
    for hostile in ["two words", "<script>alert(1)</script>", "a\"b", long.as_str(), "semi;colon", "üñí"] {
        let (status, headers, text) = post(
            &server,
            "/api/platform/tenants/list",
            Some(&server.admin_token),
            &[("x-request-id", hostile)],
            "{}".into(),
        )
        .await;
        assert_eq!(status, 200, "{text}");
        let id = headers["x-request-id"].to_str().unwrap();
        assert!(id.starts_with("req_"), "{hostile:?} was replaced, not kept: {id:?}");
        // An error the gateway answers itself carries a safe id too.
        let (status, headers, _) =
            post(&server, "/api/platform/nothing/here", None, &[("x-request-id", hostile)], "{}".into()).await;
        assert_eq!(status, 404);
        assert!(headers["x-request-id"].to_str().unwrap().starts_with("req_"));
    }
    let plain = "build-42.step:3_retry";
    let (_, headers, _) =
        post(&server, "/api/platform/tenants/list", Some(&server.admin_token), &[("x-request-id", plain)], "{}".into())
            .await;
    assert_eq!(headers["x-request-id"].to_str().unwrap(), plain);

    // Over gRPC too.
    let channel = connect(&server).await;
    let mut tenants =
        TenantsClient::new(InterceptedService::new(channel, BearerToken::new(Some(&server.admin_token)).unwrap()));
    let mut request = tonic::Request::new(better_compute::proto::platform::ListTenantsRequest::default());
    request.metadata_mut().insert("x-request-id", "two words".parse().unwrap());
    let response = tenants.list(request).await.unwrap();
    assert!(response.metadata().get("x-request-id").unwrap().to_str().unwrap().starts_with("req_"));
}

/// The substrate policy is read from a pool's policy document: a body made of faults (thousands
/// of flavors, thousands of unknown keys in each, labels far past their count) is answered with
/// a bounded list of faults at once, and nothing is written.
#[tokio::test]
async fn a_substrate_policy_made_of_faults_answers_a_bounded_list_and_writes_nothing() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let admin = server.admin_token.clone();
    let account = server
        .ok(
            "/api/platform/accounts/create",
            &admin,
            serde_json::json!({"provider": "gke", "name": "gke", "credentials": crate::harness::gke_key(),
                "endpoint": "http://127.0.0.1:1", "zones": ["us-central1-a"]}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let junk: serde_json::Map<String, Value> = (0..2000).map(|i| (format!("k{i}"), Value::from(i))).collect();
    let flavor = serde_json::json!({"name": "A", "machineType": "?", "labels": junk.clone(), "taints": [junk.clone()]});
    let flavors: Vec<Value> = (0..15).map(|_| flavor.clone()).collect();
    let bodies = [
        // Too many flavors: refused by their count, the items never read.
        serde_json::json!({"kind": "kubernetes", "account": account, "cluster": {"adopt": junk.clone()},
            "flavors": vec![serde_json::json!({"name": "A", "colour": "red"}); 50000]}),
        // Within the count, every item a heap of faults.
        serde_json::json!({"kind": "kubernetes", "account": account, "cluster": junk, "flavors": flavors}),
    ];
    for substrate in bodies {
        let body = serde_json::json!({"accountId": account, "name": "hostile", "billingMode": "none",
            "policy": {"substrate": substrate}})
        .to_string();
        assert!(body.len() < 4 << 20, "within the body limit: {} bytes", body.len());
        let (status, text) = post_unread(&server, "/api/platform/pools/create", Some(&admin), &body, false);
        assert_eq!(status, 400, "{}", &text[..text.len().min(500)]);
        let error = json_error(&text);
        assert_eq!(error["code"], "INVALID_INPUT");
        assert!(error["details"]["fields"].as_array().unwrap().len() <= MAX_VIOLATIONS);
        assert!(error["details"]["fields"][0]["field"].as_str().unwrap().starts_with("policy.substrate"), "{error}");
        server.assert_up();
    }
    let pools = server.ok("/api/platform/pools/list", &admin, serde_json::json!({})).await;
    assert_eq!(pools["pools"], serde_json::json!([]), "nothing was written");
}
