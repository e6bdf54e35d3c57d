//! A deleted tenant's keys and open watches end at once, on every server process; a tenant's principal reads its own events and usage without naming its tenant.
//!
//! Deleting a tenant refused its principals' writes but not their reads: its admin's and
//! viewer's keys still listed its events, and a watch opened before the deletion stayed open.
//! And `events/list`, `events/watch` (and `usage/list`) without `tenantId` answered
//! `ACCESS_DENIED` to a tenant's principal, where the API says they default to the caller's own
//! tenant.

use std::time::{Duration, Instant};

use better_compute::cli::BearerToken;
use better_compute::proto::compute::events_client::EventsClient;
use better_compute::proto::compute::{Event, ListEventsRequest, WatchEventsRequest};
use better_compute::store::{Backend, Store};
use serde_json::{Value, json};
use tonic::Streaming;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::harness::{System, grpc_error, tenant_principal};

crate::on_both_backends!(
    deleting_a_tenant_ends_its_keys_reads_and_its_open_watches_at_once,
    a_tenants_principal_lists_and_watches_its_own_events_without_naming_its_tenant,
);

/// How long an ended watch may take to end: well under the periodic check, so that only the
/// deletion's own signal can meet it.
const PROMPTLY: Duration = Duration::from_secs(5);

type EventsGrpc = EventsClient<InterceptedService<Channel, BearerToken>>;

async fn events_client(endpoint: &str, token: &str) -> EventsGrpc {
    let channel = Channel::from_shared(endpoint.to_owned()).unwrap().connect().await.unwrap();
    EventsClient::new(InterceptedService::new(channel, BearerToken::new(Some(token)).unwrap()))
}

/// A gRPC watch as `token` of `tenant`'s events (the caller's own when empty), from now on.
async fn grpc_watch(
    endpoint: &str,
    token: &str,
    store: &Store,
    tenant: &str,
) -> Result<Streaming<Event>, tonic::Status> {
    let after = store.event_last_seq().await.unwrap().to_string();
    let request = WatchEventsRequest { after, tenant_id: tenant.to_owned(), ..Default::default() };
    events_client(endpoint, token).await.watch(request).await.map(tonic::Response::into_inner)
}

/// A JSON watch (server-sent events) as `token` of `body`'s events, from now on.
async fn json_watch(endpoint: &str, token: &str, store: &Store, mut body: Value) -> reqwest::Response {
    body["after"] = json!(store.event_last_seq().await.unwrap().to_string());
    reqwest::Client::new()
        .post(format!("{endpoint}/api/compute/events/watch"))
        .bearer_auth(token)
        .json(&body)
        .send()
        .await
        .unwrap()
}

async fn post(endpoint: &str, token: &str, path: &str, body: Value) -> (u16, Value) {
    let response =
        reqwest::Client::new().post(format!("{endpoint}{path}")).bearer_auth(token).json(&body).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// Reads the gRPC watch until it ends, within `limit`; what it sent before it ended, and how.
async fn until_ended(stream: &mut Streaming<Event>, limit: Duration) -> (Vec<Event>, Result<(), tonic::Status>) {
    let deadline = Instant::now() + limit;
    let mut sent = Vec::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(next) = tokio::time::timeout(left, stream.message()).await else {
            panic!("the watch is still open after {limit:?}; it sent {sent:?}");
        };
        match next {
            Ok(Some(event)) => sent.push(event),
            Ok(None) => return (sent, Ok(())),
            Err(status) => return (sent, Err(status)),
        }
    }
}

/// Reads the JSON watch until it ends, within `limit`; its text.
async fn sse_until_ended(response: &mut reqwest::Response, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    let mut text = String::new();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let Ok(chunk) = tokio::time::timeout(left, response.chunk()).await else {
            panic!("the JSON watch is still open after {limit:?}: {text}");
        };
        match chunk {
            Ok(Some(chunk)) => text.push_str(std::str::from_utf8(&chunk).unwrap()),
            Ok(None) | Err(_) => return text,
        }
    }
}

/// Reads the JSON watch until `count` events have arrived, within `limit`.
async fn sse_events(response: &mut reqwest::Response, count: usize, limit: Duration) -> String {
    let deadline = Instant::now() + limit;
    let mut text = String::new();
    while text.matches("\n\n").count() < count {
        let left = deadline.saturating_duration_since(Instant::now());
        let chunk = tokio::time::timeout(left, response.chunk()).await.expect("the JSON watch delivers in time");
        match chunk.unwrap() {
            Some(chunk) => text.push_str(std::str::from_utf8(&chunk).unwrap()),
            None => panic!("the JSON watch ended: {text}"),
        }
    }
    text
}

