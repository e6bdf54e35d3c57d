//! A gRPC channel to the API for `bcctl` and `bcd`: plain on `http://`, TLS on `https://`
//! trusting a pinned CA (`--ca-sha256`) or else the system's roots; and the bearer credential
//! every call on it carries.

use std::time::Duration;

use hyper_util::rt::TokioIo;
use rustls::pki_types::ServerName;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tonic::metadata::{Ascii, MetadataValue};
use tonic::transport::{Channel, Endpoint};

use crate::tls::{CaPin, Trust};

/// How long a connection may take to open (TCP and TLS).
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// Connects to `endpoint`; on `https://`, only to a server whose chain holds the CA `pin` names
/// (or, without one, that the system's roots vouch for). A pin with an `http://` endpoint is
/// refused before anything is sent.
pub async fn connect(endpoint: &str, pin: Option<CaPin>) -> Result<Channel, String> {
    let uri: http::Uri = endpoint.parse().map_err(|error| format!("{endpoint} is not a URL: {error}"))?;
    let builder = Endpoint::from_shared(endpoint.to_owned())
        .map_err(|error| format!("{endpoint} is not a valid endpoint: {error}"))?
        .connect_timeout(CONNECT_TIMEOUT);
    let unreachable = |error: tonic::transport::Error| {
        // The transport error's own text is "transport error"; its causes say what happened.
        let mut text = format!("cannot reach {endpoint}: {error}");
        let mut cause = std::error::Error::source(&error);
        while let Some(error) = cause {
            // Wrappers repeat their cause's text; say each thing once.
            let said = error.to_string();
            if !text.contains(&said) {
                text.push_str(&format!(": {said}"));
            }
            cause = error.source();
        }
        if text.contains("UnknownIssuer") {
            text.push_str(" (no CA this machine trusts signed the server's certificate: pin its CA with --ca-sha256)");
        }
        text
    };
    match uri.scheme_str() {
        // A pin says the caller wants only that CA's server: over plain HTTP nothing is checked
        // and the credential would go in clear, so the two together are a mistake, not a choice.
        Some("http") if pin.is_some() => Err(format!(
            "{endpoint}: a CA pin (--ca-sha256) needs an https:// endpoint; over http:// nothing is verified"
        )),
        Some("http") => builder.connect().await.map_err(unreachable),
        Some("https") => {
            let trust = pin.map(Trust::Pinned).unwrap_or(Trust::SystemRoots);
            let config = crate::tls::client_config(trust).map_err(|error| error.to_string())?;
            let host = uri.host().unwrap_or_default().trim_start_matches('[').trim_end_matches(']').to_owned();
            let name = ServerName::try_from(host.clone())
                .map_err(|error| format!("{endpoint}: {host} is not a server name: {error}"))?;
            let port = uri.port_u16().unwrap_or(443);
            let tls = TlsConnector::from(config);
            let connector = tower::service_fn(move |_: http::Uri| {
                let (tls, name, host) = (tls.clone(), name.clone(), host.clone());
                async move {
                    let tcp = TcpStream::connect((host.as_str(), port)).await?;
                    tcp.set_nodelay(true)?;
                    let stream = tls.connect(name, tcp).await?;
                    Ok::<_, std::io::Error>(TokioIo::new(stream))
                }
            });
            builder.connect_with_connector(connector).await.map_err(unreachable)
        }
        _ => Err(format!("{endpoint}: the endpoint's scheme is http:// or https://")),
    }
}

/// Adds `Authorization: Bearer <token>` to every call.
#[derive(Clone)]
pub struct BearerToken(Option<MetadataValue<Ascii>>);

impl BearerToken {
    /// Sends `token`, or nothing when there is none.
    pub fn new(token: Option<&str>) -> Result<Self, String> {
        token
            .map(|t| {
                let mut value = MetadataValue::try_from(format!("Bearer {t}"))
                    .map_err(|_| "the token has characters a header cannot carry".to_owned())?;
                // Kept out of HTTP/2's header compression tables and of any debug output.
                value.set_sensitive(true);
                Ok(value)
            })
            .transpose()
            .map(BearerToken)
    }
}

impl tonic::service::Interceptor for BearerToken {
    fn call(&mut self, mut request: tonic::Request<()>) -> Result<tonic::Request<()>, tonic::Status> {
        if let Some(value) = &self.0 {
            request.metadata_mut().insert("authorization", value.clone());
        }
        Ok(request)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_pin_with_a_plain_endpoint_is_refused_before_connecting() {
        // Something listens, so that a connection attempt would succeed were one made.
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint = format!("http://{}", listener.local_addr().unwrap());
        let pin: CaPin = "ab".repeat(32).parse().unwrap();
        let refused = connect(&endpoint, Some(pin)).await.unwrap_err();
        assert!(refused.contains("needs an https:// endpoint"), "{refused}");
        listener.set_nonblocking(true).unwrap();
        assert!(listener.accept().is_err(), "nothing connected");
    }
}
