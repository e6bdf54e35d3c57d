//! `bcd`, the node daemon: joins a pool with a join token, then keeps the node's record alive with
//! heartbeats that carry the machine's resources and answer what is asked of it (the cordon, and
//! leaving: then, as when its node was deleted, it stops and forgets the node's credential).
//! Quiet by design: it logs a change, the first of a run of failures, and the end. It sends a
//! join token over plain HTTP only when told to (`--insecure-plaintext`), never pairs a CA pin
//! with a plain endpoint, and, joining again as the node its state directory holds, proves it
//! is that node with the node's credential.

pub mod host;
pub mod state;

use std::path::{Path, PathBuf};
use std::time::Duration;

use rand::Rng;
use tonic::Code;
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

use crate::api_error::{ApiError, describe_status};
use crate::channel::BearerToken;
use crate::proto::bettercompute::compute::v1::nodes_client::NodesClient;
use crate::proto::bettercompute::compute::v1::{
    JoinNodeRequest, LeaveNodeRequest, NodeGpus, NodeHeartbeatRequest, NodeHeartbeatResponse,
};
use crate::redacted::Redacted;
use crate::tls::CaPin;
use state::NodeState;

/// The first wait after a failed call, doubled after each failure up to [`BACKOFF_CAP`].
const BACKOFF_START: Duration = Duration::from_secs(1);
const BACKOFF_CAP: Duration = Duration::from_secs(30);
/// Every call's deadline.
const CALL_TIMEOUT: Duration = Duration::from_secs(20);

/// The node daemon.
#[derive(clap::Parser)]
#[command(name = "bcd", version, about = "The better-compute node daemon: joins a pool and keeps the node alive.")]
pub struct Cli {
    /// Where bcd keeps the node and its credential (a file only its user can read).
    #[arg(long, env = "BCD_STATE_DIR", default_value = "/var/lib/bcd", global = true)]
    pub state_dir: PathBuf,

    #[command(subcommand)]
    pub command: Command,
}

/// The commands of `bcd`.
#[derive(clap::Subcommand)]
pub enum Command {
    /// Joins the pool the token was made for, then runs as `bcd run` does.
    Join(JoinArgs),
    /// Runs as the node joined from the state directory: heartbeats until stopped.
    Run,
    /// Leaves the pool: the node is `left`, its credential void, and the state forgotten.
    Leave,
    /// Prints the node this machine is and the state the control plane records for it.
    Status,
}

/// What `bcd join` takes.
#[derive(clap::Args)]
pub struct JoinArgs {
    /// The API (`https://...`; `http://` only with `--insecure-plaintext`).
    #[arg(long, env = "BCD_ENDPOINT")]
    pub endpoint: String,
    /// Send the join token, and then the node's credential, over a plain `http://` endpoint, in
    /// clear: only on a network where no one else can read or answer the traffic.
    #[arg(long, env = "BCD_INSECURE_PLAINTEXT")]
    pub insecure_plaintext: bool,
    /// The join token `bcjt_...` (from `BCD_TOKEN` it stays out of the process list).
    #[arg(long, env = "BCD_TOKEN", hide_env_values = true)]
    pub token: Redacted,
    /// Trust only a server whose CA's public key has this SHA-256 (as `bcctl dev --tls` prints it),
    /// so that the token is never sent to an impostor.
    #[arg(long, env = "BCD_CA_SHA256")]
    pub ca_sha256: Option<CaPin>,
    /// A label of this node, added to the token's (`--label k=v`, repeated).
    #[arg(long = "label", value_parser = parse_label)]
    pub labels: Vec<(String, String)>,
    /// The machine's id instead of `/etc/machine-id` (a machine without one, or several
    /// daemons on one machine).
    #[arg(long, env = "BCD_MACHINE_ID")]
    pub machine_id: Option<String>,
}

fn parse_label(text: &str) -> Result<(String, String), String> {
    text.split_once('=')
        .map(|(key, value)| (key.to_owned(), value.to_owned()))
        .ok_or_else(|| format!("a label is key=value, not {text:?}"))
}

