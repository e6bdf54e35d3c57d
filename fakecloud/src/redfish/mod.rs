//! The fake cloud's Redfish BMC: a service at `/redfish/v1` with one ComputerSystem, one
//! Manager (with a virtual CD and virtual removable media) and one fake [`machine`] per system a
//! test makes, shaped after the DMTF mockups and sushy-tools; [`os`] runs what the machines boot.
//!
//! Every resource but the service root asks for basic auth with its system's credentials (the
//! Systems and Managers collections list the systems whose credentials were given). Fault
//! controls per system: an unresponsive BMC holds requests without answering, and one that
//! refuses logins answers 401 to any credentials.

mod machine;
pub mod os;
pub mod sessions;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::get;
use base64::Engine;
use http::{HeaderMap, Method};
use serde_json::{Value, json};

use machine::Machine;
pub use machine::{BmcSystemSpec, Boot, SYSTEM_DISK};

use super::{Shared, json_response};

const ROOT: &str = "/redfish/v1";

/// Every fake machine, by system id, and the BMC's sessions.
#[derive(Default)]
pub struct RedfishState {
    machines: BTreeMap<String, Machine>,
    /// The BMC's session service (one BMC in front of every system).
    pub sessions: sessions::SessionService,
}

impl RedfishState {
    pub fn advance(&mut self, now: Instant) {
        self.machines.values_mut().for_each(|machine| machine.advance(now));
    }

    /// Makes a machine; its system id is `system-<number>`.
    pub fn add(&mut self, number: u64, spec: BmcSystemSpec) -> String {
        let id = format!("system-{number}");
        self.machines.insert(id.clone(), Machine::new(id.clone(), number, spec));
        id
    }

    pub fn machine_mut(&mut self, id: &str) -> Option<&mut Machine> {
        self.machines.get_mut(id)
    }

    pub fn inspect(&self) -> Value {
        Value::Array(self.machines.values().map(Machine::inspect).collect())
    }
}

pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/redfish", get(|| async { json_response(200, json!({"v1": "/redfish/v1/"})) }))
        .route("/redfish/v1", get(service_root))
        .route("/redfish/v1/", get(service_root))
        .route("/redfish/v1/{*rest}", get(resource).post(resource).patch(resource).delete(resource))
}

async fn service_root() -> Response {
    json_response(
        200,
        json!({
            "@odata.type": "#ServiceRoot.v1_5_0.ServiceRoot",
            "@odata.id": "/redfish/v1",
            "Id": "RootService",
            "Name": "Better Compute fake Redfish service",
            "RedfishVersion": "1.8.0",
            "Systems": {"@odata.id": "/redfish/v1/Systems"},
            "Managers": {"@odata.id": "/redfish/v1/Managers"},
            "SessionService": {"@odata.id": "/redfish/v1/SessionService"},
            "Links": {"Sessions": {"@odata.id": "/redfish/v1/SessionService/Sessions"}},
        }),
    )
}

/// A Redfish error body, as `error.@Message.ExtendedInfo` carries it.
fn error(status: u16, message_id: &str, message: &str) -> Response {
    json_response(
        status,
        json!({"error": {
            "code": format!("Base.1.8.{message_id}"),
            "message": message,
            "@Message.ExtendedInfo": [{"MessageId": format!("Base.1.8.{message_id}"), "Message": message, "Severity": "Warning"}],
        }}),
    )
}

fn missing(path: &str) -> Response {
    error(404, "ResourceMissingAtURI", &format!("The resource at the URI {path} was not found."))
}

/// The user and password of a basic-auth header.
fn credentials(headers: &HeaderMap) -> Option<(String, String)> {
    let encoded = headers.get("authorization")?.to_str().ok()?.strip_prefix("Basic ")?;
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded.trim()).ok()?;
    let (user, password) = std::str::from_utf8(&decoded).ok()?.split_once(':')?;
    Some((user.to_owned(), password.to_owned()))
}

/// Whether `machine` lets this request in.
fn signed_in(machine: &Machine, given: &Option<(String, String)>) -> bool {
    !machine.refuses_login
        && given
            .as_ref()
            .is_some_and(|(user, password)| *user == machine.spec.username && *password == machine.spec.password)
}

