//! Server-streaming methods on the JSON gateway, as server-sent events: each message of the gRPC
//! stream becomes one `data:` line of JSON (its `id:` the message's `cursor`, when it has one, so
//! that `Last-Event-ID` names where to resume); an error that ends the stream becomes one
//! `event: error` with the usual error body.

use std::convert::Infallible;

use axum::response::Response;
use bytes::{Buf, Bytes, BytesMut};
use http::{HeaderValue, StatusCode, header};
use http_body_util::BodyExt;
use prost_reflect::{DynamicMessage, MessageDescriptor};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;

use super::layer::REQUEST_ID_HEADER;
use crate::error::Error;

/// Turns the response of a server-streaming gRPC call into a `text/event-stream` response.
pub fn respond(output: MessageDescriptor, response: http::Response<tonic::body::Body>) -> Response {
    let request_id = response.headers().get(REQUEST_ID_HEADER).cloned();
    let (tx, rx) = mpsc::channel::<Result<Bytes, Infallible>>(16);
    tokio::spawn(relay(output, response.into_body(), tx));
    let mut response = Response::new(axum::body::Body::from_stream(ReceiverStream::new(rx)));
    *response.status_mut() = StatusCode::OK;
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("text/event-stream"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    if let Some(id) = request_id {
        headers.insert(REQUEST_ID_HEADER, id);
    }
    response
}

/// Reads gRPC frames from `body` and sends each as an event until the stream or the client ends.
async fn relay(output: MessageDescriptor, mut body: tonic::body::Body, tx: mpsc::Sender<Result<Bytes, Infallible>>) {
    let mut buffer = BytesMut::new();
    loop {
        let frame = tokio::select! {
            frame = body.frame() => frame,
            () = tx.closed() => return,
        };
        let event = match frame {
            None => return,
            Some(Err(status)) => Some(error_event(&Error::from_status(&status))),
            Some(Ok(frame)) => match frame.into_data() {
                Ok(data) => {
                    buffer.extend_from_slice(&data);
                    let mut events = String::new();
                    while let Some(message) = next_message(&mut buffer) {
                        events.push_str(&message_event(&output, message));
                    }
                    (!events.is_empty()).then_some(events)
                }
                Err(frame) => frame
                    .into_trailers()
                    .ok()
                    .and_then(|trailers| tonic::Status::from_header_map(&trailers))
                    .filter(|status| status.code() != tonic::Code::Ok)
                    .map(|status| error_event(&Error::from_status(&status))),
            },
        };
        if let Some(event) = event
            && tx.send(Ok(Bytes::from(event))).await.is_err()
        {
            return;
        }
    }
}

/// Takes one whole gRPC message out of `buffer`, if there is one.
fn next_message(buffer: &mut BytesMut) -> Option<Bytes> {
    if buffer.len() < 5 {
        return None;
    }
    let len = u32::from_be_bytes([buffer[1], buffer[2], buffer[3], buffer[4]]) as usize;
    if buffer.len() < 5 + len {
        return None;
    }
    buffer.advance(5);
    Some(buffer.split_to(len).freeze())
}

/// One message as an event.
fn message_event(output: &MessageDescriptor, bytes: Bytes) -> String {
    let message = match DynamicMessage::decode(output.clone(), bytes) {
        Ok(message) => message,
        Err(error) => return error_event(&Error::internal(format!("a streamed message does not decode: {error}"))),
    };
    let json = match crate::proto::json::to_value(&message) {
        Ok(json) => json,
        Err(error) => return error_event(&Error::internal(format!("cannot write a message as JSON: {error}"))),
    };
    match json.get("cursor").and_then(|c| c.as_str()) {
        Some(cursor) if !cursor.is_empty() => format!("id: {cursor}\ndata: {json}\n\n"),
        _ => format!("data: {json}\n\n"),
    }
}

/// An error as the stream's last event.
fn error_event(error: &Error) -> String {
    format!("event: error\ndata: {}\n\n", error.to_json())
}
