//! The layer every gRPC call goes through, whichever protocol it came in by (gRPC, gRPC-web
//! after tonic-web, or JSON after the gateway): request id, authentication, the method's
//! authorization class, validation against the descriptors, logs and metrics.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context as TaskContext, Poll};
use std::time::Instant;

use bytes::{Buf, Bytes};
use http_body::{Body as HttpBody, Frame};
use http_body_util::{BodyExt, Full};
use prost_reflect::{DynamicMessage, ReflectMessage};
use tonic::body::Body;
use tower::{Layer, Service, ServiceExt};
use tracing::Instrument;

use super::connection::{BodyHold, Connection};
use super::validate::Validator;
use crate::authz::Target;
use crate::error::{Code, Error, FieldViolation, Violations};
use crate::methods::{Method, MethodTable};
use crate::service::{Caller, Context, Service as Services, Unconfirmed};
use crate::telemetry::Metrics;

/// The largest request message accepted, in bytes.
pub const MAX_REQUEST_BYTES: usize = 4 * 1024 * 1024;

/// The header that carries a call's request id, in and out.
pub const REQUEST_ID_HEADER: &str = "x-request-id";

/// The longest request id taken from a client.
const MAX_REQUEST_ID_LEN: usize = 128;

/// The request id of a call, in the request's extensions.
#[derive(Clone, Debug)]
pub struct RequestId(pub String);

/// In the request's extensions of a call that asked `validateOnly`: it is decided, checked and
/// answered as it would be, and writes nothing.
#[derive(Clone, Copy, Debug)]
pub struct Rehearsal;

/// Whether `request` asks to be a rehearsal (`validateOnly`).
fn asks_rehearsal(request: &DynamicMessage) -> bool {
    matches!(
        request.get_field_by_name(super::update_mask::VALIDATE_ONLY).as_deref(),
        Some(prost_reflect::Value::Bool(true))
    )
}

/// The call a request wraps (a plan's `update` or `delete`, the members of its one `oneof` of
/// requests) with its JSON name, or the request itself: what the decision reads. A wrapper that
/// names no call is `INVALID_INPUT` naming its first member.
fn decided_call(request: &DynamicMessage) -> Result<(DynamicMessage, Option<String>), Error> {
    let descriptor = request.descriptor();
    let Some(calls) = descriptor.oneofs().find(|oneof| {
        oneof.fields().all(|f| matches!(f.kind(), prost_reflect::Kind::Message(_)))
            && descriptor.fields().all(|f| f.containing_oneof().is_some())
    }) else {
        return Ok((request.clone(), None));
    };
    for field in calls.fields() {
        if request.has_field(&field)
            && let prost_reflect::Value::Message(call) = request.get_field(&field).into_owned()
        {
            return Ok((call, Some(field.json_name().to_owned())));
        }
    }
    let names: Vec<String> = calls.fields().map(|f| format!("{{\"{}\": ...}}", f.json_name())).collect();
    let first = calls.fields().next().map(|f| f.json_name().to_owned()).unwrap_or_default();
    Err(Error::fields(vec![FieldViolation::new(first, format!("name the call: {}", names.join(" or ")))]))
}

/// The address a call's connection came from, in the request's extensions (set by the server).
#[derive(Clone, Copy, Debug)]
pub struct PeerAddress(pub std::net::SocketAddr);

/// Marks a request whose body is the JSON of its message, not a gRPC frame: only the in-process
/// JSON gateway sets it (a client cannot set an extension), so that JSON is parsed here, after
/// the caller is authenticated, and the caller is authenticated once.
#[derive(Clone, Copy, Debug)]
pub(crate) struct JsonBody;

/// The schema stage's violations of a request, passed on to the method's handler (see
/// `api::context`, which refuses the call with them unless the method checks rules of its own).
#[derive(Clone, Debug)]
pub struct SchemaViolations(pub Violations);

/// The request id of a call: the client's `x-request-id` when it is 1 to 128 characters of
/// `[A-Za-z0-9._:-]` (it reaches logs and the audit trail), else a new one.
pub fn request_id(headers: &http::HeaderMap) -> String {
    headers
        .get(REQUEST_ID_HEADER)
        .map(http::HeaderValue::as_bytes)
        .filter(|id| acceptable_request_id(id))
        .and_then(|id| std::str::from_utf8(id).ok())
        .map(str::to_owned)
        .unwrap_or_else(|| crate::ids::random("req"))
}

