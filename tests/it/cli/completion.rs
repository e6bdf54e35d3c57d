//! Shell completion as a shell runs it: `bcctl` called back with `COMPLETE` set and the line after
//! `--`, offering the ids the API lists (with the `--tenant`, `--cluster` or `--pool` typed), and
//! nothing, silently and at once, when the API is out of reach.

use std::process::{Command, Output};
use std::time::{Duration, Instant};

use better_compute::store::Backend;
use serde_json::Value;

use super::{BC, command, succeeded};
use crate::harness::System;

/// `bcctl` run the way bash's completion function runs it to complete the last of `words`, in
/// a directory without `.bc-dev`, so only the environment and the line name the API.
fn bash_completing(mut bcctl: Command, words: &[&str]) -> Command {
    let cwd = std::env::temp_dir();
    bcctl
        .current_dir(cwd)
        .env("COMPLETE", "bash")
        .env("_CLAP_COMPLETE_INDEX", (words.len() - 1).to_string())
        .env("_CLAP_COMPLETE_COMP_TYPE", "9")
        .env("_CLAP_COMPLETE_SPACE", "false")
        .env("_CLAP_IFS", "\n")
        .env_remove("BC_CONFIG")
        .arg("--")
        .args(words);
    bcctl
}

/// The candidates bash is offered for the last of `words`, as acme's admin.
fn offered(dev: &Value, words: &[&str]) -> Vec<String> {
    let output = bash_completing(command(dev, 80, &[]), words).output().unwrap();
    candidates(words, &output)
}

/// The candidates of a completion's `output`, one a line; it must have succeeded silently.
fn candidates(words: &[&str], output: &Output) -> Vec<String> {
    let stdout = succeeded(words, output);
    assert!(output.stderr.is_empty(), "completion says nothing: {}", String::from_utf8_lossy(&output.stderr));
    stdout.lines().map(str::to_owned).collect()
}

#[test]
fn ids_complete_from_the_api_with_the_scope_typed_before_them() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let (gke, digitalocean) = (dev["pools"]["gke"].as_str().unwrap(), dev["pools"]["digitalocean"].as_str().unwrap());
    let create = ["-o", "json", "clusters", "create", "--tenant", "acme", "--pool", gke, "--name", "web"];
    let spec = ["--location", "us-central1", "--node-pool", "name=general,machine-type=e2-standard-4,count=1"];
    let args = [&create[..], &spec].concat();
    let cluster: Value = serde_json::from_str(&succeeded(&args, &super::bcctl(&dev, 120, &args))).unwrap();
    let id = cluster["id"].as_str().unwrap();

    let get = ["bcctl", "clusters", "get", "--tenant", "acme"];
    assert!(offered(&dev, &[&get[..], &[""]].concat()).contains(&id.to_owned()), "the cluster's id is offered");
    assert!(offered(&dev, &[&get[..], &[&id[..6]]].concat()).contains(&id.to_owned()), "for its prefix too");
    assert!(!offered(&dev, &[&get[..], &["kcl_not"]].concat()).contains(&id.to_owned()), "not for another prefix");
    let no_tenant = offered(&dev, &["bcctl", "clusters", "get", ""]);
    assert!(!no_tenant.iter().any(|word| word.starts_with("kcl_")), "no tenant, no ids: {no_tenant:?}");
    let credentials = offered(&dev, &["bcctl", "clusters", "credentials", "--tenant=acme", "kcl"]);
    assert_eq!(credentials, [id], "`--tenant=acme` scopes as `--tenant acme` does");

    // A node pool's id, of the cluster typed with `--cluster`.
    let list = ["-o", "json", "nodepools", "list", "--tenant", "acme", "--cluster", id];
    let pools: Value = serde_json::from_str(&succeeded(&list, &super::bcctl(&dev, 120, &list))).unwrap();
    let node_pool = pools["nodePools"][0]["id"].as_str().unwrap();
    let words = ["bcctl", "nodepools", "get", "--tenant", "acme", "--cluster", id, ""];
    assert!(offered(&dev, &words).contains(&node_pool.to_owned()), "the node pool's id is offered");
    let words = ["bcctl", "nodepools", "list", "--tenant", "acme", "--cluster", ""];
    assert!(offered(&dev, &words).contains(&id.to_owned()), "--cluster completes the cluster's id");

    // Pools: the ones a tenant sees for `--tenant`, every pool for an operator without one.
    let visible = offered(&dev, &["bcctl", "clusters", "create", "--tenant", "acme", "--pool", ""]);
    assert!(visible.contains(&gke.to_owned()), "acme sees the GKE pool: {visible:?}");
    let mut operator = command(&dev, 80, &[]);
    operator.env("BC_TOKEN", dev["adminToken"].as_str().unwrap());
    let words = ["bcctl", "jointokens", "create", "--pool", ""];
    let every_pool = candidates(&words, &bash_completing(operator, &words).output().unwrap());
    assert!(every_pool.contains(&digitalocean.to_owned()) && every_pool.contains(&gke.to_owned()), "{every_pool:?}");

    // The endpoint on the line wins over the environment's, as it does when the command runs.
    let mut elsewhere = command(&dev, 80, &[]);
    elsewhere.env("BC_ENDPOINT", "http://127.0.0.1:9");
    let words = ["bcctl", "--endpoint", dev["endpoint"].as_str().unwrap(), "clusters", "get", "--tenant", "acme", ""];
    assert!(candidates(&words, &bash_completing(elsewhere, &words).output().unwrap()).contains(&id.to_owned()));

    // Fish shows each id with its resource's name.
    let mut fish = command(&dev, 80, &["--", "bcctl", "clusters", "get", "--tenant", "acme", ""]);
    fish.current_dir(std::env::temp_dir()).env("COMPLETE", "fish");
    let shown = candidates(&["fish"], &fish.output().unwrap());
    assert!(shown.contains(&format!("{id}\tweb")), "{shown:?}");
}

