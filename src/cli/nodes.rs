//! `bcctl nodes ...`: the nodes of a pool, and cordoning or deleting one.

use super::follow::answer;
use super::{Cli, complete, connect, output};
use crate::proto::compute::{
    CordonNodeRequest, DeleteNodeRequest, GetNodeRequest, ListNodesRequest, UncordonNodeRequest,
    nodes_client::NodesClient,
};

/// The pool and node that `cordon`, `uncordon` and `delete` name (`get` names them itself, as its
/// help shows the id's form).
#[derive(clap::Args, Debug)]
pub struct NodeArgs {
    /// The pool.
    #[arg(long, add = complete::pools())]
    pool: String,
    /// The node's id.
    #[arg(add = complete::nodes())]
    node_id: String,
}

/// The node commands.
#[derive(clap::Subcommand, Debug)]
pub enum NodesCommand {
    /// Lists a pool's nodes, oldest first.
    List {
        /// The pool (`pool_...`).
        #[arg(long, add = complete::pools())]
        pool: String,
    },
    /// Shows a node: its machine, capacity, conditions and state.
    Get {
        /// The pool.
        #[arg(long, add = complete::pools())]
        pool: String,
        /// The node's id (`node_...`).
        #[arg(add = complete::nodes())]
        node_id: String,
    },
    /// Marks a node unschedulable; its daemon learns it on its next heartbeat.
    Cordon(NodeArgs),
    /// Marks a node schedulable again.
    Uncordon(NodeArgs),
    /// Deletes a node: its credential is void and its daemon stops.
    Delete(NodeArgs),
}

/// Runs a node command.
pub async fn run(cli: &Cli, command: &NodesCommand) -> Result<(), String> {
    let mut client = NodesClient::new(connect(cli).await?);
    let node = match command {
        NodesCommand::List { pool } => {
            let list = answer(client.list(ListNodesRequest { pool_id: pool.clone() }).await)?;
            let name = "bettercompute.compute.v1.ListNodesResponse";
            return output::print_list(cli.output, &list, name, "nodes");
        }
        NodesCommand::Get { pool, node_id } => {
            client.get(GetNodeRequest { pool_id: pool.clone(), node_id: node_id.clone() }).await
        }
        NodesCommand::Cordon(NodeArgs { pool, node_id }) => {
            client.cordon(CordonNodeRequest { pool_id: pool.clone(), node_id: node_id.clone() }).await
        }
        NodesCommand::Uncordon(NodeArgs { pool, node_id }) => {
            client.uncordon(UncordonNodeRequest { pool_id: pool.clone(), node_id: node_id.clone() }).await
        }
        NodesCommand::Delete(NodeArgs { pool, node_id }) => {
            client.delete(DeleteNodeRequest { pool_id: pool.clone(), node_id: node_id.clone() }).await
        }
    };
    output::print_one(cli.output, &answer(node)?, "bettercompute.compute.v1.Node")
}
