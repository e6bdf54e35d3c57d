//! The Redfish driver: a machine's BMC spoken to over HTTPS with reqwest and rustls, following
//! the DMTF schemas (ComputerSystem, Manager, VirtualMedia, Storage, Drive) as real BMCs and
//! sushy-tools serve them.
//!
//! It speaks through a session shared by every machine behind the same BMC and user (see
//! [`super::sessions`]) when the worker gives it one, else with HTTP basic auth on every request. Paths are never built from guesses where the service says them:
//! the system, its manager, the virtual CD and each action's target are followed from
//! `@odata.id` links and `Actions` blocks, but only within the BMC: a link or a redirect to
//! another origin is refused, never followed, and the client connects to the addresses the
//! worker checked (see [`super::address`]) rather than resolving the host again.
//!
//! What the BMC answers reaches a view only bounded: an error names the HTTP status with at
//! most a short, printable reason (Redfish's `error.message`, cut), never the body; inventory
//! texts are printable and cut; an answer larger than [`MAX_ANSWER_BYTES`] is refused unread.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::OnceCell;

use super::address::printable;
use super::sessions::{Session, Sessions, Slot, SlotState};
use super::{BmcAccess, BootDevice, Disk, EraseMethod, EraseTarget, Inventory, Nic, PowerAction, PowerState, ReadBack};
use crate::provider::{ErrorKind, ProviderError, ProviderResult};
use crate::secrets::Secret;

const PROVIDER: &str = "redfish";

/// How long one request may take before the BMC counts as not answering.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The largest answer read from a BMC: its resources are a few kilobytes each.
pub const MAX_ANSWER_BYTES: usize = 4 << 20;

/// The longest reason a BMC's error gives a view.
const MAX_REASON_CHARS: usize = 120;

/// The longest inventory text (a model, a serial, a NIC's name).
pub const MAX_INVENTORY_TEXT: usize = 64;

/// The most members of one collection followed, and the most NICs and disks in an inventory.
const MAX_MEMBERS: usize = 64;

/// One machine's Redfish BMC.
pub struct Redfish {
    http: reqwest::Client,
    /// `scheme://host:port`, no trailing slash.
    origin: String,
    /// The system's path when the address names it.
    given_system: Option<String>,
    /// The system's path, found once.
    system: OnceCell<String>,
    username: String,
    password: Secret,
    /// The shared session of this BMC and user (see [`super::sessions`]); `None`: basic auth on
    /// every request.
    session: Option<Arc<Slot>>,
}

impl std::fmt::Debug for Redfish {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redfish").field("origin", &self.origin).field("username", &self.username).finish()
    }
}

impl Redfish {
    /// A driver for `access` whose requests give up after `timeout`, resolving its host as
    /// the system does (the driver tests'; the worker pins the addresses it checked).
    pub fn new(access: &BmcAccess, timeout: Duration) -> ProviderResult<Redfish> {
        Self::pinned(access, timeout, &[])
    }

    /// A driver for `access` that connects to `addresses` (checked, and resolved from its
    /// host) instead of resolving the host again; empty to resolve it.
    pub fn pinned(access: &BmcAccess, timeout: Duration, addresses: &[SocketAddr]) -> ProviderResult<Redfish> {
        let url = reqwest::Url::parse(access.address.trim()).map_err(|error| {
            ProviderError::new(
                ErrorKind::Permanent,
                PROVIDER,
                format!("the BMC address is not a URL ({error}); give https://host[:port][/redfish/v1/Systems/<id>]"),
            )
        })?;
        if !matches!(url.scheme(), "https" | "http") || url.host_str().is_none() {
            return Err(ProviderError::new(
                ErrorKind::Permanent,
                PROVIDER,
                "the BMC address must be an https:// URL with a host",
            ));
        }
        let origin = url.origin().ascii_serialization();
        let path = url.path().trim_end_matches('/');
        let given_system = path.contains("/Systems/").then(|| path.to_owned());
        // No redirect is followed (it could lead anywhere the BMC likes, with the password) and
        // no proxy from the environment is used (it would resolve the host itself).
        let mut builder = reqwest::Client::builder()
            .timeout(timeout)
            .connect_timeout(timeout)
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy();
        if let Some(host) =
            url.host_str().filter(|host| !host.starts_with('[') && host.parse::<std::net::IpAddr>().is_err())
            && !addresses.is_empty()
        {
            builder = builder.resolve_to_addrs(host, addresses);
        }
        if let Some(pem) = &access.ca_certificate {
            let certificates = reqwest::Certificate::from_pem_bundle(pem.as_bytes()).unwrap_or_default();
            if certificates.is_empty() {
                return Err(ProviderError::new(
                    ErrorKind::Permanent,
                    PROVIDER,
                    "the BMC's CA certificate holds no PEM certificate",
                ));
            }
            for certificate in certificates {
                builder = builder.add_root_certificate(certificate);
            }
        }
        if access.insecure {
            builder = builder.danger_accept_invalid_certs(true);
        }
        let http = builder.build().map_err(|error| ProviderError::transport(PROVIDER, error))?;
        Ok(Redfish {
            http,
            origin,
            given_system,
            system: OnceCell::new(),
            username: access.username.clone(),
            password: access.password.clone(),
            session: None,
        })
    }