fn acceptable_request_id(id: &[u8]) -> bool {
    (1..=MAX_REQUEST_ID_LEN).contains(&id.len())
        && id.iter().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// What the layer needs, shared by every call.
#[derive(Debug)]
pub struct LayerState {
    /// The methods, by gRPC path.
    pub methods: Arc<MethodTable>,
    /// The rules of every request message.
    pub validator: Arc<Validator>,
    /// Authentication.
    pub services: Services,
    /// Calls and latencies.
    pub metrics: Metrics,
}

/// The tower layer; see the module documentation.
#[derive(Clone, Debug)]
pub struct ApiLayer {
    state: Arc<LayerState>,
}

impl ApiLayer {
    /// A layer over `state`.
    pub fn new(state: LayerState) -> Self {
        Self { state: Arc::new(state) }
    }
}

impl<S> Layer<S> for ApiLayer {
    type Service = ApiService<S>;

    fn layer(&self, inner: S) -> Self::Service {
        ApiService { inner, state: self.state.clone() }
    }
}

/// The service [`ApiLayer`] wraps around the gRPC routes.
#[derive(Clone, Debug)]
pub struct ApiService<S> {
    inner: S,
    state: Arc<LayerState>,
}

type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

impl<S, B> Service<http::Request<B>> for ApiService<S>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible> + Clone + Send + 'static,
    S::Future: Send,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Response = http::Response<Body>;
    type Error = Infallible;
    type Future = BoxFuture<Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut TaskContext<'_>) -> Poll<Result<(), Infallible>> {
        // Each call drives its own clone of the inner service to readiness.
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: http::Request<B>) -> Self::Future {
        let inner = self.inner.clone();
        let state = self.state.clone();
        Box::pin(async move {
            let Some(method) = state.methods.by_grpc_path(request.uri().path()).cloned() else {
                // Server reflection and unknown paths: tonic answers them.
                return inner.oneshot(request.map(Body::new)).await;
            };
            let request_id = request_id(request.headers());
            let span = tracing::info_span!("call", method = %method.name, request_id = %request_id);
            handle(state, inner, method, request_id, request).instrument(span).await
        })
    }
}

async fn handle<S, B>(
    state: Arc<LayerState>,
    inner: S,
    method: Arc<Method>,
    request_id: String,
    request: http::Request<B>,
) -> Result<http::Response<Body>, Infallible>
where
    S: Service<http::Request<Body>, Response = http::Response<Body>, Error = Infallible> + Send,
    S::Future: Send,
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let started = Instant::now();
    let id_header = http::HeaderValue::from_str(&request_id).expect("request ids are visible ASCII");
    let prepared = prepare(&state, &method, request_id.clone(), request).await;
    let mut response = match prepared {
        Ok((request, held)) => {
            let response = inner.oneshot(request).await?;
            // The body's bytes are decoded by now (a stream's answer has begun): give them back.
            drop(held);
            let (parts, body) = response.into_parts();
            // A trailers-only response (an error) carries its status in the headers.
            let header_status = parts.headers.contains_key("grpc-status").then(|| parts.headers.clone());
            let observed = ObservedBody {
                inner: body,
                header_status,
                done: Some(Done::new(&state, &method, &request_id, started)),
            };
            http::Response::from_parts(parts, Body::new(observed))
        }
        Err(error) => {
            Done::new(&state, &method, &request_id, started).finish(error.code.as_str());
            error.to_status().into_http()
        }
    };
    response.headers_mut().insert(REQUEST_ID_HEADER, id_header);
    Ok(response)
}

/// Authenticates, checks the method's class, and validates the message; returns the request to
/// pass on with its body buffered, and the hold on the connection's budget that the buffered
/// body takes. Nothing of the body is read before the caller is known.
async fn prepare<B>(
    state: &LayerState,
    method: &Method,
    request_id: String,
    request: http::Request<B>,
) -> Result<(http::Request<Body>, BodyHold), Error>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (mut parts, body) = request.into_parts();
    let authorization = parts.headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    // A node daemon's method is called with its own credential, checked here as a key is, and
    // decided on nothing else: the service reads what the credential named.
    let daemon_credential = method.authorization.as_ref().map(|a| a.credential.as_str()).filter(|c| !c.is_empty());
    let (caller, unconfirmed) = match daemon_credential {
        None => {
            let (caller, unconfirmed) = state.services.authenticate_unconfirmed(authorization).await?;
            (Some(caller), unconfirmed)
        }
        Some(kind) => {
            let address = parts.extensions.get::<PeerAddress>().map(|peer| peer.0.ip().to_string()).unwrap_or_default();
            let call = state.services.authenticate_daemon(kind, authorization, address).await?;
            parts.extensions.insert(call);
            (None, None)
        }
    };
    match decide(state, method, &request_id, parts, body, caller, unconfirmed.as_ref()).await {
        Ok(prepared) => Ok(prepared),
        // A cached caller refused before its decision read the store is confirmed first: one
        // whose key is no longer good hears that, not what was wrong with its request.
        Err((error, Some(caller))) if let Some(unconfirmed) = &unconfirmed => {
            state.services.confirm_caller_alone(caller, unconfirmed).await?;
            Err(error)
        }
        Err((error, _)) => Err(error),
    }
}

