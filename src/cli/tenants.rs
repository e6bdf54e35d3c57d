//! `bcctl tenants ...`.

use super::follow::answer;
use super::{Cli, connect, output};
use crate::proto::platform::{
    CreateTenantRequest, DeleteTenantRequest, GetTenantRequest, ListTenantsRequest, UpdateTenantRequest,
    tenants_client::TenantsClient,
};

/// The tenant commands.
#[derive(clap::Subcommand, Debug)]
pub enum TenantsCommand {
    /// Creates a tenant.
    Create {
        /// The tenant's id: letters, digits, `.`, `_`, `:` or `-`, at most 128.
        #[arg(long)]
        id: String,
        /// A name for people to read (defaults to the id).
        #[arg(long, default_value = "")]
        display_name: String,
        /// Free text.
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Shows one tenant.
    Get {
        /// The tenant's id.
        tenant_id: String,
    },
    /// Lists tenants, oldest first.
    List {
        /// Also list deleted tenants.
        #[arg(long)]
        include_deleted: bool,
    },
    /// Changes a tenant's display name or description.
    Update {
        /// The tenant's id.
        tenant_id: String,
        /// The new display name.
        #[arg(long)]
        display_name: Option<String>,
        /// The new description.
        #[arg(long)]
        description: Option<String>,
    },
    /// Deletes a tenant.
    Delete {
        /// The tenant's id.
        tenant_id: String,
    },
}

const TENANT: &str = "bettercompute.platform.v1.Tenant";
const TENANT_LIST: &str = "bettercompute.platform.v1.ListTenantsResponse";

/// Runs a tenant command.
pub async fn run(cli: &Cli, command: &TenantsCommand) -> Result<(), String> {
    let mut client = TenantsClient::new(connect(cli).await?);
    let tenant = match command {
        TenantsCommand::Create { id, display_name, description } => {
            client
                .create(CreateTenantRequest {
                    id: id.clone(),
                    display_name: display_name.clone(),
                    description: description.clone(),
                })
                .await
        }
        TenantsCommand::Get { tenant_id } => client.get(GetTenantRequest { tenant_id: tenant_id.clone() }).await,
        TenantsCommand::Update { tenant_id, display_name, description } => {
            client
                .update(UpdateTenantRequest {
                    update_mask: None,
                    tenant_id: tenant_id.clone(),
                    display_name: display_name.clone(),
                    description: description.clone(),
                })
                .await
        }
        TenantsCommand::Delete { tenant_id } => {
            client.delete(DeleteTenantRequest { tenant_id: tenant_id.clone() }).await
        }
        TenantsCommand::List { include_deleted } => {
            let list = answer(client.list(ListTenantsRequest { include_deleted: *include_deleted }).await)?;
            return output::print_list(cli.output, &list, TENANT_LIST, "tenants");
        }
    };
    output::print_one(cli.output, &answer(tenant)?, TENANT)
}
