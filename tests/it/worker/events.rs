//! Events: tenants' changes land in the outbox; `list` pages after a cursor with filters and
//! tenant scoping; `watch` resumes from a cursor across a server restart, every event once; the
//! JSON side streams server-sent events; on Postgres an event whose transaction commits late is
//! read after the cursor, never skipped, and its writer held no one up; a watch opened before
//! the hub's first read hears of what committed between its own read and that one; the last
//! cursor counts every committed event, however many wait for a number.

use std::time::Duration;

use better_compute::proto::compute::events_client::EventsClient;
use better_compute::proto::compute::{Event, WatchEventsRequest};
use better_compute::store::{Backend, EventFilter, NewEvent, NewTenant, Store, now_micros};
use serde_json::json;
use tonic::Streaming;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::harness::{Serving, System, tenant_principal};
use crate::on_both_backends;

type Client = EventsClient<InterceptedService<Channel, Token>>;

/// Adds the bearer token to every call.
#[derive(Clone)]
struct Token(MetadataValue<Ascii>);

impl tonic::service::Interceptor for Token {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        request.metadata_mut().insert("authorization", self.0.clone());
        Ok(request)
    }
}

async fn client(endpoint: &str, token: &str) -> Client {
    let channel = Channel::from_shared(endpoint.to_owned()).unwrap().connect().await.unwrap();
    EventsClient::with_interceptor(channel, Token(format!("Bearer {token}").parse().unwrap()))
}

async fn next_event(stream: &mut Streaming<Event>) -> Event {
    tokio::time::timeout(Duration::from_secs(5), stream.message())
        .await
        .expect("an event within 5 s")
        .expect("the stream goes on")
        .expect("the stream has not ended")
}

async fn create_tenant_in_store(store: &Store, id: &str) {
    store
        .tenant_create(&NewTenant {
            id: id.to_owned(),
            display_name: id.to_owned(),
            description: String::new(),
            now: now_micros(),
        })
        .await
        .unwrap();
}

