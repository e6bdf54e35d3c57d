//! `bcctl budgets ...`.

use super::follow::answer;
use super::{Cli, connect, output};
use crate::proto::platform::{
    CreateBudgetRequest, DeleteBudgetRequest, GetBudgetRequest, ListBudgetsRequest, UpdateBudgetRequest,
    budgets_client::BudgetsClient,
};

/// The budget commands.
#[derive(clap::Subcommand, Debug)]
pub enum BudgetsCommand {
    /// Records a tenant's monthly spending limit.
    Create {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// 1 to 63 characters: lower-case letters, digits and `-`.
        #[arg(long)]
        name: String,
        /// The most the tenant may spend in a calendar month, in the pools' price units.
        #[arg(long)]
        monthly_limit: i64,
    },
    /// Shows a budget with this month's spend.
    Get {
        /// The budget's id (`bud_...`).
        budget_id: String,
    },
    /// Lists budgets, oldest first.
    List {
        /// Only this tenant's.
        #[arg(long, default_value = "")]
        tenant: String,
    },
    /// Changes a budget's name or limit.
    Update {
        /// The budget's id.
        budget_id: String,
        /// The new name.
        #[arg(long)]
        name: Option<String>,
        /// The new monthly limit.
        #[arg(long)]
        monthly_limit: Option<i64>,
    },
    /// Removes a budget.
    Delete {
        /// The budget's id.
        budget_id: String,
    },
}

/// Runs a budget command.
pub async fn run(cli: &Cli, command: &BudgetsCommand) -> Result<(), String> {
    let mut client = BudgetsClient::new(connect(cli).await?);
    let budget = match command {
        BudgetsCommand::Create { tenant, name, monthly_limit } => {
            client
                .create(CreateBudgetRequest {
                    tenant_id: tenant.clone(),
                    name: name.clone(),
                    monthly_limit: *monthly_limit,
                })
                .await
        }
        BudgetsCommand::Get { budget_id } => client.get(GetBudgetRequest { budget_id: budget_id.clone() }).await,
        BudgetsCommand::Update { budget_id, name, monthly_limit } => {
            client
                .update(UpdateBudgetRequest {
                    update_mask: None,
                    budget_id: budget_id.clone(),
                    name: name.clone(),
                    monthly_limit: *monthly_limit,
                })
                .await
        }
        BudgetsCommand::Delete { budget_id } => {
            client.delete(DeleteBudgetRequest { budget_id: budget_id.clone() }).await
        }
        BudgetsCommand::List { tenant } => {
            let list = answer(client.list(ListBudgetsRequest { tenant_id: tenant.clone() }).await)?;
            return output::print_list(cli.output, &list, "bettercompute.platform.v1.ListBudgetsResponse", "budgets");
        }
    };
    output::print_one(cli.output, &answer(budget)?, "bettercompute.platform.v1.Budget")
}
