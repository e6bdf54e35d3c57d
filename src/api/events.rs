//! `bettercompute.compute.v1.Events`: `List` pages through the outbox; `Watch` streams it,
//! woken by new commits in this process and polling for those of other processes.

use std::pin::Pin;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::Stream;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::compute::{Event, ListEventsRequest, ListEventsResponse, WatchEventsRequest, events_server};
use crate::service::Service;
use crate::store::{EventFilter, EventRow, Store};

/// How often a watch looks for events committed by other processes.
const POLL: Duration = Duration::from_millis(500);

/// The gRPC service of events.
#[derive(Debug)]
pub struct EventsApi {
    service: Service,
}

impl EventsApi {
    /// The service over `service`.
    pub fn server(service: Service) -> events_server::EventsServer<Self> {
        events_server::EventsServer::new(Self { service })
    }
}

/// A JSON value as a protobuf value.
pub fn json_value(value: serde_json::Value) -> prost_types::Value {
    use prost_types::value::Kind;
    let kind = match value {
        serde_json::Value::Null => Kind::NullValue(0),
        serde_json::Value::Bool(b) => Kind::BoolValue(b),
        serde_json::Value::Number(n) => Kind::NumberValue(n.as_f64().unwrap_or_default()),
        serde_json::Value::String(s) => Kind::StringValue(s),
        serde_json::Value::Array(items) => {
            Kind::ListValue(prost_types::ListValue { values: items.into_iter().map(json_value).collect() })
        }
        serde_json::Value::Object(map) => Kind::StructValue(json_struct(map)),
    };
    prost_types::Value { kind: Some(kind) }
}

/// A JSON object as a protobuf struct.
pub fn json_struct(map: serde_json::Map<String, serde_json::Value>) -> prost_types::Struct {
    prost_types::Struct { fields: map.into_iter().map(|(k, v)| (k, json_value(v))).collect() }
}

fn view(row: EventRow) -> Event {
    let data = match row.data {
        serde_json::Value::Object(map) => json_struct(map),
        other => json_struct(serde_json::Map::from_iter([("value".to_owned(), other)])),
    };
    Event {
        id: row.id,
        source: row.source,
        r#type: row.event_type,
        subject: row.subject,
        tenant_id: row.tenant_id,
        time: Some(timestamp(row.time)),
        data: Some(data),
        cursor: row.seq.to_string(),
    }
}

type EventStream = Pin<Box<dyn Stream<Item = Result<Event, Status>> + Send>>;

#[tonic::async_trait]
impl events_server::Events for EventsApi {
    async fn list(&self, request: Request<ListEventsRequest>) -> Result<Response<ListEventsResponse>, Status> {
        let ctx = context(&request)?;
        let (events, next) = self.service.event_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListEventsResponse {
            events: events.into_iter().map(view).collect(),
            next_cursor: next.to_string(),
        }))
    }

    type WatchStream = EventStream;

    async fn watch(&self, request: Request<WatchEventsRequest>) -> Result<Response<EventStream>, Status> {
        let ctx = context(&request)?;
        let filter = self.service.event_watch_filter(&ctx, request.into_inner())?;
        let (tx, rx) = mpsc::channel(64);
        tokio::spawn(feed(self.service.store().clone(), filter, tx));
        Ok(Response::new(Box::pin(ReceiverStream::new(rx))))
    }
}

/// Sends every event after the filter's cursor, in order, until the client goes away or the
/// server stops (then the stream ends `UNAVAILABLE`: resume from the last cursor).
async fn feed(store: Store, mut filter: EventFilter, tx: mpsc::Sender<Result<Event, Status>>) {
    let mut changes = store.signals().subscribe();
    let mut stopping = store.signals().stopping();
    loop {
        if stopping.has_changed().unwrap_or(true) {
            return stop(&tx).await;
        }
        // Mark what this read covers before reading, so a commit during it wakes the next one.
        changes.borrow_and_update();
        let events = match store.event_list_after(&filter).await {
            Ok(events) => events,
            Err(error) => {
                let _ = tx.send(Err(error.into())).await;
                return;
            }
        };
        let full = events.len() as i64 == filter.limit;
        for event in events {
            filter.after = event.seq;
            if tx.send(Ok(view(event))).await.is_err() {
                return;
            }
        }
        if full {
            continue;
        }
        tokio::select! {
            _ = changes.changed() => {}
            _ = stopping.changed() => return stop(&tx).await,
            () = tokio::time::sleep(POLL) => {}
            () = tx.closed() => return,
        }
    }
}

/// Ends a stream because the server stops.
async fn stop(tx: &mpsc::Sender<Result<Event, Status>>) {
    let _ = tx.send(Err(Status::unavailable("the server is stopping; watch again after the last cursor"))).await;
}