/// Every resource below the service root: collections, one system's resources and its actions.
async fn resource(
    State(shared): State<Arc<Shared>>,
    Path(rest): Path<String>,
    method: Method,
    headers: HeaderMap,
    body: axum::body::Bytes,
) -> Response {
    let path = format!("{ROOT}/{}", rest.trim_end_matches('/'));
    let segments: Vec<&str> = rest.trim_end_matches('/').split('/').collect();
    let body: Value = serde_json::from_slice(&body).unwrap_or_default();
    let token = headers.get("x-auth-token").and_then(|v| v.to_str().ok()).map(str::to_owned);
    if segments.first() == Some(&"SessionService") {
        let mut world = shared.world();
        let redfish = &mut world.redfish;
        let known = |user: &str, password: &str| {
            redfish
                .machines
                .values()
                .any(|m| !m.refuses_login && m.spec.username == user && m.spec.password == password)
        };
        let known = body["UserName"].as_str().zip(body["Password"].as_str()).is_some_and(|(u, p)| known(u, p));
        return redfish.sessions.handle(&method, &segments[1..], &body, token.as_deref(), known, Instant::now());
    }
    let (system, hold, given) = {
        let mut world = shared.world();
        let given = match &token {
            Some(token) => world.redfish.sessions.credentials(token, Instant::now()),
            None => credentials(&headers),
        };
        match segments.as_slice() {
            ["Systems" | "Managers"] => {
                if method != Method::GET {
                    return error(405, "OperationNotAllowed", "The collection takes GET only.");
                }
                let kind = segments[0];
                let members: Vec<Value> = world
                    .redfish
                    .machines
                    .values()
                    .filter(|machine| signed_in(machine, &given))
                    .map(|machine| json!({"@odata.id": format!("{ROOT}/{kind}/{}", machine.id)}))
                    .collect();
                if members.is_empty() {
                    return error(
                        401,
                        "NoValidSession",
                        "There is no valid session established with the implementation.",
                    );
                }
                return json_response(
                    200,
                    json!({"@odata.id": path, "Name": format!("{kind} Collection"), "Members@odata.count": members.len(), "Members": members}),
                );
            }
            ["Systems" | "Managers", id, ..] => match world.redfish.machines.get_mut(*id) {
                Some(machine) => {
                    // Counted, so that a test can wait until a call is held, not for a time.
                    machine.held_requests += u64::from(machine.unresponsive);
                    (id.to_string(), machine.unresponsive, given)
                }
                None => return missing(&path),
            },
            _ => return missing(&path),
        }
    };
    if hold {
        // A BMC that stopped answering: the connection stays open and nothing comes back.
        tokio::time::sleep(Duration::from_secs(3600)).await;
    }
    let mut world = shared.world();
    let Some(machine) = world.redfish.machines.get_mut(&system) else {
        return missing(&path);
    };
    if !signed_in(machine, &given) {
        return error(401, "NoValidSession", "There is no valid session established with the implementation.");
    }
    let base = format!("{ROOT}/{}/{system}", segments[0]);
    match (method, &segments[..]) {
        (Method::GET, ["Systems", _]) => json_response(200, system_view(machine, &base)),
        (Method::PATCH, ["Systems", _]) => patch_boot(machine, &body, &base),
        (Method::POST, ["Systems", _, "Actions", "ComputerSystem.Reset"]) => {
            let reset_type = body["ResetType"].as_str().unwrap_or_default();
            match machine.reset(reset_type, Instant::now()) {
                true => json_response(204, Value::Null),
                false => error(
                    400,
                    "ActionParameterValueNotInList",
                    &format!(
                        "The value {reset_type:?} for the parameter ResetType is not in the list of acceptable values."
                    ),
                ),
            }
        }
        (Method::GET, ["Systems", _, "Processors"]) => {
            collection(&format!("{base}/Processors"), "Processors", &["CPU0".to_owned()])
        }
        (Method::GET, ["Systems", _, "Processors", "CPU0"]) => json_response(
            200,
            json!({"@odata.id": path, "Id": "CPU0", "Name": "Processor", "ProcessorType": "CPU",
                   "Model": CPU_MODEL, "TotalCores": 4, "TotalThreads": 8}),
        ),
        (Method::GET, ["Systems", _, "EthernetInterfaces"]) => {
            let names: Vec<String> = machine.nics().into_iter().map(|(name, _)| name).collect();
            collection(&format!("{base}/EthernetInterfaces"), "Ethernet Interfaces", &names)
        }
        (Method::GET, ["Systems", _, "EthernetInterfaces", nic]) => {
            match machine.nics().into_iter().find(|(n, _)| n == nic) {
                Some((name, mac)) => json_response(
                    200,
                    json!({"@odata.id": path, "Id": name, "Name": name, "MACAddress": mac, "PermanentMACAddress": mac}),
                ),
                None => missing(&path),
            }
        }
        (Method::GET, ["Systems", _, "Storage"]) => {
            collection(&format!("{base}/Storage"), "Storage", &["1".to_owned()])
        }
        (Method::GET, ["Systems", _, "Storage", "1"]) => {
            let drives: Vec<Value> = machine
                .drives()
                .iter()
                .map(|drive| json!({"@odata.id": format!("{base}/Storage/1/Drives/{}", drive.id)}))
                .collect();
            json_response(
                200,
                json!({"@odata.id": path, "Id": "1", "Name": "Local Storage Controller", "Drives": drives}),
            )
        }
        (Method::GET, ["Systems", _, "Storage", "1", "Drives", drive]) => {
            match machine.drives().into_iter().find(|d| d.id == *drive) {
                Some(d) => json_response(
                    200,
                    json!({"@odata.type": "#Drive.v1_11_0.Drive", "@odata.id": path, "Id": d.id, "Name": d.name,
                    "CapacityBytes": d.size, "Protocol": d.protocol, "MediaType": d.media,
                    "SerialNumber": d.serial,
                    "EncryptionAbility": if d.encrypting { "SelfEncryptingDrive" } else { "None" },
                    "WriteCacheEnabled": !machine.read_only.contains(d.id),
                    "Actions": {
                        "#Drive.SecureErase": {"target": format!("{path}/Actions/Drive.SecureErase"),
                            "SanitizationType@Redfish.AllowableValues": d.sanitization},
                        "Oem": {"#BetterCompute.ReadBack": {"target": format!("{path}/Actions/Oem/BetterCompute.ReadBack")}},
                    }}),
                ),
                None => missing(&path),
            }
        }
        (Method::POST, ["Systems", _, "Storage", "1", "Drives", drive, "Actions", "Drive.SecureErase"]) => {
            let Some(d) = machine.drives().into_iter().find(|d| d.id == *drive) else {
                return missing(&path);
            };
            let sanitization = body["SanitizationType"].as_str().unwrap_or_default();
            if !sanitization.is_empty() && !d.sanitization.contains(&sanitization) {
                return error(
                    400,
                    "ActionParameterValueNotInList",
                    &format!(
                        "The value {sanitization:?} for the parameter SanitizationType is not in the list of acceptable values."
                    ),
                );
            }
            machine.erase(drive, sanitization);
            json_response(204, Value::Null)
        }
        // What the erase image reads back from the drive: whether anything written is left.
        (Method::POST, ["Systems", _, "Storage", "1", "Drives", drive, "Actions", "Oem", "BetterCompute.ReadBack"]) => {
            match machine.drives().iter().any(|d| d.id == *drive) {
                true => json_response(200, json!({"Blank": machine.blank(drive)})),
                false => missing(&path),
            }
        }
        (Method::GET, ["Managers", _]) => json_response(
            200,
            json!({"@odata.id": base, "Id": system, "Name": "Manager", "ManagerType": "BMC",
                   "VirtualMedia": {"@odata.id": format!("{base}/VirtualMedia")},
                   "Links": {"ManagerForServers": [{"@odata.id": format!("{ROOT}/Systems/{system}")}]}}),
        ),
        (Method::GET, ["Managers", _, "VirtualMedia"]) => collection(
            &format!("{base}/VirtualMedia"),
            "Virtual Media Services",
            &MEDIA_DEVICES.iter().map(|(id, _, _)| id.to_string()).collect::<Vec<_>>(),
        ),
        (Method::GET, ["Managers", _, "VirtualMedia", device]) if media_device(device).is_some() => {
            json_response(200, media_view(machine, device, &path))
        }
        (Method::PATCH, ["Managers", _, "VirtualMedia", device]) if media_device(device).is_some() => {
            *machine.media_mut(device) = match body["Inserted"].as_bool() {
                Some(false) => String::new(),
                _ => body["Image"].as_str().unwrap_or_default().to_owned(),
            };
            json_response(204, Value::Null)
        }
        (Method::POST, ["Managers", _, "VirtualMedia", device, "Actions", "VirtualMedia.InsertMedia"])
            if media_device(device).is_some() =>
        {
            match body["Image"].as_str().filter(|image| !image.is_empty()) {
                Some(image) => {
                    *machine.media_mut(device) = image.to_owned();
                    json_response(204, Value::Null)
                }
                None => error(
                    400,
                    "ActionParameterMissing",
                    "The action InsertMedia requires the parameter Image to be present.",
                ),
            }
        }
        (Method::POST, ["Managers", _, "VirtualMedia", device, "Actions", "VirtualMedia.EjectMedia"])
            if media_device(device).is_some() =>
        {
            machine.media_mut(device).clear();
            json_response(204, Value::Null)
        }
        (Method::GET, _) => missing(&path),
        _ => error(405, "OperationNotAllowed", &format!("The operation is not allowed on {path}.")),
    }
}

