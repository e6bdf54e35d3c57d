//! The two Redfish services the conformance suite runs on, and what each should report.

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use better_compute::provider::bmc::{BmcAccess, BmcDriver};
use better_compute::secrets::Secret;
use fakecloud::{BmcSystemSpec, FakeCloud, FakeCloudConfig};
use serde_json::Value;

use super::PASSWORD;
use crate::harness::poll;
use crate::harness::python;

/// Which service a target is, with what only it can show.
pub enum Service {
    /// sushy-emulator, stopped when dropped.
    Sushy(SushyProcess),
    /// The fake cloud's BMC and the id of the system under test.
    Fake { system: String },
}

/// One Redfish service with a system to drive.
pub struct Target {
    pub access: BmcAccess,
    pub service: Service,
    /// A URL the BMC can fetch as a boot image.
    pub image_url: String,
    /// The inventory the service should report: MACs, disks' sizes, vendor, serial.
    pub macs: Vec<String>,
    pub disk_sizes: Vec<u64>,
    pub vendor: String,
    pub serial: String,
    /// Whether its drives have `Drive.SecureErase` (sushy-tools' do not).
    pub erases: bool,
    /// Serves the image; for the fake target, the BMC too.
    pub cloud: FakeCloud,
    http: reqwest::Client,
}

impl Target {
    /// The system's resource as the service shows it, read with the same credentials.
    pub async fn system(&self) -> Value {
        let path = match &self.service {
            Service::Fake { system } => format!("{}/redfish/v1/Systems/{system}", self.cloud.https_url()),
            Service::Sushy(process) => format!("{}/redfish/v1/Systems/{SUSHY_SYSTEM}", process.url),
        };
        self.get(&path).await
    }

    /// The virtual CD's resource.
    pub async fn virtual_cd(&self) -> Value {
        let path = match &self.service {
            Service::Fake { system } => {
                format!("{}/redfish/v1/Managers/{system}/VirtualMedia/Cd", self.cloud.https_url())
            }
            Service::Sushy(process) => format!("{}/redfish/v1/Systems/{SUSHY_SYSTEM}/VirtualMedia/Cd", process.url),
        };
        self.get(&path).await
    }

    async fn get(&self, url: &str) -> Value {
        let response = self.http.get(url).basic_auth("admin", Some(PASSWORD)).send().await.unwrap();
        assert!(response.status().is_success(), "GET {url}: {}", response.status());
        response.json().await.unwrap()
    }

    /// The access with another password.
    pub fn with_password(&self, password: &str) -> BmcAccess {
        BmcAccess { password: Secret::new(password), ..self.access.clone() }
    }
}

async fn image_cloud() -> FakeCloud {
    FakeCloud::start(FakeCloudConfig::default()).await.expect("the fake cloud starts")
}

/// The fake cloud's BMC over HTTPS, trusting its CA, with two systems (the second under test).
pub async fn fake() -> Target {
    let cloud = image_cloud().await;
    let spec = |name: &str| BmcSystemSpec { name: name.into(), username: "admin".into(), password: PASSWORD.into() };
    cloud.add_bmc_system(spec("other"));
    let path = cloud.add_bmc_system(spec("node-1"));
    let system = path.rsplit('/').next().unwrap().to_owned();
    let number: u64 = system.trim_start_matches("system-").parse().unwrap();
    let access = BmcAccess {
        driver: BmcDriver::Redfish,
        address: format!("{}{path}", cloud.https_url()),
        username: "admin".into(),
        password: Secret::new(PASSWORD),
        ca_certificate: Some(cloud.ca_pem().to_owned()),
        insecure: false,
    };
    let ca = reqwest::Certificate::from_pem(cloud.ca_pem().as_bytes()).unwrap();
    Target {
        access,
        image_url: format!("{}/_fake/images/deploy.iso", cloud.base_url()),
        macs: (0..2).map(|i| format!("52:54:00:{:02x}:{:02x}:{i:02x}", number >> 8 & 0xff, number & 0xff)).collect(),
        disk_sizes: vec![960_197_124_096, 960_197_124_096, 4_000_787_030_016],
        vendor: "Better Compute".into(),
        serial: format!("FAKE{number:06}"),
        erases: true,
        http: reqwest::Client::builder().add_root_certificate(ca).build().unwrap(),
        service: Service::Fake { system },
        cloud,
    }
}

