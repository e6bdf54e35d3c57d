//! `bettercompute.platform.v1.Budgets`: tenants' monthly spending limits, shown with this
//! month's spend.

use tonic::Status;

use super::handlers::{Handlers, thin_service};
use super::timestamp;
use crate::proto::platform::{
    Budget, CreateBudgetRequest, DeleteBudgetRequest, GetBudgetRequest, ListBudgetsRequest, ListBudgetsResponse,
    UpdateBudgetRequest, budgets_server,
};
use crate::store::BudgetRow;

impl Handlers {
    /// The view of a budget with its tenant's spend this month.
    async fn budget_view(&self, row: BudgetRow) -> Result<Budget, Status> {
        let month_spend = self.service.budget_month_spend(&row.tenant_id).await?;
        Ok(Budget {
            id: row.id,
            tenant_id: row.tenant_id,
            name: row.name,
            monthly_limit: row.monthly_limit,
            month_spend,
            version: row.version,
            created_at: Some(timestamp(row.created_at)),
            updated_at: Some(timestamp(row.updated_at)),
        })
    }
}

thin_service! {
    impl budgets_server::Budgets: Budget by self.budget_view;
    create(CreateBudgetRequest) budget_create, get(GetBudgetRequest) budget_get,
    update(UpdateBudgetRequest) budget_update, delete(DeleteBudgetRequest) budget_delete;
    list(ListBudgetsRequest) budget_list -> ListBudgetsResponse { budgets };
}
