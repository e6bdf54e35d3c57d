//! `bcctl`, the command-line client: one subcommand per resource, built on the generated tonic
//! clients, printing JSON (the API's own mapping) or a table.
//!
//! Each resource's commands live in a file named after it, except for these groupings, which
//! follow the API's modules:
//!
//! - `kubernetes`: `bcctl clusters` and `bcctl nodepools` (they share the node pool spec's parser and
//!   the cluster's `--wait`);
//! - `vps`: `bcctl networks`, `bcctl instances` and `bcctl certificates`;
//! - `identity`: `bcctl principals`, `bcctl api-keys`, `bcctl role-bindings` and `bcctl audit` (the paged
//!   lists of the identity services);
//! - `pools`: both pools services, the operator's and the tenant's (`visible`,
//!   `check-placement`).
//!
//! [`follow`] is what the commands share (a call's answer, `--wait`); [`tracked`] the commands
//! every asynchronous resource has alike (`list`, `get`, `delete` and the flags of `create`),
//! written once; [`output`] is how results print; [`complete`] completes ids from the API as a
//! shell asks (`bcctl completion`).

mod accounts;
mod budgets;
mod columns;
mod complete;
mod failure;
mod follow;
mod identity;
mod join_tokens;
mod kubernetes;
mod load_balancers;
mod metal;
mod nodes;
mod offers;
mod orphans;
mod output;
mod plan;
mod pools;
mod projects;
mod quotas;
mod substrates;
mod tenants;
mod tracked;
mod volumes;
mod vps;
mod when;

use std::path::PathBuf;

use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

pub use bcd::channel::BearerToken;
pub use output::OutputFormat;

use crate::dev::{DevFile, DevOptions};

/// `bcctl`: the better-compute command-line client.
///
/// The global flags read their environment variables in [`Cli::with_environment`], not through
/// clap's `env`: clap counts a value from the environment as given on the command line, and a
/// usage line printed for a missing argument then shows `--endpoint` and `--token` as if they
/// were required.
#[derive(clap::Parser, Debug)]
#[command(name = "bcctl", version, about = "The better-compute command-line client, and `bcctl dev`.")]
#[command(term_width = output::help_width())]
pub struct Cli {
    /// The API endpoint [env: BC_ENDPOINT]. Defaults to the one in ./.bc-dev/dev.json, else
    /// http://127.0.0.1:8080.
    #[arg(long, global = true)]
    pub endpoint: Option<String>,

    /// The API key to call with, `bck_<id>.<secret>` [env: BC_TOKEN]. Defaults to the operator
    /// key in ./.bc-dev/dev.json.
    #[arg(long, global = true)]
    pub token: Option<String>,

    /// On an https:// endpoint, trust only a server whose CA has this public-key SHA-256 (what
    /// `bcctl dev --tls` prints) [env: BC_CA_SHA256]. Defaults to the one in
    /// ./.bc-dev/dev.json, else the system's roots.
    #[arg(long, global = true)]
    pub ca_sha256: Option<crate::tls::CaPin>,

    /// How results are printed [env: BC_OUTPUT].
    #[arg(long, short, value_enum, default_value_t = OutputFormat::from_environment(), global = true)]
    pub output: OutputFormat,

    #[command(flatten)]
    pub config: crate::config::ConfigFileOption,

    #[command(subcommand)]
    pub command: Command,
}

