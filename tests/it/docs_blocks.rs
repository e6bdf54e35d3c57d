//! The README and the walkthroughs in `docs/` run as written: every ```` ```sh ```` block, in order,
//! in one shell, against a fresh `bcctl dev` in a directory of its own, with `bcctl` and `bcd` on
//! `PATH`. A placeholder such as `<kcl_...>` is the first id with that prefix in the output of the
//! latest command that printed one. A command whose comment starts `# refused` must fail, and the
//! word in the comment's first parentheses (`# refused (inUse) while ...`) must be in its output;
//! every other command must succeed. A block that is not meant to run here (a build, a real
//! Postgres) says so on the line before it: `<!-- not run: why -->`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use regex::Regex;

use better_compute::store::Backend;

use crate::harness::{System, bcd_binary, postgres_admin_url, repo_root};

/// How long one command may take (a `--wait` on the fake cloud takes seconds).
const COMMAND_LIMIT: Duration = Duration::from_secs(180);

#[test]
fn the_readme_runs_as_written() {
    run_document("README.md");
}

#[test]
fn the_kubernetes_walkthrough_runs_as_written() {
    run_document("docs/walkthrough-kubernetes.md");
}

#[test]
fn the_vps_walkthrough_runs_as_written() {
    run_document("docs/walkthrough-vps.md");
}

#[test]
fn the_nodes_walkthrough_runs_as_written() {
    run_document("docs/walkthrough-nodes.md");
}

#[test]
fn the_metal_walkthrough_runs_as_written() {
    run_document("docs/walkthrough-metal.md");
}

#[test]
fn the_api_guide_runs_as_written() {
    run_document("docs/api.md");
}

/// The documents the tests above run against `bcctl dev`.
const RUN_AGAINST_DEV: [&str; 6] = [
    "README.md",
    "docs/walkthrough-kubernetes.md",
    "docs/walkthrough-vps.md",
    "docs/walkthrough-nodes.md",
    "docs/walkthrough-metal.md",
    "docs/api.md",
];

/// A walkthrough added to docs/ without a test of its own here fails.
#[test]
fn every_walkthrough_is_run() {
    for entry in std::fs::read_dir(repo_root().join("docs")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("walkthrough-") {
            let path = format!("docs/{name}");
            assert!(RUN_AGAINST_DEV.contains(&path.as_str()), "{path} has no test in tests/it/docs_blocks.rs");
        }
    }
}

/// One command of a block: its text (continued lines and here-documents joined) and the line
/// of the document it starts on.
#[derive(Debug, PartialEq)]
struct Step {
    line: usize,
    text: String,
}

/// The commands of every block of `markdown` that is run, in order.
fn steps(markdown: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut lines = markdown.lines().enumerate();
    let mut previous = "";
    while let Some((_, line)) = lines.next() {
        if line.trim_end() != "```sh" {
            if !line.trim().is_empty() {
                previous = line;
            }
            continue;
        }
        let run = !previous.trim_start().starts_with("<!-- not run:");
        let mut current: Option<Step> = None;
        let mut heredoc: Option<String> = None;
        for (number, line) in lines.by_ref() {
            if line.trim_end() == "```" {
                break;
            }
            let step = current.get_or_insert_with(|| Step { line: number + 1, text: String::new() });
            if step.text.is_empty()
                && heredoc.is_none()
                && (line.trim().is_empty() || line.trim_start().starts_with('#'))
            {
                current = None;
                continue;
            }
            step.text.push_str(line);
            step.text.push('\n');
            if let Some(end) = &heredoc {
                if line.trim() == end {
                    heredoc = None;
                }
            } else if let Some(end) = heredoc_end(line) {
                heredoc = Some(end);
            }
            if heredoc.is_none() && !line.trim_end().ends_with('\\') {
                steps.extend(current.take().filter(|_| run));
            }
        }
        previous = "";
    }
    steps
}

/// The word that ends a here-document `line` starts (`<<'YAML'`, `<<EOF`).
fn heredoc_end(line: &str) -> Option<String> {
    let at = line.find("<<")?;
    let word: String = line[at + 2..]
        .trim_start_matches('-')
        .trim_start()
        .chars()
        .filter(|c| *c != '\'' && *c != '"')
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    (!word.is_empty()).then_some(word)
}

