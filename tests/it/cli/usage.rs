//! The usage line of a missing argument asks only for what is missing: not for the endpoint
//! and token the environment gives.

use better_compute::store::Backend;

use super::{bcctl, succeeded};
use crate::harness::System;

#[test]
fn the_usage_of_a_missing_argument_does_not_ask_for_the_token_the_environment_gives() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let args = ["clusters", "get", "kcl_1"];
    let output = bcctl(&dev, 120, &args);
    let said = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{said}");
    let usage = said.lines().find(|line| line.starts_with("Usage:")).unwrap();
    assert_eq!(usage, "Usage: bcctl clusters get --tenant <TENANT> <CLUSTER_ID>", "{said}");
    // The environment still gives them: the call is made as acme's admin.
    let json = succeeded(
        &["-o", "json", "clusters", "list", "--tenant", "acme"],
        &bcctl(&dev, 120, &["-o", "json", "clusters", "list", "--tenant", "acme"]),
    );
    assert!(json.contains("\"clusters\""), "{json}");
}
