//! The `vps.provider-resources` reconciler: one [`Reconciler`](super::Reconciler) per work kind of
//! the `vps` module, converging its tenant resources at the provider.

mod load_balancer_spec;
mod load_balancers;

pub use load_balancers::ProviderLoadBalancers;
