//! `deploy/` as an operator takes it: the compose file valid against the Compose
//! specification's schema and giving every process what it needs (the workers' secret key),
//! the Kubernetes manifests rendered by `kubectl kustomize` and valid against the Kubernetes
//! OpenAPI schemas, and an image of the four binaries with no shell, run as non-root. The checks
//! are `tests/python/check_deploy.py`, run with the tests' Python.

use std::process::Command;

use crate::harness::{python, repo_root, run_ok};

#[test]
fn the_compose_file_the_kubernetes_manifests_and_the_image_pass_their_schemas_and_checks() {
    let root = repo_root();
    let output = run_ok(Command::new(python()).arg(root.join("tests/python/check_deploy.py")).arg(&root));
    let report = String::from_utf8_lossy(&output.stdout);
    assert!(report.contains("deploy/: 0 findings"), "{report}");
}
