//! The API server as a value: what `bc-server serve` and `bc dev` both run.

use std::future::Future;

use axum::serve::ListenerExt;
use tokio::net::TcpListener;

use crate::api;
use crate::error::{Error, Result};
use crate::service::{BootstrapOutcome, Service};
use crate::telemetry::Metrics;

/// Serves the API on `listener` until `shutdown` resolves, then finishes the calls in flight.
pub async fn serve(
    listener: TcpListener,
    services: Service,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let signals = services.store().signals().clone();
    let router = api::router(services, Metrics::new())?;
    // TCP_NODELAY: a gRPC answer is several small writes (headers, message, trailers); with
    // Nagle's algorithm the later ones wait for the client's delayed ACK, some 40 ms a call.
    let listener = listener.tap_io(|tcp| {
        if let Err(error) = tcp.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY on a connection");
        }
    });
    axum::serve(listener, router)
        // Event watches never end by themselves: end them, or graceful shutdown would wait forever.
        .with_graceful_shutdown(async move {
            shutdown.await;
            signals.stop_streams();
        })
        .await
        .map_err(|error| Error::internal(format!("the server stopped: {error}")))
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
