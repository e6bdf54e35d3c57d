//! bcd: the node daemon of better-compute, and the pieces of the wire every program of the
//! project shares.
//!
//! The daemon ([`daemon`]) joins a pool with a join token and keeps its node alive with
//! heartbeats. It is a client of the API like any other: its Nodes client is generated from
//! `proto/` by this crate's own build ([`proto`]), and it links no database, Cedar or server code.
//!
//! The wire pieces are here, in the lowest crate, because the control plane (server, worker,
//! `bcctl`), the fake cloud (which runs embedded daemons) and bcd itself all speak them:
//! - [`tls`]: rustls on ring, local CAs, CA pins, client and server configurations;
//! - [`channel`]: a gRPC channel to the API and the bearer credential its calls carry;
//! - [`api_error`]: the API's error codes, and a failed call read back from its status;
//! - [`boot_config`]: what a bare-metal machine booted to join its pool reads;
//! - [`redacted`], [`logging`], [`shutdown`], [`process`]: what every binary does alike.

pub mod api_error;
pub mod boot_config;
pub mod channel;
pub mod daemon;
pub mod logging;
pub mod process;
pub mod proto;
pub mod redacted;
pub mod shutdown;
pub mod tls;