type Client = NodesClient<InterceptedService<Channel, BearerToken>>;

/// Where a daemon's facts come from: the host it runs on, or given whole (a daemon embedded in
/// another process, as the fake cloud runs one per fake node).
#[derive(Clone, Debug)]
pub enum Machine {
    /// Read from `/proc`, `/sys` and `nvidia-smi`; pods' disk is the state directory's filesystem.
    Host { gpus: Vec<NodeGpus> },
    /// Given: the same resources at every heartbeat.
    Given(host::Resources),
}

impl Machine {
    /// The host this process runs on (GPUs are looked for once).
    pub fn host() -> Machine {
        Machine::Host { gpus: host::gpus() }
    }

    fn resources(&self, state_dir: &Path) -> host::Resources {
        match self {
            Machine::Host { gpus } => host::resources(state_dir_or_root(state_dir), gpus),
            Machine::Given(resources) => resources.clone(),
        }
    }
}

/// A daemon run inside another process: it joins with `token` unless `state_dir` already holds
/// its node, then heartbeats until `stop` resolves (or its node is deleted), as `bcd join` does.
pub struct EmbeddedDaemon {
    /// The API.
    pub endpoint: String,
    /// The join token, used only when the state directory holds no node yet.
    pub token: String,
    /// The CA to pin on an `https://` endpoint.
    pub ca_sha256: Option<CaPin>,
    /// Who the machine is.
    pub identity: host::Identity,
    /// Labels of its own.
    pub labels: Vec<(String, String)>,
    /// What it has.
    pub machine: Machine,
    /// Where the node and its credential are kept.
    pub state_dir: PathBuf,
}

/// Runs an [`EmbeddedDaemon`] until `stop` resolves: `Ok` then, `Err` saying why when the join
/// is refused or the node's credential is (a deleted node).
pub async fn run_embedded(daemon: EmbeddedDaemon, stop: impl std::future::Future<Output = ()>) -> Result<(), String> {
    if NodeState::read(&daemon.state_dir)?.is_none() {
        let join = Join {
            endpoint: daemon.endpoint,
            token: daemon.token,
            ca_sha256: daemon.ca_sha256,
            labels: daemon.labels,
            machine_id: Some(daemon.identity.machine_id.clone()),
        };
        join_as(&daemon.state_dir, join, daemon.identity, &daemon.machine).await?;
    }
    heartbeat_until(&daemon.state_dir, &daemon.machine, stop).await
}

/// What a join needs beside the machine.
struct Join {
    endpoint: String,
    token: String,
    ca_sha256: Option<CaPin>,
    labels: Vec<(String, String)>,
    /// Kept in the state when it was given rather than read.
    machine_id: Option<String>,
}

/// Runs a command of `bcd`.
pub async fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::Join(args) => {
            plaintext_allowed(&args.endpoint, args.ca_sha256.is_some(), args.insecure_plaintext)?;
            // Listening from the start: a stop asked for during the join is honoured once it is done.
            let stop = crate::shutdown::signal();
            let machine = Machine::host();
            let identity = host::Identity::read(args.machine_id.as_deref())?;
            let join = Join {
                endpoint: args.endpoint,
                token: args.token.0,
                ca_sha256: args.ca_sha256,
                labels: args.labels,
                machine_id: args.machine_id,
            };
            join_as(&cli.state_dir, join, identity, &machine).await?;
            heartbeat_until(&cli.state_dir, &machine, stop).await
        }
        Command::Run => heartbeat_until(&cli.state_dir, &Machine::host(), crate::shutdown::signal()).await,
        Command::Leave => leave(&cli.state_dir).await,
        Command::Status => status(&cli.state_dir).await,
    }
}

/// Whether `endpoint` is plain `http://`.
fn is_plaintext(endpoint: &str) -> bool {
    endpoint.get(..7).is_some_and(|scheme| scheme.eq_ignore_ascii_case("http://"))
}

