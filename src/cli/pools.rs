//! `bcctl pools ...`: the operator's pools, and (`visible`, `check-placement`) a tenant's view.

use std::collections::HashMap;
use std::marker::PhantomData;
use std::path::{Path, PathBuf};

use super::follow::answer;
use super::{Cli, complete, connect, output};
use crate::proto::compute;
use crate::proto::platform::{
    CreatePoolRequest, DeletePoolRequest, GetPoolRequest, ListPoolsRequest, UpdatePoolRequest,
    pools_client::PoolsClient,
};

/// The prices and policy, which a create sets and an update replaces; `W` words their help.
#[derive(clap::Args, Debug)]
pub struct Terms<W: TermsHelp> {
    #[arg(long = "price", value_parser = parse_price, help = W::PRICE)]
    prices: Vec<(String, i64)>,
    #[arg(long, conflicts_with = "policy_file", help = W::POLICY)]
    policy: Option<String>,
    #[arg(long, help = W::POLICY_FILE)]
    policy_file: Option<PathBuf>,
    #[arg(skip)]
    words: PhantomData<W>,
}

/// The help of [`Terms`]' flags, without the final period that clap drops from a one-line doc
/// comment.
pub trait TermsHelp {
    /// `--price`.
    const PRICE: &'static str;
    /// `--policy`.
    const POLICY: &'static str;
    /// `--policy-file`.
    const POLICY_FILE: &'static str;
}

/// The words of `create`.
#[derive(Debug)]
pub struct Set;

impl TermsHelp for Set {
    const PRICE: &'static str = "A price per meter as `meter=price`; repeat for several";
    const POLICY: &'static str = "The policy document, a JSON object";
    const POLICY_FILE: &'static str = "The policy document from a YAML or JSON file (a file holding only a \
        substrate, `kind: kubernetes`, is the policy's `substrate`)";
}

/// The words of `update`.
#[derive(Debug)]
pub struct Replace;

impl TermsHelp for Replace {
    const PRICE: &'static str = "New prices as `meter=price`, replacing the old ones; repeat for several";
    const POLICY: &'static str = "A new policy document, a JSON object";
    const POLICY_FILE: &'static str = "A new policy document from a YAML or JSON file, as `create` reads it";
}

impl<W: TermsHelp> Terms<W> {
    fn prices(&self) -> HashMap<String, i64> {
        self.prices.iter().cloned().collect()
    }

    /// The policy given as `--policy` (a JSON object) or `--policy-file`, as a protobuf `Struct`.
    fn policy(&self) -> Result<Option<prost_types::Struct>, String> {
        let document = match (&self.policy, &self.policy_file) {
            (Some(text), _) => match serde_json::from_str(text) {
                Ok(serde_json::Value::Object(map)) => map,
                _ => return Err("--policy must be a JSON object".to_owned()),
            },
            (None, Some(path)) => read_policy_file(path)?,
            (None, None) => return Ok(None),
        };
        Ok(Some(crate::error::json_to_struct(&document)))
    }
}

