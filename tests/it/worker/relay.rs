//! The NATS JetStream relay against the local server (127.0.0.1:4222): every event published
//! once on `bettercompute.<tenant>.<type>`, in order, resuming after a restart without gaps, and
//! without copies when a worker died between publishing and recording its position.

use std::time::Duration;

use async_nats::jetstream::{self, consumer};
use better_compute::reconcile::WorkerConfig;
use better_compute::reconcile::relay::{RELAY_OBJECT, STREAM};
use better_compute::store::{Backend, EventFilter, NewTenant, Store, TenantChange, now_micros};
use tokio_stream::StreamExt;

use crate::harness::{self, System, eventually};

const NATS_URL: &str = "nats://127.0.0.1:4222";

/// Runs a worker with the relay until every event so far is published, then stops it.
async fn relay_until_caught_up(store: &Store) {
    let config = WorkerConfig {
        nats_url: Some(NATS_URL.to_owned()),
        relay_interval: Duration::from_millis(50),
        tick: Duration::from_millis(100),
        ..WorkerConfig::default()
    };
    let worker = harness::start_worker(store, config, Vec::new());
    let last = store.event_list_after(&EventFilter { limit: 10_000, ..Default::default() }).await.unwrap();
    let last = last.last().unwrap().seq;
    eventually(Duration::from_secs(15), "the relay to catch up", || async {
        (store.event_relay_position(RELAY_OBJECT).await.unwrap() >= last).then_some(())
    })
    .await;
    worker.stop().await.unwrap();
}

/// The `Nats-Msg-Id`s and subjects of every message on `bettercompute.<tenant>.>`.
async fn published(tenant: &str) -> Vec<(String, String)> {
    let js = jetstream::new(async_nats::connect(NATS_URL).await.expect("NATS runs on 127.0.0.1:4222"));
    let stream = js.get_stream(STREAM).await.unwrap();
    let consumer = stream
        .create_consumer(consumer::pull::Config {
            filter_subject: format!("bettercompute.{tenant}.>"),
            deliver_policy: consumer::DeliverPolicy::All,
            ack_policy: consumer::AckPolicy::None,
            ..Default::default()
        })
        .await
        .unwrap();
    let mut messages = consumer.fetch().max_messages(1000).expires(Duration::from_secs(1)).messages().await.unwrap();
    let mut out = Vec::new();
    while let Some(message) = messages.next().await {
        let message = message.unwrap();
        let id = message.headers.as_ref().and_then(|h| h.get("Nats-Msg-Id")).map(|v| v.to_string());
        let body: serde_json::Value = serde_json::from_slice(&message.payload).unwrap();
        assert_eq!(body["id"].as_str(), id.as_deref(), "the CloudEvent id is the message id");
        assert_eq!(body["tenant"], tenant);
        out.push((id.unwrap(), message.subject.to_string()));
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn relay_publishes_every_event_once_across_restarts() {
    let db = System::on(Backend::Postgres).database().await;
    let store = db.store().await;
    // A tenant of its own: the stream is shared with every other run on this NATS server.
    let tenant = format!("relay-{}", better_compute::ids::random("t").trim_start_matches("t_"));
    let change = |description: &str| TenantChange { description: Some(description.to_owned()), ..Default::default() };
    store
        .tenant_create(&NewTenant {
            id: tenant.clone(),
            display_name: tenant.clone(),
            description: String::new(),
            now: now_micros(),
        })
        .await
        .unwrap();
    store.tenant_update(&tenant, &change("one"), now_micros()).await.unwrap();
    relay_until_caught_up(&store).await;

    // Written while no relay runs.
    store.tenant_update(&tenant, &change("two"), now_micros()).await.unwrap();
    store.tenant_update(&tenant, &change("three"), now_micros()).await.unwrap();
    relay_until_caught_up(&store).await;

    // A worker that died after publishing but before recording: the position goes back.
    let pool = sqlx::PgPool::connect(&db.url).await.unwrap();
    sqlx::query("UPDATE event_relays SET last_seq = 1 WHERE name = $1")
        .bind(RELAY_OBJECT)
        .execute(&pool)
        .await
        .unwrap();
    store.tenant_delete(&tenant, now_micros()).await.unwrap();
    relay_until_caught_up(&store).await;

    let events = store.event_list_after(&EventFilter { limit: 100, ..Default::default() }).await.unwrap();
    let expected: Vec<(String, String)> =
        events.iter().map(|e| (e.id.clone(), format!("bettercompute.{tenant}.{}", e.event_type))).collect();
    assert_eq!(expected.len(), 5);
    assert_eq!(published(&tenant).await, expected, "each event once, in order");
}
