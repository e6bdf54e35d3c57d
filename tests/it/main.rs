//! The integration tests, in one binary. `harness` boots the real server on a real database
//! (a fresh Postgres database or SQLite file per test); the suites call it as clients would.

mod harness;

mod auth_revocation;
mod authz;
mod bcd;
mod binaries;
mod catalog;
mod cli;
mod clients;
mod console;
mod crates;
mod deploy;
mod docs_blocks;
mod drift;
mod fakecloud_kube;
mod grpc;
mod hostile;
mod join_tokens;
mod json_api;
mod json_numbers;
mod kubernetes;
mod load_balancers;
mod metal;
mod metal_drivers;
mod metrics;
mod node_remediation;
mod nodes;
mod operations;
mod orphans;
mod pacing;
mod plans;
mod plans_cli;
mod provider;
mod readme_recipe;
mod scale_out;
mod secret_keys;
mod store_conformance;
mod substrates;
mod vps;
mod worker;
