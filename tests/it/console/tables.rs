//! `bcctl`'s tables as kubectl's read: a few columns that fit a 120-column terminal by default,
//! every field with `-o wide`, the same resource as YAML with `-o yaml`, times as RFC 3339 or
//! ages and never unix numbers; and `bcctl completion` for the shells.

use std::process::{Command, Output};

use serde_json::Value;

use crate::harness::{System, run_ok};
use better_compute::store::Backend;

const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// Runs `bcctl` as acme's admin against `bcctl dev`, in a terminal `columns` wide.
fn bcctl(dev: &Value, columns: &str, args: &[&str]) -> Output {
    run_ok(
        Command::new(BC)
            .env("BC_ENDPOINT", dev["endpoint"].as_str().unwrap())
            .env("BC_TOKEN", dev["tenants"][0]["token"].as_str().unwrap())
            .env("COLUMNS", columns)
            .args(args),
    )
}

fn text(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).unwrap()
}

/// `displayName` as a wide table's header names it: `DISPLAY_NAME`.
fn header_of(key: &str) -> String {
    key.chars().flat_map(|c| if c.is_uppercase() { vec!['_', c] } else { vec![c.to_ascii_uppercase()] }).collect()
}

#[test]
fn cluster_tables_fit_the_terminal_and_wide_shows_every_field() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let pool = dev["pools"]["gke"].as_str().unwrap();
    for (name, location) in [("web", "us-central1"), ("analytics-production", "us-central1-a")] {
        let pools = ["--node-pool", "name=general,machine-type=e2-standard-4,count=2"];
        let create = ["clusters", "create", "--tenant", "acme", "--pool", pool, "--name", name, "--location", location];
        bcctl(&dev, "120", &[&create[..], &pools, &["--wait"]].concat());
    }

    let unix_time = regex::Regex::new(r"\b1[0-9]{9}\b").unwrap();
    for columns in ["80", "120"] {
        let table = text(&bcctl(&dev, columns, &["clusters", "list", "--tenant", "acme"]));
        print!("bcctl clusters list in a {columns}-column terminal:\n{table}");
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "a header and two clusters: {table}");
        let headers: Vec<&str> = lines[0].split_whitespace().collect();
        let expected: &[&str] = if columns == "80" {
            // VERSION is the least needed column: it goes first when the terminal is narrow.
            &["ID", "NAME", "STATE", "LOCATION", "NODES", "AGE"]
        } else {
            &["ID", "NAME", "STATE", "LOCATION", "VERSION", "NODES", "AGE"]
        };
        assert_eq!(headers, expected, "{table}");
        let width: usize = columns.parse().unwrap();
        assert!(lines.iter().all(|l| l.chars().count() <= width), "every line fits {columns} columns:\n{table}");
        assert!(lines[1..].iter().all(|l| l.contains(" ready ") && l.starts_with("kcl_")), "{table}");
        assert!(!unix_time.is_match(&table), "no unix time: {table}");
    }

    let json: Value =
        serde_json::from_slice(&bcctl(&dev, "120", &["-o", "json", "clusters", "list", "--tenant", "acme"]).stdout)
            .unwrap();
    let cluster = &json["clusters"][0];
    let wide = text(&bcctl(&dev, "120", &["-o", "wide", "clusters", "list", "--tenant", "acme"]));
    let wide_headers: Vec<&str> = wide.lines().next().unwrap().split_whitespace().collect();
    let fields: Vec<String> = cluster.as_object().unwrap().keys().map(|k| header_of(k)).collect();
    assert_eq!(wide_headers, fields, "-o wide shows every field of -o json, in its order");
    assert!(wide.contains("general") && wide.contains(cluster["createdAt"].as_str().unwrap()), "{wide}");

    let id = cluster["id"].as_str().unwrap();
    let yaml = text(&bcctl(&dev, "120", &["-o", "yaml", "clusters", "get", "--tenant", "acme", id]));
    assert_eq!(&serde_yaml::from_str::<Value>(&yaml).unwrap(), cluster, "-o yaml is -o json's resource");

    let kubeconfig = dir.path().join("web.kubeconfig");
    let args = ["clusters", "credentials", "--tenant", "acme", id, "--kubeconfig-file", kubeconfig.to_str().unwrap()];
    let said = String::from_utf8(bcctl(&dev, "120", &args).stderr).unwrap();
    let expiry = regex::Regex::new(r"expires at \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ \(in 1h\)").unwrap();
    assert!(expiry.is_match(&said), "{said}");
}

#[test]
fn bc_completion_prints_a_script_for_each_shell() {
    let registrations = [
        ("bash", "-F _clap_complete_bcctl bcctl"),
        ("zsh", "#compdef bcctl"),
        ("fish", "complete --keep-order --exclusive --command bcctl"),
    ];
    for (shell, registers) in registrations {
        let script = String::from_utf8(run_ok(Command::new(BC).args(["completion", shell])).stdout).unwrap();
        assert!(script.contains(registers), "{shell} registers the completer: {script}");
        let calls_back = script.contains("COMPLETE=") && script.contains(BC);
        assert!(calls_back, "{shell} calls back into this bcctl: {script}");

        // What the shell is offered for `bcctl <Tab>`, through the script's call: every command.
        let offered = run_ok(
            Command::new(BC)
                .env("COMPLETE", shell)
                .env("_CLAP_COMPLETE_INDEX", "1")
                .env("_CLAP_IFS", "\n")
                .args(["--", "bcctl", ""]),
        );
        let offered = text(&offered);
        let commands: Vec<&str> = offered.lines().map(|line| line.split([':', '\t']).next().unwrap()).collect();
        assert!(commands.contains(&"clusters") && commands.contains(&"loadbalancers"), "{shell}: {offered}");
    }
}