    /// The driver speaking through the shared session of its BMC and user in `sessions`.
    pub fn with_sessions(mut self, sessions: &Sessions) -> Redfish {
        self.session = Some(sessions.slot(&self.origin, &self.username, &self.password));
        self
    }

    /// The URL of `path` (a path, or a URL of the BMC's own origin, as links give it): a
    /// link the BMC gives to anywhere else is refused, never followed.
    fn url(&self, path: &str) -> ProviderResult<reqwest::Url> {
        let joined = if path.starts_with('/') && !path.starts_with("//") {
            reqwest::Url::parse(&format!("{}{path}", self.origin)).ok()
        } else {
            reqwest::Url::parse(path).ok()
        };
        match joined {
            Some(url) if url.origin().ascii_serialization() == self.origin && url.username().is_empty() => Ok(url),
            _ => Err(ProviderError::new(
                ErrorKind::Permanent,
                PROVIDER,
                "the BMC linked to a resource outside itself, which is not followed",
            )),
        }
    }

    /// Sends `method` to `url` with `body`: through the shared session when there is one (made
    /// again, once, when the BMC answers 401 to it), else with basic auth.
    async fn send(&self, method: reqwest::Method, url: reqwest::Url, body: Option<&Value>) -> ProviderResult<Value> {
        let Some(slot) = &self.session else {
            return self.send_as(method, url, body, None).await;
        };
        let token = self.session_token(slot).await?;
        let Some(used) = token else {
            return self.send_as(method, url, body, None).await;
        };
        match self.send_as(method.clone(), url.clone(), body, Some(&used)).await {
            Err(error) if error.status == Some(401) => {
                // The session expired (or the BMC restarted): made again, and the call retried
                // once. The old one is logged out in case the BMC still counts it.
                let mut state = slot.state.lock().await;
                if matches!(&*state, SlotState::Open(session) if session.token.expose() == used.expose())
                    && let SlotState::Open(old) = std::mem::take(&mut *state)
                {
                    let logout = self.http.delete(&old.location).header("x-auth-token", old.token.expose());
                    let _ = logout.send().await;
                }
                drop(state);
                let again = self.session_token(slot).await?;
                self.send_as(method, url, body, again.as_ref()).await
            }
            answered => answered,
        }
    }

