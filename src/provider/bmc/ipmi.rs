//! The IPMI driver: a machine's BMC spoken to through Debian's `ipmitool` over IPMI 2.0
//! (`-I lanplus`), run with tokio's process and a deadline.
//!
//! The password goes to ipmitool in its environment (`IPMI_PASSWORD`, read with `-E`), never in
//! its argument list, where any user of the host could read it from `/proc`. IPMI has no virtual
//! media and no disk erase: those are permanent `unsupported` errors, and the reconciler boots
//! from the network and its erase image instead.
//!
//! What ipmitool prints of the BMC's answers reaches a view bounded and printable only.

use std::net::SocketAddr;
use std::process::Stdio;
use std::time::Duration;

use super::address::printable;
use super::redfish::MAX_INVENTORY_TEXT;
use super::{BmcAccess, BootDevice, EraseTarget, Inventory, PowerAction, PowerState, ReadBack};
use crate::provider::{ErrorKind, ProviderError, ProviderResult};
use crate::secrets::Secret;

const PROVIDER: &str = "ipmi";

/// How long one ipmitool run may take before the BMC counts as not answering.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// One machine's IPMI BMC.
pub struct Ipmi {
    host: String,
    port: u16,
    username: String,
    password: Secret,
    timeout: Duration,
    /// The ipmitool to run (`ipmitool` on the PATH unless a test says).
    program: String,
}

impl std::fmt::Debug for Ipmi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ipmi")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("username", &self.username)
            .finish()
    }
}

impl Ipmi {
    /// A driver for `access` whose ipmitool runs give up after `timeout`.
    pub fn new(access: &BmcAccess, timeout: Duration) -> ProviderResult<Ipmi> {
        let (host, port) = host_and_port(access.address.trim())?;
        Ok(Ipmi {
            host,
            port,
            username: access.username.clone(),
            password: access.password.clone(),
            timeout,
            program: "ipmitool".to_owned(),
        })
    }

    /// A driver for `access` that sends to the first of `addresses` (checked, and resolved
    /// from its host) rather than let ipmitool resolve the host again; empty to let it.
    pub fn pinned(access: &BmcAccess, timeout: Duration, addresses: &[SocketAddr]) -> ProviderResult<Ipmi> {
        let mut ipmi = Self::new(access, timeout)?;
        if let Some(address) = addresses.first() {
            ipmi.host = address.ip().to_string();
        }
        Ok(ipmi)
    }

    /// Runs `program` instead of `ipmitool` (tests record what it is given).
    pub fn with_program(mut self, program: impl Into<String>) -> Ipmi {
        self.program = program.into();
        self
    }

    /// The arguments of one run: connection first, then `command`. Never the password.
    pub fn arguments(&self, command: &[&str]) -> Vec<String> {
        // ipmitool's own retries stay inside our deadline: one second a try, as many tries as fit.
        let retries = (self.timeout.as_secs() / 2).clamp(1, 4).to_string();
        let mut arguments: Vec<String> =
            ["-I", "lanplus", "-H", &self.host, "-p", &self.port.to_string()].into_iter().map(str::to_owned).collect();
        arguments.extend(["-U".to_owned(), self.username.clone(), "-E".to_owned()]);
        // `-v` makes ipmitool say why a session failed (a bad password's "RAKP 2 HMAC is
        // invalid"), on stderr: stdout, which is parsed, stays as it is.
        arguments.extend(["-N".to_owned(), "1".to_owned(), "-R".to_owned(), retries, "-v".to_owned()]);
        arguments.extend(command.iter().map(|part| (*part).to_owned()));
        arguments
    }

    /// Runs ipmitool with `command` and returns what it printed.
    async fn run(&self, command: &[&str]) -> ProviderResult<String> {
        let mut process = tokio::process::Command::new(&self.program);
        process
            .args(self.arguments(command))
            .env("IPMI_PASSWORD", self.password.expose())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        let child = process.spawn().map_err(|error| match error.kind() {
            std::io::ErrorKind::NotFound => ProviderError::new(
                ErrorKind::Permanent,
                PROVIDER,
                format!("{} is not installed: the IPMI driver needs it (Debian's ipmitool package)", self.program),
            ),
            _ => ProviderError::new(ErrorKind::Transient, PROVIDER, format!("cannot run {}: {error}", self.program)),
        })?;
        let output = match tokio::time::timeout(self.timeout, child.wait_with_output()).await {
            Ok(output) => output.map_err(|error| {
                ProviderError::new(ErrorKind::Transient, PROVIDER, format!("ipmitool failed: {error}"))
            })?,
            Err(_) => {
                let mut error = ProviderError::new(ErrorKind::Transient, PROVIDER, "the BMC did not answer in time");
                error.reason = "timeout".into();
                return Err(error);
            }
        };
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        if output.status.success() {
            return Ok(stdout);
        }
        Err(failure(&String::from_utf8_lossy(&output.stderr), &command.join(" ")))
    }
}

