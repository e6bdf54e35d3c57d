//! Event watches: revocation reaches open streams, and how many one caller may hold.
//!
//! A watch was authenticated once: after its key was revoked it kept delivering new events. Now
//! an open watch ends (`UNAUTHENTICATED`, or `ACCESS_DENIED` when the binding that let it read
//! is gone) at the revocation's signal, in this process and in another one sharing the store,
//! and at a periodic check when no signal comes. Watches were unbounded, each polling the store:
//! now they are capped per principal and per tenant, and served from one poller per process.

use std::time::{Duration, Instant};

use better_compute::cli::BearerToken;
use better_compute::proto::compute::events_client::EventsClient;
use better_compute::proto::compute::{Event, WatchEventsRequest};
use better_compute::store::{
    Backend, Store, WATCH_POLL, WATCH_RECHECK, WATCHES_PER_PRINCIPAL, WATCHES_PER_TENANT, now_micros,
};
use serde_json::{Value, json};
use tonic::Streaming;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::harness::{System, grpc_error, tenant_principal};
use crate::harness::{eventually, poll};
use crate::on_both_backends;

/// How long a revoked watch may stay open when the revocation was announced.
const PROMPTLY: Duration = Duration::from_secs(5);

/// A viewer of `tenant` with its key, principal and binding ids.
struct Viewer {
    token: String,
    key_id: String,
    principal_id: String,
    binding_id: String,
}

async fn viewer(store: &Store, tenant: &str) -> Viewer {
    let token = tenant_principal(store, tenant, "viewer").await;
    let key_id = token.split_once('.').unwrap().0.to_owned();
    let principal_id = store.api_key_fetch(&key_id).await.unwrap().unwrap().principal_id;
    let binding_id = store.role_binding_list_for_principal(&principal_id).await.unwrap()[0].id.clone();
    Viewer { token, key_id, principal_id, binding_id }
}

/// A watch of `tenant`'s events from now on, over gRPC.
async fn grpc_watch(
    endpoint: &str,
    token: &str,
    store: &Store,
    tenant: &str,
) -> Result<Streaming<Event>, tonic::Status> {
    let channel = Channel::from_shared(endpoint.to_owned()).unwrap().connect().await.unwrap();
    grpc_watch_on(channel, token, store, tenant).await
}

async fn grpc_watch_on(
    channel: Channel,
    token: &str,
    store: &Store,
    tenant: &str,
) -> Result<Streaming<Event>, tonic::Status> {
    let mut client = EventsClient::new(InterceptedService::new(channel, BearerToken::new(Some(token)).unwrap()));
    let after = store.event_last_seq().await.unwrap().to_string();
    let request = WatchEventsRequest { after, tenant_id: tenant.to_owned(), ..Default::default() };
    client.watch(request).await.map(tonic::Response::into_inner)
}

/// A watch of `tenant`'s events from now on, over the JSON gateway (server-sent events).
async fn json_watch(endpoint: &str, token: &str, store: &Store, tenant: &str) -> reqwest::Response {
    let after = store.event_last_seq().await.unwrap().to_string();
    reqwest::Client::new()
        .post(format!("{endpoint}/api/compute/events/watch"))
        .bearer_auth(token)
        .json(&json!({"after": after, "tenantId": tenant}))
        .send()
        .await
        .unwrap()
}

/// Writes one event of `tenant` through the API, as the operator.
async fn touch(endpoint: &str, admin: &str, tenant: &str, description: &str) {
    let (status, body) =
        post(endpoint, admin, "/api/platform/tenants/update", json!({"tenantId": tenant, "description": description}))
            .await;
    assert_eq!(status, 200, "{body}");
}

async fn post(endpoint: &str, token: &str, path: &str, body: Value) -> (u16, Value) {
    let response =
        reqwest::Client::new().post(format!("{endpoint}{path}")).bearer_auth(token).json(&body).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

/// The next gRPC message, within `limit`.
async fn next_message(stream: &mut Streaming<Event>, limit: Duration) -> Result<Option<Event>, tonic::Status> {
    tokio::time::timeout(limit, stream.message()).await.expect("the watch answers in time")
}

/// Server-sent events read until `count` have arrived or the stream ended, within `limit`.
async fn read_events(response: &mut reqwest::Response, text: &mut String, count: usize, limit: Duration) -> bool {
    let deadline = Instant::now() + limit;
    while text.matches("\n\n").count() < count {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, response.chunk()).await.expect("the JSON watch answers in time") {
            Ok(Some(chunk)) => text.push_str(std::str::from_utf8(&chunk).unwrap()),
            Ok(None) | Err(_) => return false,
        }
    }
    true
}

