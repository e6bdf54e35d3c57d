//! `bcctl` as a newcomer meets it, run as its own process against `bcctl dev`: what it prints
//! when its reader goes away, the errors it answers, `--wait`, its tables and help in a terminal
//! of a given width, and the ids its shell completion offers.

mod completion;
mod locations;
mod machine_types;
mod names;
mod pipes;
mod usage;
mod waits;
mod widths;

use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub const BC: &str = env!("CARGO_BIN_EXE_bcctl");

/// `bcctl` as acme's admin against `bcctl dev`, in a terminal `columns` wide.
pub fn command(dev: &Value, columns: usize, args: &[&str]) -> Command {
    let mut command = Command::new(BC);
    command
        .env("BC_ENDPOINT", dev["endpoint"].as_str().unwrap())
        .env("BC_TOKEN", dev["tenants"][0]["token"].as_str().unwrap())
        .env("COLUMNS", columns.to_string())
        .env_remove("BC_OUTPUT")
        .stdin(Stdio::null())
        .args(args);
    command
}

/// Runs `bcctl` (see [`command`]), successful or not.
pub fn bcctl(dev: &Value, columns: usize, args: &[&str]) -> Output {
    command(dev, columns, args).output().unwrap()
}

/// Its standard output; panics unless it succeeded.
pub fn succeeded(args: &[&str], output: &Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    assert!(output.status.success(), "bcctl {args:?} failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    stdout
}

/// Its standard error; panics unless it failed (without a panic).
pub fn failed(args: &[&str], output: &Output) -> String {
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert_eq!(output.status.code(), Some(1), "bcctl {args:?} fails with 1:\n{stderr}");
    stderr
}

/// The widest line of `text`, in characters.
pub fn widest(text: &str) -> usize {
    text.lines().map(|line| line.chars().count()).max().unwrap_or_default()
}
