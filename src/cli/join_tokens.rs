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
    if token.token.is_empty() {
        output::emit(&format!("\n{}\n", token.token_notice));
        return Ok(());
    }
    let api = endpoint(cli);
    // bcd sends a token over plain HTTP only when told to: the line says so where it must.
    let transport = if api.starts_with("http://") {
        Some("--insecure-plaintext".to_owned())
    } else {
        super::ca_pin(cli)?.map(|pin| format!("--ca-sha256 {pin}"))
    };
    let endpoint = format!("--endpoint {api}");
    let bearer = format!("--token {}", token.token);
    let words: Vec<&str> =
        ["bcd join", &endpoint].into_iter().chain(transport.as_deref()).chain([bearer.as_str()]).collect();
    let width = output::terminal_width();
    // The bearer form is longer than a narrow terminal is wide; a line cut inside it would not
    // copy, so it is shown only inside the command, where a shell joins the cut.
    let shown = match width {
        Some(width) if INDENT.len() + token.token.chars().count() > width => {
            "The token, shown this once, is the one after --token below.".to_owned()
        }
        _ => format!("The token, shown this once:\n{INDENT}{}", token.token),
    };
    let command = command_lines(&words, width);
    output::emit(&format!("\n{shown}\n\nOn each machine to join (as root), run:\n{command}"));
    Ok(())
}

/// How far the token and the command stand in from the text around them.
const INDENT: &str = "  ";

/// How far each line after the command's first stands in.
const CONTINUED: &str = "    ";

/// The command of `words` (each a word, or a flag with its value) in lines of at most `width`
/// characters, so that it still pastes into a shell as the one command it is: each line but the
/// last ends in a backslash, which the shell removes with the newline. A flag goes with its value
/// on one line when they fit; a word wider than a line (a token) is cut where the line ends, its
/// rest at the start of the next, unindented, so that the shell reads it whole. With no width
/// (the output is not a terminal) the command is one line.
fn command_lines(words: &[&str], width: Option<usize>) -> String {
    let Some(width) = width else { return format!("{INDENT}{}\n", words.join(" ")) };
    // Each line must hold some of a word beside its indent and backslash, or the cutting would
    // not move on: a terminal narrower than this gets lines wider than it.
    let width = width.max(CONTINUED.len() + 8);
    let length = |text: &str| text.chars().count();
    // Room for the ` \` that ends a continued line.
    let fits = |column: usize, text: &str| column + length(text) + 2 <= width;
    let (mut out, mut column) = (INDENT.to_owned(), INDENT.len());
    for (i, word) in words.iter().enumerate() {
        let pieces: Vec<&str> = if fits(CONTINUED.len(), word) { vec![word] } else { word.splitn(2, ' ').collect() };
        for (j, piece) in pieces.into_iter().enumerate() {
            if i + j > 0 && fits(column + 1, piece) {
                out.push(' ');
                column += 1;
            } else if i + j > 0 {
                out.push_str(" \\\n");
                out.push_str(CONTINUED);
                column = CONTINUED.len();
            }
            let mut rest = piece;
            while !fits(column, rest) {
                let room = width.saturating_sub(column + 1).max(1);
                let cut = rest.char_indices().nth(room).map_or(rest.len(), |(at, _)| at);
                out.push_str(&rest[..cut]);
                out.push_str("\\\n");
                (rest, column) = (&rest[cut..], 0);
            }
            out.push_str(rest);
            column += length(rest);
        }
    }
    out.push('\n');
    out
}

#[cfg(test)]
mod tests {
    use super::command_lines;

    const TOKEN: &str = "bcjt_01kabcdefghjkmnpqrstvwxyz0.abcdefghijklmnopqrstuvwxyzabcdefghijklmnopq";

    #[test]
    fn the_join_command_breaks_into_lines_that_fit_and_join_back_into_it() {
        let bearer = format!("--token {TOKEN}");
        let pin = format!("--ca-sha256 {}", "ab".repeat(32));
        let words = ["bcd join", "--endpoint https://api.example.com:8443", &pin, &bearer];
        let one_line = command_lines(&words, None);
        assert_eq!(one_line, format!("  {}\n", words.join(" ")));
        for width in [40, 60, 80, 120] {
            let lines = command_lines(&words, Some(width));
            assert!(lines.lines().all(|line| line.chars().count() <= width), "{width} columns:\n{lines}");
            // What a shell reads: each backslash-newline removed.
            let pasted = lines.replace("\\\n", "");
            let joined: Vec<&str> = pasted.split_whitespace().collect();
            assert_eq!(joined, one_line.split_whitespace().collect::<Vec<_>>(), "{width} columns:\n{lines}");
            assert!(lines.lines().rev().skip(1).all(|line| line.ends_with('\\')), "{lines}");
        }
        assert_eq!(command_lines(&words, Some(250)), one_line, "a wide terminal takes it whole");
    }
}
