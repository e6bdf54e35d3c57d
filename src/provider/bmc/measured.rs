//! The one client layer of BMC calls: every call of a driver is timed, counted and written to the
//! machine's operation log like a cloud adapter's, under the driver's name (`redfish.power`).

use super::{Bmc, BootDevice, EraseTarget, Inventory, PowerAction, PowerState, ReadBack};
use crate::measured::provider;
use crate::provider::ProviderResult;

/// A driver whose calls are measured.
pub(super) struct Measured {
    /// `redfish` or `ipmi`.
    pub(super) protocol: &'static str,
    /// The driver.
    pub(super) driver: Box<dyn Bmc>,
}

#[async_trait::async_trait]
impl Bmc for Measured {
    async fn power_state(&self) -> ProviderResult<PowerState> {
        provider(self.protocol, "powerState", self.driver.power_state()).await
    }

    async fn power(&self, action: PowerAction) -> ProviderResult<()> {
        provider(self.protocol, "power", self.driver.power(action)).await
    }

    async fn boot_once(&self, device: BootDevice) -> ProviderResult<()> {
        provider(self.protocol, "bootOnce", self.driver.boot_once(device)).await
    }

    async fn clear_boot_override(&self) -> ProviderResult<()> {
        provider(self.protocol, "clearBootOverride", self.driver.clear_boot_override()).await
    }

    async fn insert_media(&self, image_url: &str) -> ProviderResult<()> {
        provider(self.protocol, "insertMedia", self.driver.insert_media(image_url)).await
    }

    async fn insert_config(&self, config_url: &str) -> ProviderResult<()> {
        provider(self.protocol, "insertConfig", self.driver.insert_config(config_url)).await
    }

    async fn eject_media(&self) -> ProviderResult<()> {
        provider(self.protocol, "ejectMedia", self.driver.eject_media()).await
    }

    async fn inventory(&self) -> ProviderResult<Inventory> {
        provider(self.protocol, "inventory", self.driver.inventory()).await
    }

    async fn erase_targets(&self) -> ProviderResult<Vec<EraseTarget>> {
        provider(self.protocol, "eraseTargets", self.driver.erase_targets()).await
    }

    async fn erase_disk(&self, disk: &EraseTarget) -> ProviderResult<()> {
        provider(self.protocol, "eraseDisk", self.driver.erase_disk(disk)).await
    }

    async fn read_back(&self, disk: &EraseTarget) -> ProviderResult<ReadBack> {
        provider(self.protocol, "readBack", self.driver.read_back(disk)).await
    }
}