/// The commands of `bcctl`.
#[derive(clap::Subcommand, Debug)]
pub enum Command {
    /// Runs the whole system in this process on an embedded SQLite file.
    Dev {
        #[command(flatten)]
        options: DevOptions,
        #[command(flatten)]
        log: crate::config::LogOptions,
    },
    /// Runs the fake cloud alone (GKE, DigitalOcean, OAuth and fake clusters' API servers).
    Fakecloud {
        /// The port on 127.0.0.1; 0 picks a free one.
        #[arg(long, env = "BC_FAKECLOUD_PORT", default_value_t = 8090)]
        port: u16,
    },
    /// The operator's tenants.
    #[command(subcommand)]
    Tenants(tenants::TenantsCommand),
    /// Kubernetes clusters.
    #[command(subcommand)]
    Clusters(kubernetes::ClustersCommand),
    /// Node pools of Kubernetes clusters.
    #[command(subcommand)]
    Nodepools(kubernetes::NodePoolsCommand),
    /// Load balancers (regional and global) over the tenant's instances.
    #[command(subcommand, name = "loadbalancers")]
    Loadbalancers(load_balancers::LoadBalancersCommand),
    /// Tenant networks and their subnets.
    #[command(subcommand)]
    Networks(vps::NetworksCommand),
    /// Instances (virtual machines).
    #[command(subcommand)]
    Instances(vps::InstancesCommand),
    /// Certificates for load balancers.
    #[command(subcommand)]
    Certificates(vps::CertificatesCommand),
    /// Block-storage volumes for instances.
    #[command(subcommand)]
    Volumes(volumes::VolumesCommand),
    /// Join tokens, with which `bcd` daemons join a pool.
    #[command(subcommand, name = "jointokens")]
    Jointokens(join_tokens::JoinTokensCommand),
    /// Nodes: machines that joined a pool with a join token.
    #[command(subcommand)]
    Nodes(nodes::NodesCommand),
    /// Bare-metal machines, enrolled by their BMCs and moved through the provision states.
    #[command(subcommand)]
    Metal(metal::MetalCommand),
    /// Pool substrates: the managed Kubernetes cluster behind a pool whose policy has one.
    #[command(subcommand)]
    Substrates(substrates::SubstratesCommand),
    /// The tenants' projects.
    #[command(subcommand)]
    Projects(projects::ProjectsCommand),
    /// Provider accounts (GKE, DigitalOcean); credentials are write-only.
    #[command(subcommand)]
    Accounts(accounts::AccountsCommand),
    /// Provider pools, and the pools a tenant can see.
    #[command(subcommand)]
    Pools(pools::PoolsCommand),
    /// Offers of platform pools to tenants.
    #[command(subcommand)]
    Offers(offers::OffersCommand),
    /// Quotas of tenants on pools.
    #[command(subcommand)]
    Quotas(quotas::QuotasCommand),
    /// Tenants' monthly budgets.
    #[command(subcommand)]
    Budgets(budgets::BudgetsCommand),
    /// Provider objects forced deletes may have left behind, and their removal.
    #[command(subcommand)]
    Orphans(orphans::OrphansCommand),
    /// Principals: operators, and a tenant's users and service accounts.
    #[command(subcommand)]
    Principals(identity::PrincipalsCommand),
    /// API keys of principals.
    #[command(subcommand)]
    ApiKeys(identity::ApiKeysCommand),
    /// Roles bound to principals.
    #[command(subcommand)]
    RoleBindings(identity::RoleBindingsCommand),
    /// The audit trail of decisions on mutations.
    #[command(subcommand)]
    Audit(identity::AuditCommand),
    /// Prints the OpenAPI document of the JSON paths, as the server serves it at /openapi.json.
    Openapi,
    /// Prints the script that makes a shell complete `bcctl`'s commands, flags and their values,
    /// ids included: a cluster's, node pool's, pool's or node's id completes from the API (with
    /// the `--tenant`, `--cluster` or `--pool` typed before it), each shown with its name.
    ///
    /// The script has the shell run `bcctl` for each word, so it stays current when `bcctl` is
    /// upgraded. For bash, add `source <(bcctl completion bash)` to ~/.bashrc; for zsh, add
    /// `source <(bcctl completion zsh)` to ~/.zshrc (after `compinit`); for fish, run `bcctl
    /// completion fish > ~/.config/fish/completions/bcctl.fish` once.
    Completion {
        /// The shell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
}

/// A channel whose every call carries the bearer token.
pub type AuthedChannel = InterceptedService<Channel, BearerToken>;

/// Where `bcctl` finds a running `bcctl dev` when no endpoint or token is given.
fn default_dev_file() -> Option<DevFile> {
    DevFile::read(&PathBuf::from("./.bc-dev"))
}

/// The endpoint `bcctl` talks to, as the flags, the environment or `dev.json` say.
pub fn endpoint(cli: &Cli) -> String {
    cli.endpoint
        .clone()
        .or_else(|| default_dev_file().map(|d| d.endpoint))
        .unwrap_or_else(|| "http://127.0.0.1:8080".to_owned())
}

/// The CA `bcctl` pins on an https:// endpoint, as the flags, the environment or `dev.json` say.
pub fn ca_pin(cli: &Cli) -> Result<Option<crate::tls::CaPin>, String> {
    match cli.ca_sha256 {
        Some(pin) => Ok(Some(pin)),
        None if cli.endpoint.is_some() => Ok(None),
        None => default_dev_file().and_then(|d| d.ca_sha256).map(|pin| pin.parse()).transpose(),
    }
}

/// Connects to the endpoint with the token, as the flags, the environment or `dev.json` say.
pub async fn connect(cli: &Cli) -> Result<AuthedChannel, String> {
    let dev = default_dev_file();
    let endpoint = endpoint(cli);
    let token = cli.token.clone().or_else(|| dev.as_ref().map(|d| d.admin_token.clone()));
    let bearer = BearerToken::new(token.as_deref())?;
    let pin = ca_pin(cli)?;
    let channel =
        crate::channel::connect(&endpoint, pin).await.map_err(|error| format!("{error} (is `bcctl dev` running?)"))?;
    Ok(InterceptedService::new(channel, bearer))
}

impl Cli {
    /// The global flags not given, from their environment variables (`BC_ENDPOINT`, `BC_TOKEN`,
    /// `BC_CA_SHA256`; `BC_OUTPUT` is the default of `--output`, checked here).
    pub fn with_environment(mut self) -> Result<Cli, String> {
        let variable = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        self.endpoint = self.endpoint.or_else(|| variable("BC_ENDPOINT"));
        self.token = self.token.or_else(|| variable("BC_TOKEN"));
        if self.ca_sha256.is_none()
            && let Some(pin) = variable("BC_CA_SHA256")
        {
            self.ca_sha256 = Some(pin.parse().map_err(|error| format!("BC_CA_SHA256: {error}"))?);
        }
        if let Some(format) = variable("BC_OUTPUT") {
            <OutputFormat as clap::ValueEnum>::from_str(&format, false)
                .map_err(|_| format!("BC_OUTPUT is {format:?}: use table, wide, json or yaml"))?;
        }
        Ok(self)
    }
}

/// Runs a client command.
pub async fn run(cli: Cli) -> Result<(), String> {
    let cli = cli.with_environment()?;
    match &cli.command {
        Command::Dev { .. } | Command::Fakecloud { .. } => unreachable!("started by main"),
        Command::Tenants(command) => tenants::run(&cli, command).await,
        Command::Clusters(command) => kubernetes::clusters(&cli, command).await,
        Command::Nodepools(command) => kubernetes::node_pools(&cli, command).await,
        Command::Loadbalancers(command) => load_balancers::run(&cli, command).await,
        Command::Networks(command) => vps::networks(&cli, command).await,
        Command::Instances(command) => vps::instances(&cli, command).await,
        Command::Certificates(command) => vps::certificates(&cli, command).await,
        Command::Volumes(command) => volumes::run(&cli, command).await,
        Command::Jointokens(command) => join_tokens::run(&cli, command).await,
        Command::Nodes(command) => nodes::run(&cli, command).await,
        Command::Metal(command) => metal::run(&cli, command).await,
        Command::Substrates(command) => substrates::run(&cli, command).await,
        Command::Projects(command) => projects::run(&cli, command).await,
        Command::Accounts(command) => accounts::run(&cli, command).await,
        Command::Pools(command) => pools::run(&cli, command).await,
        Command::Offers(command) => offers::run(&cli, command).await,
        Command::Quotas(command) => quotas::run(&cli, command).await,
        Command::Budgets(command) => budgets::run(&cli, command).await,
        Command::Orphans(command) => orphans::run(&cli, command).await,
        Command::Principals(command) => identity::principals(&cli, command).await,
        Command::ApiKeys(command) => identity::api_keys(&cli, command).await,
        Command::RoleBindings(command) => identity::role_bindings(&cli, command).await,
        Command::Audit(command) => identity::audit(&cli, command).await,
        Command::Completion { shell } => {
            output::emit(&complete::registration(*shell)?);
            Ok(())
        }
        Command::Openapi => {
            let document = crate::api::openapi::document(&crate::proto::documented_descriptor_pool())?;
            output::emit(&format!("{}\n", serde_json::to_string_pretty(&document).expect("a JSON value serializes")));
            Ok(())
        }
    }
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::Cli;

    /// A subcommand's own argument named like a global one takes the global's value, and its
    /// environment variable: an account's provider endpoint read `BC_ENDPOINT`, the API's address.
    #[test]
    fn no_subcommand_argument_shares_a_global_arguments_name() {
        let cli = Cli::command();
        let globals: Vec<(String, Option<String>)> = cli
            .get_arguments()
            .filter(|arg| arg.is_global_set())
            .map(|arg| (arg.get_id().to_string(), arg.get_long().map(str::to_owned)))
            .collect();
        let mut pending: Vec<(String, &clap::Command)> =
            cli.get_subcommands().map(|command| (command.get_name().to_owned(), command)).collect();
        let mut clashes = Vec::new();
        while let Some((path, command)) = pending.pop() {
            for arg in command.get_arguments().filter(|arg| !arg.is_global_set()) {
                let clash = globals.iter().any(|(id, long)| {
                    arg.get_id().as_str() == id || (long.is_some() && arg.get_long() == long.as_deref())
                });
                if clash {
                    clashes.push(format!("{path} {}", arg.get_id()));
                }
            }
            pending.extend(command.get_subcommands().map(|sub| (format!("{path} {}", sub.get_name()), sub)));
        }
        assert!(clashes.is_empty(), "arguments named like a global one: {clashes:?}");
    }
}
