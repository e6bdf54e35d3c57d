//! A create whose name is taken, said as such: `bcctl` made the idempotency key from the name,
//! so the user, who gave no key, hears of the name and what to do.

use better_compute::store::Backend;

use super::{bcctl, failed, succeeded};
use crate::harness::System;

#[test]
fn a_create_with_a_taken_name_says_the_name_is_taken_and_what_to_do() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let pool = dev["pools"]["digitalocean"].as_str().unwrap();
    let create = ["instances", "create", "--tenant", "acme", "--pool", pool, "--name", "web", "--region", "nyc3"];
    let image = ["--image", "ubuntu-24-04-x64"];
    let first = [&create[..], &["--size", "s-1vcpu-1gb"], &image].concat();
    let made = succeeded(&first, &bcctl(&dev, 120, &first));
    let id = made.lines().nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    // The same command again is a retry: the same instance, no error.
    assert!(succeeded(&first, &bcctl(&dev, 120, &first)).contains(&id));

    let other = [&create[..], &["--size", "s-2vcpu-4gb"], &image].concat();
    let said = failed(&other, &bcctl(&dev, 120, &other));
    print!("a taken name:\n{said}");
    assert!(!said.contains("idempotency key"), "the user gave no key: {said}");
    assert!(said.contains("the name \"web\" is taken") && said.contains(&format!("instance {id}")), "{said}");
    assert!(said.contains("choose another --name, or delete"), "what to do: {said}");

    // A key the user gave is named as such.
    let keyed = [&other[..], &["--idempotency-key", "web"]].concat();
    let said = failed(&keyed, &bcctl(&dev, 120, &keyed));
    assert!(said.contains("idempotency key already used"), "{said}");
}
