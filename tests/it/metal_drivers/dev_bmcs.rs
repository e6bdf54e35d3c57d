//! `bcctl dev` lists its fake BMCs in dev.json, and the Redfish driver signs in to them.

use better_compute::provider::bmc::{BmcAccess, BmcDriver, PowerState, connect};
use better_compute::secrets::Secret;
use better_compute::store::Backend;

use crate::harness::System;

#[tokio::test(flavor = "multi_thread")]
async fn bc_dev_lists_fake_bmcs_the_redfish_driver_signs_in_to() {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, file) = tokio::task::block_in_place(|| System::on(Backend::Sqlite).dev(dir.path()));
    let ca_file = file["fakecloudTls"]["caFile"].as_str().expect("dev.json has the fake cloud's CA");
    let ca = std::fs::read_to_string(ca_file).unwrap();
    let bmcs = file["bmcs"].as_array().expect("dev.json lists bmcs");
    assert!(bmcs.len() >= 2, "several fake machines: {bmcs:?}");
    for bmc in bmcs {
        assert_eq!(bmc["driver"], "redfish");
        let access = BmcAccess {
            driver: BmcDriver::Redfish,
            address: bmc["address"].as_str().unwrap().to_owned(),
            username: bmc["username"].as_str().unwrap().to_owned(),
            password: Secret::new(bmc["password"].as_str().unwrap()),
            ca_certificate: Some(ca.clone()),
            insecure: false,
        };
        assert_eq!(connect(&access).unwrap().power_state().await.unwrap(), PowerState::Off);
    }
}