/// The pool commands.
#[derive(clap::Subcommand, Debug)]
pub enum PoolsCommand {
    /// Records a pool on an account.
    Create {
        /// The account (`acct_...`).
        #[arg(long)]
        account: String,
        /// 1 to 63 characters: lower-case letters, digits and `-`.
        #[arg(long)]
        name: String,
        /// `none`, `metered` or `platform-fee`.
        #[arg(long)]
        billing_mode: String,
        #[command(flatten)]
        terms: Terms<Set>,
        /// Free text.
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Shows one pool.
    Get {
        /// The pool's id (`pool_...`).
        #[arg(add = complete::pools())]
        pool_id: String,
    },
    /// Lists pools, oldest first.
    List {
        /// Only pools on this account.
        #[arg(long, default_value = "")]
        account: String,
        /// Only pools of this tenant's accounts.
        #[arg(long, default_value = "")]
        tenant: String,
        /// Also list deleted pools.
        #[arg(long)]
        include_deleted: bool,
    },
    /// Changes a pool.
    Update {
        /// The pool's id.
        #[arg(add = complete::pools())]
        pool_id: String,
        /// The new name.
        #[arg(long)]
        name: Option<String>,
        /// The new description.
        #[arg(long)]
        description: Option<String>,
        /// The new billing mode.
        #[arg(long)]
        billing_mode: Option<String>,
        /// `active` or `archived`.
        #[arg(long)]
        state: Option<String>,
        #[command(flatten)]
        terms: Terms<Replace>,
    },
    /// Deletes a pool without bookings.
    Delete {
        /// The pool's id.
        #[arg(add = complete::pools())]
        pool_id: String,
    },
    /// Lists the pools a tenant can see.
    Visible {
        /// The tenant.
        #[arg(long)]
        tenant: String,
    },
    /// Runs every check a create runs on a pool, booking nothing.
    CheckPlacement {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The pool.
        #[arg(long, add = complete::pools())]
        pool: String,
        /// `managed-kubernetes`, `load-balancers`, `instances`, `networks` or `certificates`.
        #[arg(long)]
        capability: String,
        /// A zone or a region.
        #[arg(long)]
        location: String,
        /// The quota to check room in (`loadBalancers`).
        #[arg(long, default_value = "")]
        resource_kind: String,
    },
}

fn parse_price(text: &str) -> Result<(String, i64), String> {
    let (meter, price) = text.split_once('=').ok_or_else(|| format!("{text:?} is not meter=price"))?;
    let price = price.parse().map_err(|_| format!("the price of {meter} must be an integer, not {price:?}"))?;
    Ok((meter.to_owned(), price))
}

/// A policy document from a YAML or JSON file; a substrate alone is wrapped as the policy's.
fn read_policy_file(path: &Path) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|error| format!("--policy-file {shown}: {error}"))?;
    let document: serde_json::Value =
        serde_yaml::from_str(&text).map_err(|error| format!("--policy-file {shown} is not YAML or JSON: {error}"))?;
    let serde_json::Value::Object(map) = document else {
        return Err(format!("--policy-file {shown} must hold a mapping (the policy document)"));
    };
    if map.get("kind").and_then(|kind| kind.as_str()) == Some("kubernetes") {
        return Ok(serde_json::Map::from_iter([("substrate".to_owned(), serde_json::Value::Object(map))]));
    }
    Ok(map)
}

/// Runs a pool command.
pub async fn run(cli: &Cli, command: &PoolsCommand) -> Result<(), String> {
    let channel = connect(cli).await?;
    let mut client = PoolsClient::new(channel.clone());
    let pool = match command {
        PoolsCommand::Create { account, name, billing_mode, terms, description } => {
            client
                .create(CreatePoolRequest {
                    account_id: account.clone(),
                    name: name.clone(),
                    description: description.clone(),
                    billing_mode: billing_mode.clone(),
                    policy: terms.policy()?,
                    prices: terms.prices(),
                })
                .await
        }
        PoolsCommand::Get { pool_id } => {
            let pool = answer(client.get(GetPoolRequest { pool_id: pool_id.clone() }).await)?;
            output::print_one(cli.output, &pool, "bettercompute.platform.v1.Pool")?;
            if !cli.output.is_structured()
                && let Some(nodes) = &pool.nodes
            {
                output::emit(&format!("\n{}\n", node_summary_line(nodes)));
            }
            return Ok(());
        }
        PoolsCommand::Update { pool_id, name, description, billing_mode, state, terms } => {
            client
                .update(UpdatePoolRequest {
                    update_mask: None,
                    pool_id: pool_id.clone(),
                    name: name.clone(),
                    description: description.clone(),
                    billing_mode: billing_mode.clone(),
                    state: state.clone(),
                    policy: terms.policy()?,
                    prices: terms.prices(),
                })
                .await
        }
        PoolsCommand::Delete { pool_id } => client.delete(DeletePoolRequest { pool_id: pool_id.clone() }).await,
        PoolsCommand::List { account, tenant, include_deleted } => {
            let request = ListPoolsRequest {
                account_id: account.clone(),
                tenant_id: tenant.clone(),
                include_deleted: *include_deleted,
            };
            let list = answer(client.list(request).await)?;
            return output::print_list(cli.output, &list, "bettercompute.platform.v1.ListPoolsResponse", "pools");
        }
        PoolsCommand::Visible { tenant } => {
            let mut client = compute::pools_client::PoolsClient::new(channel);
            let list = answer(client.list(compute::ListPoolsRequest { tenant_id: tenant.clone() }).await)?;
            return output::print_list(cli.output, &list, "bettercompute.compute.v1.ListPoolsResponse", "pools");
        }
        PoolsCommand::CheckPlacement { tenant, pool, capability, location, resource_kind } => {
            let mut client = compute::pools_client::PoolsClient::new(channel);
            let request = compute::CheckPlacementRequest {
                tenant_id: tenant.clone(),
                pool_id: pool.clone(),
                capability: capability.clone(),
                location: location.clone(),
                resource_kind: resource_kind.clone(),
            };
            let answer = answer(client.check_placement(request).await)?;
            return output::print_one(cli.output, &answer, "bettercompute.compute.v1.CheckPlacementResponse");
        }
    };
    output::print_one(cli.output, &answer(pool)?, "bettercompute.platform.v1.Pool")
}

