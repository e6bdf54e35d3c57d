//! Shell completion of ids from the API: the value completers `bcctl`'s id arguments carry, which
//! clap_complete's dynamic engine calls while a shell completes, and the registration script
//! `bcctl completion <shell>` prints, which has the shell call back into `bcctl` for each word.
//!
//! A completer is given only the word being completed. What scopes the ids (`--tenant`,
//! `--cluster`, `--pool`) and where the API is (`--endpoint`, `--token`, `--ca-sha256`) it reads
//! from the rest of the command line, which the script passes after a `--`, and resolves as the
//! finished command would (then `BC_*` variables, then `./.bc-dev/dev.json`). Whatever fails, an
//! API out of reach included, completes nothing: a shell shows what a completer prints mid-line,
//! and waits on it before showing anything.

use std::ffi::OsStr;
use std::time::Duration;

use clap_complete::engine::{ArgValueCompleter, CompletionCandidate};
use prost::Message;
use serde_json::Value;

use super::follow::answer;
use super::tracked::Tracked;
use super::{AuthedChannel, Cli, Command, OutputFormat, connect, output};
use crate::proto::compute::kubernetes_node_pools_client::KubernetesNodePoolsClient;
use crate::proto::compute::nodes_client::NodesClient;
use crate::proto::compute::{KubernetesCluster, ListKubernetesNodePoolsRequest, ListNodesRequest};
use crate::proto::{compute, platform};

/// How long a completion waits for the API: past it the shell seems to hang.
const PATIENCE: Duration = Duration::from_secs(2);

/// The ids of a tracked kind (`K`) of the line's `--tenant`.
pub fn ids<K: Tracked>() -> ArgValueCompleter {
    ArgValueCompleter::new(|current: &OsStr| {
        complete(current, async |channel, line| {
            let mut client = K::client(channel);
            let list = K::list(&mut client, line.required("--tenant")?, String::new(), false).await?;
            Ok(rows(&list, K::LIST))
        })
    })
}

/// The cluster ids of the line's `--tenant`.
pub fn clusters() -> ArgValueCompleter {
    ids::<KubernetesCluster>()
}

/// The node pool ids of the line's `--tenant` and `--cluster`.
pub fn node_pools() -> ArgValueCompleter {
    ArgValueCompleter::new(|current: &OsStr| {
        complete(current, async |channel, line| {
            let request = ListKubernetesNodePoolsRequest {
                tenant_id: line.required("--tenant")?,
                cluster_id: line.required("--cluster")?,
                include_deleted: false,
            };
            let list = answer(KubernetesNodePoolsClient::new(channel).list(request).await)?;
            Ok(rows(&list, ("bettercompute.compute.v1.ListKubernetesNodePoolsResponse", "nodePools")))
        })
    })
}

/// Pool ids: those the line's `--tenant` can see (`bcctl pools visible`), else every pool, as an
/// operator lists them (`bcctl pools list`).
pub fn pools() -> ArgValueCompleter {
    ArgValueCompleter::new(|current: &OsStr| {
        complete(current, async |channel, line| match line.flag("--tenant") {
            Some(tenant_id) => {
                let request = compute::ListPoolsRequest { tenant_id };
                let list = answer(compute::pools_client::PoolsClient::new(channel).list(request).await)?;
                Ok(rows(&list, ("bettercompute.compute.v1.ListPoolsResponse", "pools")))
            }
            None => {
                let request = platform::ListPoolsRequest::default();
                let list = answer(platform::pools_client::PoolsClient::new(channel).list(request).await)?;
                Ok(rows(&list, ("bettercompute.platform.v1.ListPoolsResponse", "pools")))
            }
        })
    })
}

/// The node ids of the line's `--pool`.
pub fn nodes() -> ArgValueCompleter {
    ArgValueCompleter::new(|current: &OsStr| {
        complete(current, async |channel, line| {
            let request = ListNodesRequest { pool_id: line.required("--pool")? };
            let list = answer(NodesClient::new(channel).list(request).await)?;
            Ok(rows(&list, ("bettercompute.compute.v1.ListNodesResponse", "nodes")))
        })
    })
}

/// The registration script of the dynamic completer for `shell`: it has the shell run this
/// `bcctl` (as it was invoked, made absolute when given as a relative path) with `COMPLETE` set
/// for each word to complete.
pub fn registration(shell: clap_complete::Shell) -> Result<String, String> {
    let shells = clap_complete::env::Shells::builtins();
    let name = shell.to_string();
    let completer = shells.completer(&name).ok_or_else(|| format!("no dynamic completion for {name}"))?;
    let mut invoked = std::path::PathBuf::from(std::env::args_os().next().unwrap_or_else(|| "bcctl".into()));
    // `./target/debug/bcctl` would name another file once the shell changes directory; a bare
    // `bcctl` is looked up on PATH, as the user typed it.
    if invoked.components().count() > 1
        && let Ok(current_dir) = std::env::current_dir()
    {
        invoked = current_dir.join(invoked);
    }
    let mut script = Vec::new();
    completer
        .write_registration("COMPLETE", "bcctl", "bcctl", &invoked.to_string_lossy(), &mut script)
        .map_err(|error| format!("cannot write the {name} script: {error}"))?;
    String::from_utf8(script).map_err(|error| format!("the {name} script is not UTF-8: {error}"))
}

