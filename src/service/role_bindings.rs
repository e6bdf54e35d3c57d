//! Role bindings: `platform-admin` at the platform; a tenant's `admin`, `editor` and `viewer` at
//! the tenant, one of its projects or one of its resources.

use super::paging::Page;
use super::principals::tenant_of;
use super::{Context, Service};
use crate::error::{Code, Error, FieldViolation, Result};
use crate::ids::RoleBindingId;
use crate::proto::platform::{CreateRoleBindingRequest, DeleteRoleBindingRequest, ListRoleBindingsRequest};
use crate::store::{RoleBindingRow, now_micros};

/// The most role bindings one principal holds: every call of the principal loads them all.
pub const MAX_BINDINGS_PER_PRINCIPAL: i64 = 100;

impl Service {
    /// Binds a role at a scope, refusing combinations that mean nothing.
    pub async fn role_binding_create(
        &self,
        ctx: &Context,
        request: CreateRoleBindingRequest,
    ) -> Result<RoleBindingRow> {
        let tenant = tenant_of(&request.tenant_id);
        let scope_type = match (request.scope_type.as_str(), tenant) {
            ("", None) => "platform",
            ("", Some(_)) => "tenant",
            (other, _) => other,
        };
        let field = |name: &str, description: &str| Error::fields(vec![FieldViolation::new(name, description)]);
        let scope_id = match (request.role.as_str(), scope_type, tenant) {
            ("platform-admin", "platform", None) => "platform".to_owned(),
            ("platform-admin", _, _) => {
                return Err(field("role", "platform-admin is bound at the platform only, without a tenantId"));
            }
            (_, "platform", _) => {
                return Err(field(
                    "scopeType",
                    "only platform-admin is bound at the platform; admin, editor and viewer need a tenantId",
                ));
            }
            (_, _, None) => return Err(field("tenantId", "is required for admin, editor and viewer")),
            (_, "tenant", Some(tenant)) => {
                if !request.scope_id.is_empty() && request.scope_id != tenant {
                    return Err(field("scopeId", "must be empty or the tenantId for a tenant scope"));
                }
                tenant.to_owned()
            }
            (_, _, Some(_)) if request.scope_id.is_empty() => {
                return Err(field("scopeId", "names the project or resource the role is bound at"));
            }
            _ => request.scope_id.clone(),
        };
        if let Some(tenant) = tenant {
            self.require_live_tenant(tenant).await?;
            self.role_binding_check_scope(tenant, scope_type, &scope_id).await?;
        }
        let principal = self
            .store
            .principal_fetch(&request.principal_id)
            .await?
            .filter(|p| p.deleted_at.is_none())
            .ok_or_else(|| Error::not_found("principal", &request.principal_id))?;
        if let (Some(tenant), Some(own)) = (tenant, principal.tenant_id.as_deref())
            && own != tenant
        {
            return Err(Error::not_found("principal", &request.principal_id));
        }
        if tenant.is_none() && principal.tenant_id.is_some() {
            return Err(field("principalId", "platform-admin is for operators, not for a tenant's principals"));
        }
        let binding = RoleBindingRow {
            id: RoleBindingId::random().to_string(),
            principal_id: principal.id,
            role: request.role,
            scope_type: scope_type.to_owned(),
            scope_id,
            tenant_id: tenant.map(str::to_owned),
            created_at: now_micros(),
        };
        self.store.role_binding_create(&binding, MAX_BINDINGS_PER_PRINCIPAL).await?;
        tracing::info!(binding = %binding.id, role = %binding.role, by = %ctx.caller.principal_id, "role bound");
        Ok(binding)
    }

    /// A page of the bindings under a tenant, or of the platform's, and the next page's token.
    pub async fn role_binding_list(
        &self,
        _ctx: &Context,
        request: ListRoleBindingsRequest,
    ) -> Result<(Vec<RoleBindingRow>, String)> {
        let page = Page::of(request.page_size, &request.page_token)?;
        let tenant = tenant_of(&request.tenant_id);
        let principal = (!request.principal_id.is_empty()).then_some(request.principal_id.as_str());
        let mut bindings = self.store.role_binding_list(tenant, principal, page.after(), page.limit()).await?;
        let next = page.finish(&mut bindings, |b| (b.created_at, b.id.as_str()));
        Ok((bindings, next))
    }

    /// Checks that the project or resource a binding names exists in `tenant`: a binding at a
    /// scope that is not there grants nothing, and only adds to what every call of the
    /// principal loads.
    async fn role_binding_check_scope(&self, tenant: &str, scope_type: &str, scope_id: &str) -> Result<()> {
        let exists = match scope_type {
            "project" => match self.store.project_fetch(scope_id).await {
                Ok(project) => project.tenant_id == tenant && project.deleted_at.is_none(),
                Err(error) if error.code == Code::NotFound => false,
                Err(error) => return Err(error),
            },
            "resource" => self.store.role_binding_resource_exists(tenant, scope_id).await?,
            _ => true,
        };
        if exists {
            return Ok(());
        }
        Err(Error::new(
            Code::NotFound,
            format!("scopeId: {scope_type} {scope_id:?} was not found in tenant {tenant:?}"),
        )
        .with_detail("resource", scope_type)
        .with_detail("id", scope_id)
        .with_detail("field", "scopeId"))
    }

    /// Removes a binding under the tenant the request names.
    pub async fn role_binding_delete(
        &self,
        ctx: &Context,
        request: DeleteRoleBindingRequest,
    ) -> Result<RoleBindingRow> {
        let binding = self
            .store
            .role_binding_fetch(&request.role_binding_id)
            .await?
            .filter(|b| b.tenant_id.as_deref() == tenant_of(&request.tenant_id))
            .ok_or_else(|| Error::not_found("role binding", &request.role_binding_id))?;
        if binding.principal_id == ctx.caller.principal_id && binding.role == "platform-admin" {
            return Err(Error::invalid_state("an operator cannot remove its own platform-admin binding"));
        }
        let revocations = match self.store.principal_fetch(&binding.principal_id).await? {
            Some(principal) => {
                let mut remaining = self.store.role_binding_list_for_principal(&principal.id).await?;
                remaining.retain(|b| b.id != binding.id);
                self.access_revocations(&principal, binding.tenant_id.as_deref(), Some(&remaining)).await?
            }
            None => Vec::new(),
        };
        self.store.role_binding_delete(&binding.id, &revocations, now_micros()).await?;
        self.store.access_revoked().await;
        tracing::info!(binding = %binding.id, by = %ctx.caller.principal_id, "role unbound");
        Ok(binding)
    }
}