/// `bcd join`'s rule: a join token goes over plain HTTP only when `--insecure-plaintext` says so,
/// and never with a CA pin, which only a TLS server could be checked against.
fn plaintext_allowed(endpoint: &str, pinned: bool, insecure_plaintext: bool) -> Result<(), String> {
    if pinned && is_plaintext(endpoint) {
        return Err(pin_without_tls(endpoint));
    }
    if is_plaintext(endpoint) && !insecure_plaintext {
        return Err(format!(
            "{endpoint} is plain http://: the join token and then the node's credential would travel in clear, \
             for anyone on the way to read or answer. Use the server's https:// endpoint (with --ca-sha256 for a \
             private CA), or, on a network you trust, add --insecure-plaintext"
        ));
    }
    Ok(())
}

fn pin_without_tls(endpoint: &str) -> String {
    format!(
        "--ca-sha256 pins the CA of a TLS server, but {endpoint} is plain http://: the pin could not be checked \
         and the credentials would travel in clear. Give the server's https:// endpoint with the pin"
    )
}

/// The credential of the node `state_dir` holds, when it joined through `endpoint`: a machine
/// joining again proves with it that it is that node. Never sent to another endpoint.
fn credential_to_present(state_dir: &Path, endpoint: &str) -> Result<String, String> {
    Ok(NodeState::read(state_dir)?
        .filter(|node| node.endpoint == endpoint)
        .map(|node| node.credential)
        .unwrap_or_default())
}

/// Joins with the token and keeps the node in the state directory.
async fn join_as(state_dir: &Path, args: Join, identity: host::Identity, machine: &Machine) -> Result<(), String> {
    let resources = machine.resources(state_dir);
    let node_credential = credential_to_present(state_dir, &args.endpoint)?;
    let mut client = connect(&args.endpoint, args.ca_sha256, &args.token).await?;
    let request = JoinNodeRequest {
        machine_id: identity.machine_id,
        hostname: identity.hostname,
        architecture: identity.architecture,
        os: identity.os,
        kernel: identity.kernel,
        bcd_version: env!("CARGO_PKG_VERSION").to_owned(),
        capacity: Some(resources.capacity),
        labels: args.labels.into_iter().collect(),
        node_credential,
    };
    let joined = client.join(call(request)).await.map_err(|status| refused("the join", &status))?.into_inner();
    let node = NodeState {
        endpoint: args.endpoint,
        ca_sha256: args.ca_sha256.map(|pin| pin.to_string()),
        machine_id: args.machine_id,
        node_id: joined.node_id,
        pool_id: joined.pool_id,
        credential: joined.credential,
    };
    node.write(state_dir)?;
    println!(
        "joined pool {} as node {}; heartbeating every {} s (state in {})",
        node.pool_id,
        node.node_id,
        joined.heartbeat_interval_seconds,
        state_dir.display()
    );
    Ok(())
}

