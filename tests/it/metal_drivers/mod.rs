//! The BMC drivers against real emulators: one conformance suite run on sushy-tools'
//! `sushy-emulator` (its fake driver, from PyPI) and on the fake cloud's Redfish BMC, the IPMI
//! driver against pyghmi's fake BMC through Debian's ipmitool, the fake BMC's faults, and the
//! password kept out of every error and argument list.

mod conformance;
mod dev_bmcs;
mod fake_faults;
pub mod ipmi;
mod redfish_targets;

use std::time::Duration;

use better_compute::provider::ProviderError;
use better_compute::provider::bmc::{Bmc, PowerState};

use crate::harness::poll;

/// A password no emulator output or driver text would hold by chance.
pub const PASSWORD: &str = "pw-Zq81-never-shown";

/// Polls the power state until it is `want`: real BMCs (and sushy-tools) take seconds.
pub async fn wait_for_power(bmc: &dyn Bmc, want: PowerState) {
    poll(Duration::from_secs(40), &format!("the power state {want:?}"), || async {
        let state = bmc.power_state().await.expect("the power state reads");
        if state == want { Ok(()) } else { Err(format!("{state:?}")) }
    })
    .await;
}

/// Asserts that `error` shows the password neither in its text nor in its `Debug`.
pub fn assert_no_password(error: &ProviderError) {
    assert!(!error.to_string().contains(PASSWORD), "the password is in {error}");
    assert!(!format!("{error:?}").contains(PASSWORD), "the password is in {error:?}");
}
