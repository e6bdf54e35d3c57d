//! The API server as a value: what `bc-server serve` and `bcctl dev` both run.
//!
//! The listener is driven here rather than by `axum::serve`, for the limits a hostile client
//! meets: a deadline on request headers and on a connection's first call (HTTP/1 and HTTP/2),
//! a deadline on each call until its answer begins (a watch answers at once and then streams,
//! so it is not cut), an idle deadline per connection, caps on open connections in all and per
//! peer with a reserve for callers who prove themselves (`admission`), and budgets on the
//! request bytes unfinished bodies may hold, per connection and in all (`api::Connection`).

mod admission;
mod memory;

use std::convert::Infallible;
use std::future::Future;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::response::{IntoResponse, Response};
use http_body::Frame;
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio::sync::{Notify, watch};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::api::{self, ByteBudget, Connection, MetricsAccess};
use crate::error::{Error, Result};
use crate::service::{BootstrapOutcome, Service};
use crate::telemetry::Metrics;
use admission::{Admission, ConnectionCaps, Refusal};

/// How long an idle connection told to close may take before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// HTTP/2 pings find peers that vanished while a watch was open.
const HTTP2_PING_INTERVAL: Duration = Duration::from_secs(60);
const HTTP2_PING_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the listener waits for connections it evicted from the reserve to close before it
/// refuses a newcomer (the listener accepts no one else meanwhile: the backlog waits).
const EVICTION_PATIENCE: Duration = Duration::from_secs(1);
/// What a connection past the cap reads before it is closed.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: text/plain\r\n\
content-length: 57\r\n\r\nthe server has too many open connections; retry shortly.\n";
/// What a connection past its peer's cap reads before it is closed.
const PEER_REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: text/plain\r\n\
content-length: 74\r\n\r\nthis address has too many open connections; close some or retry shortly.\n";
/// HTTP/2 flow control windows: what a connection, and one stream of it, may send before the
/// server has read it. The connection's window bounds what the HTTP/2 layer buffers per connection.
const HTTP2_CONNECTION_WINDOW: u32 = 1024 * 1024;
const HTTP2_STREAM_WINDOW: u32 = 256 * 1024;

/// The listener's limits; `bc-server` takes each from a flag (see `config::ServerOptions`).
#[derive(Clone, Debug)]
pub struct Limits {
    /// How long a client may take to send a request's headers (and, on an idle HTTP/1
    /// connection, to begin its next request).
    pub header_read_timeout: Duration,
    /// How long a call may take until its answer begins; streams then run on.
    pub request_timeout: Duration,
    /// How long a connection may stay open with no call in flight.
    pub idle_timeout: Duration,
    /// The most connections open at once.
    pub max_connections: usize,
    /// The most connections open at once from one peer address (an IPv6 peer by its /64).
    pub max_connections_per_peer: usize,
    /// The most calls in flight on one HTTP/2 connection.
    pub http2_max_streams: u32,
    /// The most bytes of unfinished request bodies one connection may hold.
    pub connection_body_bytes: usize,
    /// The most bytes of unfinished request bodies the server may hold in all.
    pub server_body_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(120),
            max_connections: 1024,
            max_connections_per_peer: 256,
            http2_max_streams: 100,
            connection_body_bytes: 16 * 1024 * 1024,
            server_body_bytes: 128 * 1024 * 1024,
        }
    }
}

/// How to serve, beyond the listener and the services.
#[derive(Debug, Default)]
pub struct ServeOptions {
    /// The listener's limits.
    pub limits: Limits,
    /// Who may read `/metrics` on the API listener. The default, open, suits `bcctl dev` and tests
    /// on loopback; `bc-server` serves it only when told how (`--metrics-token`, `--metrics-listen`).
    pub metrics: MetricsAccess,
    /// A listener of its own for `/metrics`, with the same access rule as `metrics` unless that is off.
    pub metrics_listener: Option<TcpListener>,
    /// Serve the API over TLS with this configuration (see `crate::tls`); plain when absent.
    pub tls: Option<Arc<rustls::ServerConfig>>,
    /// On shutdown, how long `/readyz` answers 503 while calls are still served, before the
    /// listener closes: balancers take the server out of rotation in that time, so no call is
    /// sent to a listener that is about to close. Zero (the default) closes at once.
    pub drain: Duration,
}

