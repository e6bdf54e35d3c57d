//! `bcctl jointokens ...`: a pool's join tokens. The create prints the bearer form this once, with
//! the `bcd join` command line that uses it.

use super::follow::answer;
use super::kubernetes::{parse_label, parse_taint};
use super::{Cli, complete, connect, endpoint, output};
use crate::proto::compute::{
    CreateJoinTokenRequest, GetJoinTokenRequest, JoinToken, ListJoinTokensRequest, NodeTaint, RevokeJoinTokenRequest,
    join_tokens_client::JoinTokensClient,
};

/// The pool and token that `get` and `revoke` name.
#[derive(clap::Args, Debug)]
pub struct TokenArgs {
    /// The pool.
    #[arg(long, add = complete::pools())]
    pool: String,
    /// The token's id (`jt_...`).
    join_token_id: String,
}

/// The join token commands.
#[derive(clap::Subcommand, Debug)]
pub enum JoinTokensCommand {
    /// Makes a token and prints it, once, with the `bcd join` command that uses it.
    Create {
        /// The pool its nodes join (`pool_...`).
        #[arg(long, add = complete::pools())]
        pool: String,
        /// Free text.
        #[arg(long, default_value = "")]
        description: String,
        /// How many nodes may join with it (1 to 10000).
        #[arg(long, default_value_t = 1)]
        max_uses: i32,
        /// How long it is accepted, in seconds (600 to 2592000).
        #[arg(long, default_value_t = 86_400)]
        ttl_seconds: i64,
        /// A label `key=value` every node joining with it gets; repeat for more.
        #[arg(long = "label", value_parser = parse_label)]
        labels: Vec<(String, String)>,
        /// A taint `key=value:Effect` (or `key:Effect`) every node joining with it gets; repeat
        /// for more.
        #[arg(long = "taint")]
        taints: Vec<String>,
        /// Names this create, so that a retry returns the same token; a new one each call when
        /// not given.
        #[arg(long)]
        idempotency_key: Option<String>,
    },
    /// Lists a pool's tokens, newest first.
    List {
        /// The pool.
        #[arg(long, add = complete::pools())]
        pool: String,
    },
    /// Shows a token and the nodes that joined with it.
    Get(TokenArgs),
    /// Revokes a token: no node joins with it from now on.
    Revoke(TokenArgs),
}

/// Runs a join token command.
pub async fn run(cli: &Cli, command: &JoinTokensCommand) -> Result<(), String> {
    let mut client = JoinTokensClient::new(connect(cli).await?);
    let token = match command {
        JoinTokensCommand::Create { pool, description, max_uses, ttl_seconds, labels, taints, idempotency_key } => {
            let taints = taints
                .iter()
                .map(|text| parse_taint(text).map(|t| NodeTaint { key: t.key, value: t.value, effect: t.effect }))
                .collect::<Result<_, _>>()?;
            let request = CreateJoinTokenRequest {
                pool_id: pool.clone(),
                description: description.clone(),
                max_uses: *max_uses,
                ttl_seconds: *ttl_seconds,
                labels: labels.iter().cloned().collect(),
                taints,
                idempotency_key: idempotency_key.clone().unwrap_or_else(new_idempotency_key),
            };
            let token = answer(client.create(request).await)?;
            return print_created(cli, &token);
        }
        JoinTokensCommand::List { pool } => {
            let list = answer(client.list(ListJoinTokensRequest { pool_id: pool.clone() }).await)?;
            let name = "bettercompute.compute.v1.ListJoinTokensResponse";
            return output::print_list(cli.output, &list, name, "joinTokens");
        }
        JoinTokensCommand::Get(TokenArgs { pool, join_token_id }) => {
            client.get(GetJoinTokenRequest { pool_id: pool.clone(), join_token_id: join_token_id.clone() }).await
        }
        JoinTokensCommand::Revoke(TokenArgs { pool, join_token_id }) => {
            client.revoke(RevokeJoinTokenRequest { pool_id: pool.clone(), join_token_id: join_token_id.clone() }).await
        }
    };
    output::print_one(cli.output, &answer(token)?, "bettercompute.compute.v1.JoinToken")
}

/// A key no other create used: each `bcctl jointokens create` without one makes a new token.
fn new_idempotency_key() -> String {
    crate::ids::JoinTokenId::random().to_string()
}

/// Prints a new token: as JSON, the whole answer; as a table, the token, its bearer form and the
/// command line that joins a machine with it (or why the bearer form is not shown).
fn print_created(cli: &Cli, token: &JoinToken) -> Result<(), String> {
    output::print_one(cli.output, token, "bettercompute.compute.v1.JoinToken")?;
    if cli.output.is_structured() {
        return Ok(());
    }
    println!();
    if token.token.is_empty() {
        println!("{}", token.token_notice);
        return Ok(());
    }
    println!("The token, shown this once:\n  {}\n", token.token);
    let api = endpoint(cli);
    // bcd sends a token over plain HTTP only when told to: the line says so where it must.
    let transport = if api.starts_with("http://") {
        " --insecure-plaintext".to_owned()
    } else {
        super::ca_pin(cli)?.map(|pin| format!(" --ca-sha256 {pin}")).unwrap_or_default()
    };
    println!("On each machine to join (as root), run:\n  bcd join --endpoint {api}{transport} --token {}", token.token);
    Ok(())
}