/// Heartbeats as the node in the state directory until `stop` (SIGTERM or Ctrl-C for the binary:
/// exit 0), until the control plane asks it to leave (its machine was released: the state is
/// forgotten, exit 0), or until it refuses the credential (the node was deleted, and the state
/// is forgotten, or left: exit 1, saying so). An unreachable server is retried with capped, jittered backoff, so a
/// restart is survived.
async fn heartbeat_until(
    state_dir: &Path,
    machine: &Machine,
    stop: impl std::future::Future<Output = ()>,
) -> Result<(), String> {
    let node = NodeState::require(state_dir)?;
    let pin = node.ca_sha256.as_deref().map(str::parse).transpose()?;
    let mut backoff = BACKOFF_START;
    let mut failing = false;
    let mut cordoned = None;
    let mut client = None;
    tokio::pin!(stop);
    loop {
        let wait = match beat(&mut client, &node, pin, state_dir, machine).await {
            Ok(answer) if answer.leave => {
                NodeState::remove(state_dir)?;
                tracing::info!(node = %node.node_id, pool = %node.pool_id,
                    "the control plane asks this machine to leave (it was released): bcd stops and forgets the node");
                return Ok(());
            }
            Ok(answer) => {
                if failing {
                    tracing::info!("the control plane answers again");
                    failing = false;
                }
                backoff = BACKOFF_START;
                match cordoned {
                    None => {
                        tracing::info!(node = %node.node_id, state = %answer.state, cordoned = answer.cordoned, "heartbeating")
                    }
                    Some(was) if was != answer.cordoned => {
                        let said =
                            if answer.cordoned { "cordoned: nothing new is scheduled here" } else { "uncordoned" };
                        tracing::info!(node = %node.node_id, "{said}");
                    }
                    Some(_) => {}
                }
                cordoned = Some(answer.cordoned);
                jittered(Duration::from_secs(answer.heartbeat_interval_seconds.max(1) as u64))
            }
            Err(Beat::Refused(message)) => return Err(message),
            Err(Beat::Void(message)) => {
                NodeState::remove(state_dir)?;
                return Err(message);
            }
            Err(Beat::Failed(message)) => {
                if !failing {
                    tracing::warn!("{message}; retrying with backoff up to {} s", BACKOFF_CAP.as_secs());
                    failing = true;
                } else {
                    tracing::debug!("{message}");
                }
                let wait = jittered(backoff);
                backoff = (backoff * 2).min(BACKOFF_CAP);
                wait
            }
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = &mut stop => {
                tracing::info!(node = %node.node_id, "stopping; the node stays joined (`bcd run` resumes it)");
                return Ok(());
            }
        }
    }
}

/// Why a heartbeat did not go through.
enum Beat {
    /// The credential is refused: retrying cannot help.
    Refused(String),
    /// The node was deleted: its credential is dead, and forgotten.
    Void(String),
    /// The server is unreachable or failed: try again later.
    Failed(String),
}

/// One heartbeat, connecting first when there is no channel yet.
async fn beat(
    client: &mut Option<Client>,
    node: &NodeState,
    pin: Option<CaPin>,
    state_dir: &Path,
    machine: &Machine,
) -> Result<NodeHeartbeatResponse, Beat> {
    if client.is_none() {
        *client = Some(connect(&node.endpoint, pin, &node.credential).await.map_err(Beat::Failed)?);
    }
    let resources = machine.resources(state_dir);
    let request = NodeHeartbeatRequest {
        node_id: node.node_id.clone(),
        capacity: Some(resources.capacity),
        allocatable: Some(resources.allocatable),
        conditions: resources.conditions,
    };
    let answer = client.as_mut().expect("connected above").heartbeat(call(request)).await;
    match answer {
        Ok(answer) => Ok(answer.into_inner()),
        Err(status) if status.code() == Code::Unauthenticated => {
            let deleted =
                ApiError::from_status(&status).details.get("reason").and_then(|r| r.as_str()) == Some("deleted");
            let message = void_credential(node, &status);
            Err(if deleted { Beat::Void(message) } else { Beat::Refused(message) })
        }
        Err(status) => Err(Beat::Failed(format!("a heartbeat failed: {}", describe_status(&status)))),
    }
}

/// What bcd says when its node's credential is refused.
fn void_credential(node: &NodeState, status: &tonic::Status) -> String {
    let error = ApiError::from_status(status);
    match error.details.get("reason").and_then(|reason| reason.as_str()) {
        Some("deleted") => format!(
            "node {} was deleted from pool {}: its credential is void, so bcd forgets it and stops. To bring \
             this machine back, join again with a new token (`bcd join`).",
            node.node_id, node.pool_id
        ),
        _ => format!(
            "the control plane refuses the credential of node {} ({}); bcd stops. Join again with a new \
             token (`bcd join`).",
            node.node_id, error.message
        ),
    }
}