/// Serves the API on `listener` with the default limits until `shutdown` resolves, then
/// finishes the calls in flight.
pub async fn serve(
    listener: TcpListener,
    services: Service,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    serve_with(listener, services, ServeOptions::default(), shutdown).await
}

/// Gives the pages the allocator holds free back to the system. Building the router (the
/// descriptors, the validator, the authorizer's schema, the OpenAPI document) frees more than it
/// keeps, and glibc holds on to freed pages that nothing at idle will use again.
fn release_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        unsafe extern "C" {
            fn malloc_trim(pad: usize) -> std::ffi::c_int;
        }
        // SAFETY: malloc_trim takes no pointer; it only returns glibc's free pages to the kernel.
        unsafe {
            malloc_trim(0);
        }
    }
}

/// Serves the API on `listener` (and `/metrics` on `options.metrics_listener`) until `shutdown`
/// resolves: then `/readyz` answers 503 for `options.drain` while calls are still served, and
/// then it stops accepting, ends event watches, and waits for the calls in flight.
pub async fn serve_with(
    listener: TcpListener,
    services: Service,
    options: ServeOptions,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let signals = services.store().signals().clone();
    let metrics = Metrics::new();
    let limits = Arc::new(options.limits);
    let bodies = Arc::new(ByteBudget::new(limits.server_body_bytes));
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection holds a receiver; the sender sees them all gone when the last closes.
    let (open_tx, open_rx) = watch::channel(());
    let listening = |router: TrackedRouter| Listening {
        router,
        limits: limits.clone(),
        admission: Admission::new(ConnectionCaps {
            total: limits.max_connections,
            per_peer: limits.max_connections_per_peer,
        }),
        bodies: bodies.clone(),
        stop: stop_rx.clone(),
        _open: open_rx.clone(),
    };
    let mut loops = Vec::new();
    if let Some(metrics_listener) = options.metrics_listener {
        let access = match &options.metrics {
            MetricsAccess::Off => MetricsAccess::Open,
            other => other.clone(),
        };
        let router = api::metrics_router(services.clone(), metrics.clone(), access);
        // The metrics listener has no /readyz: it never drains.
        let router = TrackedRouter { router, draining: Arc::new(AtomicBool::new(false)) };
        loops.push(tokio::spawn(accept(metrics_listener, None, listening(router))));
    }
    let main_access = if loops.is_empty() { options.metrics } else { MetricsAccess::Off };
    let router = api::router(services, metrics, main_access)?;
    release_freed_memory();
    let tls = options.tls.map(TlsAcceptor::from);
    let draining = Arc::new(AtomicBool::new(false));
    let tracked = TrackedRouter { router, draining: draining.clone() };
    loops.push(tokio::spawn(accept(listener, tls, listening(tracked))));
    // Only the connections (and the accepting loops) may hold the receiver from here on.
    drop(open_rx);
    let trimming = tokio::spawn(memory::trim_after_bursts(bodies, stop_rx.clone()));

    shutdown.await;
    if !options.drain.is_zero() {
        draining.store(true, Ordering::Release);
        tracing::info!(
            drain_ms = options.drain.as_millis() as u64,
            "draining: /readyz answers 503, calls are still served"
        );
        tokio::time::sleep(options.drain).await;
    }
    // Event watches never end by themselves: end them, or the wait below would last forever.
    signals.stop_streams();
    let _ = stop_tx.send(true);
    for accepting in loops {
        accepting.await.map_err(|error| Error::internal(format!("the listener stopped: {error}")))?;
    }
    let _ = trimming.await;
    open_tx.closed().await;
    Ok(())
}

/// What one listener's connections share.
#[derive(Clone)]
struct Listening {
    router: TrackedRouter,
    limits: Arc<Limits>,
    admission: Arc<Admission>,
    /// The server's budget for unfinished request bodies, shared by every listener.
    bodies: Arc<ByteBudget>,
    stop: watch::Receiver<bool>,
    /// Held by every connection's task: the server waits for all of them to be dropped.
    _open: watch::Receiver<()>,
}

