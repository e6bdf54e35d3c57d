//! `bcctl quotas ...`.

use super::follow::answer;
use super::{Cli, complete, connect, output};
use crate::proto::platform::{
    CreateQuotaRequest, DeleteQuotaRequest, GetQuotaRequest, ListQuotasRequest, UpdateQuotaRequest,
    quotas_client::QuotasClient,
};

/// Which quota: its pool, tenant and kind.
#[derive(clap::Args, Debug)]
pub struct QuotaKey {
    /// The pool.
    #[arg(long, add = complete::pools())]
    pool: String,
    /// The tenant.
    #[arg(long)]
    tenant: String,
    /// The kind of resource counted (`loadBalancers`).
    #[arg(long)]
    kind: String,
}

/// The quota commands.
#[derive(clap::Subcommand, Debug)]
pub enum QuotasCommand {
    /// Grants a tenant a number of resources of a kind on a pool.
    Create {
        #[command(flatten)]
        key: QuotaKey,
        /// How many.
        #[arg(long)]
        limit: i64,
    },
    /// Shows a quota and what is booked of it.
    Get {
        #[command(flatten)]
        key: QuotaKey,
    },
    /// Lists quotas, oldest first.
    List {
        /// Only quotas on this pool.
        #[arg(long, default_value = "", add = complete::pools())]
        pool: String,
        /// Only quotas of this tenant.
        #[arg(long, default_value = "")]
        tenant: String,
    },
    /// Changes a quota's limit.
    Update {
        #[command(flatten)]
        key: QuotaKey,
        /// The new limit.
        #[arg(long)]
        limit: i64,
    },
    /// Removes a quota without bookings.
    Delete {
        #[command(flatten)]
        key: QuotaKey,
    },
}

/// Runs a quota command.
pub async fn run(cli: &Cli, command: &QuotasCommand) -> Result<(), String> {
    let mut client = QuotasClient::new(connect(cli).await?);
    let quota = match command {
        QuotasCommand::Create { key, limit } => {
            client
                .create(CreateQuotaRequest {
                    pool_id: key.pool.clone(),
                    tenant_id: key.tenant.clone(),
                    resource_kind: key.kind.clone(),
                    limit: *limit,
                })
                .await
        }
        QuotasCommand::Get { key } => {
            client
                .get(GetQuotaRequest {
                    pool_id: key.pool.clone(),
                    tenant_id: key.tenant.clone(),
                    resource_kind: key.kind.clone(),
                })
                .await
        }
        QuotasCommand::Update { key, limit } => {
            client
                .update(UpdateQuotaRequest {
                    update_mask: None,
                    pool_id: key.pool.clone(),
                    tenant_id: key.tenant.clone(),
                    resource_kind: key.kind.clone(),
                    limit: *limit,
                })
                .await
        }
        QuotasCommand::Delete { key } => {
            client
                .delete(DeleteQuotaRequest {
                    pool_id: key.pool.clone(),
                    tenant_id: key.tenant.clone(),
                    resource_kind: key.kind.clone(),
                })
                .await
        }
        QuotasCommand::List { pool, tenant } => {
            let request = ListQuotasRequest { pool_id: pool.clone(), tenant_id: tenant.clone() };
            let list = answer(client.list(request).await)?;
            return output::print_list(cli.output, &list, "bettercompute.platform.v1.ListQuotasResponse", "quotas");
        }
    };
    output::print_one(cli.output, &answer(quota)?, "bettercompute.platform.v1.Quota")
}
