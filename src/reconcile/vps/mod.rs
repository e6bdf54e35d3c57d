//! The `vps.provider-resources` reconciler: the `vps` module's tenant resources converged at the
//! provider, one work kind each ([`NETWORK_KIND`](crate::store::NETWORK_KIND) `network`,
//! `instance`, `certificate`, `volume`, `provider-load-balancer`), each a [`Reconciler`] of its
//! own so the runtime's intervals, backoff and stuck deadlines apply per kind.
//!
//! Every pass re-reads its row (desired) and the provider (observed) and takes the next
//! idempotent step. Provider objects have deterministic names (`bc-n-`, `bc-s-`, `bc-c-`, `bc-v-`
//! and 24 characters of the id) or tags (`bc-i-...` on droplets), so a pass that crashed after the
//! provider accepted a create finds the object instead of making a second one. A refused delete
//! puts the resource in `error` with the provider's words and is retried on the spec's delete
//! backoff (5, 10, 20 minutes ... 6 hours); calling delete again retries at once.

mod certificates;
mod instances;
mod load_balancers;
mod networks;
mod volumes;

use std::sync::Arc;

pub use certificates::CertificateReconciler;
pub use instances::InstanceReconciler;
pub use load_balancers::ProviderLoadBalancers;
pub use networks::{NetworkReconciler, cluster_network};
pub use volumes::VolumeReconciler;

use super::{DaemonEndpoint, Reconciler, Timings};
use crate::provider::accounts::{DigitalOceanAccounts, GkeAccounts};
use crate::secrets::SecretKey;

/// What the reconcilers of the `vps` module share: the adapters of the accounts, the key that
/// opens sealed private keys, and the timings.
#[derive(Debug, Clone)]
pub struct ProviderResources {
    /// Account id to GKE adapter (its Compute Engine calls make networks).
    pub gke: Arc<dyn GkeAccounts>,
    /// Account id to DigitalOcean adapter.
    pub digitalocean: Arc<dyn DigitalOceanAccounts>,
    /// Opens custom certificates' private keys for their upload.
    pub secret_key: SecretKey,
    /// The delays and stuck deadline of every provider-backed reconciler.
    pub timings: Timings,
    /// Where node daemons reach the API (the substrates' DaemonSets join through it).
    pub daemon_endpoint: Option<DaemonEndpoint>,
}

impl ProviderResources {
    /// The reconcilers with the spec's intervals.
    pub fn new(gke: Arc<dyn GkeAccounts>, digitalocean: Arc<dyn DigitalOceanAccounts>, secret_key: SecretKey) -> Self {
        Self { gke, digitalocean, secret_key, timings: Timings::SPEC, daemon_endpoint: None }
    }

    /// The map of provider objects over these accounts (a delete confirms through it).
    pub fn objects(&self) -> super::provider_objects::ProviderObjects {
        super::provider_objects::ProviderObjects::new(self.gke.clone(), self.digitalocean.clone())
    }

    /// One reconciler per kind, to register with the worker.
    pub fn reconcilers(self) -> Vec<Arc<dyn Reconciler>> {
        let shared = Arc::new(self);
        vec![
            Arc::new(NetworkReconciler(shared.clone())),
            Arc::new(InstanceReconciler(shared.clone())),
            Arc::new(CertificateReconciler(shared.clone())),
            Arc::new(VolumeReconciler(shared.clone())),
            Arc::new(ProviderLoadBalancers { accounts: shared.digitalocean.clone(), timings: shared.timings }),
        ]
    }
}

pub use crate::changes::vps::provider_name;

/// Microseconds since the epoch of an RFC 3339 time in UTC (`2027-11-29T00:00:00Z`, fractions
/// ignored), as DigitalOcean reports times.
pub fn rfc3339_micros(text: &str) -> Option<i64> {
    crate::domain::dates::rfc3339_seconds(text).map(|seconds| seconds * 1_000_000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_become_microseconds() {
        assert_eq!(rfc3339_micros("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(rfc3339_micros("2027-11-29T00:00:00Z"), Some(1_827_446_400_000_000));
        assert_eq!(rfc3339_micros("2024-02-29T12:30:01.5Z"), Some(1_709_209_801_000_000));
        assert_eq!(rfc3339_micros("yesterday"), None);
    }
}
