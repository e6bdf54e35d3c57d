//! The API server as a value: what `bc-server serve` and `bc dev` both run.
//!
//! The listener is driven here rather than by `axum::serve`, for the limits a hostile client
//! meets: a deadline on request headers, a deadline on each call until its answer begins (a
//! watch answers at once and then streams, so it is not cut), an idle deadline per connection,
//! and a cap on open connections past which a new one is refused and closed at once.

use std::convert::Infallible;
use std::future::Future;
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
use tokio::sync::{Semaphore, watch};
use tokio::time::Instant;
use tokio_rustls::TlsAcceptor;
use tower::ServiceExt;

use crate::api::{self, MetricsAccess};
use crate::error::{Error, Result};
use crate::service::{BootstrapOutcome, Service};
use crate::telemetry::Metrics;

/// How long an idle connection told to close may take before it is dropped.
const CLOSE_GRACE: Duration = Duration::from_secs(5);
/// HTTP/2 pings find peers that vanished while a watch was open.
const HTTP2_PING_INTERVAL: Duration = Duration::from_secs(60);
const HTTP2_PING_TIMEOUT: Duration = Duration::from_secs(20);
/// What a connection past the cap reads before it is closed.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\nconnection: close\r\ncontent-type: text/plain\r\n\
content-length: 57\r\n\r\nthe server has too many open connections; retry shortly.\n";

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
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_read_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(120),
            max_connections: 1024,
        }
    }
}

/// How to serve, beyond the listener and the services.
#[derive(Debug, Default)]
pub struct ServeOptions {
    /// The listener's limits.
    pub limits: Limits,
    /// Who may read `/metrics` on the API listener. The default, open, suits `bc dev` and tests
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
    let (stop_tx, stop_rx) = watch::channel(false);
    // Every connection holds a receiver; the sender sees them all gone when the last closes.
    let (open_tx, open_rx) = watch::channel(());
    let mut loops = Vec::new();
    if let Some(metrics_listener) = options.metrics_listener {
        let access = match &options.metrics {
            MetricsAccess::Off => MetricsAccess::Open,
            other => other.clone(),
        };
        let router = api::metrics_router(services.clone(), metrics.clone(), access);
        // The metrics listener has no /readyz: it never drains.
        let router = TrackedRouter { router, draining: Arc::new(AtomicBool::new(false)) };
        let accepting = accept(metrics_listener, None, router, limits.clone(), stop_rx.clone(), open_rx.clone());
        loops.push(tokio::spawn(accepting));
    }
    let main_access = if loops.is_empty() { options.metrics } else { MetricsAccess::Off };
    let router = api::router(services, metrics, main_access)?;
    let tls = options.tls.map(TlsAcceptor::from);
    let draining = Arc::new(AtomicBool::new(false));
    let tracked = TrackedRouter { router, draining: draining.clone() };
    loops.push(tokio::spawn(accept(listener, tls, tracked, limits, stop_rx, open_rx)));

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
    open_tx.closed().await;
    Ok(())
}

