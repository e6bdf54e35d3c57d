//! What the workspace's crates keep apart, proved on what cargo resolves and on the binaries it
//! links: the server and the worker carry no fake cloud (only `bcctl`, for `bcctl dev`, does), and
//! `bcd` carries no database, Cedar, server or control-plane code.

use std::path::Path;
use std::process::Command;

use crate::harness::{bcd_binary, cargo, run_ok};

const BC: &str = env!("CARGO_BIN_EXE_bcctl");
const BC_SERVER: &str = env!("CARGO_BIN_EXE_bc-server");
const BC_WORKER: &str = env!("CARGO_BIN_EXE_bc-worker");

/// The demangled names of the functions and statics `binary` defines.
fn symbols(binary: &Path) -> String {
    let output = run_ok(Command::new("nm").args(["--demangle", "--defined-only"]).arg(binary));
    String::from_utf8(output.stdout).expect("nm prints text")
}

/// The lines of `symbols` that name one of `paths`.
fn naming<'a>(symbols: &'a str, paths: &[&str]) -> Vec<&'a str> {
    symbols.lines().filter(|line| paths.iter().any(|path| line.contains(path))).take(5).collect()
}

#[test]
fn the_server_and_the_worker_link_no_fake_cloud_and_bc_does() {
    for binary in [BC_SERVER, BC_WORKER] {
        let symbols = symbols(Path::new(binary));
        let found = naming(&symbols, &["fakecloud::"]);
        assert!(found.is_empty(), "{binary} links the fake cloud: {found:#?}");
    }
    assert!(!naming(&symbols(Path::new(BC)), &["fakecloud::"]).is_empty(), "bcctl runs the fake cloud for `bcctl dev`");
}

#[test]
fn bcd_depends_on_no_database_cedar_server_or_control_plane_crate() {
    let tree = run_ok(cargo().args(["tree", "--offline", "-p", "bcd", "-e", "normal", "--prefix", "none"]));
    let tree = String::from_utf8(tree.stdout).unwrap();
    let crates: Vec<&str> = tree.lines().filter_map(|line| line.split_whitespace().next()).collect();
    assert!(crates.contains(&"tonic") && crates.contains(&"rustls"), "cargo tree lists bcd's dependencies: {tree}");
    let forbidden = ["sqlx", "cedar-policy", "axum", "better-compute", "fakecloud"];
    let found: Vec<&&str> =
        crates.iter().filter(|name| forbidden.iter().any(|crate_name| name.starts_with(crate_name))).collect();
    assert!(found.is_empty(), "bcd depends on {found:?}");
}

#[test]
fn the_bcd_binary_links_no_database_cedar_server_or_control_plane_code() {
    let symbols = symbols(bcd_binary());
    assert!(!naming(&symbols, &["bcd::daemon::"]).is_empty(), "nm names bcd's own functions");
    let forbidden = [
        "sqlx",
        "cedar_policy::",
        "axum::",
        "hyper::server::",
        "tonic::transport::server::",
        "better_compute::",
        "fakecloud::",
    ];
    let found = naming(&symbols, &forbidden);
    assert!(found.is_empty(), "bcd links what a node daemon has no use for: {found:#?}");
}