    /// The token of the shared session, logging in when there is none; `None` for a BMC
    /// without a session service. One login at a time per BMC and user: the others wait for it.
    async fn session_token(&self, slot: &Slot) -> ProviderResult<Option<Secret>> {
        let mut state = slot.state.lock().await;
        match &*state {
            SlotState::Open(session) => return Ok(Some(session.token.clone())),
            SlotState::Basic => return Ok(None),
            SlotState::None => {}
        }
        let login = json!({"UserName": self.username, "Password": self.password.expose()});
        let url = self.url(SESSIONS)?;
        let response =
            self.http.post(url).header("accept", "application/json").json(&login).send().await.map_err(transport)?;
        let status = response.status().as_u16();
        if matches!(status, 404 | 405 | 501) {
            *state = SlotState::Basic;
            return Ok(None);
        }
        let token = response.headers().get("x-auth-token").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let location = response.headers().get("location").and_then(|v| v.to_str().ok()).map(str::to_owned);
        let text = bounded_text(response).await?;
        if !(200..300).contains(&status) {
            let mut refused = refusal(status, &text);
            // A BMC whose sessions are all taken frees one when another expires: try again.
            if refused.reason == "CreateLimitReachedForResource" {
                refused.kind = ErrorKind::Transient;
            }
            return Err(refused);
        }
        let body: Value = serde_json::from_str(&text).unwrap_or_default();
        let location = location.or_else(|| odata_id(&body));
        // A service that answers the login without a token and a place to log out from has no
        // sessions to speak of: basic auth, as with one that has no session service.
        let (Some(token), Some(location)) = (token, location) else {
            *state = SlotState::Basic;
            return Ok(None);
        };
        let location = self.url(&location)?.to_string();
        let token = Secret::new(token);
        *state = SlotState::Open(Session { token: token.clone(), location, http: self.http.clone() });
        tracing::info!(bmc = %self.origin, "BMC session opened");
        Ok(Some(token))
    }

    async fn send_as(
        &self,
        method: reqwest::Method,
        url: reqwest::Url,
        body: Option<&Value>,
        token: Option<&Secret>,
    ) -> ProviderResult<Value> {
        let mut request = self.http.request(method, url).header("accept", "application/json");
        request = match token {
            Some(token) => request.header("x-auth-token", token.expose()),
            None => request.basic_auth(&self.username, Some(self.password.expose())),
        };
        if let Some(body) = body {
            request = request.json(body);
        }
        let response = request.send().await.map_err(transport)?;
        let status = response.status().as_u16();
        let text = bounded_text(response).await.map_err(|mut error| {
            error.status = Some(status);
            error
        })?;
        if (200..300).contains(&status) {
            if text.trim().is_empty() {
                return Ok(Value::Null);
            }
            return serde_json::from_str(&text).map_err(|error| ProviderError::decode(PROVIDER, "an answer", error));
        }
        Err(refusal(status, &text))
    }

    async fn get(&self, path: &str) -> ProviderResult<Value> {
        self.send(reqwest::Method::GET, self.url(path)?, None).await
    }

    async fn post(&self, path: &str, body: Value) -> ProviderResult<Value> {
        self.send(reqwest::Method::POST, self.url(path)?, Some(&body)).await
    }

    async fn patch(&self, path: &str, body: Value) -> ProviderResult<Value> {
        self.send(reqwest::Method::PATCH, self.url(path)?, Some(&body)).await
    }

    /// The members' paths of the collection at `path` (the first [`MAX_MEMBERS`]).
    async fn members(&self, path: &str) -> ProviderResult<Vec<String>> {
        let collection = self.get(path).await?;
        Ok(collection["Members"].as_array().into_iter().flatten().filter_map(odata_id).take(MAX_MEMBERS).collect())
    }

    /// The system's path: the address's, or the one system of the service root's collection.
    async fn system_path(&self) -> ProviderResult<&str> {
        let path = self
            .system
            .get_or_try_init(|| async {
                if let Some(path) = &self.given_system {
                    return Ok(path.clone());
                }
                let root = self.get("/redfish/v1").await?;
                let systems = odata_id(&root["Systems"]).unwrap_or_else(|| "/redfish/v1/Systems".to_owned());
                let members = self.members(&systems).await?;
                match members.as_slice() {
                    [only] => Ok(only.clone()),
                    [] => Err(ProviderError::new(ErrorKind::NotFound, PROVIDER, "the BMC lists no system")),
                    _ => Err(ProviderError::new(
                        ErrorKind::Permanent,
                        PROVIDER,
                        format!(
                            "the BMC has {} systems; give the address of one ({})",
                            members.len(),
                            members.iter().take(4).map(|m| printable(m, 80)).collect::<Vec<_>>().join(", ")
                        ),
                    )),
                }
            })
            .await?;
        Ok(path)
    }

    async fn system(&self) -> ProviderResult<Value> {
        let path = self.system_path().await?.to_owned();
        self.get(&path).await
    }