#[test]
fn an_api_out_of_reach_completes_nothing_silently_and_at_once() {
    // One that refuses, and one that accepts the connection and never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let refused = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap()
    };
    for endpoint in [format!("http://{refused}"), format!("http://{}", silent.local_addr().unwrap())] {
        let mut bcctl = Command::new(BC);
        bcctl.env("BC_ENDPOINT", &endpoint).env("BC_TOKEN", "bck_x.y");
        let words = ["bcctl", "clusters", "get", "--tenant", "acme", "kcl_"];
        let started = Instant::now();
        let output = bash_completing(bcctl, &words).output().unwrap();
        let took = started.elapsed();
        assert_eq!(candidates(&words, &output), Vec::<String>::new(), "{endpoint}");
        assert!(took < Duration::from_secs(6), "{endpoint}: completion gave up after {took:?}");
    }
}

#[test]
fn bash_sourcing_the_script_completes_an_id_in_compreply() {
    if Command::new("bash").arg("--version").output().is_err() {
        eprintln!("no bash on this machine: the real-shell test does not run");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let gke = dev["pools"]["gke"].as_str().unwrap();
    let create = ["-o", "json", "clusters", "create", "--tenant", "acme", "--pool", gke, "--name", "shell"];
    let spec = ["--location", "us-central1", "--node-pool", "name=general,machine-type=e2-standard-4,count=1"];
    let args = [&create[..], &spec].concat();
    let cluster: Value = serde_json::from_str(&succeeded(&args, &super::bcctl(&dev, 120, &args))).unwrap();

    // What a user's shell does: source the script, then press Tab after `get --tenant acme `.
    let script = r#"
        source <(bcctl completion bash)
        COMP_WORDS=(bcctl clusters get --tenant acme '')
        COMP_CWORD=5
        COMP_TYPE=9
        _clap_complete_bcctl bcctl '' acme
        printf '%s\n' "${COMPREPLY[@]}"
    "#;
    let bin_dir = std::path::Path::new(BC).parent().unwrap();
    let path = format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default());
    let output = Command::new("bash")
        .args(["-c", script])
        .current_dir(std::env::temp_dir())
        .env("PATH", path)
        .env("BC_ENDPOINT", dev["endpoint"].as_str().unwrap())
        .env("BC_TOKEN", dev["tenants"][0]["token"].as_str().unwrap())
        .env_remove("BC_CONFIG")
        .env_remove("COMPLETE")
        .output()
        .unwrap();
    let reply = candidates(&["bash"], &output);
    assert!(reply.contains(&cluster["id"].as_str().unwrap().to_owned()), "COMPREPLY holds the id: {reply:?}");
}
