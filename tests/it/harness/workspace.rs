//! The workspace's other packages as the suites see them. `bcd` is a binary of another package,
//! and cargo gives a test the path of its own package's binaries only (`CARGO_BIN_EXE_*`), so
//! the harness builds it with cargo, once per test run, into this test binary's target
//! directory and profile: when it is up to date that is a check of a second or less, and a
//! test never runs a daemon older than its sources.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use super::repo_root;

/// `cargo` (the one running the tests, when there is one) in the workspace's root.
pub fn cargo() -> Command {
    let mut command = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    command.current_dir(repo_root());
    command
}

/// The directory of this test binary's profile: `target/<profile>` (the binary is in its `deps`).
fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("the test binary knows its path");
    exe.parent().and_then(Path::parent).expect("the test binary is in target/<profile>/deps").to_owned()
}

/// The `bcd` binary, built by `cargo build -p bcd` for this test binary's profile.
pub fn bcd_binary() -> &'static Path {
    static BCD: OnceLock<PathBuf> = OnceLock::new();
    BCD.get_or_init(|| {
        let profile_dir = profile_dir();
        let mut build = cargo();
        build.args(["build", "--quiet", "-p", "bcd", "--bin", "bcd"]);
        build.arg("--target-dir").arg(profile_dir.parent().expect("target/<profile> has a parent"));
        match profile_dir.file_name().and_then(|name| name.to_str()) {
            Some("debug") => {}
            Some("release") => {
                build.arg("--release");
            }
            Some(profile) => {
                build.args(["--profile", profile]);
            }
            None => panic!("{} names no profile", profile_dir.display()),
        }
        let status = build.status().expect("cargo runs");
        assert!(status.success(), "{build:?} failed");
        let bcd = profile_dir.join("bcd");
        assert!(bcd.is_file(), "{build:?} made no {}", bcd.display());
        bcd
    })
}
