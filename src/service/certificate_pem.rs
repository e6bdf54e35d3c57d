//! Reading a custom certificate the tenant brings: the leaf's names (its subject alternative
//! names, or its common name when it has none), its expiry and fingerprint, the chain, and
//! whether the private key is the leaf's. Every refusal names its field and never quotes what
//! was sent: a private key must not end up in an error, a log line or an event.

use rcgen::KeyPair;
use sha2::{Digest, Sha256};
use x509_parser::certificate::X509Certificate;
use x509_parser::extensions::GeneralName;
use x509_parser::pem::Pem;

use crate::error::FieldViolation;

/// What a custom certificate's PEMs say.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParsedCertificate {
    /// The names the leaf covers.
    pub dns_names: Vec<String>,
    /// When the leaf expires (µs since the epoch).
    pub not_after: i64,
    /// SHA-256 of the leaf's DER, hex.
    pub sha256_fingerprint: String,
}

/// The PEM blocks of `text` as (label, DER); `None` when it holds none or something else.
fn blocks(text: &str) -> Option<Vec<(String, Vec<u8>)>> {
    let mut out = Vec::new();
    for block in Pem::iter_from_buffer(text.trim().as_bytes()) {
        let block = block.ok()?;
        out.push((block.label, block.contents));
    }
    (!out.is_empty()).then_some(out)
}

/// The raw public key (the SubjectPublicKeyInfo's bit string) of a private key in PEM: PKCS#8
/// (`PRIVATE KEY`: RSA, ECDSA P-256/P-384, Ed25519) or PKCS#1 (`RSA PRIVATE KEY`).
fn public_key_of(private_key: &str) -> Result<Vec<u8>, String> {
    const ACCEPTED: &str =
        "must be one unencrypted PEM private key: PKCS#8 (BEGIN PRIVATE KEY) or PKCS#1 (BEGIN RSA PRIVATE KEY)";
    let Some(found) = blocks(private_key) else { return Err(ACCEPTED.to_owned()) };
    let [(label, der)] = found.as_slice() else { return Err(ACCEPTED.to_owned()) };
    match label.as_str() {
        "PRIVATE KEY" => KeyPair::try_from(der.as_slice())
            .map(|pair| pair.public_key_raw().to_vec())
            .map_err(|_| format!("{ACCEPTED}; this PKCS#8 key is not an RSA, ECDSA P-256/P-384 or Ed25519 key")),
        "RSA PRIVATE KEY" => ring::rsa::KeyPair::from_der(der)
            .map(|pair| ring::signature::KeyPair::public_key(&pair).as_ref().to_vec())
            .map_err(|_| format!("{ACCEPTED}; this PKCS#1 key does not parse as an RSA key of 2048 bits or more")),
        "EC PRIVATE KEY" => Err(format!("{ACCEPTED}; convert this SEC1 key with `openssl pkcs8 -topk8 -nocrypt`")),
        _ => Err(ACCEPTED.to_owned()),
    }
}