const CPU_MODEL: &str = "Fake Xeon 4110";

fn collection(path: &str, name: &str, ids: &[String]) -> Response {
    let members: Vec<Value> = ids.iter().map(|id| json!({"@odata.id": format!("{path}/{id}")})).collect();
    json_response(
        200,
        json!({"@odata.id": path, "Name": name, "Members@odata.count": members.len(), "Members": members}),
    )
}

fn system_view(machine: &Machine, base: &str) -> Value {
    let manager = base.replace("/Systems/", "/Managers/");
    json!({
        "@odata.type": "#ComputerSystem.v1_13_0.ComputerSystem",
        "@odata.id": base,
        "Id": machine.id,
        "Name": machine.spec.name,
        "SystemType": "Physical",
        "Manufacturer": "Better Compute",
        "Model": "Fake Machine 1U",
        "SerialNumber": machine.serial(),
        "PowerState": machine.power_state(),
        "Boot": {
            "BootSourceOverrideEnabled": machine.boot_enabled,
            "BootSourceOverrideTarget": machine.boot_target,
            "BootSourceOverrideTarget@Redfish.AllowableValues": ["None", "Pxe", "Cd", "Hdd"],
            "BootSourceOverrideMode": "UEFI",
        },
        "ProcessorSummary": {"Count": 1, "LogicalProcessorCount": 8, "Model": CPU_MODEL},
        "MemorySummary": {"TotalSystemMemoryGiB": 32},
        "Processors": {"@odata.id": format!("{base}/Processors")},
        "EthernetInterfaces": {"@odata.id": format!("{base}/EthernetInterfaces")},
        "Storage": {"@odata.id": format!("{base}/Storage")},
        "Links": {"ManagedBy": [{"@odata.id": manager}]},
        "Actions": {"#ComputerSystem.Reset": {
            "target": format!("{base}/Actions/ComputerSystem.Reset"),
            "ResetType@Redfish.AllowableValues": ["On", "ForceOff", "GracefulShutdown", "ForceRestart", "GracefulRestart", "PowerCycle"],
        }},
    })
}

