//! The hostile-input suite: each test replays an attack a probe found (or one of its kind) and
//! checks that the server refuses it cleanly, stays up, and keeps its memory bounded. Every new
//! way in (a method, a decoder, a stream) gets a case here.
//!
//! Where a finding was about a crash or memory, the test runs the real `bc-server` binary as its
//! own process (the harness's `System::process`), so that an abort or a resident-memory figure
//! is the server's and not the test binary's.

mod accounts;
mod authorization;
mod bmc_addresses;
mod clients;
mod daemons;
mod decoders;
mod http2;
mod identity;
mod listener;
mod metal;
mod node_identity;
mod operations;
mod operator_key;
mod orphans;
mod plans;
mod substrate_adoption;
mod tenant_boundaries;
mod volumes;
mod watches;
