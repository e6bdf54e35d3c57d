//! TLS with rustls on ring: the API served from a certificate and key (`bc-server --tls-cert`),
//! local CAs (`bcctl dev --tls`, the fake clusters), and the client side that pins a CA by the
//! SHA-256 of its public key (`bcd --ca-sha256`), as kubeadm's discovery hash does.

use std::path::Path;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose, SanType};
use rustls::client::WebPkiServerVerifier;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, RootCertStore, SignatureScheme};
use sha2::{Digest, Sha256};

/// Why a certificate, a key or a TLS configuration could not be had.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// What was given (a PEM file, a certificate, a key) is unusable: the caller can fix it.
    #[error("{0}")]
    Invalid(String),
    /// This machine's trust store holds no CA certificate to check a server against.
    #[error("this machine's trust store holds no CA certificate; pin the server's CA with --ca-sha256")]
    NoTrustedRoots,
    /// rcgen or rustls failed on what we made ourselves.
    #[error("{0}")]
    Internal(String),
}

/// The result of this module.
pub type Result<T, E = TlsError> = std::result::Result<T, E>;

/// The one crypto provider of the tree.
pub fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A certificate chain (leaf first) and its key, ready to serve.
pub struct ServingCertificate {
    /// The leaf, then the CA that signed it.
    pub chain: Vec<CertificateDer<'static>>,
    /// The leaf's private key.
    pub key: PrivateKeyDer<'static>,
}

/// A serving certificate as PEM files hold it (what `bc-server --tls-cert` and `--tls-key` read).
pub struct ServingPem {
    /// The leaf, then the CA.
    pub chain: String,
    /// The leaf's private key, PKCS#8.
    pub key: String,
}

/// A CA of our own: it signs serving certificates and is pinned by its public key's SHA-256.
pub struct LocalCa {
    cert: CertificateDer<'static>,
    cert_pem: String,
    key_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

impl LocalCa {
    /// Makes a new CA named `common_name`.
    pub fn generate(common_name: &str) -> Result<LocalCa> {
        let key = KeyPair::generate().map_err(certificate_error)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(certificate_error)?;
        params.distinguished_name.push(DnType::CommonName, common_name);
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages =
            vec![KeyUsagePurpose::KeyCertSign, KeyUsagePurpose::CrlSign, KeyUsagePurpose::DigitalSignature];
        let cert = params.self_signed(&key).map_err(certificate_error)?;
        let key_pem = key.serialize_pem();
        Ok(LocalCa { cert: cert.der().clone(), cert_pem: cert.pem(), key_pem, issuer: Issuer::new(params, key) })
    }

    /// The CA kept in PEM files earlier (see [`LocalCa::cert_pem`] and [`LocalCa::key_pem`]).
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<LocalCa> {
        let key = KeyPair::from_pem(key_pem).map_err(certificate_error)?;
        let cert = CertificateDer::from_pem_slice(cert_pem.as_bytes())
            .map_err(|error| TlsError::Invalid(format!("the CA certificate is not PEM: {error}")))?;
        let issuer = Issuer::from_ca_cert_der(&cert, key).map_err(certificate_error)?;
        Ok(LocalCa { cert, cert_pem: cert_pem.to_owned(), key_pem: key_pem.to_owned(), issuer })
    }

    /// The CA's certificate, PEM.
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The CA's private key, PKCS#8 PEM: whoever holds it can impersonate every server it signs for.
    pub fn key_pem(&self) -> &str {
        &self.key_pem
    }

    /// The SHA-256 of the CA's public key (its SubjectPublicKeyInfo), in hex: what
    /// `bcd --ca-sha256` pins.
    pub fn sha256(&self) -> String {
        hex(&spki_sha256(&self.cert).expect("a certificate we made parses"))
    }

    /// A serving certificate for `names` (host names or IP addresses), signed by this CA.
    pub fn issue(&self, common_name: &str, names: &[&str]) -> Result<ServingCertificate> {
        self.issue_both(common_name, names).map(|(serving, _)| serving)
    }

