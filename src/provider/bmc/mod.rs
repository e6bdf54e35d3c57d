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
pub mod sessions;

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
    connect_shared(access, timeout, addresses, None)
}

/// [`connect_to`], a Redfish BMC spoken to through its session in `sessions` when given.
pub fn connect_shared(
    access: &BmcAccess,
    timeout: std::time::Duration,
    addresses: &[std::net::SocketAddr],
    sessions: Option<&sessions::Sessions>,
) -> ProviderResult<Box<dyn Bmc>> {
    let (protocol, driver): (_, Box<dyn Bmc>) = match access.driver {
        BmcDriver::Redfish => {
            let redfish = redfish::Redfish::pinned(access, timeout, addresses)?;
            (
                "redfish",
                Box::new(match sessions {
                    Some(sessions) => redfish.with_sessions(sessions),
                    None => redfish,
                }),
            )
        }
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

/// How a disk is erased, best first: a self-encrypting drive forgets its key, a drive that can
/// sanitize itself erases its blocks, any other is overwritten.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EraseMethod {
    /// The drive's media encryption key is replaced (Redfish `CryptographicErase`).
    CryptoErase,
    /// The drive erases every block itself (Redfish `BlockErase`, or `SecureErase` without a
    /// sanitization type).
    SecureErase,
    /// Every block is written over (Redfish `Overwrite`).
    Overwrite,
}

impl EraseMethod {
    /// The method as events name it.
    pub fn as_str(self) -> &'static str {
        match self {
            EraseMethod::CryptoErase => "cryptoErase",
            EraseMethod::SecureErase => "secureErase",
            EraseMethod::Overwrite => "overwrite",
        }
    }
}

/// A disk the BMC can erase, with the method chosen for it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EraseTarget {
    /// The drive's resource at the BMC: stable, so a resumed workflow finds it again.
    pub id: String,
    pub name: String,
    pub serial: String,
    pub method: EraseMethod,
}

/// What reading a disk back after its erase found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReadBack {
    /// Nothing written on it is left.
    Blank,
    /// It still holds data.
    HoldsData,
    /// The BMC cannot read the disk back: the erase is not verified.
    Unavailable,
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
    /// The disks to erase, each with the best method its drive offers. A BMC that cannot erase
    /// every disk answers a permanent error whose reason is `unsupported`.
    async fn erase_targets(&self) -> ProviderResult<Vec<EraseTarget>>;
    /// Erases `disk` by its method (Redfish `Drive.SecureErase` with its sanitization type).
    async fn erase_disk(&self, disk: &EraseTarget) -> ProviderResult<()>;
    /// Reads `disk` back to check that nothing written on it is left.
    async fn read_back(&self, disk: &EraseTarget) -> ProviderResult<ReadBack>;
}