    /// The virtual CD: the system's own VirtualMedia (Redfish 1.12 and later) or its manager's.
    async fn virtual_cd(&self) -> ProviderResult<(String, Value)> {
        self.virtual_media(&["CD", "DVD"]).await?.ok_or_else(|| unsupported("the BMC has no virtual CD"))
    }

    /// The removable virtual media a boot configuration goes in (a USB stick or a floppy, as
    /// config drives are given).
    async fn virtual_removable(&self) -> ProviderResult<Option<(String, Value)>> {
        self.virtual_media(&["USBStick", "Floppy"]).await
    }

    /// The first virtual media device of one of `kinds` (`MediaTypes`), with its resource.
    async fn virtual_media(&self, kinds: &[&str]) -> ProviderResult<Option<(String, Value)>> {
        let system = self.system().await?;
        let mut collections: Vec<String> = odata_id(&system["VirtualMedia"]).into_iter().collect();
        let mut managers: Vec<String> =
            system["Links"]["ManagedBy"].as_array().into_iter().flatten().filter_map(odata_id).collect();
        if managers.is_empty() {
            managers = self.members("/redfish/v1/Managers").await?;
        }
        for manager in managers {
            if let Some(media) = odata_id(&self.get(&manager).await?["VirtualMedia"]) {
                collections.push(media);
            }
        }
        for collection in collections {
            for member in self.members(&collection).await? {
                let media = self.get(&member).await?;
                let types = media["MediaTypes"].as_array().into_iter().flatten().filter_map(Value::as_str);
                if types.into_iter().any(|kind| kinds.contains(&kind)) {
                    return Ok(Some((member, media)));
                }
            }
        }
        Ok(None)
    }

    /// The drives of the system's Storage, with their resources.
    async fn drives(&self) -> ProviderResult<Vec<Value>> {
        let system = self.system().await?;
        let mut drives = Vec::new();
        if let Some(storage) = odata_id(&system["Storage"]) {
            for member in self.members(&storage).await? {
                let controller = self.get(&member).await?;
                for drive in controller["Drives"].as_array().into_iter().flatten().filter_map(odata_id) {
                    drives.push(self.get(&drive).await?);
                }
            }
        }
        Ok(drives)
    }

    async fn disks(&self, system: &Value) -> ProviderResult<Vec<Disk>> {
        let drives = self.drives().await?;
        if !drives.is_empty() {
            return Ok(drives
                .iter()
                .map(|d| Disk { name: name_of(d), size_bytes: d["CapacityBytes"].as_u64().unwrap_or(0) })
                .collect());
        }
        let mut disks = Vec::new();
        if let Some(simple) = odata_id(&system["SimpleStorage"]) {
            for member in self.members(&simple).await? {
                let controller = self.get(&member).await?;
                for device in controller["Devices"].as_array().into_iter().flatten() {
                    disks.push(Disk {
                        name: name_of(device),
                        size_bytes: device["CapacityBytes"].as_u64().unwrap_or(0),
                    });
                }
            }
        }
        Ok(disks)
    }

    async fn processors(&self, system: &Value) -> ProviderResult<(u32, String)> {
        let summary = &system["ProcessorSummary"];
        let mut cpus = summary["LogicalProcessorCount"].as_u64().or(summary["Count"].as_u64()).unwrap_or(0) as u32;
        let mut model = text_of(&summary["Model"]);
        if (cpus == 0 || model.is_empty())
            && let Some(processors) = odata_id(&system["Processors"])
        {
            let mut threads = 0;
            for member in self.members(&processors).await? {
                let processor = self.get(&member).await?;
                threads += processor["TotalThreads"].as_u64().or(processor["TotalCores"].as_u64()).unwrap_or(1) as u32;
                if model.is_empty() {
                    model = text_of(&processor["Model"]);
                }
            }
            if cpus == 0 {
                cpus = threads;
            }
        }
        Ok((cpus, model))
    }

    async fn nics(&self, system: &Value) -> ProviderResult<Vec<Nic>> {
        let mut nics = Vec::new();
        if let Some(interfaces) = odata_id(&system["EthernetInterfaces"]) {
            for member in self.members(&interfaces).await? {
                let interface = self.get(&member).await?;
                let mac = interface["MACAddress"].as_str().or(interface["PermanentMACAddress"].as_str());
                if let Some(mac) = mac.and_then(mac_of) {
                    nics.push(Nic { name: name_of(&interface), mac });
                }
            }
        }
        Ok(nics)
    }
}

