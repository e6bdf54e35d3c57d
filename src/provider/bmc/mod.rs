//! Baseboard management controllers: one trait over the Redfish and IPMI drivers, so the metal
//! reconciler powers, boots and inspects a machine without knowing which protocol its BMC speaks.
//!
//! A driver holds the BMC's address and credentials for one machine; the password is a
//! [`Secret`] and never appears in a `Debug`, an error or a process's argument list. Failures
//! are [`ProviderError`]s classified as the cloud adapters' are: an unreachable BMC or a 5xx is
//! transient, refused credentials or an unsupported action permanent.

pub mod address;
pub mod ipmi;
mod measured;
pub mod redfish;

use crate::provider::ProviderResult;
use crate::secrets::Secret;

/// The driver of `access`'s protocol, with the default deadline per call. Nothing is sent
/// until the first call; an address the driver cannot use is a permanent error.
pub fn connect(access: &BmcAccess) -> ProviderResult<Box<dyn Bmc>> {
    connect_within(access, redfish::DEFAULT_TIMEOUT)
}

/// The driver of `access`'s protocol, each call given up after `timeout`.
pub fn connect_within(access: &BmcAccess, timeout: std::time::Duration) -> ProviderResult<Box<dyn Bmc>> {
    connect_to(access, timeout, &[])
}

/// The driver of `access`'s protocol that connects to `addresses` (the ones its host resolved
/// to, checked by [`address::check`]) and never resolves the host again; each call given up
/// after `timeout`.
pub fn connect_to(
    access: &BmcAccess,
    timeout: std::time::Duration,
    addresses: &[std::net::SocketAddr],
) -> ProviderResult<Box<dyn Bmc>> {
    let (protocol, driver): (_, Box<dyn Bmc>) = match access.driver {
        BmcDriver::Redfish => ("redfish", Box::new(redfish::Redfish::pinned(access, timeout, addresses)?)),
        BmcDriver::Ipmi => ("ipmi", Box::new(ipmi::Ipmi::pinned(access, timeout, addresses)?)),
    };
    Ok(Box::new(measured::Measured { protocol, driver }))
}

/// The protocol a BMC speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BmcDriver {
    /// DMTF Redfish over HTTPS.
    Redfish,
    /// IPMI 2.0 over LAN (lanplus).
    Ipmi,
}

/// Where a machine's BMC is and how to sign in to it.
#[derive(Clone, Debug)]
pub struct BmcAccess {
    /// Its protocol.
    pub driver: BmcDriver,
    /// Redfish: the service root's URL (`https://10.0.0.5` or `https://host:8000`), with the
    /// system's path when the BMC has several (`.../redfish/v1/Systems/<id>`); IPMI: `host` or
    /// `host:port`.
    pub address: String,
    /// The BMC user.
    pub username: String,
    /// The BMC user's password.
    pub password: Secret,
    /// A PEM CA certificate the Redfish BMC's certificate must chain to, when it is not public.
    pub ca_certificate: Option<String>,
    /// Accept any certificate (the user asked for it by name).
    pub insecure: bool,
}

/// What the BMC says of the machine's power.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerState {
    On,
    Off,
    PoweringOn,
    PoweringOff,
}

/// A power action.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PowerAction {
    On,
    /// Off at once, as holding the button.
    ForceOff,
    /// Ask the operating system to shut down.
    GracefulOff,
    /// Reset at once.
    ForceRestart,
}

/// The device the machine boots from next.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BootDevice {
    /// The virtual CD of inserted media (Redfish).
    VirtualCd,
    /// The network (PXE).
    Pxe,
    /// Its own disk.
    Disk,
}

/// A network interface the BMC reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Nic {
    pub name: String,
    /// Lower case, colon separated.
    pub mac: String,
}

/// A disk the BMC reports.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Disk {
    pub name: String,
    pub size_bytes: u64,
}

/// What inspection finds.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Inventory {
    /// Logical CPUs (threads) in all sockets.
    pub cpus: u32,
    pub cpu_model: String,
    pub memory_mib: u64,
    pub nics: Vec<Nic>,
    pub disks: Vec<Disk>,
    pub vendor: String,
    pub model: String,
    pub serial: String,
}

/// One machine's BMC.
#[async_trait::async_trait]
pub trait Bmc: Send + Sync {
    /// Signs in and reads the power state: enrolment's check that the BMC answers and takes
    /// the credentials.
    async fn power_state(&self) -> ProviderResult<PowerState>;
    /// Runs a power action; asking for the state the machine is in already succeeds.
    async fn power(&self, action: PowerAction) -> ProviderResult<()>;
    /// Boots from `device` on the next boot only.
    async fn boot_once(&self, device: BootDevice) -> ProviderResult<()>;
    /// Clears any boot override.
    async fn clear_boot_override(&self) -> ProviderResult<()>;
    /// Inserts the image at `image_url` in the virtual CD (ejecting what was there).
    /// IPMI has no virtual media: a permanent error.
    async fn insert_media(&self, image_url: &str) -> ProviderResult<()>;
    /// Inserts the boot configuration at `config_url` in the removable virtual media (a USB
    /// stick or floppy, as a config drive), ejecting what was there. IPMI: a permanent error.
    async fn insert_config(&self, config_url: &str) -> ProviderResult<()>;
    /// Ejects every virtual media device; nothing inserted is not an error.
    async fn eject_media(&self) -> ProviderResult<()>;
    /// Reads the inventory.
    async fn inventory(&self) -> ProviderResult<Inventory>;
    /// Erases every disk through the BMC (Redfish `Drive.SecureErase`). A BMC that cannot
    /// answers a permanent error whose reason is `unsupported`, and the reconciler boots its
    /// erase image instead.
    async fn erase_disks(&self) -> ProviderResult<()>;
}