/// The ways access is taken away, and the code an open watch ends with.
#[derive(Clone, Copy, Debug)]
enum Revocation {
    KeyRevoked,
    PrincipalDeleted,
    BindingRemoved,
}

impl Revocation {
    const ALL: [Revocation; 3] = [Revocation::KeyRevoked, Revocation::PrincipalDeleted, Revocation::BindingRemoved];

    /// Takes `viewer`'s access away through the API at `endpoint`.
    async fn apply(self, endpoint: &str, admin: &str, tenant: &str, viewer: &Viewer) {
        let (path, body) = match self {
            Revocation::KeyRevoked => {
                ("/api/platform/apiKeys/revoke", json!({"tenantId": tenant, "apiKeyId": viewer.key_id}))
            }
            Revocation::PrincipalDeleted => {
                ("/api/platform/principals/delete", json!({"tenantId": tenant, "principalId": viewer.principal_id}))
            }
            Revocation::BindingRemoved => {
                ("/api/platform/roleBindings/delete", json!({"tenantId": tenant, "roleBindingId": viewer.binding_id}))
            }
        };
        let (status, body) = post(endpoint, admin, path, body).await;
        assert_eq!(status, 200, "{self:?}: {body}");
    }

    fn code(self) -> &'static str {
        match self {
            Revocation::KeyRevoked | Revocation::PrincipalDeleted => "UNAUTHENTICATED",
            Revocation::BindingRemoved => "ACCESS_DENIED",
        }
    }
}

/// Opens a gRPC and a JSON watch as a fresh viewer of `acme` on `watch_endpoint`, checks that
/// both deliver, takes the viewer's access away through `revoke_endpoint`, writes one more event,
/// and checks that both streams end within `limit` with `revocation`'s code and without it.
async fn revoked_watches_end(
    watch_endpoint: &str,
    revoke_endpoint: &str,
    admin: &str,
    store: &Store,
    revocation: Revocation,
    limit: Duration,
) {
    let viewer = viewer(store, "acme").await;
    let mut grpc = grpc_watch(watch_endpoint, &viewer.token, store, "acme").await.unwrap();
    let mut sse = json_watch(watch_endpoint, &viewer.token, store, "acme").await;
    assert_eq!(sse.status(), 200);
    touch(revoke_endpoint, admin, "acme", "before").await;
    let before = next_message(&mut grpc, PROMPTLY).await.unwrap().expect("an event before the revocation");
    assert_eq!(before.r#type, "platform.tenant.updated");
    let mut text = String::new();
    assert!(read_events(&mut sse, &mut text, 1, PROMPTLY).await, "the JSON watch delivers: {text}");

    revocation.apply(revoke_endpoint, admin, "acme", &viewer).await;
    let started = Instant::now();
    touch(revoke_endpoint, admin, "acme", "after").await;

    let ended = next_message(&mut grpc, limit).await;
    let status = ended.expect_err(&format!("{revocation:?}: the gRPC watch ends with an error, not an event"));
    assert_eq!(grpc_error(&status).code.as_str(), revocation.code(), "{revocation:?}: {status:?}");
    assert!(next_message(&mut grpc, PROMPTLY).await.is_ok_and(|m| m.is_none()), "the gRPC stream is over");

    let ended = !read_events(&mut sse, &mut text, 3, limit).await;
    assert!(ended, "{revocation:?}: the JSON watch ends: {text}");
    let blocks: Vec<&str> = text.split("\n\n").filter(|b| !b.is_empty()).collect();
    assert_eq!(blocks.len(), 2, "{revocation:?}: the event before, then the error, and no event after: {text}");
    assert!(blocks[1].starts_with("event: error") && blocks[1].contains(revocation.code()), "{text}");
    assert!(started.elapsed() < limit, "{revocation:?}: ended in {:?}", started.elapsed());
}

async fn a_watch_ends_when_its_key_is_revoked_its_principal_deleted_or_its_binding_removed(backend: Backend) {
    let server = System::on(backend).server().await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    for revocation in Revocation::ALL {
        revoked_watches_end(
            &server.endpoint,
            &server.endpoint,
            &server.admin_token,
            &server.store,
            revocation,
            PROMPTLY,
        )
        .await;
    }
    server.stop().await;
}

/// A revocation through one server ends the watches open on another process of the same store,
/// at once (its `NOTIFY`), not at the periodic check.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revocation_through_one_server_ends_the_watches_of_another_process() {
    assert!(PROMPTLY < WATCH_RECHECK, "the deadline must tell the signal from the periodic check");
    let server = System::on(Backend::Postgres).process(&[]).await;
    let other = server.in_process().await;
    let admin = server.admin_token.clone();
    let (status, body) = post(&other.endpoint, &admin, "/api/platform/tenants/create", json!({"id": "acme"})).await;
    assert_eq!(status, 200, "{body}");
    for revocation in Revocation::ALL {
        revoked_watches_end(&server.endpoint, &other.endpoint, &admin, &server.store, revocation, PROMPTLY).await;
    }
    server.assert_up();
    other.stop().await;
}

