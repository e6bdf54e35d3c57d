//! The shell a document's commands run in, one after another, and the ids their output
//! printed, which fill the placeholders (`<kcl_...>`) of the commands after them.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use regex::Regex;

use super::blocks::{refusal, steps};
use crate::harness::{bcd_binary, repo_root};

/// How long one command may take (a `--wait` on the fake cloud takes seconds).
const COMMAND_LIMIT: Duration = Duration::from_secs(180);

/// Runs every block of the document at `relative` in one shell in `dir`.
pub fn run_steps(relative: &str, dir: &Path) {
    let markdown = std::fs::read_to_string(repo_root().join(relative)).unwrap();
    let steps = steps(&markdown);
    assert!(!steps.is_empty(), "{relative} has no block to run");
    let mut shell = Shell::start(dir);
    let mut ids = Ids::new();
    for step in steps {
        let text = ids.fill(&step.text).unwrap_or_else(|why| panic!("{relative}:{}: {why}\n{}", step.line, step.text));
        let place = format!("{relative}:{}", step.line);
        // A quote left open across lines would have the shell wait for the rest until the limit.
        let parsed = Command::new("bash").args(["-n", "-c", &text]).output().unwrap();
        let why = String::from_utf8_lossy(&parsed.stderr);
        assert!(
            parsed.status.success(),
            "{place}: not a whole command (a line inside quotes must end with `\\`):\n{text}{why}"
        );
        let (status, output) = shell.run(&text);
        println!("$ {text}{output}(exit {status})\n");
        match refusal(&step.text) {
            Some(word) => {
                assert_ne!(status, 0, "{place}: this command is to be refused, and it succeeded:\n{text}{output}");
                assert!(output.contains(&word), "{place}: the refusal does not say {word:?}:\n{text}{output}");
            }
            None => assert_eq!(status, 0, "{place}: this command failed:\n{text}{output}"),
        }
        ids.record(&output);
    }
}

/// The shell the steps run in, one process group killed when the test ends.
struct Shell {
    child: Child,
    stdin: ChildStdin,
    lines: Receiver<String>,
    dir: PathBuf,
    /// Steps run so far (each step's output goes to a file of its own).
    count: usize,
}

impl Drop for Shell {
    fn drop(&mut self) {
        let _ = Command::new("kill").args(["-KILL", "--", &format!("-{}", self.child.id())]).status();
        let _ = self.child.wait();
    }
}

impl Shell {
    fn start(dir: &Path) -> Shell {
        let bcctl = PathBuf::from(env!("CARGO_BIN_EXE_bcctl"));
        let path = std::env::join_paths(
            [bcctl.parent().unwrap().to_owned(), bcd_binary().parent().unwrap().to_owned()]
                .into_iter()
                .chain(std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())),
        )
        .unwrap();
        let mut command = Command::new("bash");
        command.args(["--noprofile", "--norc"]).current_dir(dir).env("PATH", path).env("REPO", repo_root());
        // The reader's shell has none of the suite's settings: the documents set what they need.
        for (variable, _) in std::env::vars().filter(|(name, _)| name.starts_with("BC_") || name.starts_with("BCD_")) {
            command.env_remove(variable);
        }
        let mut child = command
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (send, lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                if send.send(line).is_err() {
                    break;
                }
            }
        });
        let mut shell = Shell { child, stdin, lines, dir: dir.to_owned(), count: 0 };
        shell.stdin.write_all(b"set -o pipefail\n").unwrap();
        shell
    }

    /// Runs `text` in the shell: its exit status and what it printed (both streams).
    fn run(&mut self, text: &str) -> (i32, String) {
        self.count += 1;
        let out = self.dir.join(format!(".docs-step-{}.out", self.count));
        let script = format!("{{\n{text}}} >{out} 2>&1 </dev/null; echo \"__docs_rc $?\"\n", out = out.display());
        self.stdin.write_all(script.as_bytes()).unwrap();
        let status = loop {
            match self.lines.recv_timeout(COMMAND_LIMIT) {
                Ok(line) => {
                    if let Some(code) = line.strip_prefix("__docs_rc ") {
                        break code.trim().parse().unwrap();
                    }
                }
                Err(_) => {
                    let so_far = std::fs::read_to_string(&out).unwrap_or_default();
                    panic!("no end within {COMMAND_LIMIT:?}:\n{text}{so_far}");
                }
            }
        };
        (status, std::fs::read_to_string(&out).unwrap_or_default())
    }
}

/// The ids each prefix had in the latest output that printed one.
struct Ids {
    pattern: Regex,
    latest: HashMap<String, Vec<String>>,
}

impl Ids {
    fn new() -> Ids {
        Ids { pattern: Regex::new(r"\b([a-z]+)_[0-9a-z]{26}(\.[0-9a-f]{64})?\b").unwrap(), latest: HashMap::new() }
    }

    fn record(&mut self, output: &str) {
        let mut seen: HashMap<String, Vec<String>> = HashMap::new();
        for found in self.pattern.captures_iter(output) {
            let ids = seen.entry(found[1].to_owned()).or_default();
            if !ids.iter().any(|id| id == &found[0]) {
                ids.push(found[0].to_owned());
            }
        }
        self.latest.extend(seen);
    }

    /// `text` with each `<prefix_...>` replaced by the id it stands for.
    fn fill(&self, text: &str) -> Result<String, String> {
        let placeholder = Regex::new(r"<([a-z]+)_\.\.\.>").unwrap();
        let mut missing = None;
        let filled = placeholder.replace_all(text, |found: &regex::Captures| {
            match self.latest.get(&found[1]).and_then(|ids| ids.first()) {
                Some(id) => id.clone(),
                None => {
                    missing = Some(found[0].to_owned());
                    String::new()
                }
            }
        });
        match missing {
            Some(placeholder) => Err(format!("no command before printed an id for {placeholder}")),
            None => Ok(filled.into_owned()),
        }
    }
}

#[test]
fn placeholders_are_the_first_id_of_the_latest_output_that_printed_one() {
    let mut ids = Ids::new();
    let a = format!("kcl_{}", "a".repeat(26));
    let b = format!("kcl_{}", "b".repeat(26));
    let c = format!("kcl_{}", "c".repeat(26));
    ids.record(&format!("{a}\n"));
    ids.record(&format!("{b} then {c}, and again {b}\n"));
    ids.record("nothing here\n");
    assert_eq!(ids.fill("get <kcl_...> x").unwrap(), format!("get {b} x"));
    assert!(ids.fill("get <knp_...>").is_err());
}
