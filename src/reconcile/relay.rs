//! The event relay: publishes every outbox event, in order, to NATS JetStream on
//! `bettercompute.<tenant>.<type>`, as a CloudEvents JSON message.
//!
//! It runs as a reconciler of one object (`event-relay/nats`), so its lease keeps it to one
//! worker at a time. A pass publishes the events after the relay's recorded position, waits for
//! JetStream's acknowledgements, then records the new position. A worker that dies between the
//! two publishes the same events again after a restart; each carries its event id as
//! `Nats-Msg-Id`, so JetStream's duplicate window (an hour) drops the copies: every event once,
//! none skipped.

use std::time::Duration;

use async_nats::jetstream::{self, stream};
use tokio::sync::Mutex;

use super::{Outcome, Pass, Reconciler};
use crate::store::{EventFilter, EventRow};

/// The kind of the relay.
pub const RELAY_KIND: &str = "event-relay";

/// Its one object, also its name in `event_relays`.
pub const RELAY_OBJECT: &str = "nats";

/// The JetStream stream the relay publishes into (created if missing).
pub const STREAM: &str = "BETTERCOMPUTE";

/// Events per pass at most.
const BATCH: i64 = 500;

/// The subject of an event.
pub fn subject(event: &EventRow) -> String {
    format!("bettercompute.{}.{}", event.tenant_id, event.event_type)
}

/// An event as a structured-mode CloudEvents JSON document.
pub fn cloud_event(event: &EventRow) -> serde_json::Value {
    let time = prost_types::Timestamp {
        seconds: event.time.div_euclid(1_000_000),
        nanos: (event.time.rem_euclid(1_000_000) * 1000) as i32,
    };
    serde_json::json!({
        "specversion": "1.0",
        "id": event.id,
        "source": event.source,
        "type": event.event_type,
        "subject": event.subject,
        "time": time.to_string(),
        "tenant": event.tenant_id,
        "sequence": event.seq.to_string(),
        "datacontenttype": "application/json",
        "data": event.data,
    })
}

/// Publishes events to JetStream.
pub struct NatsRelay {
    /// The NATS server (`nats://127.0.0.1:4222`).
    url: String,
    /// How often to look for new events once caught up.
    interval: Duration,
    /// The connection, made on the first pass and dropped after a failure.
    context: Mutex<Option<jetstream::Context>>,
}

impl NatsRelay {
    /// A relay to the NATS server at `url`.
    pub fn new(url: String, interval: Duration) -> Self {
        Self { url, interval, context: Mutex::new(None) }
    }

    async fn context(&self) -> Result<jetstream::Context, String> {
        let mut context = self.context.lock().await;
        if let Some(context) = context.as_ref() {
            return Ok(context.clone());
        }
        let client = async_nats::connect(&self.url).await.map_err(|e| format!("cannot reach NATS: {e}"))?;
        let js = jetstream::new(client);
        js.get_or_create_stream(stream::Config {
            name: STREAM.to_owned(),
            subjects: vec!["bettercompute.>".to_owned()],
            duplicate_window: Duration::from_secs(3600),
            ..Default::default()
        })
        .await
        .map_err(|e| format!("cannot create the JetStream stream {STREAM}: {e}"))?;
        *context = Some(js.clone());
        Ok(js)
    }

    async fn publish(&self, pass: &Pass) -> Result<usize, String> {
        let js = self.context().await?;
        let store = &pass.store;
        let after = store.event_relay_position(RELAY_OBJECT).await.map_err(|e| e.to_string())?;
        let filter = EventFilter { after, limit: BATCH, ..EventFilter::default() };
        let events = store.event_list_after(&filter).await.map_err(|e| e.to_string())?;
        let mut acks = Vec::with_capacity(events.len());
        for event in &events {
            let mut headers = async_nats::HeaderMap::new();
            headers.insert("Nats-Msg-Id", event.id.as_str());
            let payload = cloud_event(event).to_string();
            let ack = js
                .publish_with_headers(subject(event), headers, payload.into())
                .await
                .map_err(|e| format!("publishing event {} failed: {e}", event.seq))?;
            acks.push(ack);
        }
        for ack in acks {
            ack.await.map_err(|e| format!("JetStream did not acknowledge an event: {e}"))?;
        }
        if let Some(last) = events.last() {
            store.event_relay_advance(RELAY_OBJECT, last.seq).await.map_err(|e| e.to_string())?;
        }
        Ok(events.len())
    }
}

#[tonic::async_trait]
impl Reconciler for NatsRelay {
    fn kind(&self) -> &'static str {
        RELAY_KIND
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        match self.publish(pass).await {
            Ok(published) if published as i64 == BATCH => Outcome::after(Duration::ZERO),
            Ok(_) => Outcome::after(self.interval),
            Err(error) => {
                // Reconnect on the next pass.
                *self.context.lock().await = None;
                Outcome::transient(error)
            }
        }
    }
}