/// Reads and decodes the body of an authenticated call and decides it; a refusal comes with
/// the caller, for [`prepare`] to confirm when it was taken from the cache.
async fn decide<B>(
    state: &LayerState,
    method: &Method,
    request_id: &str,
    mut parts: http::request::Parts,
    body: B,
    caller: Option<Caller>,
    unconfirmed: Option<&Unconfirmed>,
) -> Result<(http::Request<Body>, BodyHold), (Error, Option<Caller>)>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let read = read_request(state, method, &mut parts, body).await;
    let (mut bytes, mut decoded, held) = read.map_err(|error| (error, caller.clone()))?;
    // The decision comes before anything else is looked up or written; validation only reads
    // the request, so a refused caller learns nothing of the rules either.
    let rehearsal = asks_rehearsal(&decoded);
    let mut ctx = caller.map(|caller| Context { rehearsal, ..Context::new(caller, request_id.to_owned()) });
    if rehearsal {
        parts.extensions.insert(Rehearsal);
    }
    if let Some(ctx) = &mut ctx {
        // Refused after the caller is confirmed: nothing to confirm again.
        authorize(state, ctx, unconfirmed, method, &decoded).await.map_err(|error| (error, None))?;
    }
    let mut violations = Violations::new();
    if super::update_mask::settle(&mut decoded, &state.validator, &mut violations) {
        bytes = encode_frame(&decoded);
    }
    for violation in state.validator.validate(&decoded).kept() {
        violations.push(violation.clone());
    }
    if !violations.is_empty() {
        // Passed on rather than answered, so that a service with rules of its own can report
        // them all at once; `api::context` refuses the call with these for every other method.
        parts.extensions.insert(SchemaViolations(violations));
    }
    if let Some(ctx) = ctx {
        parts.extensions.insert(ctx.caller);
    }
    parts.extensions.insert(RequestId(request_id.to_owned()));
    Ok((http::Request::from_parts(parts, Body::new(Full::new(bytes))), held))
}

/// Reads and decodes a call's body (JSON or a gRPC frame), each chunk held against the
/// connection's budget; answers the frame to pass on, the decoded message and the hold.
async fn read_request<B>(
    state: &LayerState,
    method: &Method,
    parts: &mut http::request::Parts,
    body: B,
) -> Result<(Bytes, DynamicMessage, BodyHold), Error>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let connection = parts.extensions.get::<Connection>().cloned();
    if let Some(connection) = &connection {
        connection.prove();
    }
    let mut held = connection.as_ref().map_or_else(BodyHold::unbounded, Connection::hold);
    if method.descriptor.is_client_streaming() {
        // The decision reads the request; no method of the API streams requests.
        return Err(Error::new(Code::Unsupported, format!("{} streams requests, which is not served", method.name)));
    }
    let input = method.descriptor.input();
    if parts.extensions.remove::<JsonBody>().is_some() {
        let body = read_body(body, MAX_REQUEST_BYTES, &mut held).await?;
        let decoded = super::gateway::decode_json(&input, &body, &state.validator)?;
        return Ok((encode_frame(&decoded), decoded, held));
    }
    let bytes = read_body(body, MAX_REQUEST_BYTES + 5, &mut held).await?;
    let message = decode_frame(&bytes)?;
    // Unknown and mistyped fields are refused before the decoder would keep them.
    let found = super::wire::scan(&input, &message);
    if !found.is_empty() {
        return Err(found.into_error());
    }
    let decoded = DynamicMessage::decode(input.clone(), message).map_err(|error| {
        Error::fields(vec![FieldViolation::new(
            "",
            format!("the request is not a valid {}: {error}", input.full_name()),
        )])
    })?;
    Ok((bytes, decoded, held))
}

/// Decides the method's permission on the resource the request names ([`target_of`]). A refusal
/// before the decision first confirms a cached caller (see [`prepare`]).
async fn authorize(
    state: &LayerState,
    ctx: &mut Context,
    unconfirmed: Option<&Unconfirmed>,
    method: &Method,
    request: &DynamicMessage,
) -> Result<(), Error> {
    match target_of(state, method, request) {
        Ok((permission, target)) => {
            state.services.authorize_call(ctx, unconfirmed, &method.name, permission, target).await
        }
        Err(error) => {
            if let Some(unconfirmed) = unconfirmed {
                state.services.confirm_caller_alone(ctx.caller.clone(), unconfirmed).await?;
            }
            Err(error)
        }
    }
}