/// Accepts connections until `stop`, each served in a task of its own (after its TLS handshake,
/// when `tls` is given).
async fn accept(listener: TcpListener, tls: Option<TlsAcceptor>, listening: Listening) {
    let mut stop = listening.stop.clone();
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stop| *stop) => return,
        };
        let (tcp, peer) = match accepted {
            Ok((tcp, peer)) => (tcp, peer),
            Err(error) => {
                // Out of descriptors or the like: pause rather than spin.
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let ticket = match listening.admission.admit_after_evictions(Some(peer.ip()), EVICTION_PATIENCE).await {
            Ok(ticket) => ticket,
            Err(refusal) => {
                // A refusal the client can read, written without waiting; then the socket closes.
                let (text, cap) = match refusal {
                    Refusal::Full => (REFUSAL, listening.limits.max_connections),
                    Refusal::PeerFull => (PEER_REFUSAL, listening.limits.max_connections_per_peer),
                };
                let _ = tcp.try_write(text);
                tracing::debug!(?refusal, limit = cap, "refused a connection past a cap");
                continue;
            }
        };
        // TCP_NODELAY: a gRPC answer is several small writes (headers, message, trailers); with
        // Nagle's algorithm the later ones wait for the client's delayed ACK, some 40 ms a call.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY on a connection");
        }
        let (tls, listening) = (tls.clone(), listening.clone());
        tokio::spawn(async move {
            let header_read_timeout = listening.limits.header_read_timeout;
            match tls {
                None => serve_connection(tcp, peer, &listening, &ticket).await,
                // The handshake is held to the header deadline: a client that connects and says
                // nothing keeps its slot no longer than one that sends no headers.
                Some(tls) => match tokio::time::timeout(header_read_timeout, tls.accept(tcp)).await {
                    Ok(Ok(stream)) => serve_connection(stream, peer, &listening, &ticket).await,
                    Ok(Err(error)) => tracing::debug!(%error, "a TLS handshake failed"),
                    Err(_) => tracing::debug!("a TLS handshake did not finish within the header deadline"),
                },
            }
            drop((ticket, listening));
        });
    }
}

/// Serves one connection (plain or TLS) until it ends, it begins no call within the header
/// deadline, it has been idle too long, it is evicted from the reserve, or the server stops.
async fn serve_connection<Io>(io: Io, peer: std::net::SocketAddr, listening: &Listening, ticket: &admission::Ticket)
where
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let limits = &listening.limits;
    let activity = Arc::new(Activity::new());
    let on_probation = ticket.eviction.is_some();
    let proof = Connection::new(limits.connection_body_bytes, listening.bodies.clone(), limits.header_read_timeout);
    let service = Tracked {
        router: listening.router.router.clone(),
        draining: listening.router.draining.clone(),
        activity: activity.clone(),
        request_timeout: limits.request_timeout,
        peer,
        connection: proof.clone(),
        on_probation,
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .max_concurrent_streams(limits.http2_max_streams)
        .initial_connection_window_size(HTTP2_CONNECTION_WINDOW)
        .initial_stream_window_size(HTTP2_STREAM_WINDOW)
        .keep_alive_interval(HTTP2_PING_INTERVAL)
        .keep_alive_timeout(HTTP2_PING_TIMEOUT);
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(io), TowerToHyperService::new(service));
    tokio::pin!(connection);
    let evicted = async {
        match &ticket.eviction {
            Some(eviction) => eviction.notified().await,
            None => std::future::pending().await,
        }
    };
    tokio::pin!(evicted);
    let first_call_by = Instant::now() + limits.header_read_timeout;
    let mut stop = listening.stop.clone();
    let mut closing = false;
    let mut drop_at: Option<Instant> = None;
    loop {
        let wake = match drop_at {
            Some(at) => at,
            // Until its first call, a connection is held to the header deadline (an HTTP/2 client
            // that sends only its preface sends no headers for HTTP/1's deadline to catch).
            None if !activity.has_begun() => first_call_by,
            None => activity.idle_deadline(limits.idle_timeout),
        };
        tokio::select! {
            result = connection.as_mut() => {
                if let Err(error) = result {
                    tracing::trace!(%error, "a connection ended with an error");
                }
                return;
            }
            _ = stop.wait_for(|stop| *stop), if !closing => {
                closing = true;
                connection.as_mut().graceful_shutdown();
            }
            _ = &mut evicted => {
                tracing::debug!(%peer, "evicted an unproven connection from the reserve");
                return;
            }
            _ = activity.began.notified(), if on_probation => ticket.began_call(),
            _ = activity.settled.notified(), if on_probation && !closing => {
                if !proof.is_proven() {
                    // On probation and its first call proved nothing: it gives its slot back.
                    closing = true;
                    connection.as_mut().graceful_shutdown();
                    drop_at = Some(Instant::now() + CLOSE_GRACE);
                }
            }
            _ = tokio::time::sleep_until(wake) => {
                if drop_at.is_some() {
                    return;
                }
                if !activity.has_begun() {
                    tracing::debug!(%peer, "closed a connection that began no call within the header deadline");
                    return;
                }
                if activity.idle_for(limits.idle_timeout) {
                    if !closing {
                        closing = true;
                        connection.as_mut().graceful_shutdown();
                    }
                    drop_at = Some(Instant::now() + CLOSE_GRACE);
                }
            }
        }
    }
}

