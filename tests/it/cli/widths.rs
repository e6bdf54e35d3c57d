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

#[test]
fn the_join_command_fits_80_columns_and_pastes_back_into_one_command() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    let platform_pool = dev["pools"]["digitalocean"].as_str().unwrap();
    let create = ["jointokens", "create", "--pool", platform_pool, "--description", "rack 4"];
    let printed = succeeded(&create, &operator(&dev, 80, &create));
    print!("bcctl jointokens create in 80 columns:\n{printed}");
    assert!(widest(&printed) <= 80, "{} columns wide:\n{printed}", widest(&printed));

    let id = printed.split_whitespace().find(|word| word.starts_with("jt_")).expect(&printed);
    let command = printed.split_once("run:\n").expect(&printed).1;
    assert!(command.lines().count() > 1, "the command is broken into lines:\n{command}");
    // What a shell reads: each backslash-newline removed, whether between words or inside one.
    let pasted = command.replace("\\\n", "");
    let words: Vec<&str> = pasted.split_whitespace().collect();
    let endpoint = dev["endpoint"].as_str().unwrap();
    assert_eq!(words[..4], ["bcd", "join", "--endpoint", endpoint], "{pasted}");
    let token = words.iter().skip_while(|word| **word != "--token").nth(1).expect(&pasted);
    let bearer = regex::Regex::new(&format!(r"^bc{id}\.[0-9a-f]{{64}}$")).unwrap();
    assert!(bearer.is_match(token), "the token is whole, the bearer form of {id}: {token}");

    // Pasted into bash, as it is printed, it is that one command.
    let script = format!("bcd() {{ printf '%s\\n' \"$@\"; }}\n{command}");
    let run = std::process::Command::new("bash").args(["-c", &script]).output().unwrap();
    let arguments = succeeded(&["bash"], &run);
    assert_eq!(arguments.lines().collect::<Vec<_>>(), words[1..], "{command}");
}
