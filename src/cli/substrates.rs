//! `bcctl substrates ...`: a pool's Kubernetes substrate, read (the pool's policy makes it, and
//! archiving the pool tears it down; see `bcctl pools update --policy-file`), with `--wait` that
//! follows it until it settles: `ready`, or `deleted` once it is being torn down.

use super::follow::{Followed, answer, state_and_message};
use super::{Cli, complete, connect, output};
use crate::proto::compute::{
    GetKubernetesSubstrateRequest, KubernetesSubstrate, ListKubernetesSubstratesRequest,
    kubernetes_substrates_client::KubernetesSubstratesClient,
};

/// The pool both commands name.
#[derive(clap::Args, Debug)]
pub struct PoolArgs {
    /// The pool (`pool_...`).
    #[arg(long, add = complete::pools())]
    pool: String,
}

/// What `get` takes.
#[derive(clap::Args, Debug)]
pub struct GetArgs {
    #[command(flatten)]
    pool: PoolArgs,
    /// Follow the substrate until it is ready (deleted, when it is being torn down), printing each
    /// new state to stderr; an `error` ends the wait with its message.
    #[arg(long)]
    wait: bool,
}

/// The substrate commands.
#[derive(clap::Subcommand, Debug)]
pub enum SubstratesCommand {
    /// Lists the pool's substrate (none, or the one its policy made).
    List(PoolArgs),
    /// Shows the pool's substrate: its cluster, flavors with their nodes, and applied objects;
    /// with `--wait`, follows it until it is ready (or deleted).
    Get(GetArgs),
}

/// How `--wait` follows a substrate.
const FOLLOWED: Followed = Followed {
    what: "substrate",
    message: "bettercompute.compute.v1.KubernetesSubstrate",
    progress: state_and_message,
};

/// The state `--wait` waits for: `deleted` for a substrate on its way out, else `ready`.
fn settled_state(state: &str) -> &'static str {
    if matches!(state, "deleting" | "deleted") { "deleted" } else { "ready" }
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
        SubstratesCommand::Get(GetArgs { pool: PoolArgs { pool }, wait }) => {
            let request = || GetKubernetesSubstrateRequest { pool_id: pool.clone() };
            let mut substrate = answer(client.get(request()).await)?;
            if *wait {
                let until = settled_state(&substrate.state);
                FOLLOWED
                    .wait_for(pool, until, || {
                        let mut client = client.clone();
                        let request = request();
                        async move { answer(client.get(request).await) }
                    })
                    .await?;
                substrate = answer(client.get(request()).await)?;
            }
            output::print_one(cli.output, &substrate, "bettercompute.compute.v1.KubernetesSubstrate")?;
            if cli.output == output::OutputFormat::Table {
                output::emit(&format!("\n{}\n", flavor_lines(&substrate)));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wait_settles_on_ready_or_on_deleted_for_a_substrate_going_away() {
        for (state, until) in
            [("pending", "ready"), ("provisioning", "ready"), ("error", "ready"), ("deleting", "deleted")]
        {
            assert_eq!(settled_state(state), until, "{state}");
        }
    }
}