    /// [`LocalCa::issue`], as PEM files would hold it.
    pub fn issue_pem(&self, common_name: &str, names: &[&str]) -> Result<ServingPem> {
        self.issue_both(common_name, names).map(|(_, pem)| pem)
    }

    fn issue_both(&self, common_name: &str, names: &[&str]) -> Result<(ServingCertificate, ServingPem)> {
        let key = KeyPair::generate().map_err(certificate_error)?;
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(certificate_error)?;
        for name in names {
            params.subject_alt_names.push(match name.parse::<std::net::IpAddr>() {
                Ok(ip) => SanType::IpAddress(ip),
                Err(_) => SanType::DnsName((*name).try_into().map_err(certificate_error)?),
            });
        }
        params.distinguished_name.push(DnType::CommonName, common_name);
        let cert = params.signed_by(&key, &self.issuer).map_err(certificate_error)?;
        let pem = ServingPem { chain: format!("{}{}", cert.pem(), self.cert_pem), key: key.serialize_pem() };
        let serving = ServingCertificate {
            chain: vec![cert.der().clone(), self.cert.clone()],
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        };
        Ok((serving, pem))
    }
}

/// The server side of rustls for `certificate`, offering HTTP/2 (gRPC) and HTTP/1.1 (JSON) by ALPN.
pub fn server_config(certificate: ServingCertificate) -> Result<Arc<rustls::ServerConfig>> {
    let mut config = rustls::ServerConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|error| TlsError::Internal(error.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certificate.chain, certificate.key)
        .map_err(|error| TlsError::Invalid(format!("the certificate and key do not serve: {error}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Reads a PEM certificate chain (leaf first) and its PEM private key.
pub fn read_serving_certificate(cert_path: &Path, key_path: &Path) -> Result<ServingCertificate> {
    let unreadable = |path: &Path, what: &str, error: &dyn std::fmt::Display| {
        TlsError::Invalid(format!("{}: cannot read a PEM {what} from it: {error}", path.display()))
    };
    let chain = CertificateDer::pem_file_iter(cert_path)
        .and_then(|certs| certs.collect::<std::result::Result<Vec<_>, _>>())
        .map_err(|error| unreadable(cert_path, "certificate chain", &error))?;
    if chain.is_empty() {
        return Err(unreadable(cert_path, "certificate chain", &"it holds no certificate"));
    }
    let key = PrivateKeyDer::from_pem_file(key_path).map_err(|error| unreadable(key_path, "private key", &error))?;
    Ok(ServingCertificate { chain, key })
}

/// The SHA-256 of a certificate's SubjectPublicKeyInfo.
pub fn spki_sha256(cert: &CertificateDer<'_>) -> Result<[u8; 32]> {
    let (_, parsed) = x509_parser::parse_x509_certificate(cert.as_ref())
        .map_err(|error| TlsError::Invalid(format!("the certificate does not parse: {error}")))?;
    Ok(Sha256::digest(parsed.tbs_certificate.subject_pki.raw).into())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A CA pinned by the SHA-256 of its public key: 64 hex digits, optionally after `sha256:`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CaPin([u8; 32]);

impl std::str::FromStr for CaPin {
    type Err = String;

    fn from_str(text: &str) -> std::result::Result<CaPin, String> {
        let digits = text.trim().strip_prefix("sha256:").unwrap_or(text.trim());
        let wrong = || {
            format!(
                "a CA pin is the SHA-256 of the CA's public key: 64 hex digits, optionally after `sha256:` (got {} characters)",
                digits.len()
            )
        };
        if digits.len() != 64 {
            return Err(wrong());
        }
        let mut pin = [0u8; 32];
        for (i, byte) in pin.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&digits[2 * i..2 * i + 2], 16).map_err(|_| wrong())?;
        }
        Ok(CaPin(pin))
    }
}

impl std::fmt::Display for CaPin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&hex(&self.0))
    }
}

/// What a client trusts: a pinned CA, or the system's roots.
#[derive(Clone, Copy, Debug)]
pub enum Trust {
    /// Only a chain that holds the CA with this public key, checked as webpki checks any chain.
    Pinned(CaPin),
    /// The operating system's trust store.
    SystemRoots,
}

/// The client side of rustls for gRPC (HTTP/2 by ALPN) with `trust`.
pub fn client_config(trust: Trust) -> Result<Arc<rustls::ClientConfig>> {
    let builder = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()
        .map_err(|error| TlsError::Internal(error.to_string()))?;
    let mut config = match trust {
        Trust::Pinned(pin) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(PinnedCa { pin, provider: provider() }))
            .with_no_client_auth(),
        Trust::SystemRoots => {
            let mut roots = RootCertStore::empty();
            let found = rustls_native_certs::load_native_certs();
            roots.add_parsable_certificates(found.certs);
            if roots.is_empty() {
                return Err(TlsError::NoTrustedRoots);
            }
            builder.with_root_certificates(roots).with_no_client_auth()
        }
    };
    config.alpn_protocols = vec![b"h2".to_vec()];
    Ok(Arc::new(config))
}