/// The permission a call's method needs and the resource the request names: its type from the
/// method's authorization option, its id and tenant from the request fields the option names.
fn target_of<'m>(state: &LayerState, method: &'m Method, request: &DynamicMessage) -> Result<(&'m str, Target), Error> {
    let Some(authorization) = method.authorization.as_ref() else {
        return Err(Error::access_denied(format!("{} carries no authorization and is refused", method.name)));
    };
    let (call, wrapper) = decided_call(request)?;
    let request = &call;
    let text = |field: &str| match request.get_field_by_name(field).as_deref() {
        Some(prost_reflect::Value::String(value)) if !value.is_empty() => Some(value.clone()),
        _ => None,
    };
    let tenant_field = match authorization.tenant_field.as_str() {
        "" => Some("tenant_id"),
        "-" => None,
        field => Some(field),
    };
    // The fields the decision reads are held to their own rules first, so that a malformed id
    // or tenant is neither decided on nor audited; the rest is validated after the decision.
    let decided: Vec<&str> =
        [Some(authorization.id_field.as_str()).filter(|f| !f.is_empty()), tenant_field, Some("project_id")]
            .into_iter()
            .flatten()
            .collect();
    let violations = state.validator.validate_fields(request, &decided);
    if !violations.is_empty() {
        let Some(wrapper) = wrapper else { return Err(violations.into_error()) };
        // Named by their path from the request sent: `update.volumeId`.
        let named = violations
            .kept()
            .iter()
            .map(|v| FieldViolation::new(format!("{wrapper}.{}", v.field), v.description.clone()));
        return Err(Error::fields(named.collect()));
    }
    let target = Target {
        resource_type: authorization.resource.clone(),
        id: (!authorization.id_field.is_empty()).then(|| text(&authorization.id_field)).flatten().unwrap_or_default(),
        tenant_id: tenant_field.and_then(text),
        project_id: text("project_id"),
        owner_id: None,
        attributes: request
            .fields()
            .filter_map(|(field, value)| {
                let value = match value {
                    prost_reflect::Value::String(s) => serde_json::Value::from(s.clone()),
                    prost_reflect::Value::Bool(b) => serde_json::Value::from(*b),
                    prost_reflect::Value::I32(n) => serde_json::Value::from(*n),
                    prost_reflect::Value::I64(n) => serde_json::Value::from(*n),
                    _ => return None,
                };
                Some((field.json_name().to_owned(), value))
            })
            .collect(),
    };
    Ok((&authorization.permission, target))
}

/// Reads a request body of at most `limit` bytes, each chunk taken from `held`'s budgets as it
/// arrives (so that unfinished bodies cannot hold more than the connection and the server
/// allow), and refused when it stops arriving for the connection's stall timeout.
async fn read_body<B>(body: B, limit: usize, held: &mut BodyHold) -> Result<Bytes, Error>
where
    B: HttpBody<Data = Bytes> + Send + 'static,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let mut body = std::pin::pin!(body);
    let stall = held.stall_timeout();
    let mut chunks: Vec<Bytes> = Vec::new();
    let mut total = 0usize;
    loop {
        let next = body.frame();
        let frame = match stall {
            Some(stall) => tokio::time::timeout(stall, next).await.map_err(|_| {
                Error::unavailable(format!(
                    "the request body stopped arriving for {} s; send it whole and retry",
                    stall.as_secs()
                ))
            })?,
            None => next.await,
        };
        let Some(frame) = frame else { break };
        let frame =
            frame.map_err(|error| Error::invalid_input(format!("cannot read the request: {}", error.into())))?;
        let Ok(data) = frame.into_data() else { continue };
        total = total.saturating_add(data.len());
        if total > limit {
            return Err(Error::request_too_large(MAX_REQUEST_BYTES));
        }
        held.take(data.len())?;
        chunks.push(data);
    }
    Ok(match chunks.len() {
        0 => Bytes::new(),
        1 => chunks.pop().expect("one chunk"),
        _ => chunks.concat().into(),
    })
}

/// `message` as the one gRPC frame of a request body.
fn encode_frame(message: &DynamicMessage) -> Bytes {
    use prost::Message;
    let len = message.encoded_len();
    let mut frame = bytes::BytesMut::with_capacity(5 + len);
    frame.extend_from_slice(&[0]);
    frame.extend_from_slice(&(len as u32).to_be_bytes());
    message.encode(&mut frame).expect("a BytesMut grows as needed");
    frame.freeze()
}