#[async_trait::async_trait]
impl super::Bmc for Ipmi {
    async fn power_state(&self) -> ProviderResult<PowerState> {
        let said = self.run(&["chassis", "power", "status"]).await?;
        match said.trim().rsplit(' ').next() {
            Some("on") => Ok(PowerState::On),
            Some("off") => Ok(PowerState::Off),
            _ => Err(ProviderError::new(
                ErrorKind::Transient,
                PROVIDER,
                format!("ipmitool gave no power state: {}", printable(&said, 80)),
            )),
        }
    }

    async fn power(&self, action: PowerAction) -> ProviderResult<()> {
        let on = self.power_state().await? == PowerState::On;
        let verb = match (action, on) {
            (PowerAction::On, true) | (PowerAction::ForceOff | PowerAction::GracefulOff, false) => return Ok(()),
            (PowerAction::On | PowerAction::ForceRestart, false) => "on",
            (PowerAction::ForceOff, true) => "off",
            (PowerAction::GracefulOff, true) => "soft",
            (PowerAction::ForceRestart, true) => "reset",
        };
        self.run(&["chassis", "power", verb]).await.map(drop)
    }

    async fn boot_once(&self, device: BootDevice) -> ProviderResult<()> {
        let device = match device {
            BootDevice::VirtualCd => "cdrom",
            BootDevice::Pxe => "pxe",
            BootDevice::Disk => "disk",
        };
        // Without `options=persistent` the override holds for the next boot only.
        self.run(&["chassis", "bootdev", device]).await.map(drop)
    }

    async fn clear_boot_override(&self) -> ProviderResult<()> {
        self.run(&["chassis", "bootdev", "none"]).await.map(drop)
    }

    async fn insert_media(&self, _image_url: &str) -> ProviderResult<()> {
        Err(unsupported("IPMI has no virtual media; boot the image from the network"))
    }

    async fn insert_config(&self, _config_url: &str) -> ProviderResult<()> {
        Err(unsupported("IPMI has no virtual media; the boot configuration is fetched over the network"))
    }

    async fn eject_media(&self) -> ProviderResult<()> {
        Err(unsupported("IPMI has no virtual media"))
    }

    async fn inventory(&self) -> ProviderResult<Inventory> {
        let fru = self.run(&["fru", "print", "0"]).await?;
        Ok(Inventory {
            vendor: fru_field(&fru, &["Product Manufacturer", "Board Mfg"]),
            model: fru_field(&fru, &["Product Name", "Board Product", "Product Part Number"]),
            serial: fru_field(&fru, &["Product Serial", "Chassis Serial", "Board Serial"]),
            nics: fru_macs(&fru),
            ..Inventory::default()
        })
    }

    async fn erase_targets(&self) -> ProviderResult<Vec<EraseTarget>> {
        Err(unsupported("IPMI cannot erase disks; boot the erase image"))
    }

    async fn erase_disk(&self, _disk: &EraseTarget) -> ProviderResult<()> {
        Err(unsupported("IPMI cannot erase disks; boot the erase image"))
    }

    async fn read_back(&self, _disk: &EraseTarget) -> ProviderResult<ReadBack> {
        Ok(ReadBack::Unavailable)
    }
}

/// The first of `names` that `fru print` shows, with its value.
fn fru_field(fru: &str, names: &[&str]) -> String {
    names
        .iter()
        .find_map(|name| {
            fru.lines().find_map(|line| {
                let (key, value) = line.split_once(':')?;
                (key.trim() == *name).then(|| printable(value, MAX_INVENTORY_TEXT))
            })
        })
        .unwrap_or_default()
}

/// The host's network interfaces as the FRU's extra fields list their MAC addresses (where
/// servers without an OEM command keep them, one per field): what a network boot is matched by.
fn fru_macs(fru: &str) -> Vec<super::Nic> {
    fru.lines()
        .filter_map(|line| line.split_once(':'))
        .filter(|(key, _)| key.trim().ends_with(" Extra"))
        .filter_map(|(_, value)| value.split_whitespace().find_map(crate::boot_config::normal_mac))
        .enumerate()
        .map(|(index, mac)| super::Nic { name: format!("nic{index}"), mac })
        .collect()
}

