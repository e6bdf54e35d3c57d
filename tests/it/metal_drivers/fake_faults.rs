//! The fake cloud's BMC faults as the Redfish driver sees them, and its fake machine booting
//! the inserted media.

use std::time::Duration;

use better_compute::provider::ErrorKind;
use better_compute::provider::bmc::redfish::Redfish;
use better_compute::provider::bmc::{Bmc, BmcAccess, BootDevice, PowerAction, PowerState, connect};
use fakecloud::{Failure, FaultClass};

use super::redfish_targets::{Service, Target, fake};
use super::{assert_no_password, wait_for_power};

fn system(target: &Target) -> String {
    match &target.service {
        Service::Fake { system } => system.clone(),
        Service::Sushy(_) => unreachable!("a fake-cloud target"),
    }
}

#[tokio::test]
async fn a_bmc_that_stops_answering_gives_transient_errors() {
    let target = fake().await;
    let bmc = Redfish::new(&target.access, Duration::from_secs(1)).unwrap();
    assert_eq!(bmc.power_state().await.unwrap(), PowerState::Off);
    assert!(target.cloud.set_bmc_unresponsive(&system(&target), true));
    let error = bmc.power_state().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Transient, "{error}");
    assert_no_password(&error);
    assert!(target.cloud.set_bmc_unresponsive(&system(&target), false));
    assert_eq!(bmc.power_state().await.unwrap(), PowerState::Off);
}

#[tokio::test]
async fn a_bmc_that_refuses_logins_gives_permanent_errors() {
    let target = fake().await;
    assert!(target.cloud.set_bmc_refuses_login(&system(&target), true));
    let error = connect(&target.access).unwrap().power(PowerAction::On).await.unwrap_err();
    assert_eq!((error.kind, error.status), (ErrorKind::Permanent, Some(401)));
    assert!(error.message.contains("the BMC refused the credentials"), "{error}");
    assert_no_password(&error);
}

#[tokio::test]
async fn a_system_the_bmc_does_not_have_is_not_found() {
    let target = fake().await;
    let mut access = target.access.clone();
    access.address = format!("{}/redfish/v1/Systems/system-999", target.cloud.https_url());
    let error = connect(&access).unwrap().power_state().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::NotFound, "{error}");
    assert!(error.message.contains("was not found"), "the Redfish message is kept: {error}");
}

#[tokio::test]
async fn several_systems_need_the_address_to_name_one() {
    let target = fake().await;
    let mut access = target.access.clone();
    access.address = target.cloud.https_url().to_owned();
    let error = connect(&access).unwrap().power_state().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Permanent);
    assert!(error.message.contains("give the address of one"), "{error}");
}

#[tokio::test]
async fn an_untrusted_certificate_is_refused_unless_insecure_is_asked_for() {
    let target = fake().await;
    let mut access = target.access.clone();
    access.ca_certificate = None;
    let error = connect(&access).unwrap().power_state().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Transient, "{error}");
    access.insecure = true;
    assert_eq!(connect(&access).unwrap().power_state().await.unwrap(), PowerState::Off);
}

#[tokio::test]
async fn a_bmc_whose_certificate_another_ca_signed_is_not_reached_with_the_ca_given() {
    let target = fake().await;
    let address = target.cloud.bmc_untrusted_url(&system(&target)).unwrap();
    let untrusted = BmcAccess { address, ..target.access.clone() };
    let error = connect(&untrusted).unwrap().power_state().await.unwrap_err();
    assert_eq!(error.status, None, "a TLS failure has no HTTP status: {error}");
    assert_no_password(&error);
    assert_eq!(target.cloud.bmc_system(&system(&target)).unwrap()["heldRequests"], 0);
    assert_eq!(connect(&target.access).unwrap().power_state().await.unwrap(), PowerState::Off);
}

#[tokio::test]
async fn a_bmc_fails_any_call_with_the_class_asked_until_cleared() {
    let target = fake().await;
    let bmc = connect(&target.access).unwrap();
    let throttled = FaultClass::Throttled { retry_after: Duration::from_secs(9) };
    target.cloud.fail_next("system", "reset", &system(&target), Failure::Class(throttled));
    let error = bmc.power(PowerAction::On).await.unwrap_err();
    assert_eq!(error.status, Some(503), "{error}");
    let rule = target.cloud.fail_account(&system(&target), FaultClass::Unreachable);
    for _ in 0..2 {
        let error = bmc.power_state().await.unwrap_err();
        assert_eq!(error.status, None, "{error}");
        assert_no_password(&error);
    }
    assert_eq!(target.cloud.fault_hits(rule), Some(2));
    assert!(target.cloud.clear_fault(rule));
    assert_eq!(bmc.power_state().await.unwrap(), PowerState::Off);
}

#[tokio::test]
async fn the_fake_machine_boots_the_inserted_media_once() {
    let target = fake().await;
    let bmc = connect(&target.access).unwrap();
    bmc.insert_media(&target.image_url).await.unwrap();
    bmc.boot_once(BootDevice::VirtualCd).await.unwrap();
    bmc.power(PowerAction::On).await.unwrap();
    wait_for_power(bmc.as_ref(), PowerState::On).await;
    bmc.power(PowerAction::ForceRestart).await.unwrap();
    wait_for_power(bmc.as_ref(), PowerState::On).await;
    let machine = target.cloud.bmc_system(&system(&target)).unwrap();
    assert_eq!(
        machine["boots"],
        serde_json::json!([
            {"device": "Cd", "image": target.image_url, "config": null},
            {"device": "Hdd", "image": null, "config": null},
        ])
    );
}
