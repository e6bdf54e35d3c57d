//! The IPMI driver through Debian's ipmitool against pyghmi's fake BMC (tests/python/ipmi_bmc.py),
//! and the password kept out of ipmitool's argument list.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use better_compute::provider::ErrorKind;
use better_compute::provider::bmc::ipmi::Ipmi;
use better_compute::provider::bmc::{Bmc, BmcAccess, BmcDriver, BootDevice, PowerAction, PowerState};
use better_compute::secrets::Secret;

use super::{PASSWORD, assert_no_password, wait_for_power};
use crate::harness::python;

/// pyghmi's BMC on a free UDP port of 127.0.0.1; stopped when dropped.
pub struct FakeIpmiBmc {
    child: Child,
    pub port: u16,
    /// What it printed (the boot devices it was given, what its machine did).
    said: Arc<Mutex<Vec<String>>>,
}

impl FakeIpmiBmc {
    /// What it printed so far, a line each.
    pub fn said(&self) -> Vec<String> {
        self.said.lock().unwrap().clone()
    }
}

impl Drop for FakeIpmiBmc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_bmc() -> FakeIpmiBmc {
    start_bmc_as(PASSWORD, &[])
}

/// pyghmi's BMC with `password` for `admin`, and `machine` the arguments of the machine behind it
/// (tests/python/ipmi_bmc.py: the iPXE scripts' URL, bcd, its state directory), none for a BMC only.
pub fn start_bmc_as(password: &str, machine: &[&str]) -> FakeIpmiBmc {
    let port = std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/python/ipmi_bmc.py");
    let mut child = Command::new(python())
        .args([script, &port.to_string(), "admin", password])
        .args(machine)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("the test venv's python runs");
    let mut first = String::new();
    let mut output = BufReader::new(child.stdout.take().unwrap());
    output.read_line(&mut first).unwrap();
    assert!(first.starts_with("listening"), "pyghmi's BMC did not start: {first:?}");
    // It prints what it is asked; a closed pipe would fail its commands.
    let said = Arc::new(Mutex::new(Vec::new()));
    let kept = said.clone();
    std::thread::spawn(move || output.lines().map_while(Result::ok).for_each(|line| kept.lock().unwrap().push(line)));
    FakeIpmiBmc { child, port, said }
}

fn access(port: u16, password: &str) -> BmcAccess {
    BmcAccess {
        driver: BmcDriver::Ipmi,
        address: format!("127.0.0.1:{port}"),
        username: "admin".into(),
        password: Secret::new(password),
        ca_certificate: None,
        insecure: false,
    }
}

fn driver(port: u16, password: &str) -> Ipmi {
    Ipmi::new(&access(port, password), Duration::from_secs(10)).unwrap()
}

#[tokio::test]
async fn ipmi_power_boot_device_and_fru_work_through_ipmitool() {
    let bmc = start_bmc();
    let ipmi = driver(bmc.port, PASSWORD);
    assert_eq!(ipmi.power_state().await.unwrap(), PowerState::Off);
    ipmi.power(PowerAction::ForceOff).await.expect("off while off succeeds");
    ipmi.power(PowerAction::On).await.unwrap();
    wait_for_power(&ipmi, PowerState::On).await;
    ipmi.power(PowerAction::On).await.expect("on while on succeeds");
    ipmi.power(PowerAction::GracefulOff).await.unwrap();
    wait_for_power(&ipmi, PowerState::Off).await;
    ipmi.boot_once(BootDevice::Pxe).await.unwrap();
    ipmi.clear_boot_override().await.unwrap();
    let inventory = ipmi.inventory().await.unwrap();
    assert_eq!(
        (inventory.vendor.as_str(), inventory.model.as_str(), inventory.serial.as_str()),
        ("Acme Servers", "R100", "SN-IPMI-1")
    );
}

#[tokio::test]
async fn ipmi_has_no_virtual_media_and_no_erase() {
    let ipmi = driver(9, PASSWORD);
    for error in [
        ipmi.insert_media("http://example/image.iso").await.unwrap_err(),
        ipmi.eject_media().await.unwrap_err(),
        ipmi.erase_targets().await.unwrap_err(),
    ] {
        assert_eq!((error.kind, error.reason.as_str()), (ErrorKind::Permanent, "unsupported"));
    }
}

#[tokio::test]
async fn ipmi_refused_credentials_are_permanent_and_hidden() {
    let bmc = start_bmc();
    // IPMI passwords are at most 20 bytes: a wrong one of the right length.
    let wrong = PASSWORD.replace("shown", "SHOWN");
    let error = driver(bmc.port, &wrong).power_state().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Permanent, "{error}");
    assert!(error.message.contains("the BMC refused the credentials"), "{error}");
    assert_no_password(&error);
    assert!(!error.to_string().contains(&wrong));
}

#[tokio::test]
async fn an_ipmi_bmc_that_does_not_answer_is_transient() {
    let port = std::net::UdpSocket::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let error = driver(port, PASSWORD).power_state().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Transient, "{error}");
    assert_no_password(&error);
}

#[tokio::test]
async fn the_password_reaches_ipmitool_in_its_environment_never_its_arguments() {
    let dir = tempfile::tempdir().unwrap();
    let recorder = dir.path().join("ipmitool");
    let record = dir.path().join("record");
    std::fs::write(
        &recorder,
        format!(
            "#!/bin/sh\nprintf '%s\\n' \"$@\" > {0}\necho \"env=$IPMI_PASSWORD\" >> {0}\necho 'Chassis Power is on'\n",
            record.display()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&recorder, std::fs::Permissions::from_mode(0o755)).unwrap();
    let ipmi = driver(623, PASSWORD).with_program(recorder.display().to_string());
    assert_eq!(ipmi.power_state().await.unwrap(), PowerState::On);
    let recorded = std::fs::read_to_string(&record).unwrap();
    let (arguments, environment) = recorded.split_once("env=").unwrap();
    assert!(!arguments.contains(PASSWORD), "the password is in ipmitool's arguments: {arguments}");
    assert!(arguments.lines().any(|argument| argument == "-E"), "ipmitool reads it from IPMI_PASSWORD");
    assert_eq!(environment.trim(), PASSWORD);
    assert!(!format!("{ipmi:?}").contains(PASSWORD));
}

#[tokio::test]
async fn a_missing_ipmitool_is_a_clear_permanent_error() {
    let ipmi = driver(623, PASSWORD).with_program("/nonexistent/ipmitool");
    let error = ipmi.power_state().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Permanent);
    assert!(error.message.contains("is not installed"), "{error}");
}