/// The virtual media devices of every fake BMC, as sushy-tools has them: id, name, media types.
const MEDIA_DEVICES: &[(&str, &str, &[&str])] =
    &[("Cd", "Virtual CD", &["CD", "DVD"]), ("Floppy", "Virtual Removable Media", &["Floppy", "USBStick"])];

fn media_device(id: &str) -> Option<&'static (&'static str, &'static str, &'static [&'static str])> {
    MEDIA_DEVICES.iter().find(|(device, _, _)| *device == id)
}

fn media_view(machine: &Machine, device: &str, path: &str) -> Value {
    let (id, name, types) = media_device(device).expect("a known device");
    let image = machine.media(device);
    let inserted = !image.is_empty();
    json!({
        "@odata.type": "#VirtualMedia.v1_3_0.VirtualMedia",
        "@odata.id": path,
        "Id": id,
        "Name": name,
        "MediaTypes": types,
        "Image": if inserted { Value::from(image.to_owned()) } else { Value::Null },
        "Inserted": inserted,
        "WriteProtected": true,
        "ConnectedVia": if inserted { "URI" } else { "NotConnected" },
        "Actions": {
            "#VirtualMedia.InsertMedia": {"target": format!("{path}/Actions/VirtualMedia.InsertMedia")},
            "#VirtualMedia.EjectMedia": {"target": format!("{path}/Actions/VirtualMedia.EjectMedia")},
        },
    })
}

/// `PATCH` of a system: its boot override.
fn patch_boot(machine: &mut Machine, body: &Value, path: &str) -> Response {
    let boot = &body["Boot"];
    if let Some(target) = boot["BootSourceOverrideTarget"].as_str() {
        if !["None", "Pxe", "Cd", "Hdd"].contains(&target) {
            return error(
                400,
                "PropertyValueNotInList",
                &format!(
                    "The value {target:?} for the property BootSourceOverrideTarget is not in the list of acceptable values."
                ),
            );
        }
        machine.boot_target = target.to_owned();
    }
    if let Some(enabled) = boot["BootSourceOverrideEnabled"].as_str() {
        if !["Disabled", "Once", "Continuous"].contains(&enabled) {
            return error(
                400,
                "PropertyValueNotInList",
                &format!(
                    "The value {enabled:?} for the property BootSourceOverrideEnabled is not in the list of acceptable values."
                ),
            );
        }
        machine.boot_enabled = enabled.to_owned();
        if enabled == "Disabled" {
            machine.boot_target = "None".into();
        }
    }
    json_response(200, system_view(machine, path))
}