/// The one message of a unary or server-streaming call's body.
fn decode_frame(bytes: &Bytes) -> Result<Bytes, Error> {
    let malformed = || Error::invalid_input("the request body is not one gRPC message frame");
    let mut buf = bytes.clone();
    if buf.remaining() < 5 {
        return Err(malformed());
    }
    let compressed = buf.get_u8();
    let len = buf.get_u32() as usize;
    if compressed != 0 {
        return Err(Error::invalid_input("compressed requests are not accepted; send them uncompressed"));
    }
    if len > MAX_REQUEST_BYTES {
        return Err(Error::request_too_large(MAX_REQUEST_BYTES));
    }
    if buf.remaining() != len {
        return Err(malformed());
    }
    Ok(buf.copy_to_bytes(len))
}

/// Records a call's code and latency once, when its outcome is known.
struct Done {
    metrics: Metrics,
    method: String,
    started: Instant,
    /// The call's span: the body finishes outside the call's future.
    span: tracing::Span,
    /// For a call whose decision is audited: the services and the request id under which the
    /// trail records how the call ended.
    audit: Option<(Services, String)>,
}

impl Done {
    /// What records the call of `method` when it ends.
    fn new(state: &LayerState, method: &Method, request_id: &str, started: Instant) -> Self {
        let audited = method.authorization.as_ref().is_some_and(|a| crate::service::audited(&a.permission));
        Done {
            metrics: state.metrics.clone(),
            method: method.name.clone(),
            started,
            span: tracing::Span::current(),
            audit: audited.then(|| (state.services.clone(), request_id.to_owned())),
        }
    }

    fn finish(self, code: &str) {
        let _entered = self.span.enter();
        let elapsed = self.started.elapsed();
        self.metrics.record_call(&self.method, code, elapsed);
        tracing::info!(code, elapsed_ms = elapsed.as_secs_f64() * 1000.0, "call finished");
        if let Some((services, request_id)) = self.audit {
            // The answer is on its way: the trail learns how it ended without holding it back.
            let code = code.to_owned();
            tokio::spawn(
                async move {
                    if let Err(error) = services.audit_settle(&request_id, &code).await {
                        tracing::warn!(%error, "the audit trail did not record the call's outcome");
                    }
                }
                .in_current_span(),
            );
        }
    }
}

/// A response body that records the call when its grpc-status is seen.
struct ObservedBody {
    inner: Body,
    header_status: Option<http::HeaderMap>,
    done: Option<Done>,
}

impl ObservedBody {
    /// Records the call with the code of the status in `headers` (our code string, or `OK`).
    fn finish(&mut self, headers: Option<&http::HeaderMap>) {
        if let Some(done) = self.done.take() {
            let code = match headers.and_then(tonic::Status::from_header_map) {
                Some(status) if status.code() == tonic::Code::Ok => "OK",
                Some(status) => Error::from_status(&status).code.as_str(),
                None => "CANCELLED",
            };
            done.finish(code);
        }
    }
}

impl HttpBody for ObservedBody {
    type Data = Bytes;
    type Error = tonic::Status;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let Some(trailers) = frame.trailers_ref() {
                    let trailers = trailers.clone();
                    this.finish(Some(&trailers));
                }
            }
            Poll::Ready(None) | Poll::Ready(Some(Err(_))) => {
                let headers = this.header_status.take();
                this.finish(headers.as_ref());
            }
            Poll::Pending => {}
        }
        polled
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.inner.size_hint()
    }
}

impl Drop for ObservedBody {
    fn drop(&mut self) {
        // A client that went away before the end: record what the headers said, if anything.
        if self.done.is_some() {
            let headers = self.header_status.take();
            self.finish(headers.as_ref());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_client_request_id_is_kept_only_when_short_and_plain() {
        let id_of = |value: &[u8]| {
            let mut headers = http::HeaderMap::new();
            headers.insert(REQUEST_ID_HEADER, http::HeaderValue::from_bytes(value).unwrap());
            request_id(&headers)
        };
        assert_eq!(id_of(b"build-42.step:3_retry"), "build-42.step:3_retry");
        let long = "a".repeat(129);
        for hostile in [b"two words".as_slice(), b"<script>", b"a\"b", long.as_bytes(), b"\xc3\xbc", b""] {
            assert!(id_of(hostile).starts_with("req_"), "{hostile:?}");
        }
        assert!(request_id(&http::HeaderMap::new()).starts_with("req_"));
    }
}