/// Accepts a server whose chain holds the pinned CA and verifies under it (names, expiry,
/// signatures), as if that CA were the only root.
#[derive(Debug)]
struct PinnedCa {
    pin: CaPin,
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for PinnedCa {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> std::result::Result<ServerCertVerified, rustls::Error> {
        let pinned = intermediates.iter().find(|cert| spki_sha256(cert).is_ok_and(|hash| hash == self.pin.0));
        let Some(ca) = pinned else {
            return Err(rustls::Error::General(format!(
                "the server's certificate chain holds no CA whose public key has the pinned SHA-256 {}: \
                 the pin is wrong or the server is not the one meant",
                self.pin
            )));
        };
        let mut roots = RootCertStore::empty();
        roots.add(ca.clone().into_owned())?;
        let verifier = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), self.provider.clone())
            .build()
            .map_err(|error| rustls::Error::General(error.to_string()))?;
        verifier.verify_server_cert(end_entity, intermediates, server_name, ocsp_response, now)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> std::result::Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.provider.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider.signature_verification_algorithms.supported_schemes()
    }
}

fn certificate_error(error: rcgen::Error) -> TlsError {
    TlsError::Internal(format!("cannot make a certificate: {error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pin_reads_hex_with_or_without_its_prefix_and_refuses_anything_else() {
        let ca = LocalCa::generate("test").unwrap();
        let pin: CaPin = ca.sha256().parse().unwrap();
        assert_eq!(pin.to_string(), ca.sha256());
        assert_eq!(format!("sha256:{}", ca.sha256()).parse::<CaPin>().unwrap(), pin);
        assert!("abc".parse::<CaPin>().unwrap_err().contains("64 hex digits"));
        assert!("z".repeat(64).parse::<CaPin>().is_err());
    }

    #[test]
    fn a_ca_kept_in_pem_signs_as_it_did_and_keeps_its_pin() {
        let ca = LocalCa::generate("test").unwrap();
        let again = LocalCa::from_pem(ca.cert_pem(), ca.key_pem()).unwrap();
        assert_eq!(again.sha256(), ca.sha256());
        let serving = again.issue("server", &["localhost", "127.0.0.1"]).unwrap();
        assert_eq!(serving.chain.len(), 2);
        assert_eq!(hex(&spki_sha256(&serving.chain[1]).unwrap()), ca.sha256());
        server_config(serving).unwrap();

        let dir = tempfile::tempdir().unwrap();
        let pem = ca.issue_pem("server", &["127.0.0.1"]).unwrap();
        let (cert_path, key_path) = (dir.path().join("cert.pem"), dir.path().join("key.pem"));
        std::fs::write(&cert_path, pem.chain).unwrap();
        std::fs::write(&key_path, pem.key).unwrap();
        let read = read_serving_certificate(&cert_path, &key_path).unwrap();
        assert_eq!(read.chain.len(), 2);
        assert_eq!(hex(&spki_sha256(&read.chain[1]).unwrap()), ca.sha256());
        assert!(read_serving_certificate(&key_path, &key_path).is_err(), "a key file is no certificate chain");
    }
}
