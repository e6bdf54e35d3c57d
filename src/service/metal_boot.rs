//! A bare-metal deploy's boot configuration, served to the machine that boots the deploy
//! image: the URL's secret is the only credential, so the configuration answers only while its
//! deploy runs, before its deadline and until its one-use join token is used; any other URL is
//! `NOT_FOUND` alike, and a wrong guess learns nothing.
//!
//! A machine that boots from the network asks by its MAC address for the iPXE script that
//! carries the same URL, under the same rules: a MAC is no secret, so the script answers only
//! while the deploy it was made for runs, which is when the machine itself asks.

use super::Service;
use crate::boot_config::{self, BootConfig};
use crate::error::{Error, Result};
use crate::store::{BootConfigRow, now_micros};

/// The answer to every URL that opens no configuration.
fn unknown() -> Error {
    Error::not_found("bootConfiguration", "(the URL given)")
}

impl Service {
    /// The boot configuration whose URL secret is `secret`.
    pub async fn metal_boot_config(&self, secret: &str) -> Result<BootConfig> {
        if secret.len() != 64 || !secret.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(unknown());
        }
        let found = self.store.metal_boot_config(&boot_config::secret_sha256(secret)).await?;
        let config = self.open_while_deploying(found).await?;
        tracing::info!(node = %config.machine_id, pool = %config.pool_id, "metal boot configuration fetched");
        Ok(config)
    }

    /// The iPXE script of the deploy under way on the machine with a network interface of MAC
    /// address `mac`: it boots the deploy's image with its boot configuration's URL.
    pub async fn metal_pxe_script(&self, mac: &str) -> Result<String> {
        let Some(mac) = boot_config::normal_mac(mac) else { return Err(unknown()) };
        let found = self.store.metal_boot_config_by_mac(&mac).await?;
        let image = found.as_ref().map(|found| found.machine.image.clone()).unwrap_or_default();
        let config = self.open_while_deploying(found).await?;
        let url = boot_config::url(&config.endpoint, &boot_config::secret(&config.join_token));
        tracing::info!(node = %config.machine_id, pool = %config.pool_id, "metal iPXE script fetched");
        Ok(boot_config::ipxe_script(&config.machine_id, &image, &url))
    }

    /// The configuration of `found`, while its deploy may still use it: before the deadline
    /// and while its one-use join token is unused.
    async fn open_while_deploying(&self, found: Option<BootConfigRow>) -> Result<BootConfig> {
        let Some(found) = found else { return Err(unknown()) };
        let machine = &found.machine;
        if machine.deadline.is_some_and(|deadline| deadline <= now_micros()) {
            return Err(unknown());
        }
        let token = self.store.join_token_fetch(&machine.deploy_token_id).await?;
        if token.is_none_or(|token| token.uses >= token.max_uses || token.revoked_at.is_some()) {
            return Err(unknown());
        }
        let document = self.sealing_key()?.open(&found.config_sealed, &machine.node_id)?;
        serde_json::from_str(document.expose()).map_err(|error| {
            Error::internal(format!("the boot configuration of {} is unreadable: {error}", machine.node_id))
        })
    }
}