/// The names a leaf covers: its DNS subject alternative names, or its common name.
fn names_of(leaf: &X509Certificate<'_>) -> Vec<String> {
    let mut names: Vec<String> = match leaf.subject_alternative_name() {
        Ok(Some(san)) => san
            .value
            .general_names
            .iter()
            .filter_map(|name| match name {
                GeneralName::DNSName(dns) => Some(dns.to_ascii_lowercase()),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    };
    if names.is_empty() {
        names = leaf.subject().iter_common_name().filter_map(|cn| cn.as_str().ok().map(str::to_owned)).collect();
    }
    names.dedup();
    names
}

/// Reads a custom certificate at `now` (µs): the leaf must be one X.509 certificate in PEM that
/// has not expired, the chain zero or more, and the private key the leaf's. Every violation
/// names `privateKey`, `leafCertificate` or `certificateChain`.
pub fn parse_custom(
    private_key: &str,
    leaf: &str,
    chain: &str,
    now: i64,
) -> Result<ParsedCertificate, Vec<FieldViolation>> {
    let mut violations = Vec::new();
    if private_key.trim().is_empty() {
        violations.push(FieldViolation::new("privateKey", "is required for a custom certificate"));
    }
    if leaf.trim().is_empty() {
        violations.push(FieldViolation::new("leafCertificate", "is required for a custom certificate"));
    }
    if !chain.trim().is_empty() {
        let parsed = blocks(chain).is_some_and(|found| {
            found.iter().all(|(label, der)| {
                label == "CERTIFICATE"
                    && x509_parser::parse_x509_certificate(der).is_ok_and(|(rest, _)| rest.is_empty())
            })
        });
        if !parsed {
            violations.push(FieldViolation::new(
                "certificateChain",
                "must be X.509 certificates in PEM (BEGIN CERTIFICATE), the leaf's issuer first",
            ));
        }
    }
    if !violations.is_empty() {
        return Err(violations);
    }
    let leaf_der = match blocks(leaf).as_deref() {
        Some([(label, der)]) if label == "CERTIFICATE" => der.clone(),
        _ => {
            return Err(vec![FieldViolation::new(
                "leafCertificate",
                "must be exactly one X.509 certificate in PEM (BEGIN CERTIFICATE); put intermediates in \
                 certificateChain",
            )]);
        }
    };
    let certificate = match x509_parser::parse_x509_certificate(&leaf_der) {
        Ok(([], certificate)) => certificate,
        _ => return Err(vec![FieldViolation::new("leafCertificate", "is not a valid X.509 certificate")]),
    };
    let not_after = certificate.validity().not_after.timestamp();
    let not_after_micros = not_after.saturating_mul(1_000_000);
    if not_after_micros <= now {
        violations.push(FieldViolation::new(
            "leafCertificate",
            format!(
                "expired at {} (notAfter); bring a certificate that is still valid",
                certificate.validity().not_after
            ),
        ));
    }
    let names = names_of(&certificate);
    if names.is_empty() {
        violations
            .push(FieldViolation::new("leafCertificate", "names no DNS name (no subjectAltName and no common name)"));
    }
    match public_key_of(private_key) {
        Err(why) => violations.push(FieldViolation::new("privateKey", why)),
        Ok(public) if public != certificate.public_key().subject_public_key.data.as_ref() => {
            violations.push(FieldViolation::new(
                "privateKey",
                "does not match the leaf certificate: it is the private key of another public key",
            ));
        }
        Ok(_) => {}
    }
    if !violations.is_empty() {
        return Err(violations);
    }
    Ok(ParsedCertificate {
        dns_names: names,
        not_after: not_after_micros,
        sha256_fingerprint: Sha256::digest(&leaf_der).iter().map(|b| format!("{b:02x}")).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed leaf for `names` that expires in `until_year`, and its key.
    fn issue(names: &[&str], until_year: i32) -> (String, String) {
        let key = KeyPair::generate().unwrap();
        let mut params =
            rcgen::CertificateParams::new(names.iter().map(|n| n.to_string()).collect::<Vec<_>>()).unwrap();
        params.not_before = rcgen::date_time_ymd(2020, 1, 1);
        params.not_after = rcgen::date_time_ymd(until_year, 1, 1);
        let certificate = params.self_signed(&key).unwrap();
        (key.serialize_pem(), certificate.pem())
    }

    fn now() -> i64 {
        crate::store::now_micros()
    }

    #[test]
    fn a_matching_pair_gives_names_expiry_and_fingerprint() {
        let (key, leaf) = issue(&["www.example.com", "example.com"], 2090);
        let parsed = parse_custom(&key, &leaf, "", now()).unwrap();
        assert_eq!(parsed.dns_names, ["www.example.com", "example.com"]);
        assert!(parsed.not_after > now());
        assert_eq!(parsed.sha256_fingerprint.len(), 64);
        let (_, intermediate) = issue(&["ca.example.com"], 2090);
        assert!(parse_custom(&key, &leaf, &intermediate, now()).is_ok());
    }

    #[test]
    fn refusals_name_the_field_and_never_quote_the_key() {
        let (key, leaf) = issue(&["a.example.com"], 2090);
        let (other_key, _) = issue(&["b.example.com"], 2090);
        let mismatch = parse_custom(&other_key, &leaf, "", now()).unwrap_err();
        assert_eq!(mismatch[0].field, "privateKey");
        assert!(mismatch[0].description.contains("does not match"));
        let (_, expired) = issue(&["a.example.com"], 2021);
        let refused = parse_custom(&key, &expired, "", now()).unwrap_err();
        assert!(refused.iter().any(|v| v.field == "leafCertificate" && v.description.contains("expired")));
        let garbage =
            parse_custom("-----BEGIN PRIVATE KEY-----\nnot base64\n-----END PRIVATE KEY-----", "x", "y", now())
                .unwrap_err();
        let fields: Vec<&str> = garbage.iter().map(|v| v.field.as_str()).collect();
        assert_eq!(fields, ["certificateChain"]);
        let garbage = parse_custom("nonsense", &leaf, "", now()).unwrap_err();
        assert_eq!(garbage[0].field, "privateKey");
        let body = key.lines().nth(1).unwrap();
        for violation in mismatch.iter().chain(&garbage) {
            assert!(!violation.description.contains(body));
        }
    }
}