/// `host`, `host:port`, `[v6]` or `[v6]:port`; IPMI's port is 623 unless said.
fn host_and_port(address: &str) -> ProviderResult<(String, u16)> {
    let invalid = || {
        ProviderError::new(
            ErrorKind::Permanent,
            PROVIDER,
            format!("the BMC address {address:?} is not host or host:port (port 1 to 65535)"),
        )
    };
    let (host, port) = match address.strip_prefix('[') {
        Some(rest) => {
            let (host, after) = rest.split_once(']').ok_or_else(invalid)?;
            (host, after.strip_prefix(':'))
        }
        None if address.matches(':').count() == 1 => {
            let (host, port) = address.split_once(':').ok_or_else(invalid)?;
            (host, Some(port))
        }
        None => (address, None),
    };
    if host.is_empty() || host.starts_with('-') || host.contains(char::is_whitespace) {
        return Err(invalid());
    }
    let port = match port {
        Some(port) => port.parse::<u16>().ok().filter(|port| *port > 0).ok_or_else(invalid)?,
        None => 623,
    };
    Ok((host.to_owned(), port))
}

fn unsupported(message: &str) -> ProviderError {
    let mut error = ProviderError::new(ErrorKind::Permanent, PROVIDER, message);
    error.reason = "unsupported".into();
    error
}

/// An ipmitool failure, classified by what it printed: a refused session is the credentials,
/// anything about reaching the BMC transient, anything else permanent.
fn failure(stderr: &str, command: &str) -> ProviderError {
    let said = stderr
        .lines()
        .map(|line| line.trim().trim_start_matches("> ").trim())
        .filter(|line| line.starts_with("Error") || line.contains("RAKP") || line.contains("error"))
        .collect::<Vec<_>>()
        .join("; ");
    let said = match said.is_empty() {
        true => stderr.lines().map(str::trim).rfind(|line| !line.is_empty()).unwrap_or_default().to_owned(),
        false => said,
    };
    let said = printable(&said, 160);
    let lower = said.to_ascii_lowercase();
    // A BMC that answered the channel's capabilities but not RAKP 1 turned the user away
    // (pyghmi stays silent where others say "unauthorized name").
    let refused = ["rakp 2 hmac is invalid", "unauthorized name", "invalid user name", "no response from rakp 1"];
    let unreachable = ["unable to establish", "timeout", "no response", "connection refused", "error issuing"];
    let (kind, message) = if refused.iter().any(|word| lower.contains(word)) {
        (ErrorKind::Permanent, format!("the BMC refused the credentials: {said}"))
    } else if unreachable.iter().any(|word| lower.contains(word)) {
        (ErrorKind::Transient, format!("cannot reach the BMC ({command}): {said}"))
    } else {
        (ErrorKind::Permanent, format!("ipmitool {command} failed: {said}"))
    };
    ProviderError::new(kind, PROVIDER, message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_parse_with_the_default_port() {
        assert_eq!(host_and_port("10.0.0.5").unwrap(), ("10.0.0.5".into(), 623));
        assert_eq!(host_and_port("bmc.example:6230").unwrap(), ("bmc.example".into(), 6230));
        assert_eq!(host_and_port("[::1]:7000").unwrap(), ("::1".into(), 7000));
        assert!(host_and_port("-oProxyCommand").is_err());
        assert!(host_and_port("host:0").is_err());
    }

    #[test]
    fn fru_fields_are_read_by_name() {
        let fru = "FRU Device Description : Builtin FRU Device (ID 0)\n Product Manufacturer  : Acme\n Product Name          : R100\n Product Serial        : SN-1\n";
        assert_eq!(fru_field(fru, &["Product Manufacturer"]), "Acme");
        assert_eq!(fru_field(fru, &["Board Product", "Product Name"]), "R100");
        assert_eq!(fru_field(fru, &["Product Serial"]), "SN-1");
        let extras = " Product Serial        : SN-1\n Product Extra         : 52:54:00:AA:00:01\n \
                      Product Extra         : asset 7\n Board Extra           : MAC2 52-54-00-aa-00-02\n";
        let nics: Vec<(String, String)> = fru_macs(extras).into_iter().map(|n| (n.name, n.mac)).collect();
        assert_eq!(
            nics,
            [("nic0".to_owned(), "52:54:00:aa:00:01".to_owned()), ("nic1".to_owned(), "52:54:00:aa:00:02".to_owned())]
        );
    }

    #[test]
    fn failures_are_classified() {
        assert_eq!(failure("Error: Unable to establish IPMI v2 / RMCP+ session", "x").kind, ErrorKind::Transient);
        let refused = failure("> RAKP 2 HMAC is invalid\nError: Unable to establish IPMI v2 / RMCP+ session", "x");
        assert_eq!(refused.kind, ErrorKind::Permanent);
        assert!(refused.message.starts_with("the BMC refused the credentials"));
    }
}
