//! A machine type the provider does not know (`e2-standrad-4`) is refused by the fake GKE as GKE
//! refuses it, and the refusal reaches the user: the cluster's state, message and `--wait`.

use better_compute::store::Backend;
use serde_json::Value;

use super::waits::create_cluster;
use super::{bcctl, failed, succeeded};
use crate::harness::System;

#[test]
fn a_misspelt_machine_type_is_refused_by_the_provider_and_the_user_is_told() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let (cluster, waited) = create_cluster(&dev, "typo", "e2-standrad-4");
    let said = failed(&["clusters", "get", "--wait"], &waited);
    print!("a misspelt machine type:\n{said}");
    assert!(said.contains(&format!("cluster {cluster} is in error")), "{said}");
    assert!(said.contains("machine type \"e2-standrad-4\" does not exist"), "GKE's words reach the user: {said}");
    let get = ["-o", "json", "clusters", "get", "--tenant", "acme", &cluster];
    let failed_cluster: Value = serde_json::from_str(&succeeded(&get, &bcctl(&dev, 120, &get))).unwrap();
    assert_eq!(failed_cluster["state"], "error", "{failed_cluster}");
    assert!(failed_cluster["message"].as_str().unwrap().contains("e2-standrad-4"), "{failed_cluster}");
}