/// `bcd leave`: the node leaves its pool and the state is forgotten.
async fn leave(state_dir: &Path) -> Result<(), String> {
    let node = NodeState::require(state_dir)?;
    let pin = node.ca_sha256.as_deref().map(str::parse).transpose()?;
    let mut client = connect(&node.endpoint, pin, &node.credential).await?;
    let request = LeaveNodeRequest { node_id: node.node_id.clone() };
    client.leave(call(request)).await.map_err(|status| refused("leaving", &status))?;
    NodeState::remove(state_dir)?;
    println!("node {} left pool {}", node.node_id, node.pool_id);
    Ok(())
}

/// `bcd status`: the node, and its state as the control plane records it (by one heartbeat).
async fn status(state_dir: &Path) -> Result<(), String> {
    let node = NodeState::require(state_dir)?;
    println!("node:      {}\npool:      {}\nendpoint:  {}", node.node_id, node.pool_id, node.endpoint);
    let pin = node.ca_sha256.as_deref().map(str::parse).transpose()?;
    match beat(&mut None, &node, pin, state_dir, &Machine::host()).await {
        Ok(answer) => {
            println!("state:     {}\ncordoned:  {}", answer.state, if answer.cordoned { "yes" } else { "no" });
            if answer.leave {
                println!("leave:     yes (the machine was released; `bcd run` forgets the node)");
            }
            Ok(())
        }
        Err(Beat::Refused(message) | Beat::Void(message) | Beat::Failed(message)) => Err(message),
    }
}

/// A channel to `endpoint` whose calls carry `bearer`. A CA pin with a plain `http://` endpoint
/// is refused before anything is sent: there is no certificate to check it against.
async fn connect(endpoint: &str, pin: Option<CaPin>, bearer: &str) -> Result<Client, String> {
    if pin.is_some() && is_plaintext(endpoint) {
        return Err(pin_without_tls(endpoint));
    }
    let channel = crate::channel::connect(endpoint, pin).await?;
    Ok(NodesClient::new(InterceptedService::new(channel, BearerToken::new(Some(bearer))?)))
}

/// A request with bcd's deadline.
fn call<T>(message: T) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    request.set_timeout(CALL_TIMEOUT);
    request
}

/// A refused call as bcd reports it.
fn refused(what: &str, status: &tonic::Status) -> String {
    format!("{what} was refused: {}", describe_status(status))
}

/// `wait`, give or take a tenth, so that a rack of machines restarted together spreads out.
fn jittered(wait: Duration) -> Duration {
    wait.mul_f64(rand::rng().random_range(0.9..1.1))
}

/// The state directory if it exists (pods' disk is usually on its filesystem), else `/`.
fn state_dir_or_root(state_dir: &Path) -> &Path {
    if state_dir.exists() { state_dir } else { Path::new("/") }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_goes_in_clear_only_when_asked_and_never_with_a_pin() {
        assert!(plaintext_allowed("https://api.example", true, false).is_ok());
        assert!(plaintext_allowed("https://api.example", false, false).is_ok());
        assert!(plaintext_allowed("http://10.0.0.1:8080", false, false).unwrap_err().contains("--insecure-plaintext"));
        assert!(plaintext_allowed("HTTP://10.0.0.1:8080", false, false).is_err(), "the scheme in any case");
        assert!(plaintext_allowed("http://10.0.0.1:8080", false, true).is_ok());
        assert!(plaintext_allowed("http://10.0.0.1:8080", true, true).unwrap_err().contains("--ca-sha256"));
    }

    #[test]
    fn the_nodes_credential_is_presented_only_to_the_endpoint_it_joined_through() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(credential_to_present(dir.path(), "https://a.example").unwrap(), "", "no state, nothing");
        let node = NodeState {
            endpoint: "https://a.example".into(),
            ca_sha256: None,
            machine_id: None,
            node_id: "node_x".into(),
            pool_id: "pool_y".into(),
            credential: "bcn_secret".into(),
        };
        node.write(dir.path()).unwrap();
        assert_eq!(credential_to_present(dir.path(), "https://a.example").unwrap(), "bcn_secret");
        assert_eq!(credential_to_present(dir.path(), "https://b.example").unwrap(), "");
    }
}