#[async_trait::async_trait]
impl super::Bmc for Redfish {
    async fn power_state(&self) -> ProviderResult<PowerState> {
        let system = self.system().await?;
        match system["PowerState"].as_str() {
            Some("On") => Ok(PowerState::On),
            Some("Off") => Ok(PowerState::Off),
            Some("PoweringOn") => Ok(PowerState::PoweringOn),
            Some("PoweringOff") => Ok(PowerState::PoweringOff),
            other => Err(ProviderError::new(
                ErrorKind::Transient,
                PROVIDER,
                format!("the BMC reports no known power state ({})", printable(other.unwrap_or("none"), 20)),
            )),
        }
    }

    async fn power(&self, action: PowerAction) -> ProviderResult<()> {
        let system = self.system().await?;
        let on = matches!(system["PowerState"].as_str(), Some("On" | "PoweringOn"));
        let reset_type = match (action, on) {
            (PowerAction::On, true) | (PowerAction::ForceOff | PowerAction::GracefulOff, false) => return Ok(()),
            (PowerAction::On, false) | (PowerAction::ForceRestart, false) => "On",
            (PowerAction::ForceOff, true) => "ForceOff",
            (PowerAction::GracefulOff, true) => "GracefulShutdown",
            (PowerAction::ForceRestart, true) => "ForceRestart",
        };
        let target = match action_target(&system, "#ComputerSystem.Reset") {
            Some(target) => target,
            None => format!("{}/Actions/ComputerSystem.Reset", self.system_path().await?),
        };
        self.post(&target, json!({"ResetType": reset_type})).await.map(drop)
    }

    async fn boot_once(&self, device: BootDevice) -> ProviderResult<()> {
        let target = match device {
            BootDevice::VirtualCd => "Cd",
            BootDevice::Pxe => "Pxe",
            BootDevice::Disk => "Hdd",
        };
        let path = self.system_path().await?.to_owned();
        let boot = json!({"Boot": {"BootSourceOverrideEnabled": "Once", "BootSourceOverrideTarget": target}});
        self.patch(&path, boot).await.map(drop)
    }

    async fn clear_boot_override(&self) -> ProviderResult<()> {
        let path = self.system_path().await?.to_owned();
        // Some services want a target with every Boot change (sushy-tools), some refuse `None`:
        // the target first, and the bare `Disabled` where that is refused.
        let with_target =
            json!({"Boot": {"BootSourceOverrideEnabled": "Disabled", "BootSourceOverrideTarget": "None"}});
        match self.patch(&path, with_target).await {
            Err(error) if error.status == Some(400) => {
                self.patch(&path, json!({"Boot": {"BootSourceOverrideEnabled": "Disabled"}})).await.map(drop)
            }
            done => done.map(drop),
        }
    }

    async fn insert_media(&self, image_url: &str) -> ProviderResult<()> {
        let (path, media) = self.virtual_cd().await?;
        insert(self, &path, &media, image_url).await
    }

    async fn insert_config(&self, config_url: &str) -> ProviderResult<()> {
        let (path, media) = self
            .virtual_removable()
            .await?
            .ok_or_else(|| unsupported("the BMC has no removable virtual media (USB stick or floppy)"))?;
        insert(self, &path, &media, config_url).await
    }

    async fn eject_media(&self) -> ProviderResult<()> {
        let (path, media) = self.virtual_cd().await?;
        if inserted(&media) {
            eject(self, &path, &media).await?;
        }
        if let Some((path, media)) = self.virtual_removable().await?
            && inserted(&media)
        {
            eject(self, &path, &media).await?;
        }
        Ok(())
    }

    async fn inventory(&self) -> ProviderResult<Inventory> {
        let system = self.system().await?;
        let (cpus, cpu_model) = self.processors(&system).await?;
        let memory_gib = system["MemorySummary"]["TotalSystemMemoryGiB"].as_f64().unwrap_or(0.0);
        Ok(Inventory {
            cpus,
            cpu_model,
            memory_mib: (memory_gib * 1024.0).round() as u64,
            nics: self.nics(&system).await?,
            disks: self.disks(&system).await?,
            vendor: text_of(&system["Manufacturer"]),
            model: text_of(&system["Model"]),
            serial: text_of(&system["SerialNumber"]),
        })
    }

