//! `bcctl orphans ...`: what forced deletes may have left at the provider.

use super::follow::answer;
use super::{Cli, connect, output};
use crate::proto::compute::{DismissOrphanRequest, ListOrphansRequest, orphans_client::OrphansClient};

/// The orphan commands.
#[derive(clap::Subcommand, Debug)]
pub enum OrphansCommand {
    /// Lists orphans, newest first: the caller's tenant's, or an operator's every tenant's.
    List {
        /// Only this tenant's.
        #[arg(long, default_value = "")]
        tenant: String,
        /// Only those this resource left.
        #[arg(long, default_value = "")]
        resource: String,
        /// Only those in this status: pending, stillThere, removed or dismissed.
        #[arg(long, default_value = "")]
        status: String,
    },
    /// Stops the sweeper retrying an orphan (an operator's).
    Dismiss {
        /// The orphan's id (`orph_...`).
        orphan_id: String,
    },
}

/// Runs an orphan command.
pub async fn run(cli: &Cli, command: &OrphansCommand) -> Result<(), String> {
    let mut client = OrphansClient::new(connect(cli).await?);
    match command {
        OrphansCommand::List { tenant, resource, status } => {
            let request =
                ListOrphansRequest { tenant_id: tenant.clone(), resource_id: resource.clone(), status: status.clone() };
            let list = answer(client.list(request).await)?;
            output::print_list(cli.output, &list, "bettercompute.compute.v1.ListOrphansResponse", "orphans")
        }
        OrphansCommand::Dismiss { orphan_id } => {
            let orphan = answer(client.dismiss(DismissOrphanRequest { orphan_id: orphan_id.clone() }).await)?;
            output::print_one(cli.output, &orphan, "bettercompute.compute.v1.Orphan")
        }
    }
}