async fn tenant_changes_are_listed_after_a_cursor(backend: Backend) {
    let server = System::on(backend).server().await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "globex"})).await;
    server.admin_ok("/api/platform/tenants/update", json!({"tenantId": "acme", "description": "x"})).await;
    server.admin_ok("/api/platform/tenants/delete", json!({"tenantId": "globex"})).await;

    let all = server.admin_ok("/api/compute/events/list", json!({})).await;
    let types: Vec<&str> = all["events"].as_array().unwrap().iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        ["platform.tenant.created", "platform.tenant.created", "platform.tenant.updated", "platform.tenant.deleted"]
    );
    let first = &all["events"][0];
    assert_eq!(first["subject"], "acme");
    assert_eq!(first["tenantId"], "acme");
    assert_eq!(first["source"], "/platform/tenants");
    assert_eq!(first["data"]["displayName"], "acme");
    assert!(first["id"].as_str().unwrap().starts_with("evt_") && first["time"].is_string(), "{first}");

    let after_first = server
        .admin_ok(
            "/api/compute/events/list",
            json!({"after": first["cursor"], "typePrefix": "platform.tenant.created"}),
        )
        .await;
    let subjects: Vec<&str> =
        after_first["events"].as_array().unwrap().iter().map(|e| e["subject"].as_str().unwrap()).collect();
    assert_eq!(subjects, ["globex"]);
    let paged = server.admin_ok("/api/compute/events/list", json!({"limit": 1, "subject": "acme"})).await;
    assert_eq!(paged["events"].as_array().unwrap().len(), 1);
    assert_eq!(paged["nextCursor"], first["cursor"]);

    // A tenant's user sees its own tenant's events only.
    let acme = tenant_principal(&server.store, "acme", "viewer").await;
    let (status, mine) = server.post("/api/compute/events/list", Some(&acme), json!({"tenantId": "acme"})).await;
    assert_eq!(status, 200, "{mine}");
    assert!(mine["events"].as_array().unwrap().iter().all(|e| e["tenantId"] == "acme"));
    assert_eq!(mine["events"].as_array().unwrap().len(), 2);
    let (status, denied) = server.post("/api/compute/events/list", Some(&acme), json!({"tenantId": "globex"})).await;
    assert_eq!((status, denied["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{denied}");
    let (status, bad) =
        server.post("/api/compute/events/list", Some(&acme), json!({"tenantId": "acme", "after": "x"})).await;
    assert_eq!(status, 400, "{bad}");
    server.stop().await;
}

async fn watch_resumes_across_a_restart_with_every_event_once(backend: Backend) {
    let server = System::on(backend).server().await;
    // The database outlives the first server: the test serves its store again.
    let _db = server.db.clone();
    let token = server.admin_token.clone();
    let store = server.store.clone();
    for id in ["t1", "t2", "t3"] {
        server.admin_ok("/api/platform/tenants/create", json!({"id": id})).await;
    }
    let listed = server.admin_ok("/api/compute/events/list", json!({})).await;
    let cursor = listed["events"][0]["cursor"].as_str().unwrap().to_owned();
    server.stop().await;

    // The first server: from after t1's event, then one more live.
    let first = Serving::restart(store.clone()).await;
    let mut events = client(&first.endpoint, &token).await;
    let mut stream =
        events.watch(WatchEventsRequest { after: cursor, ..Default::default() }).await.unwrap().into_inner();
    let mut seen = vec![next_event(&mut stream).await, next_event(&mut stream).await];
    create_tenant_in_store(&store, "t4").await;
    seen.push(next_event(&mut stream).await);
    first.stop().await;
    // The stream ends (the server stopped); events written meanwhile are not lost.
    let ended = tokio::time::timeout(Duration::from_secs(5), stream.message()).await.expect("the stream ends");
    assert!(!matches!(ended, Ok(Some(_))), "no event after the stop: {ended:?}");
    create_tenant_in_store(&store, "t5").await;

    // The second server: resume from the last cursor seen.
    let second = Serving::restart(store.clone()).await;
    let mut events = client(&second.endpoint, &token).await;
    let last = seen.last().unwrap().cursor.clone();
    let mut stream = events.watch(WatchEventsRequest { after: last, ..Default::default() }).await.unwrap().into_inner();
    seen.push(next_event(&mut stream).await);
    create_tenant_in_store(&store, "t6").await;
    seen.push(next_event(&mut stream).await);
    let nothing_more = tokio::time::timeout(Duration::from_millis(1500), stream.message()).await;
    assert!(nothing_more.is_err(), "no event twice: {nothing_more:?}");

    let subjects: Vec<&str> = seen.iter().map(|e| e.subject.as_str()).collect();
    assert_eq!(subjects, ["t2", "t3", "t4", "t5", "t6"]);
    let cursors: Vec<i64> = seen.iter().map(|e| e.cursor.parse().unwrap()).collect();
    assert!(cursors.windows(2).all(|w| w[0] < w[1]), "{cursors:?}");
    second.stop().await;
}

async fn json_watch_is_server_sent_events(backend: Backend) {
    let server = System::on(backend).server().await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let mut response = reqwest::Client::new()
        .post(format!("{}/api/compute/events/watch", server.endpoint))
        .bearer_auth(&server.admin_token)
        .json(&json!({"typePrefix": "platform.tenant."}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()["content-type"], "text/event-stream");
    let mut text = String::new();
    let mut read_until = async |text: &mut String, count: usize| {
        while text.matches("\n\n").count() < count {
            let chunk = tokio::time::timeout(Duration::from_secs(5), response.chunk()).await.unwrap().unwrap().unwrap();
            text.push_str(std::str::from_utf8(&chunk).unwrap());
        }
    };
    read_until(&mut text, 1).await;
    server.admin_ok("/api/platform/tenants/create", json!({"id": "globex"})).await;
    read_until(&mut text, 2).await;
    let events: Vec<serde_json::Value> = text
        .split("\n\n")
        .filter(|block| !block.is_empty())
        .map(|block| {
            let data = block.lines().find_map(|l| l.strip_prefix("data: ")).expect("a data line");
            let id = block.lines().find_map(|l| l.strip_prefix("id: ")).expect("an id line");
            let event: serde_json::Value = serde_json::from_str(data).unwrap();
            assert_eq!(event["cursor"], id);
            event
        })
        .collect();
    assert_eq!(events.iter().map(|e| e["subject"].as_str().unwrap()).collect::<Vec<_>>(), ["acme", "globex"]);
    drop(response);
    server.stop().await;
}

/// A watch that opened before the hub knew where the outbox ends, and whose own read of the
/// store ended before an event committed, is told of the gap by the hub's first read: the event
/// is not held back until another one comes.
async fn a_watch_opened_before_the_head_was_known_hears_of_an_event_committed_meanwhile(backend: Backend) {
    let db = System::on(backend).database().await;
    let store = db.store().await;
    create_tenant_in_store(&store, "before").await;
    // The watch's own read (the service's catch-up), then a commit; the hub's first read comes
    // after both, since the hub starts with the watch.
    let covered = store.event_list_after(&after(0)).await.unwrap().last().unwrap().seq;
    create_tenant_in_store(&store, "meanwhile").await;
    let mut watch = store.event_watch_open("prn_watcher", None).unwrap();
    assert_eq!(watch.head, None, "no watch was open, so the hub knew no head");

    let batch = tokio::time::timeout(Duration::from_secs(5), watch.batches.recv())
        .await
        .expect("the hub's first read reaches the watch within 5 s")
        .unwrap();
    let missed = store.event_list_after(&after(covered)).await.unwrap();
    assert_eq!(missed.iter().map(|e| e.subject.as_str()).collect::<Vec<_>>(), ["meanwhile"]);
    assert!(
        batch.after >= missed[0].seq || batch.events.iter().any(|e| e.subject == "meanwhile"),
        "the first batch ({} events after {}) neither carries the event nor starts past it (seq {})",
        batch.events.len(),
        batch.after,
        missed[0].seq
    );
}

on_both_backends!(
    tenant_changes_are_listed_after_a_cursor,
    watch_resumes_across_a_restart_with_every_event_once,
    json_watch_is_server_sent_events,
    a_watch_opened_before_the_head_was_known_hears_of_an_event_committed_meanwhile
);

fn after(cursor: i64) -> EventFilter {
    EventFilter { after: cursor, limit: 100, ..EventFilter::default() }
}

/// On Postgres events are numbered once their transaction has committed: an event appended by a
/// transaction that stays open while a later one commits is neither numbered behind a reader's
/// cursor (which would skip it) nor in the way of the later writer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_event_whose_transaction_commits_late_is_read_after_the_cursor() {
    let db = System::on(Backend::Postgres).database().await;
    let store = db.store().await;
    let late_writer = sqlx::AnyPool::connect(&db.url).await.unwrap();
    let mut late = late_writer.begin().await.unwrap();
    let event = NewEvent {
        source: "/test".to_owned(),
        event_type: "test.late".to_owned(),
        subject: "late".to_owned(),
        tenant_id: "acme".to_owned(),
        time: now_micros(),
        data: json!({}),
    };
    store.event_append_in(&mut late, &event).await.unwrap();

    tokio::time::timeout(Duration::from_secs(10), create_tenant_in_store(&store, "early"))
        .await
        .expect("a writer of events does not wait for another writer's open transaction");
    let seen = store.event_list_after(&after(0)).await.unwrap();
    let subjects: Vec<&str> = seen.iter().map(|e| e.subject.as_str()).collect();
    assert_eq!(subjects, ["early"], "an event of a transaction still open is not read");
    let cursor = seen[0].seq;
    assert_eq!(cursor, 1);
    assert_eq!(store.event_last_seq().await.unwrap(), 1);

    late.commit().await.unwrap();
    let next = store.event_list_after(&after(cursor)).await.unwrap();
    assert_eq!(next.len(), 1, "the late event is read after the cursor: {next:?}");
    assert_eq!((next[0].subject.as_str(), next[0].seq), ("late", 2));
    let all: Vec<i64> = store.event_list_after(&after(0)).await.unwrap().iter().map(|e| e.seq).collect();
    assert_eq!(all, [1, 2], "every event once, numbered without a gap");
}

/// On Postgres the cursor after the last committed event counts every one, however many wait
/// for their number (a numbering gives at most 10,000): a watch opened at that cursor is not
/// handed the older ones as if they came after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_last_cursor_counts_every_committed_event_however_many_wait_for_a_number() {
    let db = System::on(Backend::Postgres).database().await;
    let store = db.store().await;
    create_tenant_in_store(&store, "acme").await;
    let before = store.event_last_seq().await.unwrap();
    let writer = sqlx::AnyPool::connect(&db.url).await.unwrap();
    let waiting: i64 = 25_000;
    sqlx::query(
        "INSERT INTO events (id, source, type, subject, tenant_id, time, data) \
         SELECT 'evt_waiting_' || n, '/test', 'test.waiting', 'w' || n, 'acme', 0, '{}' \
         FROM generate_series(1, $1) AS n",
    )
    .bind(waiting)
    .execute(&writer)
    .await
    .unwrap();

    let head = store.event_last_seq().await.unwrap();
    assert_eq!(head, before + waiting, "every committed event is behind the last cursor");
    let after_head = store.event_list_after(&after(head)).await.unwrap();
    assert!(after_head.is_empty(), "nothing comes after the last cursor: {} events", after_head.len());
}