    async fn erase_targets(&self) -> ProviderResult<Vec<EraseTarget>> {
        let drives = self.drives().await?;
        if drives.is_empty() {
            return Err(unsupported("the BMC lists no Storage drives to erase"));
        }
        // Checked for every drive, so that a BMC that can erase only some erases none.
        let mut targets = Vec::new();
        for drive in &drives {
            let Some(id) = odata_id(drive) else {
                return Err(unsupported(&format!("the drive {} has no @odata.id", name_of(drive))));
            };
            let method = match action_target(drive, "#Drive.SecureErase") {
                Some(_) => erase_method(drive),
                None => return Err(unsupported(&format!("the drive {} has no Drive.SecureErase", name_of(drive)))),
            };
            targets.push(EraseTarget { id, name: name_of(drive), serial: text_of(&drive["SerialNumber"]), method });
        }
        Ok(targets)
    }

    async fn erase_disk(&self, disk: &EraseTarget) -> ProviderResult<()> {
        let drive = self.get(&disk.id).await?;
        let target = action_target(&drive, "#Drive.SecureErase")
            .ok_or_else(|| unsupported(&format!("the drive {} has no Drive.SecureErase", disk.name)))?;
        // A BMC that lists no sanitization types takes the action bare, as Drive 1.0 had it.
        let body = match sanitization_types(&drive).is_empty() {
            true => json!({}),
            false => json!({"SanitizationType": match disk.method {
                EraseMethod::CryptoErase => "CryptographicErase",
                EraseMethod::SecureErase => "BlockErase",
                EraseMethod::Overwrite => "Overwrite",
            }}),
        };
        self.post(&target, body).await.map(drop)
    }

    /// The drive's `#BetterCompute.ReadBack` OEM action (what the erase image reports through
    /// BMCs that carry it): `{"Blank": true}` when nothing written is left. Without it the
    /// erase cannot be verified.
    async fn read_back(&self, disk: &EraseTarget) -> ProviderResult<ReadBack> {
        let drive = self.get(&disk.id).await?;
        let Some(target) = drive["Actions"]["Oem"]["#BetterCompute.ReadBack"]["target"].as_str() else {
            return Ok(ReadBack::Unavailable);
        };
        let answer = self.post(target, json!({})).await?;
        Ok(match answer["Blank"].as_bool() {
            Some(true) => ReadBack::Blank,
            Some(false) => ReadBack::HoldsData,
            None => ReadBack::Unavailable,
        })
    }
}

/// The sanitization types `Drive.SecureErase` of `drive` allows.
fn sanitization_types(drive: &Value) -> Vec<&str> {
    let allowed = &drive["Actions"]["#Drive.SecureErase"]["SanitizationType@Redfish.AllowableValues"];
    allowed.as_array().into_iter().flatten().filter_map(Value::as_str).collect()
}

/// The best erase `drive` offers: a crypto erase on a self-encrypting drive, else a block
/// erase, else an overwrite; a bare `SecureErase` where no type is listed.
fn erase_method(drive: &Value) -> EraseMethod {
    let types = sanitization_types(drive);
    let encrypting = drive["EncryptionAbility"].as_str() == Some("SelfEncryptingDrive");
    if types.contains(&"CryptographicErase") && encrypting {
        EraseMethod::CryptoErase
    } else if types.is_empty() || types.contains(&"BlockErase") {
        EraseMethod::SecureErase
    } else {
        EraseMethod::Overwrite
    }
}

/// The standard path of a Redfish service's sessions.
const SESSIONS: &str = "/redfish/v1/SessionService/Sessions";