/// Accepts connections until `stop`, each served in a task of its own (after its TLS handshake,
/// when `tls` is given).
async fn accept(
    listener: TcpListener,
    tls: Option<TlsAcceptor>,
    router: TrackedRouter,
    limits: Arc<Limits>,
    mut stop: watch::Receiver<bool>,
    open: watch::Receiver<()>,
) {
    let permits = Arc::new(Semaphore::new(limits.max_connections));
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            _ = stop.wait_for(|stop| *stop) => return,
        };
        let tcp = match accepted {
            Ok((tcp, _)) => tcp,
            Err(error) => {
                // Out of descriptors or the like: pause rather than spin.
                tracing::warn!(%error, "accepting a connection failed");
                tokio::time::sleep(Duration::from_millis(100)).await;
                continue;
            }
        };
        let Ok(permit) = permits.clone().try_acquire_owned() else {
            // A refusal the client can read, written without waiting; then the socket closes.
            let _ = tcp.try_write(REFUSAL);
            tracing::debug!(limit = limits.max_connections, "refused a connection past the cap");
            continue;
        };
        // TCP_NODELAY: a gRPC answer is several small writes (headers, message, trailers); with
        // Nagle's algorithm the later ones wait for the client's delayed ACK, some 40 ms a call.
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY on a connection");
        }
        let peer = tcp.peer_addr().ok();
        let (tls, router, limits, stop, open) =
            (tls.clone(), router.clone(), limits.clone(), stop.clone(), open.clone());
        tokio::spawn(async move {
            match tls {
                None => serve_connection(tcp, peer, router, &limits, stop).await,
                // The handshake is held to the header deadline: a client that connects and says
                // nothing keeps its permit no longer than one that sends no headers.
                Some(tls) => match tokio::time::timeout(limits.header_read_timeout, tls.accept(tcp)).await {
                    Ok(Ok(stream)) => serve_connection(stream, peer, router, &limits, stop).await,
                    Ok(Err(error)) => tracing::debug!(%error, "a TLS handshake failed"),
                    Err(_) => tracing::debug!("a TLS handshake did not finish within the header deadline"),
                },
            }
            drop((permit, open));
        });
    }
}

/// Serves one connection (plain or TLS) until it ends, it has been idle too long, or the server stops.
async fn serve_connection<Io>(
    io: Io,
    peer: Option<std::net::SocketAddr>,
    router: TrackedRouter,
    limits: &Limits,
    mut stop: watch::Receiver<bool>,
) where
    Io: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    let activity = Arc::new(Activity::new());
    let service = Tracked {
        router: router.router,
        draining: router.draining,
        activity: activity.clone(),
        request_timeout: limits.request_timeout,
        peer,
    };
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_read_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(HTTP2_PING_INTERVAL)
        .keep_alive_timeout(HTTP2_PING_TIMEOUT);
    let connection = builder.serve_connection_with_upgrades(TokioIo::new(io), TowerToHyperService::new(service));
    tokio::pin!(connection);
    let mut closing = false;
    let mut drop_at: Option<Instant> = None;
    loop {
        let wake = drop_at.unwrap_or_else(|| activity.idle_deadline(limits.idle_timeout));
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
            _ = tokio::time::sleep_until(wake) => {
                if drop_at.is_some() {
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
    last_ended: Mutex<Instant>,
}

impl Activity {
    fn new() -> Self {
        Activity { in_flight: AtomicUsize::new(0), last_ended: Mutex::new(Instant::now()) }
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
    peer: Option<std::net::SocketAddr>,
}

impl tower::Service<http::Request<Incoming>> for Tracked {
    type Response = http::Response<TrackedBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, Infallible>> + Send>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, mut request: http::Request<Incoming>) -> Self::Future {
        if let Some(peer) = self.peer {
            request.extensions_mut().insert(api::PeerAddress(peer));
        }
        if request.uri().path() == "/readyz" && self.draining.load(Ordering::Acquire) {
            let draining = (http::StatusCode::SERVICE_UNAVAILABLE, "draining: the server is stopping").into_response();
            let in_flight = InFlight::start(self.activity.clone());
            return Box::pin(async move { Ok(draining.map(|body| TrackedBody { body, _in_flight: in_flight })) });
        }
        let in_flight = InFlight::start(self.activity.clone());
        let (router, timeout) = (self.router.clone(), self.request_timeout);
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
            Ok(response.map(|body| TrackedBody { body, _in_flight: in_flight }))
        })
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

/// Makes the operator key on a store that has none, and prints it this once.
pub async fn bootstrap(services: &Service, token: Option<&str>) -> Result<Option<String>> {
    match services.bootstrap_operator(token).await? {
        BootstrapOutcome::AlreadyBootstrapped => Ok(None),
        BootstrapOutcome::Created(token) => {
            let token = token.reveal();
            // Printed, not logged: log collectors keep what they see.
            println!("Created the operator API key. It is shown this once; keep it:\n\n    {token}\n");
            Ok(Some(token))
        }
    }
}