/// What a step's comment says of it: `Some(word)` when it must fail (the word, possibly empty,
/// to find in its output), `None` when it must succeed.
fn refusal(text: &str) -> Option<String> {
    let rest = text.lines().find_map(|line| line.split_once(" # refused").map(|(_, rest)| rest))?;
    let word = rest.trim_start().strip_prefix('(').and_then(|r| r.split_once(')')).map(|(w, _)| w.to_owned());
    Some(word.unwrap_or_default())
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

/// The databases docs/first-hour.md makes, dropped before and after it runs.
const FIRST_HOUR_DATABASES: [&str; 2] = ["bc_first_hour", "bc_first_hour_restored"];

/// The operator's first hour starts from nothing: no `bcctl dev`, Postgres with no database.
#[test]
fn the_first_hour_runs_as_written() {
    // The document names its ports, as an operator's would; a server already on one of them
    // would answer in its place.
    for port in [8080, 8081, 8090] {
        let free = std::net::TcpListener::bind(("127.0.0.1", port)).is_ok();
        assert!(free, "docs/first-hour.md serves on 127.0.0.1:{port}, which is taken (a `bcctl dev` running?)");
    }
    FIRST_HOUR_DATABASES.into_iter().for_each(drop_database);
    let dir = tempfile::tempdir().unwrap();
    run_steps("docs/first-hour.md", dir.path());
    FIRST_HOUR_DATABASES.into_iter().for_each(drop_database);
}

/// Drops `name` on the suite's Postgres server, closing its connections.
fn drop_database(name: &str) {
    use sqlx::Connection;
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    runtime.block_on(async {
        let mut admin = sqlx::PgConnection::connect(&postgres_admin_url()).await.unwrap();
        let drop = format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)");
        sqlx::query(sqlx::AssertSqlSafe(drop)).execute(&mut admin).await.unwrap();
    });
}

/// Runs every block of the document at `relative` (from the repository's root) against a fresh
/// `bcctl dev`.
fn run_document(relative: &str) {
    let dir = tempfile::tempdir().unwrap();
    let (_dev, _) = System::on(Backend::Sqlite).dev(&dir.path().join(".bc-dev"));
    run_steps(relative, dir.path());
}

/// Runs every block of the document at `relative` in one shell in `dir`.
fn run_steps(relative: &str, dir: &Path) {
    let markdown = std::fs::read_to_string(repo_root().join(relative)).unwrap();
    let steps = steps(&markdown);
    assert!(!steps.is_empty(), "{relative} has no block to run");
    let mut shell = Shell::start(dir);
    let mut ids = Ids::new();
    for step in steps {
        let text = ids.fill(&step.text).unwrap_or_else(|why| panic!("{relative}:{}: {why}\n{}", step.line, step.text));
        let (status, output) = shell.run(&text);
        println!("$ {text}{output}(exit {status})\n");
        let place = format!("{relative}:{}", step.line);
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

#[test]
fn blocks_split_into_commands_and_say_which_must_fail() {
    let markdown = "text\n\n```sh\n# a comment\nA=1\nbcctl a \\\n  --b   # refused (inUse) while x\n\ncat > f <<'YAML'\nk: v\n# kept\nYAML\n```\n\n<!-- not run: needs a real database -->\n```sh\nbc-server migrate\n```\n";
    let found = steps(markdown);
    let texts: Vec<&str> = found.iter().map(|s| s.text.as_str()).collect();
    assert_eq!(
        texts,
        ["A=1\n", "bcctl a \\\n  --b   # refused (inUse) while x\n", "cat > f <<'YAML'\nk: v\n# kept\nYAML\n"]
    );
    assert_eq!(found[1].line, 6);
    assert_eq!(refusal(texts[1]).as_deref(), Some("inUse"));
    assert_eq!(refusal(texts[0]), None);
    assert_eq!(refusal("bcctl x   # refused: only operators\n").as_deref(), Some(""));
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
