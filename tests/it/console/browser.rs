//! The console in a real browser (tests/python/console_browser.py: Playwright driving Debian's
//! chromium, axe-core on every page) against a real `bcctl dev`: clusters (one stuck on refused GKE
//! calls, with its problem and operation log), the other resources, bare metal, and each role's
//! pages (a tenant admin's, a viewer's, an operator's): only the sections the role may use are
//! offered, each works for it, and the others' URLs say who they are for. Its screenshots land in
//! `target/console/`.

use better_compute::domain::metal_states;
use better_compute::domain::states::MachineState;
use serde_json::Value;

use crate::harness::{System, python, repo_root, run_ok};
use better_compute::store::Backend;

#[test]
fn in_chromium_a_tenant_makes_a_cluster_that_goes_ready_live_and_a_viewer_is_offered_no_create() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, _dev) = System::on(Backend::Sqlite).dev(dir.path());
    let script = repo_root().join("tests/python/console_browser.py");
    let shots = repo_root().join("target/console");
    // Screenshots of an earlier run would pass for this one's.
    let _ = std::fs::remove_dir_all(&shots);
    let output = run_ok(std::process::Command::new(python()).arg(&script).arg(dir.path().join("dev.json")).arg(&shots));
    let summary: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert!(summary["cluster"].as_str().unwrap().starts_with("kcl_"), "{summary}");
    assert!(summary["kubectlNodes"].as_u64().unwrap() >= 1, "kubectl listed the cluster's nodes: {summary}");
    assert_eq!(summary["plan"], "rolling", "a new machine type was confirmed on its rolling plan: {summary}");
    let problem = &summary["problem"];
    assert_eq!(problem["class"], "permission", "the stuck cluster's problem was shown: {summary}");
    assert!(problem["operations"].as_u64().unwrap() >= 2, "its create and the refused call were listed: {summary}");
    assert!(summary["refusal"].as_str().unwrap().contains("must match"), "the name's refusal shows: {summary}");
    let metal = &summary["metal"];
    assert!(metal["node"].as_str().unwrap().starts_with("node_"), "a machine was enrolled through the form: {summary}");
    // The script checked the buttons against the view's allowedVerbs; the state's own row of the
    // provision state table is checked here too (`update` has no button).
    let state = metal["state"].as_str().unwrap();
    assert_eq!(state, "manageable", "the metal reconciler reached the BMC: {summary}");
    let state: MachineState = state.parse().unwrap();
    let allowed: Vec<&str> = metal_states::allowed_from(state).into_iter().filter(|v| *v != "update").collect();
    assert_eq!(metal["buttons"], serde_json::json!(allowed), "the buttons of {state}: {summary}");
    for page in summary["pages"].as_array().unwrap() {
        let shot = shots.join(format!("{}.png", page.as_str().unwrap()));
        assert!(std::fs::metadata(&shot).is_ok_and(|m| m.len() > 1000), "{} was saved", shot.display());
    }
}
