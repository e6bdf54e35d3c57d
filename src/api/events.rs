//! `bettercompute.compute.v1.Events`: `List` pages through the outbox; `Watch` streams it from
//! the process's one event poller (`store::event_hub`), until the caller may no longer read.

use std::pin::Pin;

use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::compute::{Event, ListEventsRequest, ListEventsResponse, WatchEventsRequest, events_server};
use crate::service::Service;
use crate::store::EventRow;

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
        // Kept to authenticate the caller again while the stream is open.
        let authorization = request
            .metadata()
            .get(http::header::AUTHORIZATION.as_str())
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let rows = self.service.event_watch(&ctx, request.into_inner(), authorization.as_deref())?;
        Ok(Response::new(Box::pin(ReceiverStream::new(rows).map(|row| row.map(view).map_err(Status::from)))))
    }
}
