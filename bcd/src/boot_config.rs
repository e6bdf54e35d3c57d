//! A bare-metal deploy's boot configuration: what a machine booted from the deploy image needs
//! to join its pool (the API, its CA pin, a one-use join token, the machine's identity), served
//! by the API at a per-deploy URL the metal reconciler inserts as removable virtual media.
//!
//! The URL's secret is derived from the join token's bearer form, so the worker can rebuild the
//! URL from the sealed token after a crash and the store keeps only the secret's SHA-256.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The path under which the API serves boot configurations: `<path>/<secret>`.
pub const PATH: &str = "/api/compute/metal/boot";

/// What a machine's installer reads.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct BootConfig {
    /// The API bcd joins through.
    pub endpoint: String,
    /// The one-use join token's bearer form.
    pub join_token: String,
    /// The SHA-256 of the API's CA public key, for bcd to pin; `None` for a public CA.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_sha256: Option<String>,
    /// The machine's identity (its node id as a machine id), so the join lands on its node.
    pub machine_id: String,
    /// The pool it joins.
    pub pool_id: String,
    /// Labels its node joins with.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

impl std::fmt::Display for BootConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "boot configuration of {} in {}", self.machine_id, self.pool_id)
    }
}

fn sha256_hex(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

/// The URL secret of the deploy whose join token's bearer form is `bearer`.
pub fn secret(bearer: &str) -> String {
    sha256_hex(&format!("better-compute boot configuration\0{bearer}"))
}

/// What the store keeps of a URL secret.
pub fn secret_sha256(secret: &str) -> String {
    sha256_hex(secret)
}

/// The boot configuration's URL on the API at `endpoint`.
pub fn url(endpoint: &str, secret: &str) -> String {
    format!("{}{PATH}/{secret}", endpoint.trim_end_matches('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_url_secret_is_fixed_by_the_token_and_reveals_nothing_of_it() {
        let bearer = "bcjt_abc.secretsecretsecretsecret";
        assert_eq!(secret(bearer), secret(bearer));
        assert_ne!(secret(bearer), secret("bcjt_abc.othersecretothersecret"));
        assert!(!secret(bearer).contains("secretsecret"));
        assert_eq!(url("http://api:1/", "s"), "http://api:1/api/compute/metal/boot/s");
        assert_eq!(secret_sha256(&secret(bearer)).len(), 64);
    }
}