/// The calls in flight on a connection, and when the last one ended.
struct Activity {
    in_flight: AtomicUsize,
    begun: AtomicBool,
    last_ended: Mutex<Instant>,
    /// Notified when a call begins.
    began: Notify,
    /// Notified when a call's answer has begun, for a connection on probation.
    settled: Notify,
}

impl Activity {
    fn new() -> Self {
        Activity {
            in_flight: AtomicUsize::new(0),
            begun: AtomicBool::new(false),
            last_ended: Mutex::new(Instant::now()),
            began: Notify::new(),
            settled: Notify::new(),
        }
    }

    /// Whether any call has begun on the connection.
    fn has_begun(&self) -> bool {
        self.begun.load(Ordering::Acquire)
    }

    /// When the connection will have been idle for `timeout`, as far as is known now.
    fn idle_deadline(&self, timeout: Duration) -> Instant {
        if self.in_flight.load(Ordering::Acquire) > 0 {
            Instant::now() + timeout
        } else {
            *self.last_ended.lock().expect("never poisoned") + timeout
        }
    }

    fn idle_for(&self, timeout: Duration) -> bool {
        self.in_flight.load(Ordering::Acquire) == 0
            && self.last_ended.lock().expect("never poisoned").elapsed() >= timeout
    }
}

/// One call in flight, from its first byte until its answer's body is done with.
struct InFlight(Arc<Activity>);

impl InFlight {
    fn start(activity: Arc<Activity>) -> Self {
        activity.begun.store(true, Ordering::Release);
        activity.began.notify_one();
        activity.in_flight.fetch_add(1, Ordering::AcqRel);
        InFlight(activity)
    }
}

