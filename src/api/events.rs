//! `bettercompute.compute.v1.Events`: `List` pages through the outbox; `Watch` streams the rows
//! of a watch the service opens and feeds (`service::event_watches`), as events.

use std::pin::Pin;

use tokio_stream::wrappers::ReceiverStream;
use tokio_stream::{Stream, StreamExt};
use tonic::{Request, Response, Status};

use super::handlers::Handlers;
use super::{context, timestamp};
use crate::error::json_to_struct;
use crate::proto::compute::{Event, ListEventsRequest, ListEventsResponse, WatchEventsRequest, events_server};
use crate::store::EventRow;

fn event_view(row: EventRow) -> Event {
    let data = match row.data {
        serde_json::Value::Object(map) => json_to_struct(&map),
        other => json_to_struct(&serde_json::Map::from_iter([("value".to_owned(), other)])),
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
impl events_server::Events for Handlers {
    async fn list(&self, request: Request<ListEventsRequest>) -> Result<Response<ListEventsResponse>, Status> {
        let ctx = context(&request)?;
        let (events, next) = self.service.event_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListEventsResponse {
            events: events.into_iter().map(event_view).collect(),
            next_cursor: next.to_string(),
        }))
    }

    type WatchStream = EventStream;

    async fn watch(&self, request: Request<WatchEventsRequest>) -> Result<Response<EventStream>, Status> {
        let ctx = context(&request)?;
        // The service keeps it to authenticate the caller again while the stream is open.
        let authorization = request
            .metadata()
            .get(http::header::AUTHORIZATION.as_str())
            .and_then(|value| value.to_str().ok())
            .map(str::to_owned);
        let rows = self.service.event_watch(&ctx, request.into_inner(), authorization.as_deref())?;
        Ok(Response::new(Box::pin(ReceiverStream::new(rows).map(|row| row.map(event_view).map_err(Status::from)))))
    }
}
