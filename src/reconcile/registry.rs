//! The one list of the resource reconcilers: `bc-worker`, `bcctl dev` and the tests register what
//! [`registry`] returns, so a new kind is added here and runs everywhere.

use std::sync::Arc;

use super::provider_objects::ProviderObjects;
use super::{KubernetesClusters, KubernetesSubstrates, MetalMachines, OrphanSweeper, ProviderResources, Reconciler};

/// Every resource kind the worker converges at a provider: clusters, pool substrates, bare-metal
/// machines (through their BMCs), networks,
/// instances, certificates and load balancers, and the sweeper of what forced deletes left, with the accounts, key and timings of `resources` (the
/// spec's backoffs from [`ProviderResources::new`]; tests set faster ones in its fields, and
/// the intervals in the worker's configuration).
pub fn registry(resources: ProviderResources) -> Vec<Arc<dyn Reconciler>> {
    let clusters = KubernetesClusters { accounts: resources.gke.clone(), timings: resources.timings };
    let substrates = KubernetesSubstrates {
        backoff: resources.timings.backoff,
        ..KubernetesSubstrates::new(
            resources.gke.clone(),
            resources.secret_key.clone(),
            resources.daemon_endpoint.clone(),
        )
    };
    let metal = MetalMachines {
        backoff: resources.timings.backoff,
        ..MetalMachines::new(resources.secret_key.clone(), resources.daemon_endpoint.clone())
    };
    let sweeper = OrphanSweeper {
        objects: ProviderObjects::new(resources.gke.clone(), resources.digitalocean.clone()),
        backoff: resources.timings.backoff,
    };
    let mut reconcilers: Vec<Arc<dyn Reconciler>> =
        vec![Arc::new(clusters), Arc::new(substrates), Arc::new(metal), Arc::new(sweeper)];
    reconcilers.extend(resources.reconcilers());
    reconcilers
}