/// Checks that `token` reads nothing more, over JSON and gRPC: `UNAUTHENTICATED`.
async fn reads_are_unauthenticated(endpoint: &str, token: &str, who: &str) {
    for (path, body) in [
        ("/api/compute/events/list", json!({"tenantId": "acme"})),
        ("/api/compute/events/list", json!({})),
        ("/api/platform/principals/list", json!({"tenantId": "acme"})),
    ] {
        let (status, answer) = post(endpoint, token, path, body).await;
        assert_eq!(
            (status, answer["error"]["code"].as_str()),
            (401, Some("UNAUTHENTICATED")),
            "{who} {path}: {answer}"
        );
    }
    let request = ListEventsRequest { tenant_id: "acme".to_owned(), ..Default::default() };
    let refused = events_client(endpoint, token).await.list(request).await.unwrap_err();
    assert_eq!(grpc_error(&refused).code.as_str(), "UNAUTHENTICATED", "{who} over gRPC: {refused:?}");
}

/// The acme admin's and viewer's keys, used once each so that every server has cached them, and
/// their watches (gRPC as the viewer, JSON as the admin) shown to deliver.
struct Acme {
    admin: String,
    viewer: String,
    grpc: Streaming<Event>,
    sse: reqwest::Response,
}

async fn acme_with_open_watches(store: &Store, watch_endpoint: &str, endpoints: &[&str], operator: &str) -> Acme {
    let admin = tenant_principal(store, "acme", "admin").await;
    let viewer = tenant_principal(store, "acme", "viewer").await;
    for endpoint in endpoints {
        for token in [&admin, &viewer] {
            let (status, answer) = post(endpoint, token, "/api/compute/events/list", json!({"tenantId": "acme"})).await;
            assert_eq!(status, 200, "acme's keys read before the deletion: {answer}");
        }
    }
    let mut grpc = grpc_watch(watch_endpoint, &viewer, store, "acme").await.unwrap();
    let mut sse = json_watch(watch_endpoint, &admin, store, json!({"tenantId": "acme"})).await;
    assert_eq!(sse.status(), 200);
    let touch = json!({"tenantId": "acme", "description": "before"});
    let (status, answer) = post(endpoints[0], operator, "/api/platform/tenants/update", touch).await;
    assert_eq!(status, 200, "{answer}");
    let first = tokio::time::timeout(PROMPTLY, grpc.message()).await.expect("the watch delivers").unwrap();
    assert_eq!(first.map(|e| e.r#type).as_deref(), Some("platform.tenant.updated"));
    sse_events(&mut sse, 1, PROMPTLY).await;
    Acme { admin, viewer, grpc, sse }
}

/// Checks that acme's watches ended within [`PROMPTLY`] of the deletion with `UNAUTHENTICATED`,
/// having sent at most the deletion's own event.
async fn watches_ended(acme: &mut Acme) {
    let started = Instant::now();
    let (sent, ended) = until_ended(&mut acme.grpc, PROMPTLY).await;
    let status = ended.expect_err("the gRPC watch ends with an error");
    assert_eq!(grpc_error(&status).code.as_str(), "UNAUTHENTICATED", "{status:?}");
    assert!(sent.iter().all(|e| e.r#type == "platform.tenant.deleted"), "nothing but the deletion: {sent:?}");
    let text = sse_until_ended(&mut acme.sse, PROMPTLY).await;
    let last = text.split("\n\n").filter(|b| !b.is_empty()).last().unwrap_or_default();
    assert!(last.starts_with("event: error") && last.contains("UNAUTHENTICATED"), "{text}");
    assert!(started.elapsed() < PROMPTLY, "ended in {:?}", started.elapsed());
}

async fn deleting_a_tenant_ends_its_keys_reads_and_its_open_watches_at_once(backend: Backend) {
    let server = System::on(backend).server().await;
    for id in ["acme", "globex"] {
        server.admin_ok("/api/platform/tenants/create", json!({"id": id})).await;
    }
    let globex = tenant_principal(&server.store, "globex", "viewer").await;
    let mut acme =
        acme_with_open_watches(&server.store, &server.endpoint, &[&server.endpoint], &server.admin_token).await;

    server.admin_ok("/api/platform/tenants/delete", json!({"tenantId": "acme"})).await;
    watches_ended(&mut acme).await;
    reads_are_unauthenticated(&server.endpoint, &acme.admin, "acme's admin").await;
    reads_are_unauthenticated(&server.endpoint, &acme.viewer, "acme's viewer").await;
    let (status, answer) = server.post("/api/compute/events/list", Some(&globex), json!({"tenantId": "globex"})).await;
    assert_eq!(status, 200, "another tenant's keys go on: {answer}");
    server.stop().await;
}

/// A tenant deleted through one server ends its keys and watches on another process sharing the
/// store at once: its cached callers and its open streams alike.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_deleted_through_one_server_ends_its_keys_and_watches_on_another_process() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let other = server.in_process().await;
    let operator = server.admin_token.clone();
    let (status, answer) =
        post(&other.endpoint, &operator, "/api/platform/tenants/create", json!({"id": "acme"})).await;
    assert_eq!(status, 200, "{answer}");
    let endpoints = [other.endpoint.as_str(), server.endpoint.as_str()];
    let mut acme = acme_with_open_watches(&server.store, &server.endpoint, &endpoints, &operator).await;

    let (status, answer) =
        post(&other.endpoint, &operator, "/api/platform/tenants/delete", json!({"tenantId": "acme"})).await;
    assert_eq!(status, 200, "{answer}");
    watches_ended(&mut acme).await;
    reads_are_unauthenticated(&server.endpoint, &acme.admin, "acme's admin, on the other process").await;
    reads_are_unauthenticated(&server.endpoint, &acme.viewer, "acme's viewer, on the other process").await;
    server.assert_up();
    other.stop().await;
}

async fn a_tenants_principal_lists_and_watches_its_own_events_without_naming_its_tenant(backend: Backend) {
    let server = System::on(backend).server().await;
    for id in ["acme", "globex"] {
        server.admin_ok("/api/platform/tenants/create", json!({"id": id})).await;
    }
    let viewer = tenant_principal(&server.store, "acme", "viewer").await;
    let globex_viewer = tenant_principal(&server.store, "globex", "viewer").await;

    let (status, listed) = server.post("/api/compute/events/list", Some(&viewer), json!({})).await;
    assert_eq!(status, 200, "a list without tenantId is the caller's own tenant's: {listed}");
    let tenants: Vec<&str> =
        listed["events"].as_array().unwrap().iter().map(|e| e["tenantId"].as_str().unwrap()).collect();
    assert!(!tenants.is_empty() && tenants.iter().all(|t| *t == "acme"), "only acme's events: {listed}");
    let listed = events_client(&server.endpoint, &viewer).await.list(ListEventsRequest::default()).await.unwrap();
    let listed = listed.into_inner().events;
    assert!(!listed.is_empty() && listed.iter().all(|e| e.tenant_id == "acme"), "over gRPC: {listed:?}");

    let mut grpc = grpc_watch(&server.endpoint, &viewer, &server.store, "").await.expect("a watch of its own tenant");
    let mut sse = json_watch(&server.endpoint, &viewer, &server.store, json!({})).await;
    assert_eq!(sse.status(), 200, "a JSON watch without tenantId");
    for (tenant, description) in [("globex", "not acme's"), ("acme", "acme's")] {
        server.admin_ok("/api/platform/tenants/update", json!({"tenantId": tenant, "description": description})).await;
    }
    let first = tokio::time::timeout(PROMPTLY, grpc.message()).await.expect("the watch delivers").unwrap().unwrap();
    assert_eq!((first.tenant_id.as_str(), first.subject.as_str()), ("acme", "acme"), "globex's event is not sent");
    let text = sse_events(&mut sse, 1, PROMPTLY).await;
    assert!(text.contains("\"tenantId\":\"acme\"") && !text.contains("globex"), "{text}");

    // Usage reads default the same way.
    let period = json!({"start": "2020-01-01T00:00:00Z", "end": "2100-01-01T00:00:00Z"});
    let (status, usage) = server.post("/api/compute/usage/list", Some(&viewer), period).await;
    assert_eq!(status, 200, "usage without tenantId is the caller's own tenant's: {usage}");

    // Naming another tenant is still refused, and the default is the caller's own, never all.
    let (status, answer) = server.post("/api/compute/events/list", Some(&viewer), json!({"tenantId": "globex"})).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{answer}");
    let (status, theirs) = server.post("/api/compute/events/list", Some(&globex_viewer), json!({})).await;
    assert_eq!(status, 200, "{theirs}");
    assert!(theirs["events"].as_array().unwrap().iter().all(|e| e["tenantId"] == "globex"), "{theirs}");
    server.stop().await;
}
