//! TLS for the fake cloud: one CA per fake cluster (what GKE's `masterAuth.clusterCaCertificate`
//! returns) with a serving certificate for its API server, and one CA of the fake cloud's own
//! for its HTTPS listener (the real provider APIs are HTTPS only, and official clients such as
//! pydo refuse to send a token over plain HTTP), and one no client is given, for a BMC whose
//! certificate is not trusted; served with rustls on ring. Every listener (plain HTTP too) is
//! served here, so that a fault can close a connection without answering.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

use crate::fault_answers::HangUp;
use bcd::tls::LocalCa;

/// A cluster's CA and the API server's certificate it signed.
pub struct ClusterTls {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The server's rustls configuration.
    pub server: Arc<rustls::ServerConfig>,
}

/// Makes a CA named after `cluster` and a certificate for 127.0.0.1 and localhost.
pub fn cluster_tls(cluster: &str) -> Result<ClusterTls, String> {
    local_tls(&format!("fake-gke-ca-{cluster}"), "kube-apiserver")
}

/// The fake cloud's own CA and its HTTPS listener's certificate for 127.0.0.1 and localhost.
pub fn cloud_tls() -> Result<ClusterTls, String> {
    local_tls("better-compute fake cloud CA", "fake cloud")
}

/// The CA of the fake cloud's untrusted listener: given to no one, so a client that is given
/// [`cloud_tls`]'s CA (or trusts the system's roots) refuses the listener's certificate as of
/// an unknown issuer.
pub fn untrusted_tls() -> Result<ClusterTls, String> {
    local_tls("better-compute untrusted BMC CA", "fake BMC")
}

fn local_tls(ca_name: &str, server_name: &str) -> Result<ClusterTls, String> {
    let ca = LocalCa::generate(ca_name).map_err(|e| e.to_string())?;
    let serving = ca.issue(server_name, &["localhost", "127.0.0.1"]).map_err(|e| e.to_string())?;
    let mut server = rustls::ServerConfig::builder_with_provider(bcd::tls::provider())
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(serving.chain, serving.key)
        .map_err(|e| e.to_string())?;
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(ClusterTls { ca_pem: ca.cert_pem().to_owned(), server: Arc::new(server) })
}

/// Serves `router` over TLS on 127.0.0.1 (any port) until the task is aborted.
pub fn serve_tls(router: Router, server: Arc<rustls::ServerConfig>) -> std::io::Result<(SocketAddr, JoinHandle<()>)> {
    let std_listener = std::net::TcpListener::bind(("127.0.0.1", 0))?;
    std_listener.set_nonblocking(true)?;
    let address = std_listener.local_addr()?;
    let listener = TcpListener::from_std(std_listener)?;
    let acceptor = TlsAcceptor::from(server);
    let task = tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { continue };
            let (acceptor, router) = (acceptor.clone(), router.clone());
            tokio::spawn(async move {
                // A client that hangs up mid-handshake (or refuses the certificate) is its own
                // business.
                let Ok(stream) = acceptor.accept(tcp).await else { return };
                serve_connection(stream, router).await;
            });
        }
    });
    Ok((address, task))
}

/// Serves `router` over plain HTTP on `listener` until the task is aborted.
pub fn serve_plain(listener: TcpListener, router: Router) -> JoinHandle<()> {
    tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else { continue };
            tokio::spawn(serve_connection(tcp, router.clone()));
        }
    })
}

/// Serves one connection; a response marked [`HangUp`] is not sent: the connection is closed
/// instead, as a provider that cannot be reached would leave it.
async fn serve_connection<S>(stream: S, router: Router)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let service = HangUpAware(TowerToHyperService::new(router));
    let _ = hyper::server::conn::http1::Builder::new()
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades()
        .await;
}

/// The refusal to answer that closes a connection.
#[derive(Debug)]
struct HungUp;

impl std::fmt::Display for HungUp {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the fake cloud hung up, as asked")
    }
}

impl std::error::Error for HungUp {}

/// A service that fails (so hyper closes the connection without answering) where the router's
/// response is marked [`HangUp`].
struct HangUpAware(TowerToHyperService<Router>);

impl hyper::service::Service<http::Request<hyper::body::Incoming>> for HangUpAware {
    type Response = axum::response::Response;
    type Error = HungUp;
    type Future = Pin<Box<dyn Future<Output = Result<Self::Response, HungUp>> + Send>>;

    fn call(&self, request: http::Request<hyper::body::Incoming>) -> Self::Future {
        let answer = self.0.call(request);
        Box::pin(async move {
            let response = match answer.await {
                Ok(response) => response,
                Err(never) => match never {},
            };
            if response.extensions().get::<HangUp>().is_some() { Err(HungUp) } else { Ok(response) }
        })
    }
}
