//! `bettercompute.platform.v1.Budgets`: tenants' monthly spending limits, shown with this
//! month's spend.

use tonic::{Request, Response, Status};

use super::handlers::Handlers;
use super::{context, timestamp};
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

#[tonic::async_trait]
impl budgets_server::Budgets for Handlers {
    async fn create(&self, request: Request<CreateBudgetRequest>) -> Result<Response<Budget>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(self.budget_view(self.service.budget_create(&ctx, request.into_inner()).await?).await?))
    }

    async fn get(&self, request: Request<GetBudgetRequest>) -> Result<Response<Budget>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(self.budget_view(self.service.budget_get(&ctx, request.into_inner()).await?).await?))
    }

    async fn list(&self, request: Request<ListBudgetsRequest>) -> Result<Response<ListBudgetsResponse>, Status> {
        let ctx = context(&request)?;
        let mut budgets = Vec::new();
        for row in self.service.budget_list(&ctx, request.into_inner()).await? {
            budgets.push(self.budget_view(row).await?);
        }
        Ok(Response::new(ListBudgetsResponse { budgets }))
    }

    async fn update(&self, request: Request<UpdateBudgetRequest>) -> Result<Response<Budget>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(self.budget_view(self.service.budget_update(&ctx, request.into_inner()).await?).await?))
    }

    async fn delete(&self, request: Request<DeleteBudgetRequest>) -> Result<Response<Budget>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(self.budget_view(self.service.budget_delete(&ctx, request.into_inner()).await?).await?))
    }
}