/// A pool's nodes in one line: counts by state, then what the live ones have.
fn node_summary_line(nodes: &compute::PoolNodeSummary) -> String {
    let mut line = format!(
        "Nodes: {} ready, {} notReady ({} cordoned), {} left, {} deleted",
        nodes.ready, nodes.not_ready, nodes.cordoned, nodes.left, nodes.deleted
    );
    if let Some(capacity) = &nodes.capacity {
        const GIB: f64 = (1u64 << 30) as f64;
        line.push_str(&format!(
            "; capacity {} CPUs, {:.1} GiB memory, {:.1} GiB disk",
            capacity.cpu_millis as f64 / 1000.0,
            capacity.memory_bytes as f64 / GIB,
            capacity.ephemeral_storage_bytes as f64 / GIB
        ));
        for gpus in &capacity.gpus {
            line.push_str(&format!(", {} x {}", gpus.count, gpus.model));
        }
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_node_summary_reads_as_one_line() {
        let nodes = compute::PoolNodeSummary {
            ready: 2,
            not_ready: 1,
            cordoned: 1,
            capacity: Some(compute::NodeCapacity {
                cpu_millis: 16500,
                memory_bytes: 64 << 30,
                ephemeral_storage_bytes: 200 << 30,
                gpus: vec![compute::NodeGpus { model: "NVIDIA L4".into(), count: 2 }],
            }),
            ..Default::default()
        };
        assert_eq!(
            node_summary_line(&nodes),
            "Nodes: 2 ready, 1 notReady (1 cordoned), 0 left, 0 deleted; capacity 16.5 CPUs, 64.0 GiB memory, \
             200.0 GiB disk, 2 x NVIDIA L4"
        );
    }

    fn file(text: &[u8]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        std::io::Write::write_all(&mut file, text).unwrap();
        file
    }

    #[test]
    fn a_policy_file_is_yaml_or_json_and_a_substrate_alone_is_wrapped() {
        let yaml = file(b"kind: kubernetes\naccount: acct_x\nflavors: [{name: a}]\n");
        let read = read_policy_file(yaml.path()).unwrap();
        assert_eq!(read["substrate"]["flavors"][0]["name"], "a");
        let json = file(br#"{"substrate": {"kind": "kubernetes"}, "maxMachines": 3}"#);
        let read = read_policy_file(json.path()).unwrap();
        assert_eq!(read["maxMachines"], 3);
    }

    #[test]
    fn a_hostile_policy_file_is_refused_naming_the_file() {
        // Aliases nested to expand past a billion nodes, nesting past any stack, bytes that are
        // not text, and a list where a mapping belongs.
        let mut laughs =
            String::from("a: &a [\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\",\"lol\"]\n");
        for level in 1..10 {
            let previous = (b'a' + level - 1) as char;
            let name = (b'a' + level) as char;
            laughs.push_str(&format!("{name}: &{name} [*{previous},*{previous},*{previous},*{previous},*{previous},*{previous},*{previous},*{previous},*{previous}]\n"));
        }
        let deep = "[".repeat(100_000);
        for text in [laughs.as_bytes(), deep.as_bytes(), &[0xff, 0xfe, 0x00, 0x01][..], b"- a\n- b\n"] {
            let hostile = file(text);
            let error = read_policy_file(hostile.path()).unwrap_err();
            assert!(error.starts_with("--policy-file "), "{error}");
        }
    }
}
