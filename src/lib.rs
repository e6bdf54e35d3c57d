//! better-compute: a multi-tenant compute control plane.
//!
//! Tenants ask through one API (gRPC, gRPC-web and `POST /api/...` JSON) for managed Kubernetes
//! clusters, load balancers, join tokens, pool substrates and bare-metal machines. Every call
//! is validated, authenticated and recorded as desired state in one store transaction, and
//! returns at once; reconcilers in the worker converge the providers.
//!
//! Data flows one way: `api` (thin tonic services and the JSON gateway, all derived from the
//! descriptors of `proto/`) calls `service` (the rules, one file per resource), which calls
//! `store` (all SQL). The worker's `reconcile` runtime calls provider adapters and the store.
//! Nothing calls upward: each module has a rank in the table of `layers.rs`, whose test fails on
//! a path to a module above it.
//!
//! Modules:
//! - [`proto`]: the generated code and the descriptor pool; [`methods`]: every method read from it;
//! - [`authz`]: Cedar decisions of `permission @ resource` for a caller;
//! - [`api`]: gRPC services, the API layer (authentication, validation, metrics), the gateway,
//!   the OpenAPI document;
//! - [`service`]: business rules;
//! - [`store`]: Postgres and SQLite behind one `Store`;
//! - [`reconcile`]: the worker's runtime;
//! - [`changes`]: what a change of each kind asks of its provider, which plans show and
//!   reconcilers follow;
//! - [`server`], [`dev`] (with [`dev_catalog`] and [`dev_seed`]), [`cli`], and the binaries'
//!   options ([`config`]) and start ([`process`]): what the binaries run;
//! - [`domain`]: rules with no I/O that several layers read (state tables, policies, CIDR, dates);
//! - [`error`], [`ids`], [`telemetry`], [`measured`]: shared plumbing;
//! - [`secrets`]: credentials sealed at rest; [`bearer`]: the bearer form of keys and tokens.
//!
//! The node daemon ([`bcd`]) and the provider emulators ([`fakecloud`], which only `bcctl dev` and
//! the tests use) are crates of their own. The wire every program shares lives in `bcd`, the
//! lowest crate, and is named here as the control plane's own: [`tls`], [`channel`],
//! [`boot_config`], [`shutdown`].

pub mod api;
pub mod authz;
pub mod bearer;
pub mod changes;
pub mod cli;
pub mod config;
pub mod dev;
pub mod dev_catalog;
pub mod dev_seed;
pub mod domain;
pub mod error;
pub mod ids;
#[cfg(test)]
mod layers;
pub mod measured;
pub mod methods;
pub mod process;
pub mod proto;
pub mod provider;
pub mod reconcile;
pub mod secrets;
pub mod server;
pub mod service;
pub mod store;
pub mod telemetry;

pub use bcd::{boot_config, channel, shutdown, tls};