const SUSHY_SYSTEM: &str = "27946b59-9e44-4fa7-8e91-f3527a1ef094";
const SUSHY_MAC: &str = "00:5c:52:31:3a:9c";
const SUSHY_DISK: u64 = 899_527_000_000;

/// A running sushy-emulator.
pub struct SushyProcess {
    child: Child,
    pub url: String,
    _dir: tempfile::TempDir,
}

impl Drop for SushyProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// sushy-emulator with its fake driver on 127.0.0.1 and a free port: one system with a NIC and
/// a drive, behind basic auth (a bcrypt htpasswd, as sushy-tools requires).
pub async fn sushy() -> Target {
    let dir = tempfile::tempdir().unwrap();
    let htpasswd = dir.path().join("htpasswd");
    let hash = Command::new(python())
        .args(["-c", "import bcrypt, sys; print(bcrypt.hashpw(sys.stdin.readline().strip().encode(), bcrypt.gensalt(4)).decode())"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .and_then(|mut child| {
            use std::io::Write;
            child.stdin.take().unwrap().write_all(format!("{PASSWORD}\n").as_bytes())?;
            child.wait_with_output()
        })
        .expect("the test venv's python runs");
    std::fs::write(&htpasswd, format!("admin:{}", String::from_utf8(hash.stdout).unwrap().trim())).unwrap();
    let config = dir.path().join("sushy.conf");
    std::fs::write(
        &config,
        format!(
            "SUSHY_EMULATOR_FAKE_DRIVER = True\n\
             SUSHY_EMULATOR_AUTH_FILE = {htpasswd:?}\n\
             SUSHY_EMULATOR_STATE_DIR = {state:?}\n\
             SUSHY_EMULATOR_FAKE_SYSTEMS = [{{'uuid': '{SUSHY_SYSTEM}', 'name': 'node-1', 'power_state': 'Off', \
             'nics': [{{'mac': '{SUSHY_MAC}', 'ip': '172.22.0.100'}}]}}]\n\
             SUSHY_EMULATOR_STORAGE = {{'{SUSHY_SYSTEM}': [{{'Id': '1', 'Name': 'Local Storage Controller', \
             'StorageControllers': [{{'MemberId': '0', 'Name': 'RAID', 'SpeedGbps': 12}}], 'Drives': ['drive-0']}}]}}\n\
             SUSHY_EMULATOR_DRIVES = {{('{SUSHY_SYSTEM}', '1'): [{{'Id': 'drive-0', 'Name': 'Drive 0', \
             'CapacityBytes': {SUSHY_DISK}, 'Protocol': 'SAS'}}]}}\n",
            htpasswd = htpasswd.display().to_string(),
            state = dir.path().join("state").display().to_string(),
        ),
    )
    .unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let emulator = std::path::Path::new(&python()).with_file_name("sushy-emulator");
    let child = Command::new(&emulator)
        .args(["--config", &config.display().to_string(), "-i", "127.0.0.1", "-p", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {}: {error} (tests/python/venv installs it)", emulator.display()));
    let url = format!("http://127.0.0.1:{port}");
    let process = SushyProcess { child, url: url.clone(), _dir: dir };
    let http = reqwest::Client::new();
    poll(Duration::from_secs(30), &format!("sushy-emulator to come up on {url}"), || async {
        match http.get(format!("{url}/redfish/v1")).send().await {
            Ok(answer) if answer.status().is_success() => Ok(()),
            answered => Err(format!("{answered:?}")),
        }
    })
    .await;
    let cloud = image_cloud().await;
    Target {
        access: BmcAccess {
            driver: BmcDriver::Redfish,
            address: url,
            username: "admin".into(),
            password: Secret::new(PASSWORD),
            ca_certificate: None,
            insecure: false,
        },
        image_url: format!("{}/_fake/images/deploy.iso", cloud.base_url()),
        macs: vec![SUSHY_MAC.into()],
        disk_sizes: vec![SUSHY_DISK],
        vendor: "Sushy Emulator".into(),
        serial: String::new(),
        erases: false,
        http,
        service: Service::Sushy(process),
        cloud,
    }
}
