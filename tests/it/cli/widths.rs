//! Tables and help that fit the terminal: every default list in 80 and 120 columns, its key
//! columns kept (AGE among them), and `--help` wrapped at the terminal's width.

use better_compute::store::Backend;
use serde_json::Value;

use super::{BC, succeeded, widest};
use crate::harness::System;

/// `bcctl` as the operator in a terminal `columns` wide.
fn operator(dev: &Value, columns: usize, args: &[&str]) -> std::process::Output {
    std::process::Command::new(BC)
        .env("BC_ENDPOINT", dev["endpoint"].as_str().unwrap())
        .env("BC_TOKEN", dev["adminToken"].as_str().unwrap())
        .env("COLUMNS", columns.to_string())
        .env_remove("BC_OUTPUT")
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn every_list_fits_the_terminal_and_keeps_its_key_columns() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let (gke, digitalocean) = (dev["pools"]["gke"].as_str().unwrap(), dev["pools"]["digitalocean"].as_str().unwrap());
    let metal = dev["pools"]["metal"].as_str().unwrap();
    for name in ["web", "analytics-production"] {
        let args =
            ["clusters", "create", "--tenant", "acme", "--pool", gke, "--name", name, "--location", "us-central1-a"];
        let pools = ["--node-pool", "name=general,machine-type=e2-standard-4,count=2"];
        succeeded(&args, &super::bcctl(&dev, 120, &[&args[..], &pools].concat()));
        let args = ["instances", "create", "--tenant", "acme", "--pool", digitalocean, "--name", name];
        let spec = ["--region", "nyc3", "--size", "s-2vcpu-4gb", "--image", "ubuntu-24-04-x64"];
        succeeded(&args, &super::bcctl(&dev, 120, &[&args[..], &spec].concat()));
    }
    let issue = ["jointokens", "create", "--pool", metal, "--max-uses", "3"];
    succeeded(&issue, &operator(&dev, 120, &issue));

    let lists: &[(&[&str], &[&str])] = &[
        (&["clusters", "list", "--tenant", "acme"], &["ID", "NAME", "STATE", "NODES", "AGE"]),
        (&["instances", "list", "--tenant", "acme"], &["ID", "NAME", "STATE", "AGE"]),
        (&["audit", "list"], &["ID", "METHOD", "DECISION", "AGE"]),
        (&["jointokens", "list", "--pool", metal], &["ID", "USES"]),
        (&["quotas", "list"], &["KIND", "LIMIT", "USED", "AGE"]),
        (&["pools", "list"], &["ID", "NAME", "STATE"]),
        (&["accounts", "list"], &["ID", "NAME", "STATE", "AGE"]),
        (&["tenants", "list"], &["ID"]),
    ];
    for (args, kept) in lists {
        for columns in [80, 120] {
            let table = succeeded(args, &operator(&dev, columns, args));
            print!("bcctl {} in {columns} columns:\n{table}", args.join(" "));
            assert!(widest(&table) <= columns, "{} columns wide:\n{table}", widest(&table));
            let headers: Vec<&str> = table.lines().next().unwrap().split_whitespace().collect();
            assert!(kept.iter().all(|h| headers.contains(h)), "{kept:?} kept:\n{table}");
            assert!(table.lines().count() > 1, "{table}");
        }
    }
    // The scope asked for tells no row apart: no POOL column for one pool's tokens.
    let tokens = succeeded(&[], &operator(&dev, 120, &["jointokens", "list", "--pool", metal]));
    assert!(!tokens.lines().next().unwrap().contains("POOL"), "{tokens}");
    // The audit names a method without its package.
    let audit = succeeded(&[], &operator(&dev, 120, &["audit", "list"]));
    assert!(audit.contains("KubernetesClusters/Create") && !audit.contains("bettercompute."), "{audit}");

    // `-o wide` on a terminal cuts long cells; to a program (no terminal) it is whole.
    let wide = ["-o", "wide", "clusters", "list", "--tenant", "acme"];
    let on_terminal = succeeded(&wide, &operator(&dev, 120, &wide));
    let longest = on_terminal.split_whitespace().map(|cell| cell.chars().count()).max().unwrap();
    assert!(
        longest <= 40,
        "no cell over 40 characters:
{on_terminal}"
    );
}

#[test]
fn help_wraps_at_the_terminals_width() {
    for columns in [80, 120] {
        for args in [&["--help"][..], &["clusters", "create", "--help"], &["nodepools", "update", "--help"]] {
            let output =
                std::process::Command::new(BC).env("COLUMNS", columns.to_string()).args(args).output().unwrap();
            let help = succeeded(args, &output);
            // clap writes the usage line whole.
            let text: String = help.lines().filter(|l| !l.starts_with("Usage:")).map(|l| format!("{l}\n")).collect();
            assert!(widest(&text) <= columns.min(100), "bcctl {args:?} in {columns}: {} wide\n{help}", widest(&text));
        }
    }
}