/// The body of `response`, at most [`MAX_ANSWER_BYTES`] of it.
async fn bounded_text(mut response: reqwest::Response) -> ProviderResult<String> {
    let mut body = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(transport)? {
        if body.len() + chunk.len() > MAX_ANSWER_BYTES {
            return Err(ProviderError::new(
                ErrorKind::Permanent,
                PROVIDER,
                format!("the BMC's answer is larger than {} MiB", MAX_ANSWER_BYTES >> 20),
            ));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(String::from_utf8_lossy(&body).into_owned())
}

/// Ejects the virtual CD at `path`: its `EjectMedia` action, or a PATCH where it has none.
/// Whether a virtual media device holds an image.
fn inserted(media: &Value) -> bool {
    media["Inserted"].as_bool() == Some(true) || !media["Image"].as_str().unwrap_or_default().is_empty()
}

/// Inserts `url` in a virtual media device, ejecting what it held.
async fn insert(redfish: &Redfish, path: &str, media: &Value, url: &str) -> ProviderResult<()> {
    if inserted(media) {
        eject(redfish, path, media).await?;
    }
    let inserted = json!({"Image": url, "Inserted": true, "WriteProtected": true});
    match action_target(media, "#VirtualMedia.InsertMedia") {
        Some(target) => redfish.post(&target, inserted).await.map(drop),
        None => redfish.patch(path, inserted).await.map(drop),
    }
}

async fn eject(redfish: &Redfish, path: &str, media: &Value) -> ProviderResult<()> {
    match action_target(media, "#VirtualMedia.EjectMedia") {
        Some(target) => redfish.post(&target, json!({})).await.map(drop),
        None => redfish.patch(path, json!({"Image": null, "Inserted": false})).await.map(drop),
    }
}

/// A resource's `@odata.id`.
fn odata_id(link: &Value) -> Option<String> {
    link["@odata.id"].as_str().map(|id| id.trim_end_matches('/').to_owned())
}

/// A resource's name for the inventory: its Name, else its Id, bounded and printable.
fn name_of(resource: &Value) -> String {
    printable(resource["Name"].as_str().or(resource["Id"].as_str()).unwrap_or_default(), MAX_INVENTORY_TEXT)
}

/// An inventory text the BMC gives, bounded and printable.
fn text_of(value: &Value) -> String {
    printable(value.as_str().unwrap_or_default(), MAX_INVENTORY_TEXT)
}

/// A MAC address as `aa:bb:cc:dd:ee:ff` (from colons or dashes); `None` for anything else.
fn mac_of(text: &str) -> Option<String> {
    let mac = text.trim().to_ascii_lowercase().replace('-', ":");
    let octets: Vec<&str> = mac.split(':').collect();
    let well_formed = matches!(octets.len(), 6 | 8 | 20)
        && octets.iter().all(|octet| octet.len() == 2 && octet.bytes().all(|b| b.is_ascii_hexdigit()));
    well_formed.then_some(mac)
}

/// The target of the action `name` (`#ComputerSystem.Reset`) of a resource.
fn action_target(resource: &Value, name: &str) -> Option<String> {
    resource["Actions"][name]["target"].as_str().map(str::to_owned)
}

fn unsupported(message: &str) -> ProviderError {
    let mut error = ProviderError::new(ErrorKind::Permanent, PROVIDER, message);
    error.reason = "unsupported".into();
    error
}

/// A failure to reach the BMC: transient. The text names the host at most.
fn transport(error: reqwest::Error) -> ProviderError {
    let timed_out = error.is_timeout();
    let mut converted = ProviderError::transport(PROVIDER, error);
    if timed_out {
        converted.reason = "timeout".into();
        converted.message = "the BMC did not answer in time".into();
    }
    converted
}

/// A refusal, classified, with the message of Redfish's error body when it has one: cut to
/// [`MAX_REASON_CHARS`] printable characters, and its code kept only when it is a plain word.
/// Nothing else of the body is kept.
fn refusal(status: u16, body: &str) -> ProviderError {
    let parsed: Value = serde_json::from_str(body).unwrap_or_default();
    let error = &parsed["error"];
    let extended = error["@Message.ExtendedInfo"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|info| info["Message"].as_str())
        .collect::<Vec<_>>()
        .join("; ");
    let said = if extended.is_empty() { error["message"].as_str().unwrap_or_default().to_owned() } else { extended };
    let said = printable(&said, MAX_REASON_CHARS);
    let (kind, message) = match status {
        401 | 403 => (ErrorKind::Permanent, "the BMC refused the credentials".to_owned()),
        300..=399 => (ErrorKind::Permanent, "a redirect, which is not followed".to_owned()),
        _ => (ProviderError::kind_of_status(status), String::new()),
    };
    let message = match (message.is_empty(), said.is_empty()) {
        (true, true) => format!("the BMC answered HTTP {status}"),
        (true, false) => said.clone(),
        (false, true) => message,
        (false, false) => format!("{message}: {said}"),
    };
    let mut converted = ProviderError::new(kind, PROVIDER, message);
    converted.status = Some(status);
    let code = error["code"].as_str().unwrap_or_default().rsplit('.').next().unwrap_or_default();
    if code.len() <= 40 && code.bytes().all(|b| b.is_ascii_alphanumeric()) {
        converted.reason = code.to_owned();
    }
    converted
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusals_keep_redfish_extended_messages() {
        let body = r#"{"error":{"code":"Base.1.8.GeneralError","message":"A general error has occurred.",
            "@Message.ExtendedInfo":[{"Message":"The drive is busy."}]}}"#;
        let error = refusal(503, body);
        assert_eq!(error.kind, ErrorKind::Transient);
        assert_eq!(error.message, "The drive is busy.");
        assert_eq!(error.reason, "GeneralError");
    }

    #[test]
    fn refused_credentials_are_permanent_and_say_so() {
        let error = refusal(401, "");
        assert_eq!(error.kind, ErrorKind::Permanent);
        assert_eq!(error.message, "the BMC refused the credentials");
        assert_eq!(refusal(404, "").kind, ErrorKind::NotFound);
    }

    #[test]
    fn a_refusal_keeps_a_short_printable_reason_and_nothing_else_of_the_body() {
        let body =
            serde_json::json!({"error": {"code": "Base.1.8.Not-A-Word", "message": format!("{}tail", "m".repeat(500))},
            "Other": "kept-out"})
            .to_string();
        let error = refusal(400, &body);
        assert_eq!(error.status, Some(400));
        assert_eq!(error.reason, "", "a code that is not a plain word is dropped");
        assert_eq!(error.message.chars().count(), MAX_REASON_CHARS);
        assert!(!error.to_string().contains("tail") && !error.to_string().contains("kept-out"), "{error}");
        assert!(refusal(307, "").message.contains("redirect"));
    }

    #[test]
    fn links_and_macs_from_the_bmc_are_checked() {
        let access = BmcAccess {
            driver: super::super::BmcDriver::Redfish,
            address: "https://10.0.0.5:8000".into(),
            username: "admin".into(),
            password: Secret::new("hunter2"),
            ca_certificate: None,
            insecure: false,
        };
        let redfish = Redfish::new(&access, DEFAULT_TIMEOUT).unwrap();
        assert!(redfish.url("/redfish/v1/Systems/1").is_ok());
        assert!(redfish.url("https://10.0.0.5:8000/redfish/v1").is_ok(), "its own origin, absolute");
        for elsewhere in ["@127.0.0.1/x", "//127.0.0.1/x", "https://127.0.0.1/x", "https://10.0.0.5:9000/x", "x"] {
            assert!(redfish.url(elsewhere).is_err(), "{elsewhere}");
        }
        assert_eq!(mac_of("AA-BB-CC-DD-EE-FF").as_deref(), Some("aa:bb:cc:dd:ee:ff"));
        assert_eq!(mac_of("AA:BB:CC:DD:EE:FF secret"), None);
    }

    #[test]
    fn an_address_with_a_system_path_names_the_system() {
        let access = BmcAccess {
            driver: super::super::BmcDriver::Redfish,
            address: "https://10.0.0.5:8000/redfish/v1/Systems/node-1/".into(),
            username: "admin".into(),
            password: Secret::new("hunter2"),
            ca_certificate: None,
            insecure: false,
        };
        let redfish = Redfish::new(&access, DEFAULT_TIMEOUT).unwrap();
        assert_eq!(redfish.origin, "https://10.0.0.5:8000");
        assert_eq!(redfish.given_system.as_deref(), Some("/redfish/v1/Systems/node-1"));
        assert!(!format!("{redfish:?}").contains("hunter2"));
    }
}
