//! A bare-metal deploy's boot configuration, served to the machine that boots the deploy
//! image: the URL's secret is the only credential, so the configuration answers only while its
//! deploy runs, before its deadline and until its one-use join token is used; any other URL is
//! `NOT_FOUND` alike, and a wrong guess learns nothing.

use super::Service;
use crate::boot_config::{self, BootConfig};
use crate::error::{Error, Result};
use crate::store::now_micros;

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
        let Some(found) = self.store.metal_boot_config(&boot_config::secret_sha256(secret)).await? else {
            return Err(unknown());
        };
        let machine = &found.machine;
        let now = now_micros();
        if machine.deadline.is_some_and(|deadline| deadline <= now) {
            return Err(unknown());
        }
        let token = self.store.join_token_fetch(&machine.deploy_token_id).await?;
        if token.is_none_or(|token| token.uses >= token.max_uses || token.revoked_at.is_some()) {
            return Err(unknown());
        }
        let document = self.sealing_key()?.open(&found.config_sealed, &machine.node_id)?;
        let config: BootConfig = serde_json::from_str(document.expose()).map_err(|error| {
            Error::internal(format!("the boot configuration of {} is unreadable: {error}", machine.node_id))
        })?;
        tracing::info!(node = %machine.node_id, pool = %machine.pool_id, "metal boot configuration fetched");
        Ok(config)
    }
}
