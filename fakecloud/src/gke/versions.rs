//! GKE's versions: the catalog each location offers by release channel, how an asked version
//! resolves (`latest`, `1.X` aliases), and `serverConfig`.

use axum::response::Response;
use serde_json::{Value, json};

use super::Context;
use crate::json_response;

/// The versions a location offers, by release channel (each list newest first).
#[derive(Clone, Debug, PartialEq)]
pub struct VersionCatalog {
    /// `(channel, versions)`; a channel's default is its first version.
    pub channels: Vec<(String, Vec<String>)>,
    /// The default version of a cluster with no channel.
    pub default_version: String,
}

impl Default for VersionCatalog {
    fn default() -> Self {
        let versions = |list: &[&str]| list.iter().map(|v| v.to_string()).collect::<Vec<_>>();
        Self {
            channels: vec![
                ("RAPID".into(), versions(&["1.33.2-gke.1100", "1.32.6-gke.1200"])),
                ("REGULAR".into(), versions(&["1.32.6-gke.1200", "1.31.9-gke.1300"])),
                ("STABLE".into(), versions(&["1.31.9-gke.1300", "1.30.12-gke.1400"])),
                // As on GKE: Regular's default, and older minors kept on extended support.
                ("EXTENDED".into(), versions(&["1.32.6-gke.1200", "1.31.9-gke.1300", "1.30.12-gke.1400"])),
            ],
            default_version: "1.32.6-gke.1200".into(),
        }
    }
}

impl VersionCatalog {
    /// Every version of every channel, newest first.
    pub(super) fn all(&self) -> Vec<String> {
        let mut all: Vec<String> = self.channels.iter().flat_map(|(_, v)| v.clone()).collect();
        all.sort_by_key(|v| std::cmp::Reverse(version_key(v)));
        all.dedup();
        all
    }

    pub(super) fn channel_default(&self, channel: &str) -> Option<String> {
        self.channels.iter().find(|(c, _)| c == channel).and_then(|(_, v)| v.first().cloned())
    }

    /// The version `asked` resolves to (`latest`, `-` or empty mean the default); as on GKE,
    /// `1.X` and `1.X.Y` are aliases of the newest valid version under them.
    pub(super) fn resolve(&self, asked: &str, channel: &str) -> Option<String> {
        match asked {
            "" | "-" | "latest" => self.channel_default(channel).or_else(|| Some(self.default_version.clone())),
            version => self
                .all()
                .into_iter()
                .filter(|v| v == version || v.strip_prefix(version).is_some_and(|rest| rest.starts_with(['.', '-'])))
                .max_by_key(|v| version_key(v)),
        }
    }
}

/// Orders versions like `1.32.6-gke.1200` by their numbers.
pub(super) fn version_key(version: &str) -> Vec<u64> {
    version.split(|c: char| !c.is_ascii_digit()).filter(|s| !s.is_empty()).filter_map(|s| s.parse().ok()).collect()
}

impl Context<'_> {
    pub(super) fn server_config(&self) -> Response {
        let world = self.shared.world();
        let catalog = self.catalog(&world.gke);
        let all = catalog.all();
        let channels: Vec<Value> = catalog
            .channels
            .iter()
            .map(|(channel, versions)| {
                json!({
                    "channel": channel, "defaultVersion": versions.first(), "validVersions": versions,
                    "upgradeTargetVersion": versions.first(),
                })
            })
            .collect();
        json_response(
            200,
            json!({
                "defaultClusterVersion": catalog.default_version,
                "validNodeVersions": all,
                "defaultImageType": "COS_CONTAINERD",
                "validImageTypes": ["COS_CONTAINERD", "UBUNTU_CONTAINERD"],
                "validMasterVersions": all,
                "channels": channels,
            }),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_order_by_their_numbers() {
        assert!(version_key("1.32.6-gke.1200") > version_key("1.32.6-gke.300"));
        assert!(version_key("1.33.0-gke.1") > version_key("1.32.9-gke.9"));
        let catalog = VersionCatalog::default();
        assert_eq!(catalog.all()[0], "1.33.2-gke.1100");
        assert_eq!(catalog.resolve("latest", "STABLE").unwrap(), "1.31.9-gke.1300");
        assert_eq!(catalog.resolve("latest", "EXTENDED").unwrap(), "1.32.6-gke.1200");
        assert_eq!(catalog.resolve("1.30", "EXTENDED").unwrap(), "1.30.12-gke.1400");
        assert_eq!(catalog.resolve("1.0.0-gke.1", ""), None);
    }
}
