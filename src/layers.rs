//! The layering of the crate's modules, checked: each module names its rank, and a module may
//! use only modules of a lower rank (or its own, where the table allows siblings). A `use` or
//! path that runs upward fails this test, with the line that does it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and its rank, lowest first; `true` where modules of that
/// rank may use one another.
const LAYERS: &[(&[&str], bool)] = &[
    // Plumbing and rules with no I/O: the generated code, ids, errors, sealing, TLS, timing,
    // and `domain` (state tables, policies, networks). `shutdown`, `tls`, `channel` and
    // `boot_config` are bcd's, named as the crate's own (bcd depends on nothing of this crate).
    (
        &[
            "proto",
            "ids",
            "error",
            "secrets",
            "shutdown",
            "measured",
            "bearer",
            "tls",
            "channel",
            "boot_config",
            "domain",
        ],
        true,
    ),
    // All SQL.
    (&["store"], false),
    // What reads the store without deciding anything of a tenant's: Cedar, the method table,
    // the provider adapters, the metrics registry, and what a change of a row asks of its
    // provider (`changes`, which both the plans and the reconcilers read).
    (&["authz", "methods", "provider", "telemetry", "changes"], false),
    // The rules of requests, and the worker's reconcilers: neither calls the other.
    (&["service", "reconcile"], false),
    // gRPC, the gateway, validation.
    (&["api"], false),
    // The listener.
    (&["server"], false),
    // What the binaries run: their options, `bcctl dev` and its seed, the CLI. (The node daemon and
    // the fake cloud are crates of their own, which cannot name this one.)
    (&["config", "process", "dev", "dev_catalog", "dev_seed", "cli"], true),
];

/// Pairs of the same rank that may use one another although their rank does not allow it.
const SIBLINGS: &[(&str, &str)] = &[("authz", "methods"), ("methods", "authz"), ("changes", "provider")];

/// The rank of module `name` and whether its rank allows siblings.
fn rank(name: &str) -> Option<(usize, bool)> {
    LAYERS
        .iter()
        .enumerate()
        .find(|(_, (names, _))| names.contains(&name))
        .map(|(rank, (_, siblings))| (rank, *siblings))
}

/// The `.rs` files below `path` (or `path` itself).
fn sources(path: &Path) -> Vec<PathBuf> {
    if path.is_file() {
        return vec![path.to_owned()];
    }
    let mut files = Vec::new();
    for entry in std::fs::read_dir(path).unwrap() {
        let entry = entry.unwrap().path();
        if entry.is_dir() {
            files.extend(sources(&entry));
        } else if entry.extension().is_some_and(|ext| ext == "rs") {
            files.push(entry);
        }
    }
    files
}

/// The top-level modules each line of `text` uses (`crate::x`), with the line, comments
/// passed over.
fn uses(text: &str) -> Vec<(String, usize, String)> {
    let mut found = Vec::new();
    for (number, line) in text.lines().enumerate() {
        let code = line.split("//").next().unwrap_or_default();
        for (at, _) in code.match_indices("crate::") {
            let rest = &code[at + "crate::".len()..];
            let name: String = rest.chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
            // `better_crate::` and the like are not this crate.
            let before = code[..at].chars().last();
            if !name.is_empty() && !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                found.push((name, number + 1, line.trim().to_owned()));
            }
        }
    }
    found
}

/// The top-level modules of `src/` (files and folders, `lib.rs` and `bin/` aside).
fn modules(src: &Path) -> BTreeMap<String, PathBuf> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|entry| entry.unwrap().path())
        .filter_map(|path| {
            let name = path.file_stem()?.to_str()?.to_owned();
            let keep = path.is_dir() || path.extension().is_some_and(|ext| ext == "rs");
            (keep && name != "lib" && name != "bin").then_some((name, path))
        })
        .collect()
}

#[test]
fn no_module_uses_a_module_above_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut faults = Vec::new();
    for (module, path) in modules(&src) {
        if module == "layers" {
            continue;
        }
        let Some((own, siblings)) = rank(&module) else {
            faults.push(format!("src/{module}: not in the table of layers (src/layers.rs); give it its rank"));
            continue;
        };
        for file in sources(&path) {
            let text = std::fs::read_to_string(&file).unwrap();
            for (used, line, code) in uses(&text) {
                if used == module || used == "self" || used == "super" {
                    continue;
                }
                let shown = file.strip_prefix(&src).unwrap().display();
                let Some((theirs, _)) = rank(&used) else {
                    faults.push(format!("src/{shown}:{line}: uses `{used}`, which the table of layers lacks"));
                    continue;
                };
                let allowed = theirs < own
                    || (theirs == own && (siblings || SIBLINGS.contains(&(module.as_str(), used.as_str()))));
                if !allowed {
                    faults.push(format!("src/{shown}:{line}: `{module}` uses `{used}`, which is not below it: {code}"));
                }
            }
        }
    }
    assert!(faults.is_empty(), "calls that run upward:\n{}", faults.join("\n"));
}

#[test]
fn the_check_sees_a_path_that_runs_upward() {
    let text = "use crate::service::Thing; // crate::api in a comment\nlet x = better_crate::y;";
    let seen: Vec<String> = uses(text).into_iter().map(|(name, _, _)| name).collect();
    assert_eq!(seen, ["service"]);
    assert!(rank("store").unwrap().0 < rank("service").unwrap().0);
}
