//! Rules with no I/O that several layers read: the states of every kind and the provision
//! state table of machines, the names of the lifecycle events, pools' substrate, metal, drift and node policies (and the drift rule), IP networks, civil dates, the URLs the control plane fetches.
//! It sits below the store and imports nothing above it (the layering test in `lib.rs`
//! holds it to that).

pub mod cidr;
pub mod dates;
pub mod drift;
pub mod health_check;
pub mod lifecycle_events;
pub mod metal_policy;
pub mod metal_states;
pub mod node_policy;
pub mod problem;
pub mod rate_limits;
pub mod states;
pub mod substrate_policy;
pub mod urls;
