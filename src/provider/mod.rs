//! Provider adapters: one per provider API, behind capability traits, so reconcilers ask for
//! "managed Kubernetes" or "load balancers" and the adapter speaks GKE or DigitalOcean.
//!
//! Adapters speak the real HTTP APIs over reqwest (rustls on ring) and take their base URL as
//! configuration: production points them at the provider, tests and `bcctl dev` at the
//! [fake cloud](fakecloud). Every failure is a [`ProviderError`] classified for the
//! reconciler: transient (retry on a later pass), permanent (put the resource in `error`),
//! not found, or conflict-in-progress (another operation runs: wait it out).
//! Every call of an adapter's API is timed and counted by provider and operation
//! ([`measured`](crate::measured)).
//!
//! Credentials (service-account keys, API tokens, access tokens) live only inside adapters;
//! neither `Debug` nor an error ever shows them.

pub mod accounts;
pub mod bmc;
pub mod cloud;
pub mod cluster_api;
pub mod digitalocean;
pub mod error;
pub mod gce;
pub mod gke;
pub mod google_auth;
pub mod kube;
pub mod managed;
pub mod pacing;

pub use cloud::{
    Certificate, CertificateSpec, Certificates, Domain, Firewall, ForwardingRule, GlobalSettings, HealthCheck,
    Instance, InstanceSpec, Instances, LoadBalancer, LoadBalancerSpec, LoadBalancers, Network, NetworkSpec, Networks,
    StickySessions, Volume, VolumeAction, VolumeChange, VolumeSpec, Volumes,
};
pub use cluster_api::{ClusterApi, ClusterRole, Force, IssuedToken, Node, ObjectRef};
pub use error::{ErrorClass, ErrorKind, Found, ProviderError, ProviderResult};
pub use managed::{
    Autoscaling, Cluster, ClusterChange, ClusterSpec, ManagedKubernetes, NodePool, NodePoolChange, NodePoolSpec,
    Operation, ReleaseChannel, ServerConfig,
};
