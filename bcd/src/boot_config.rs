//! A bare-metal deploy's boot configuration: what a machine booted from the deploy image needs
//! to join its pool (the API, its CA pin, a one-use join token, the machine's identity), served
//! by the API at a per-deploy URL the metal reconciler inserts as removable virtual media.
//!
//! The URL's secret is derived from the join token's bearer form, so the worker can rebuild the
//! URL from the sealed token after a crash and the store keeps only the secret's SHA-256.
//!
//! A machine whose BMC has no virtual media (IPMI) boots from the network instead: its firmware
//! (iPXE) asks [`PXE_PATH`]`/<mac>` for a script with one of its MAC addresses, and the script
//! boots the deploy image with the configuration's URL on its command line
//! ([`KERNEL_ARGUMENT`]), where the installer reads it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// The path under which the API serves boot configurations: `<path>/<secret>`.
pub const PATH: &str = "/api/compute/metal/boot";

/// The path under which the API serves iPXE scripts: `<path>/<mac>`.
pub const PXE_PATH: &str = "/api/compute/metal/pxe";

/// The kernel command line argument that carries the boot configuration's URL.
pub const KERNEL_ARGUMENT: &str = "bc.boot_config";

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

/// `text` as a MAC address in lower case with colons (`52:54:00:ab:cd:ef`), from the forms
/// firmware and BMCs print (colons, hyphens, or none; any case); `None` for anything else.
pub fn normal_mac(text: &str) -> Option<String> {
    let groups: Vec<&str> = match text.len() {
        12 => (0..6).map(|i| text.get(2 * i..2 * i + 2)).collect::<Option<_>>()?,
        17 => text.split([':', '-']).collect(),
        _ => return None,
    };
    let valid = groups.len() == 6 && groups.iter().all(|g| g.len() == 2 && g.bytes().all(|b| b.is_ascii_hexdigit()));
    valid.then(|| groups.join(":").to_ascii_lowercase())
}

/// The iPXE script that boots `image` with the boot configuration at `config_url` on its
/// command line, for the deploy of `machine_id`.
pub fn ipxe_script(machine_id: &str, image: &str, config_url: &str) -> String {
    format!(
        "#!ipxe\n# better-compute: the deploy of {machine_id}\nkernel {image} {KERNEL_ARGUMENT}={config_url}\nboot\n"
    )
}

/// The boot configuration's URL an iPXE script of [`ipxe_script`] carries.
pub fn config_url_of_script(script: &str) -> Option<&str> {
    let prefix = format!("{KERNEL_ARGUMENT}=");
    script
        .lines()
        .filter(|line| line.starts_with("kernel "))
        .flat_map(str::split_whitespace)
        .find_map(|word| word.strip_prefix(prefix.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macs_read_in_every_usual_form_and_nothing_else() {
        for form in ["52:54:00:AB:cd:ef", "52-54-00-ab-cd-ef", "525400abcdef"] {
            assert_eq!(normal_mac(form).as_deref(), Some("52:54:00:ab:cd:ef"), "{form}");
        }
        for bad in ["", "52:54:00:ab:cd", "52:54:00:ab:cd:eg", "5:25:40:0a:bc:def", "52:54:00:ab:cd:ef:01", "x"] {
            assert_eq!(normal_mac(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_ipxe_script_boots_the_image_with_the_configuration_url() {
        let script = ipxe_script("metal-node_1", "http://images/node.efi", "http://api/api/compute/metal/boot/abc");
        assert!(script.starts_with("#!ipxe\n"), "{script}");
        assert!(
            script.contains("kernel http://images/node.efi bc.boot_config=http://api/api/compute/metal/boot/abc\n")
        );
        assert!(script.ends_with("boot\n"), "{script}");
        assert_eq!(config_url_of_script(&script), Some("http://api/api/compute/metal/boot/abc"));
        assert_eq!(config_url_of_script("#!ipxe\nboot\n"), None);
    }

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