/// A key revoked behind the servers' back (no signal at all: another store, as on a database
/// without `NOTIFY`) still ends the watch, at the periodic check ([`WATCH_RECHECK`]).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_revoked_without_a_signal_ends_its_watch_at_the_periodic_check() {
    let server = System::on(Backend::Sqlite).server().await;
    let db = server.db.clone();
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let viewer = viewer(&server.store, "acme").await;
    let mut grpc = grpc_watch(&server.endpoint, &viewer.token, &server.store, "acme").await.unwrap();

    let elsewhere = db.store().await;
    elsewhere.api_key_revoke(&viewer.key_id, now_micros()).await.unwrap();
    let started = Instant::now();
    server.admin_ok("/api/platform/tenants/update", json!({"tenantId": "acme", "description": "after"})).await;
    // Without a signal, what was written before the check may still come; the check ends it.
    let status = loop {
        let left = (started + WATCH_RECHECK + PROMPTLY).saturating_duration_since(Instant::now());
        match next_message(&mut grpc, left).await {
            Ok(Some(_)) => continue,
            Ok(None) => panic!("the watch ends with an error, not cleanly"),
            Err(status) => break status,
        }
    };
    assert_eq!(grpc_error(&status).code.as_str(), "UNAUTHENTICATED", "{status:?}");
    assert!(started.elapsed() < WATCH_RECHECK + PROMPTLY, "ended in {:?}", started.elapsed());
    server.stop().await;
}

/// The principal's cap: one watch more is refused, over gRPC and JSON, naming the limit; closing
/// one frees its slot.
async fn watches_are_capped_per_principal(backend: Backend) {
    let server = System::on(backend).server().await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let viewer = viewer(&server.store, "acme").await;
    let channel = Channel::from_shared(server.endpoint.clone()).unwrap().connect().await.unwrap();
    let mut open = Vec::new();
    for _ in 0..WATCHES_PER_PRINCIPAL {
        open.push(grpc_watch_on(channel.clone(), &viewer.token, &server.store, "acme").await.unwrap());
    }

    let refused = grpc_watch_on(channel.clone(), &viewer.token, &server.store, "acme").await.unwrap_err();
    assert_eq!(refused.code(), tonic::Code::ResourceExhausted, "{refused:?}");
    let error = grpc_error(&refused);
    assert_eq!(error.code.as_str(), "QUOTA_EXCEEDED");
    assert!(error.message.contains(&WATCHES_PER_PRINCIPAL.to_string()), "{}", error.message);
    assert_eq!(error.details["limit"], json!(WATCHES_PER_PRINCIPAL), "{:?}", error.details);

    let response = json_watch(&server.endpoint, &viewer.token, &server.store, "acme").await;
    assert_eq!(response.status(), 429);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["error"]["code"], "QUOTA_EXCEEDED", "{body}");
    assert_eq!(body["error"]["details"]["limit"], json!(WATCHES_PER_PRINCIPAL), "{body}");

    // Another principal of the tenant is not held back by this one's watches.
    let other = viewer_token(&server.store).await;
    let mut others = grpc_watch(&server.endpoint, &other, &server.store, "acme").await.unwrap();

    drop(open.pop());
    let reopened = poll(PROMPTLY, "a closed watch frees its slot", || async {
        grpc_watch_on(channel.clone(), &viewer.token, &server.store, "acme")
            .await
            .map_err(|status| format!("{status:?}"))
    })
    .await;
    // Every open watch still delivers.
    server.admin_ok("/api/platform/tenants/update", json!({"tenantId": "acme", "description": "x"})).await;
    for mut stream in open.into_iter().chain([reopened]) {
        assert!(next_message(&mut stream, PROMPTLY).await.unwrap().is_some());
    }
    assert!(next_message(&mut others, PROMPTLY).await.unwrap().is_some());
    server.stop().await;
}

async fn viewer_token(store: &Store) -> String {
    tenant_principal(store, "acme", "viewer").await
}

