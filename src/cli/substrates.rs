//! `bcctl substrates ...`: a pool's Kubernetes substrate, read (the pool's policy makes it, and
//! archiving the pool tears it down; see `bcctl pools update --policy-file`).

use super::follow::answer;
use super::{Cli, connect, output};
use crate::proto::compute::{
    GetKubernetesSubstrateRequest, KubernetesSubstrate, ListKubernetesSubstratesRequest,
    kubernetes_substrates_client::KubernetesSubstratesClient,
};

/// The pool both commands name.
#[derive(clap::Args, Debug)]
pub struct PoolArgs {
    /// The pool (`pool_...`).
    #[arg(long)]
    pool: String,
}

/// The substrate commands.
#[derive(clap::Subcommand, Debug)]
pub enum SubstratesCommand {
    /// Lists the pool's substrate (none, or the one its policy made).
    List(PoolArgs),
    /// Shows the pool's substrate: its cluster, flavors with their nodes, and applied objects.
    Get(PoolArgs),
}

/// Runs a substrate command.
pub async fn run(cli: &Cli, command: &SubstratesCommand) -> Result<(), String> {
    let mut client = KubernetesSubstratesClient::new(connect(cli).await?);
    match command {
        SubstratesCommand::List(PoolArgs { pool }) => {
            let list = answer(client.list(ListKubernetesSubstratesRequest { pool_id: pool.clone() }).await)?;
            let name = "bettercompute.compute.v1.ListKubernetesSubstratesResponse";
            output::print_list(cli.output, &list, name, "substrates")
        }
        SubstratesCommand::Get(PoolArgs { pool }) => {
            let substrate = answer(client.get(GetKubernetesSubstrateRequest { pool_id: pool.clone() }).await)?;
            output::print_one(cli.output, &substrate, "bettercompute.compute.v1.KubernetesSubstrate")?;
            if cli.output == output::OutputFormat::Table {
                println!("\n{}", flavor_lines(&substrate));
            }
            Ok(())
        }
    }
}

/// One line per flavor: its node pool, state and nodes (desired, at the provider, joined).
fn flavor_lines(substrate: &KubernetesSubstrate) -> String {
    let mut lines = vec![format!(
        "{:<20} {:<36} {:<13} {:>7} {:>8} {:>6}",
        "FLAVOR", "NODE POOL", "STATE", "DESIRED", "PROVIDER", "JOINED"
    )];
    for f in &substrate.flavors {
        lines.push(format!(
            "{:<20} {:<36} {:<13} {:>7} {:>8} {:>6}",
            f.name, f.node_pool, f.state, f.desired_nodes, f.provider_nodes, f.joined_nodes
        ));
    }
    lines.join("\n")
}
