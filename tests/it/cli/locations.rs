//! A location that is none of the pool's, refused in one whole sentence with no JSON after it.

use better_compute::store::Backend;

use super::{bcctl, failed};
use crate::harness::System;

#[test]
fn a_location_of_no_zone_is_refused_in_one_clean_sentence() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let pool = dev["pools"]["gke"].as_str().unwrap();
    let args =
        ["clusters", "create", "--tenant", "acme", "--pool", pool, "--name", "mars", "--location", "mars-central1"];
    let args = [&args[..], &["--node-pool", "name=general,machine-type=e2-standard-4,count=1"]].concat();
    let said = failed(&args, &bcctl(&dev, 80, &args));
    print!("a location of no zone:\n{said}");
    let first = said.lines().next().unwrap();
    assert!(first.starts_with("error: INVALID_INPUT: location: \"mars-central1\" is not a location of pool"), "{said}");
    assert!(first.contains("regions (us-central1, europe-west1)"), "the regions, whole: {said}");
    assert!(said.contains("\n  zones: us-central1-a, "), "the zones the sentence left out: {said}");
    assert!(!said.contains("...") && !said.contains('{'), "nothing cut, no JSON: {said}");
}
