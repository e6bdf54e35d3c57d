//! Budgets: a tenant's spending limit per calendar month (UTC).

use super::update_mask::Named;
use super::{Context, Service};
use crate::error::Result;
use crate::ids::BudgetId;
use crate::proto::platform::{
    CreateBudgetRequest, DeleteBudgetRequest, GetBudgetRequest, ListBudgetsRequest, UpdateBudgetRequest,
};
use crate::store::{BudgetChange, BudgetRow, NewBudget, now_micros};

impl Service {
    /// Records a budget for a live tenant.
    pub async fn budget_create(&self, ctx: &Context, request: CreateBudgetRequest) -> Result<BudgetRow> {
        let budget = self
            .store
            .budget_create(&NewBudget {
                id: BudgetId::random().to_string(),
                tenant_id: request.tenant_id,
                name: request.name,
                monthly_limit: request.monthly_limit,
                now: now_micros(),
            })
            .await?;
        tracing::info!(budget = %budget.id, tenant = %budget.tenant_id, by = %ctx.caller.principal_id, "budget created");
        Ok(budget)
    }

    /// One budget.
    pub async fn budget_get(&self, _ctx: &Context, request: GetBudgetRequest) -> Result<BudgetRow> {
        self.store.budget_fetch(&request.budget_id).await
    }

    /// Budgets, oldest first.
    pub async fn budget_list(&self, _ctx: &Context, request: ListBudgetsRequest) -> Result<Vec<BudgetRow>> {
        self.store.budget_list(&request.tenant_id).await
    }

    /// What `tenant` has spent this calendar month.
    pub async fn budget_month_spend(&self, tenant: &str) -> Result<i64> {
        self.store.budget_month_spend(tenant, now_micros()).await
    }

    /// Changes the name or the limit.
    pub async fn budget_update(&self, ctx: &Context, request: UpdateBudgetRequest) -> Result<BudgetRow> {
        let named = Named::of(&request.update_mask);
        named.require_some(&["name", "monthlyLimit"])?;
        let change = BudgetChange {
            name: named.required("name", "name", request.name)?,
            monthly_limit: named.required("monthly_limit", "monthlyLimit", request.monthly_limit)?,
        };
        let budget = self.store.budget_update(&request.budget_id, &change, now_micros()).await?;
        tracing::info!(budget = %budget.id, version = budget.version, by = %ctx.caller.principal_id, "budget updated");
        Ok(budget)
    }

    /// Removes a budget.
    pub async fn budget_delete(&self, ctx: &Context, request: DeleteBudgetRequest) -> Result<BudgetRow> {
        let budget = self.store.budget_delete(&request.budget_id, now_micros()).await?;
        tracing::info!(budget = %budget.id, by = %ctx.caller.principal_id, "budget deleted");
        Ok(budget)
    }
}
