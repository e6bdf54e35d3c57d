//! TLS for the fake clusters' API servers: one CA per cluster (what GKE's
//! `masterAuth.clusterCaCertificate` returns) and a serving certificate for 127.0.0.1 it signs,
//! served with rustls on ring.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use hyper_util::rt::TokioIo;
use hyper_util::service::TowerToHyperService;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::TcpListener;
use tokio::task::JoinHandle;
use tokio_rustls::TlsAcceptor;

/// A cluster's CA and the API server's certificate it signed.
pub struct ClusterTls {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// The server's rustls configuration.
    pub server: Arc<rustls::ServerConfig>,
}

/// Makes a CA named after `cluster` and a certificate for 127.0.0.1 and localhost.
pub fn cluster_tls(cluster: &str) -> Result<ClusterTls, String> {
    let error = |e: rcgen::Error| format!("cannot make the cluster's certificates: {e}");
    let ca_key = KeyPair::generate().map_err(error)?;
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(error)?;
    ca_params.distinguished_name.push(DnType::CommonName, format!("fake-gke-ca-{cluster}"));
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.key_usages =
        vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
    let ca_cert = ca_params.self_signed(&ca_key).map_err(error)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let server_key = KeyPair::generate().map_err(error)?;
    let mut params = CertificateParams::new(vec!["localhost".to_owned()]).map_err(error)?;
    params.subject_alt_names.push(SanType::IpAddress([127, 0, 0, 1].into()));
    params.distinguished_name.push(DnType::CommonName, "kube-apiserver");
    let server_cert = params.signed_by(&server_key, &issuer).map_err(error)?;

    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(server_key.serialize_der()));
    let mut server = rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .with_no_client_auth()
        .with_single_cert(vec![server_cert.der().clone(), ca_cert.der().clone()], key)
        .map_err(|e| e.to_string())?;
    server.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(ClusterTls { ca_pem: ca_cert.pem(), server: Arc::new(server) })
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
                // A client that hangs up mid-handshake is its own business.
                let Ok(stream) = acceptor.accept(tcp).await else { return };
                let service = TowerToHyperService::new(router);
                let _ =
                    hyper::server::conn::http1::Builder::new().serve_connection(TokioIo::new(stream), service).await;
            });
        }
    });
    Ok((address, task))
}
