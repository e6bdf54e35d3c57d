//! `bcctl accounts ...`. Credentials are read from a file (or stdin), never from the command line,
//! where other users of the machine could see them in the process list.

use std::path::PathBuf;

use super::follow::answer;
use super::{Cli, connect, output};
use crate::proto::platform::{
    CreateAccountRequest, DeleteAccountRequest, GetAccountRequest, ListAccountsRequest, RateLimit,
    UpdateAccountRequest, accounts_client::AccountsClient,
};

/// The account commands.
#[derive(clap::Subcommand, Debug)]
pub enum AccountsCommand {
    /// Records a provider account.
    Create {
        /// `gke` or `digitalocean`.
        #[arg(long)]
        provider: String,
        /// 1 to 63 characters: lower-case letters, digits and `-`.
        #[arg(long)]
        name: String,
        /// A file with the credentials (a GKE service-account JSON key, a DigitalOcean token);
        /// `-` reads stdin.
        #[arg(long)]
        credentials_file: PathBuf,
        /// The tenant that owns the account; without it the account is the platform's.
        #[arg(long, default_value = "")]
        tenant: String,
        /// The provider API's base URL, when it is not the provider's own. Its own flag: the
        /// global `--endpoint` (and `BC_ENDPOINT`) is the better-compute API's address, never the
        /// provider's.
        #[arg(long = "provider-endpoint", default_value = "")]
        provider_endpoint: String,
        /// A zone of a GKE account; repeat for several.
        #[arg(long = "zone")]
        zones: Vec<String>,
        /// A region of a DigitalOcean account; repeat for several.
        #[arg(long = "region")]
        regions: Vec<String>,
        /// The pace of its provider calls when it is not the provider's published limits:
        /// `REQUESTS/SECONDS` (`250/60`); repeat for several windows.
        #[arg(long = "rate-limit", value_parser = parse_rate_limit)]
        rate_limits: Vec<RateLimit>,
        /// Free text.
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Shows one account (never its credentials).
    Get {
        /// The account's id (`acct_...`).
        account_id: String,
    },
    /// Lists accounts, oldest first.
    List {
        /// Only this tenant's.
        #[arg(long, default_value = "")]
        tenant: String,
        /// Only the platform's.
        #[arg(long)]
        platform_only: bool,
        /// Also list deleted accounts.
        #[arg(long)]
        include_deleted: bool,
    },
    /// Changes an account.
    Update {
        /// The account's id.
        account_id: String,
        /// The new name.
        #[arg(long)]
        name: Option<String>,
        /// The new description.
        #[arg(long)]
        description: Option<String>,
        /// A file with new credentials; `-` reads stdin.
        #[arg(long)]
        credentials_file: Option<PathBuf>,
        /// The provider API's new base URL (empty: the provider's own); it needs
        /// `--credentials-file` too. Its own flag: the global `--endpoint` (and `BC_ENDPOINT`) is
        /// the better-compute API's address, never the provider's.
        #[arg(long = "provider-endpoint")]
        provider_endpoint: Option<String>,
        /// The new zones (GKE), replacing the old ones; repeat for several.
        #[arg(long = "zone")]
        zones: Vec<String>,
        /// The new regions (DigitalOcean), replacing the old ones; repeat for several.
        #[arg(long = "region")]
        regions: Vec<String>,
        /// The pace of its provider calls, replacing the old one: `REQUESTS/SECONDS` (`250/60`);
        /// repeat for several windows.
        #[arg(long = "rate-limit", value_parser = parse_rate_limit)]
        rate_limits: Vec<RateLimit>,
    },
    /// Deletes an account without pools.
    Delete {
        /// The account's id.
        account_id: String,
    },
}

/// `REQUESTS/SECONDS`: at most that many calls in any window of that many seconds.
fn parse_rate_limit(text: &str) -> Result<RateLimit, String> {
    let wrong = || format!("{text:?} is not REQUESTS/SECONDS, such as 250/60 (250 calls a minute)");
    let (requests, seconds) = text.split_once('/').ok_or_else(wrong)?;
    let requests = requests.trim().parse().map_err(|_| wrong())?;
    let per_seconds = seconds.trim().trim_end_matches('s').parse().map_err(|_| wrong())?;
    Ok(RateLimit { requests, per_seconds })
}

/// The credentials in `path` (stdin for `-`), without a trailing newline.
fn read_credentials(path: &PathBuf) -> Result<String, String> {
    let text = if path.as_os_str() == "-" {
        std::io::read_to_string(std::io::stdin()).map_err(|error| format!("cannot read stdin: {error}"))?
    } else {
        std::fs::read_to_string(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?
    };
    Ok(text.trim_end().to_owned())
}

/// Runs an account command.
pub async fn run(cli: &Cli, command: &AccountsCommand) -> Result<(), String> {
    let mut client = AccountsClient::new(connect(cli).await?);
    let account = match command {
        AccountsCommand::Create {
            provider,
            name,
            credentials_file,
            tenant,
            provider_endpoint,
            zones,
            regions,
            description,
            rate_limits,
        } => {
            client
                .create(CreateAccountRequest {
                    tenant_id: tenant.clone(),
                    provider: provider.clone(),
                    name: name.clone(),
                    description: description.clone(),
                    credentials: read_credentials(credentials_file)?,
                    endpoint: provider_endpoint.clone(),
                    zones: zones.clone(),
                    regions: regions.clone(),
                    rate_limits: rate_limits.clone(),
                })
                .await
        }
        AccountsCommand::Get { account_id } => client.get(GetAccountRequest { account_id: account_id.clone() }).await,
        AccountsCommand::Update {
            account_id,
            name,
            description,
            credentials_file,
            provider_endpoint,
            zones,
            regions,
            rate_limits,
        } => {
            client
                .update(UpdateAccountRequest {
                    update_mask: None,
                    account_id: account_id.clone(),
                    name: name.clone(),
                    description: description.clone(),
                    credentials: credentials_file.as_ref().map(read_credentials).transpose()?,
                    endpoint: provider_endpoint.clone(),
                    zones: zones.clone(),
                    regions: regions.clone(),
                    rate_limits: rate_limits.clone(),
                })
                .await
        }
        AccountsCommand::Delete { account_id } => {
            client.delete(DeleteAccountRequest { account_id: account_id.clone() }).await
        }
        AccountsCommand::List { tenant, platform_only, include_deleted } => {
            let request = ListAccountsRequest {
                tenant_id: tenant.clone(),
                platform_only: *platform_only,
                include_deleted: *include_deleted,
            };
            let list = answer(client.list(request).await)?;
            return output::print_list(cli.output, &list, "bettercompute.platform.v1.ListAccountsResponse", "accounts");
        }
    };
    output::print_one(cli.output, &answer(account)?, "bettercompute.platform.v1.Account")
}
