//! `bcctl ... | head`: a reader that goes away ends `bcctl` quietly, as it ends every Unix tool.

use std::io::Read;
use std::process::{Command, Stdio};

use better_compute::store::Backend;

use super::{BC, command};
use crate::harness::System;

/// Asserts that `bcctl` ended quietly: exit 0 (or SIGPIPE), nothing on standard error.
fn quiet(what: &str, output: std::process::Output) {
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{what} exits 0 when its reader goes away: {:?}\n{stderr}", output.status);
    assert!(stderr.is_empty(), "{what} says nothing of it: {stderr}");
}

#[test]
fn a_reader_that_goes_away_ends_bcctl_quietly() {
    // `bcctl openapi | head -1`: the document is larger than a pipe holds, so the write that
    // follows the reader's going fails.
    let mut child = Command::new(BC).arg("openapi").stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let mut first = [0u8; 1];
    child.stdout.take().unwrap().read_exact(&mut first).unwrap();
    assert_eq!(&first, b"{");
    quiet("bcctl openapi", child.wait_with_output().unwrap());

    // `bcctl -o json instances list | head -c 300`, and a table: a reader already gone.
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).dev(dir.path());
    for args in
        [&["-o", "json", "instances", "list", "--tenant", "acme"][..], &["clusters", "list", "--tenant", "acme"]]
    {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let output = command(&dev, 80, args).stdout(writer).stderr(Stdio::piped()).output().unwrap();
        quiet(&format!("bcctl {}", args.join(" ")), output);
    }
}
