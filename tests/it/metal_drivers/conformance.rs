//! One driver suite, run on sushy-tools and on the fake cloud's BMC: both must pass it whole.

use better_compute::provider::ErrorKind;
use better_compute::provider::bmc::{BootDevice, EraseMethod, PowerAction, PowerState, ReadBack, connect};

use super::redfish_targets::{Service, Target};
use super::{assert_no_password, wait_for_power};

async fn power_actions_converge_and_repeating_one_succeeds(target: Target) {
    let bmc = connect(&target.access).unwrap();
    assert_eq!(bmc.power_state().await.unwrap(), PowerState::Off);
    bmc.power(PowerAction::GracefulOff).await.expect("off while off succeeds");
    bmc.power(PowerAction::On).await.unwrap();
    wait_for_power(bmc.as_ref(), PowerState::On).await;
    bmc.power(PowerAction::On).await.expect("on while on succeeds");
    bmc.power(PowerAction::ForceOff).await.unwrap();
    wait_for_power(bmc.as_ref(), PowerState::Off).await;
    bmc.power(PowerAction::ForceOff).await.expect("off while off succeeds");
}

async fn boot_once_sets_the_override_and_clearing_removes_it(target: Target) {
    let bmc = connect(&target.access).unwrap();
    bmc.boot_once(BootDevice::Pxe).await.unwrap();
    assert_eq!(target.system().await["Boot"]["BootSourceOverrideTarget"], "Pxe");
    bmc.boot_once(BootDevice::VirtualCd).await.unwrap();
    let boot = target.system().await["Boot"].clone();
    assert_eq!(boot["BootSourceOverrideTarget"], "Cd");
    if let Service::Fake { .. } = target.service {
        assert_eq!(boot["BootSourceOverrideEnabled"], "Once");
    }
    bmc.clear_boot_override().await.unwrap();
    let boot = target.system().await["Boot"].clone();
    assert!(
        boot["BootSourceOverrideEnabled"] == "Disabled" || boot["BootSourceOverrideTarget"] == "None",
        "the override is still set: {boot}"
    );
}

async fn virtual_media_inserts_replaces_and_ejects(target: Target) {
    let bmc = connect(&target.access).unwrap();
    bmc.eject_media().await.expect("ejecting an empty CD succeeds");
    bmc.insert_media(&target.image_url).await.unwrap();
    let cd = target.virtual_cd().await;
    assert_eq!(cd["Image"], target.image_url.as_str());
    assert_eq!(cd["Inserted"], true);
    let other = target.image_url.replace("deploy.iso", "rescue.iso");
    bmc.insert_media(&other).await.expect("inserting over inserted media replaces it");
    assert_eq!(target.virtual_cd().await["Image"], other.as_str());
    bmc.eject_media().await.unwrap();
    let cd = target.virtual_cd().await;
    assert_eq!(cd["Inserted"], false);
    assert!(cd["Image"].as_str().unwrap_or_default().is_empty(), "still inserted: {cd}");
}

async fn inventory_reports_nics_disks_and_the_vendor(target: Target) {
    let inventory = connect(&target.access).unwrap().inventory().await.unwrap();
    let macs: Vec<String> = inventory.nics.iter().map(|nic| nic.mac.clone()).collect();
    assert_eq!(macs, target.macs);
    let sizes: Vec<u64> = inventory.disks.iter().map(|disk| disk.size_bytes).collect();
    assert_eq!(sizes, target.disk_sizes);
    assert_eq!(inventory.vendor, target.vendor);
    assert_eq!(inventory.serial, target.serial);
    if let Service::Fake { .. } = target.service {
        assert_eq!((inventory.cpus, inventory.memory_mib, inventory.model.as_str()), (8, 32 * 1024, "Fake Machine 1U"));
        assert_eq!(inventory.cpu_model, "Fake Xeon 4110");
    }
}

async fn erase_erases_every_drive_once_or_says_unsupported(target: Target) {
    let bmc = connect(&target.access).unwrap();
    let result = bmc.erase_targets().await;
    match (&target.service, target.erases) {
        (Service::Fake { system }, true) => {
            let disks = result.unwrap();
            let methods: Vec<(&str, EraseMethod)> = disks.iter().map(|d| (d.name.as_str(), d.method)).collect();
            let expected = [
                ("NVMe SSD 0", EraseMethod::CryptoErase),
                ("NVMe SSD 1", EraseMethod::SecureErase),
                ("SATA HDD 2", EraseMethod::Overwrite),
            ];
            assert_eq!(methods, expected, "the best method each drive offers");
            assert!(disks.iter().all(|d| d.serial.starts_with("FAKE")), "{disks:?}");
            assert!(target.cloud.write_bmc_disk(system, "disk1", "tenant data"));
            assert_eq!(bmc.read_back(&disks[1]).await.unwrap(), ReadBack::HoldsData);
            for disk in &disks {
                bmc.erase_disk(disk).await.unwrap();
                assert_eq!(bmc.read_back(disk).await.unwrap(), ReadBack::Blank, "{disk:?}");
            }
            let fake = target.cloud.bmc_system(system).unwrap();
            assert_eq!(fake["erased"], serde_json::json!({"disk0": 1, "disk1": 1, "disk2": 1}));
            let by = serde_json::json!({"disk0": "CryptographicErase", "disk1": "BlockErase", "disk2": "Overwrite"});
            assert_eq!(fake["erasedBy"], by);
        }
        _ => {
            let error = result.expect_err("a BMC without Drive.SecureErase cannot erase");
            assert_eq!((error.kind, error.reason.as_str()), (ErrorKind::Permanent, "unsupported"));
        }
    }
}

async fn a_wrong_password_is_refused_permanently_without_showing_it(target: Target) {
    let wrong = format!("{}-wrong", super::PASSWORD);
    let error = connect(&target.with_password(&wrong)).unwrap().power_state().await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::Permanent);
    assert!(error.message.contains("the BMC refused the credentials"), "{error}");
    assert_no_password(&error);
    assert!(!error.to_string().contains(&wrong));
}

macro_rules! conformance {
    ($service:ident) => {
        mod $service {
            use super::super::redfish_targets::$service as target;

            #[tokio::test]
            async fn power_actions_converge_and_repeating_one_succeeds() {
                super::power_actions_converge_and_repeating_one_succeeds(target().await).await;
            }

            #[tokio::test]
            async fn boot_once_sets_the_override_and_clearing_removes_it() {
                super::boot_once_sets_the_override_and_clearing_removes_it(target().await).await;
            }

            #[tokio::test]
            async fn virtual_media_inserts_replaces_and_ejects() {
                super::virtual_media_inserts_replaces_and_ejects(target().await).await;
            }

            #[tokio::test]
            async fn inventory_reports_nics_disks_and_the_vendor() {
                super::inventory_reports_nics_disks_and_the_vendor(target().await).await;
            }

            #[tokio::test]
            async fn erase_erases_every_drive_once_or_says_unsupported() {
                super::erase_erases_every_drive_once_or_says_unsupported(target().await).await;
            }

            #[tokio::test]
            async fn a_wrong_password_is_refused_permanently_without_showing_it() {
                super::a_wrong_password_is_refused_permanently_without_showing_it(target().await).await;
            }
        }
    };
}

conformance!(sushy);
conformance!(fake);