/// The tenant's cap: its principals together hold at most [`WATCHES_PER_TENANT`].
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_are_capped_per_tenant() {
    let server = System::on(Backend::Postgres).server().await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "globex"})).await;
    let mut open = Vec::new();
    while open.len() < WATCHES_PER_TENANT {
        let token = viewer_token(&server.store).await;
        let channel = Channel::from_shared(server.endpoint.clone()).unwrap().connect().await.unwrap();
        for _ in 0..WATCHES_PER_PRINCIPAL.min(WATCHES_PER_TENANT - open.len()) {
            open.push(grpc_watch_on(channel.clone(), &token, &server.store, "acme").await.unwrap());
        }
    }
    let fresh = viewer_token(&server.store).await;
    let refused = grpc_watch(&server.endpoint, &fresh, &server.store, "acme").await.unwrap_err();
    let error = grpc_error(&refused);
    assert_eq!(error.code.as_str(), "QUOTA_EXCEEDED", "{refused:?}");
    assert_eq!(error.details["limit"], json!(WATCHES_PER_TENANT), "{:?}", error.details);
    assert_eq!(error.details["tenantId"], "acme", "{:?}", error.details);
    assert!(error.message.contains(&WATCHES_PER_TENANT.to_string()), "{}", error.message);

    // Another tenant is not held back by acme's watches.
    let globex = tenant_principal(&server.store, "globex", "viewer").await;
    grpc_watch(&server.endpoint, &globex, &server.store, "globex").await.unwrap();
    drop(open);
    server.stop().await;
}

/// Many idle watches cost one poller's reads, not one read per watch per interval.
async fn idle_watches_share_one_poller(backend: Backend) {
    let server = System::on(backend).server().await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    const WATCHES: usize = 2 * WATCHES_PER_PRINCIPAL;
    let unopened = server.store.event_reads();
    let mut open = Vec::new();
    for _ in 0..2 {
        let token = viewer_token(&server.store).await;
        let channel = Channel::from_shared(server.endpoint.clone()).unwrap().connect().await.unwrap();
        for _ in 0..WATCHES_PER_PRINCIPAL {
            open.push(grpc_watch_on(channel.clone(), &token, &server.store, "acme").await.unwrap());
        }
    }
    // Let the watches settle: each opening reads the cursor (here) and what it missed (the
    // watch, once), and the poller reads the head then polls; what follows is idle reading.
    let settled = unopened + 2 * WATCHES as u64 + 2;
    eventually(PROMPTLY, "the watches caught up and the poller polled", || async {
        (server.store.event_reads() >= settled).then_some(())
    })
    .await;
    // One poller reads once per interval (and once more at a wake-up): six reads take at least
    // three intervals with nothing written. One read per watch per interval would make them
    // in less than one.
    let (before, started) = (server.store.event_reads(), Instant::now());
    eventually(10 * WATCH_POLL, "six more reads of the outbox", || async {
        (server.store.event_reads() >= before + 6).then_some(())
    })
    .await;
    let took = started.elapsed();
    assert!(took >= 3 * WATCH_POLL, "{WATCHES} idle watches read the outbox six times in {took:?}");
    // And they all still deliver.
    server.admin_ok("/api/platform/tenants/update", json!({"tenantId": "acme", "description": "x"})).await;
    for stream in &mut open {
        assert!(next_message(stream, PROMPTLY).await.unwrap().is_some());
    }
    server.stop().await;
}

on_both_backends!(
    a_watch_ends_when_its_key_is_revoked_its_principal_deleted_or_its_binding_removed,
    watches_are_capped_per_principal,
    idle_watches_share_one_poller
);

/// Watches opened alike (one key, one request) share their periodic check: one check per
/// interval for all of them, not one each.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_of_one_grant_share_their_periodic_check() {
    let server = System::on(Backend::Sqlite).server().await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let token = viewer_token(&server.store).await;
    let channel = Channel::from_shared(server.endpoint.clone()).unwrap().connect().await.unwrap();
    let mut open = Vec::new();
    for _ in 0..WATCHES_PER_PRINCIPAL {
        open.push(grpc_watch_on(channel.clone(), &token, &server.store, "acme").await.unwrap());
    }
    let (before, shared_before) = (server.store.event_watch_checks(), server.store.event_watch_checks_shared());
    // Every watch's timer fires (they were opened within a second): each checks its caller, or
    // finds its grant's check just made and leaves it at that.
    eventually(WATCH_RECHECK + PROMPTLY, "every watch's periodic check", || async {
        let made = server.store.event_watch_checks() - before;
        let shared = server.store.event_watch_checks_shared() - shared_before;
        (made + shared >= WATCHES_PER_PRINCIPAL as u64).then_some(())
    })
    .await;
    let checks = server.store.event_watch_checks() - before;
    assert!(checks <= 2, "{checks} checks for {WATCHES_PER_PRINCIPAL} watches of one grant");
    server.admin_ok("/api/platform/tenants/update", json!({"tenantId": "acme", "description": "x"})).await;
    for stream in &mut open {
        assert!(next_message(stream, PROMPTLY).await.unwrap().is_some(), "the watches go on");
    }
    server.stop().await;
}