impl Drop for InFlight {
    fn drop(&mut self) {
        *self.0.last_ended.lock().expect("never poisoned") = Instant::now();
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A listener's router and whether the server is draining.
#[derive(Clone)]
struct TrackedRouter {
    router: Router,
    draining: Arc<AtomicBool>,
}

/// The router with the connection's bookkeeping and the request deadline around each call.
#[derive(Clone)]
struct Tracked {
    router: Router,
    /// Set once the server is stopping: `/readyz` then answers 503 whatever the store says.
    draining: Arc<AtomicBool>,
    activity: Arc<Activity>,
    request_timeout: Duration,
    /// The connection's peer, which each call carries (a join records its address).
    peer: std::net::SocketAddr,
    /// The connection's body budget and proof, which each call carries.
    connection: Connection,
    /// Whether the connection holds a reserve slot it must prove itself for.
    on_probation: bool,
}

impl tower::Service<http::Request<Incoming>> for Tracked {
    type Response = http::Response<TrackedBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: http::Request<Incoming>) -> Self::Future {
        request.extensions_mut().insert(api::PeerAddress(self.peer));
        request.extensions_mut().insert(self.connection.clone());
        let path = request.uri().path();
        if matches!(path, "/healthz" | "/readyz") {
            self.connection.prove();
        }
        if path == "/readyz" && self.draining.load(Ordering::Acquire) {
            let draining = (http::StatusCode::SERVICE_UNAVAILABLE, "draining: the server is stopping").into_response();
            let in_flight = InFlight::start(self.activity.clone());
            self.settle();
            return Box::pin(async move { Ok(draining.map(|body| TrackedBody { body, _in_flight: in_flight })) });
        }
        let in_flight = InFlight::start(self.activity.clone());
        let (router, timeout) = (self.router.clone(), self.request_timeout);
        let this = self.clone();
        Box::pin(async move {
            let grpc = request
                .headers()
                .get(http::header::CONTENT_TYPE)
                .is_some_and(|value| value.as_bytes().starts_with(b"application/grpc"));
            let response = match tokio::time::timeout(timeout, router.oneshot(request.map(Body::new))).await {
                Ok(Ok(response)) => response,
                Ok(Err(never)) => match never {},
                Err(_) => timed_out(grpc, timeout),
            };
            this.settle();
            Ok(response.map(|body| TrackedBody { body, _in_flight: in_flight }))
        })
    }
}

impl Tracked {
    /// Tells a connection on probation that a call's answer has begun (its caller proven or not).
    fn settle(&self) {
        if self.on_probation {
            self.activity.settled.notify_one();
        }
    }
}

/// The answer to a call that did not begin answering within the request timeout.
fn timed_out(grpc: bool, timeout: Duration) -> Response {
    let error = Error::unavailable(format!(
        "the call did not complete within the server's request timeout of {} s; send the request whole and retry",
        timeout.as_secs()
    ));
    if grpc {
        error.to_status().into_http::<Body>().map(Body::new).into_response()
    } else {
        (error.http_status(), axum::Json(error.to_json())).into_response()
    }
}

/// An answer's body that keeps its call counted in flight until it is sent or dropped.
struct TrackedBody {
    body: Body,
    _in_flight: InFlight,
}

impl http_body::Body for TrackedBody {
    type Data = bytes::Bytes;
    type Error = axum::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// Makes the operator key on a store that has none: `Some` with the key when this call made it.
pub async fn bootstrap(services: &Service, token: Option<&str>) -> Result<Option<String>> {
    match services.bootstrap_operator(token).await? {
        BootstrapOutcome::AlreadyBootstrapped => Ok(None),
        BootstrapOutcome::Created(token) => Ok(Some(token.reveal())),
    }
}

/// Makes the operator key on first start and hands a key this server made to the person
/// starting it, never to the log stream (collectors keep what they see): on the terminal when
/// standard error is one, else in `key_file`, readable by its owner only, with one log line
/// saying where. A key given (`given`) is the operator's own and is not shown again.
pub async fn bootstrap_and_hand_over(services: &Service, given: Option<&str>, key_file: &Path) -> Result<()> {
    let on_terminal = std::io::stderr().is_terminal();
    // The file is made before the key, so that a key is never made that nobody can be given.
    let file = match (given, on_terminal) {
        (None, false) => Some(KeyFile::open(key_file)?),
        _ => None,
    };
    let made = bootstrap(services, given).await?;
    match (made, file) {
        (Some(_), _) if given.is_some() => tracing::info!("created the operator API key given at start"),
        (Some(token), None) => {
            eprintln!("Created the operator API key. It is shown this once; keep it:\n\n    {token}\n");
            tracing::info!("created the operator API key and showed it on the terminal");
        }
        (Some(token), Some(file)) => {
            file.write(&token)?;
            tracing::info!(file = %key_file.display(), "created the operator API key and wrote it to a file readable by its owner only");
        }
        (None, Some(file)) => file.discard(),
        (None, None) => {}
    }
    Ok(())
}

/// The file a new operator key goes to, made (mode 0600) before the key is.
struct KeyFile {
    path: PathBuf,
    file: std::fs::File,
    made_now: bool,
}

impl KeyFile {
    fn open(path: &Path) -> Result<KeyFile> {
        let existed = path.exists();
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let file = options.open(path).map_err(|error| {
            Error::invalid_input(format!(
                "cannot open {} for the operator key (--operator-key-file): {error}",
                path.display()
            ))
        })?;
        Ok(KeyFile { path: path.to_owned(), file, made_now: !existed })
    }

    fn write(mut self, token: &str) -> Result<()> {
        use std::io::Write;
        let failed = |error: std::io::Error| {
            Error::internal(format!("cannot write the operator key to {}: {error}", self.path.display()))
        };
        #[cfg(unix)]
        {
            // A file that was there keeps its mode on open: narrow it before the key goes in.
            use std::os::unix::fs::PermissionsExt;
            self.file.set_permissions(std::fs::Permissions::from_mode(0o600)).map_err(failed)?;
        }
        self.file.set_len(0).map_err(failed)?;
        writeln!(self.file, "{token}").map_err(failed)?;
        self.file.sync_all().map_err(failed)
    }

    /// No key was made: a file made for it goes again.
    fn discard(self) {
        if self.made_now {
            let _ = std::fs::remove_file(&self.path);
        }
    }
}
