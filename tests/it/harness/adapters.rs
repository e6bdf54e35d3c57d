//! The provider adapters pointed at a fake cloud of the test's own: the provider suites test
//! them, and other suites (the fake cloud's Kubernetes, metrics, networks) use them to look at
//! what the fake cloud holds.

use std::time::Duration;

use better_compute::provider::digitalocean::{DigitalOcean, DigitalOceanConfig};
use better_compute::provider::gke::{Gke, GkeConfig};
use better_compute::provider::google_auth::{ServiceAccountKey, TokenSource};
use better_compute::provider::{ManagedKubernetes, Operation};
use fakecloud::{FakeCloud, FakeCloudConfig};

use super::poll;

pub const PROJECT: &str = "bc-test";
pub const LOCATION: &str = "europe-west1";

/// A fake cloud whose operations take a second: long enough that a test reads an operation's
/// in-between state (`PROVISIONING`, an operation in progress) on a busy machine too.
pub async fn cloud() -> FakeCloud {
    let config = FakeCloudConfig {
        operation_duration: Duration::from_secs(1),
        activation_delay: Duration::from_millis(200),
        ..Default::default()
    };
    FakeCloud::start(config).await.expect("the fake cloud starts")
}

pub fn http() -> reqwest::Client {
    reqwest::Client::builder().timeout(Duration::from_secs(20)).build().expect("a reqwest client")
}

/// The GKE adapter pointed at `cloud`, with a service-account key the fake issued.
pub fn gke(cloud: &FakeCloud) -> Gke {
    let key = ServiceAccountKey::from_json(&cloud.service_account_key(PROJECT, "reconciler")).expect("the key parses");
    let config =
        GkeConfig { base_url: format!("{}/", cloud.base_url()), project: PROJECT.into(), location: LOCATION.into() };
    Gke::new(config, http(), TokenSource::new(key, http()))
}

/// The DigitalOcean adapter pointed at `cloud`.
pub fn digitalocean(cloud: &FakeCloud) -> DigitalOcean {
    let config = DigitalOceanConfig {
        base_url: cloud.base_url().to_owned(),
        token: FakeCloudConfig::default().digitalocean_token,
        max_rate_limit_wait: Duration::from_secs(3),
    };
    DigitalOcean::new(config, http())
}

/// Polls an operation until it is done; panics after 10 s.
pub async fn wait(gke: &Gke, operation: &Operation) -> Operation {
    poll(Duration::from_secs(10), &format!("operation {} done", operation.name), || async {
        let now = gke.operation_get(&operation.name).await.expect("the operation can be read");
        if now.is_done() { Ok(now) } else { Err(format!("{now:?}")) }
    })
    .await
}