/// The command line being completed: the words after the `--` the registration script passes.
struct Line(Vec<String>);

impl Line {
    fn of_this_process() -> Line {
        let args = std::env::args_os().map(|arg| arg.to_string_lossy().into_owned());
        Line(args.skip_while(|arg| arg != "--").skip(1).collect())
    }

    /// The value of `flag` (`--flag value` or `--flag=value`), the last one given.
    fn flag(&self, flag: &str) -> Option<String> {
        let mut value = None;
        for (i, word) in self.0.iter().enumerate() {
            if word == flag {
                value = self.0.get(i + 1).cloned();
            } else if let Some(given) = word.strip_prefix(flag).and_then(|rest| rest.strip_prefix('=')) {
                value = Some(given.to_owned());
            }
        }
        value.filter(|value| !value.is_empty())
    }

    /// The value of `flag`; without it the ids it scopes cannot be listed.
    fn required(&self, flag: &str) -> Result<String, String> {
        self.flag(flag).ok_or_else(|| format!("no {flag}"))
    }

    /// `bcctl` with the line's global flags, resolved from the environment as a command's are.
    fn cli(&self) -> Option<Cli> {
        let cli = Cli {
            endpoint: self.flag("--endpoint"),
            token: self.flag("--token"),
            ca_sha256: self.flag("--ca-sha256").and_then(|pin| pin.parse().ok()),
            output: OutputFormat::Table,
            config: crate::config::ConfigFileOption { config: None },
            command: Command::Openapi,
        };
        cli.with_environment().ok()
    }
}

/// The ids `list` finds whose text starts with `current`, each with its name as help; none on
/// any failure, or when the API takes longer than [`PATIENCE`].
fn complete(
    current: &OsStr,
    list: impl AsyncFnOnce(AuthedChannel, &Line) -> Result<Vec<Value>, String>,
) -> Vec<CompletionCandidate> {
    let Some(current) = current.to_str() else { return Vec::new() };
    // A `--config` file (on the line or in BC_CONFIG) may name the endpoint; no other thread runs
    // yet, as loading it requires.
    if crate::config::load_config_file().is_err() {
        return Vec::new();
    }
    let line = Line::of_this_process();
    let Some(cli) = line.cli() else { return Vec::new() };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread().enable_all().build() else { return Vec::new() };
    // Even a bug here must not spill a panic's message into the line the shell is editing.
    std::panic::set_hook(Box::new(|_| {}));
    let listed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        runtime.block_on(async {
            let listing = async { list(connect(&cli).await?, &line).await };
            tokio::time::timeout(PATIENCE, listing).await
        })
    }));
    match listed {
        Ok(Ok(Ok(rows))) => candidates(&rows, current),
        _ => Vec::new(),
    }
}

/// The items of a list response `message`, given as its full name and the items' field.
fn rows(message: &impl Message, (full_name, field): (&str, &str)) -> Vec<Value> {
    output::to_json(message, full_name)[field].as_array().cloned().unwrap_or_default()
}

/// The ids of `rows` starting with `current`, each with the row's name (or host name) as help.
fn candidates(rows: &[Value], current: &str) -> Vec<CompletionCandidate> {
    rows.iter()
        .filter_map(|row| {
            let id = row["id"].as_str().filter(|id| id.starts_with(current))?;
            let name = ["name", "displayName", "hostname"]
                .into_iter()
                .find_map(|field| row[field].as_str().filter(|name| !name.is_empty()));
            Some(CompletionCandidate::new(id).help(name.map(|name| name.to_owned().into())))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_flag_is_read_in_either_form_the_last_one_winning() {
        let line = Line(
            ["bcctl", "nodes", "get", "--pool", "pool_a", "--pool=pool_b", "--tenant", ""].map(String::from).to_vec(),
        );
        assert_eq!(line.flag("--pool").as_deref(), Some("pool_b"));
        assert_eq!(line.flag("--tenant"), None, "an empty word names nothing");
        assert_eq!(line.flag("--cluster"), None);
    }

    #[test]
    fn candidates_are_the_ids_with_the_prefix_named_by_their_resource() {
        let rows = [
            json!({"id": "kcl_abc", "name": "web"}),
            json!({"id": "kcl_abd", "name": ""}),
            json!({"id": "node_x", "hostname": "rack4-1"}),
        ];
        let found: Vec<(String, Option<String>)> = candidates(&rows, "kcl_ab")
            .iter()
            .map(|c| (c.get_value().to_string_lossy().into_owned(), c.get_help().map(ToString::to_string)))
            .collect();
        assert_eq!(found, [("kcl_abc".to_owned(), Some("web".to_owned())), ("kcl_abd".to_owned(), None)]);
        assert_eq!(candidates(&rows, "node_")[0].get_help().map(ToString::to_string).as_deref(), Some("rack4-1"));
    }
}
