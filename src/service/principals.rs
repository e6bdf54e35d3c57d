//! Principals: operators, and the users and service accounts of a tenant; and their keys.

use super::paging::Page;
use super::{ApiKeyToken, Context, PrincipalKind, Service};
use crate::error::{Error, FieldViolation, Result};
use crate::ids::PrincipalId;
use crate::proto::platform::{
    CreateApiKeyRequest, CreatePrincipalRequest, DeletePrincipalRequest, GetPrincipalRequest, ListApiKeysRequest,
    ListPrincipalsRequest, RevokeApiKeyRequest,
};
use crate::store::{ApiKeyRow, NewApiKey, PrincipalRow, now_micros};

/// An empty tenant id is none: the platform.
pub(super) fn tenant_of(tenant_id: &str) -> Option<&str> {
    (!tenant_id.is_empty()).then_some(tenant_id)
}

impl Service {
    /// Checks that `tenant` exists and is not deleted.
    pub(super) async fn require_live_tenant(&self, tenant: &str) -> Result<()> {
        let row = self.store.tenant_fetch(tenant).await?;
        if row.deleted_at.is_some() {
            return Err(Error::invalid_state(format!("tenant {tenant:?} is deleted")));
        }
        Ok(())
    }

    /// Records a principal: an operator without a tenant, a user or service account with one.
    pub async fn principal_create(&self, ctx: &Context, request: CreatePrincipalRequest) -> Result<PrincipalRow> {
        let tenant = tenant_of(&request.tenant_id);
        let operator = request.kind == PrincipalKind::Operator.as_str();
        match (operator, tenant) {
            (true, Some(_)) => {
                return Err(Error::fields(vec![FieldViolation::new(
                    "tenantId",
                    "must be empty for an operator; users and service accounts belong to a tenant",
                )]));
            }
            (false, None) => {
                return Err(Error::fields(vec![FieldViolation::new(
                    "tenantId",
                    "is required for a user or a service account; only operators have none",
                )]));
            }
            _ => {}
        }
        if let Some(tenant) = tenant {
            self.require_live_tenant(tenant).await?;
        }
        let principal = PrincipalRow {
            id: PrincipalId::random().to_string(),
            kind: request.kind,
            tenant_id: tenant.map(str::to_owned),
            name: request.name,
            created_at: now_micros(),
            deleted_at: None,
        };
        self.store.principal_create(&principal).await?;
        tracing::info!(principal = %principal.id, kind = %principal.kind, by = %ctx.caller.principal_id, "principal created");
        Ok(principal)
    }

    /// The principal `id` under `tenant` (the operators when none); `NOT_FOUND` otherwise.
    async fn principal_in(&self, tenant_id: &str, id: &str) -> Result<PrincipalRow> {
        match self.store.principal_fetch(id).await? {
            Some(principal) if principal.tenant_id.as_deref() == tenant_of(tenant_id) => Ok(principal),
            _ => Err(Error::not_found("principal", id)),
        }
    }

    /// One principal.
    pub async fn principal_get(&self, _ctx: &Context, request: GetPrincipalRequest) -> Result<PrincipalRow> {
        self.principal_in(&request.tenant_id, &request.principal_id).await
    }

    /// A page of a tenant's principals, or of the operators, and the next page's token.
    pub async fn principal_list(
        &self,
        _ctx: &Context,
        request: ListPrincipalsRequest,
    ) -> Result<(Vec<PrincipalRow>, String)> {
        let page = Page::of(request.page_size, &request.page_token)?;
        let tenant = tenant_of(&request.tenant_id);
        let mut rows = self.store.principal_list(tenant, request.include_deleted, page.after(), page.limit()).await?;
        let next = page.finish(&mut rows, |p| (p.created_at, p.id.as_str()));
        Ok((rows, next))
    }

    /// Deletes a principal: its keys stop working and its bindings go.
    pub async fn principal_delete(&self, ctx: &Context, request: DeletePrincipalRequest) -> Result<PrincipalRow> {
        let principal = self.principal_in(&request.tenant_id, &request.principal_id).await?;
        if principal.id == ctx.caller.principal_id {
            return Err(Error::invalid_state("a principal cannot delete itself; ask another admin"));
        }
        let revocations = self.access_revocations(&principal, principal.tenant_id.as_deref(), None).await?;
        self.store.principal_delete(&principal.id, now_micros(), &revocations).await?;
        self.store.access_revoked().await;
        tracing::info!(principal = %principal.id, by = %ctx.caller.principal_id, "principal deleted");
        self.principal_in(&request.tenant_id, &request.principal_id).await
    }

    /// Makes a key for a principal; the token is in the result this once.
    pub async fn api_key_create(
        &self,
        ctx: &Context,
        request: CreateApiKeyRequest,
    ) -> Result<(PrincipalRow, ApiKeyRow, ApiKeyToken)> {
        let principal = self.principal_in(&request.tenant_id, &request.principal_id).await?;
        if principal.deleted_at.is_some() {
            return Err(Error::invalid_state(format!("principal {} is deleted", principal.id)));
        }
        let token = ApiKeyToken::generate();
        let now = now_micros();
        let key = NewApiKey {
            id: token.id.to_string(),
            secret_sha256: token.secret_sha256(),
            description: request.description,
            expires_at: request.ttl_seconds.map(|ttl| now + ttl * 1_000_000),
        };
        let row = self.store.api_key_create(&principal.id, &key, now).await?;
        tracing::info!(key = %row.id, principal = %principal.id, by = %ctx.caller.principal_id, "API key created");
        Ok((principal, row, token))
    }

    /// A page of a principal's keys, and the next page's token.
    pub async fn api_key_list(
        &self,
        _ctx: &Context,
        request: ListApiKeysRequest,
    ) -> Result<(PrincipalRow, Vec<ApiKeyRow>, String)> {
        let page = Page::of(request.page_size, &request.page_token)?;
        let principal = self.principal_in(&request.tenant_id, &request.principal_id).await?;
        let mut keys = self.store.api_key_list(&principal.id, page.after(), page.limit()).await?;
        let next = page.finish(&mut keys, |k| (k.created_at, k.id.as_str()));
        Ok((principal, keys, next))
    }

    /// Revokes a key of a principal under the tenant the request names.
    pub async fn api_key_revoke(
        &self,
        ctx: &Context,
        request: RevokeApiKeyRequest,
    ) -> Result<(PrincipalRow, ApiKeyRow)> {
        let not_found = || Error::not_found("API key", &request.api_key_id);
        let key = self.store.api_key_fetch(&request.api_key_id).await?.ok_or_else(not_found)?;
        let principal = self.principal_in(&request.tenant_id, &key.principal_id).await.map_err(|_| not_found())?;
        self.store.api_key_revoke(&key.id, now_micros()).await?;
        self.store.access_revoked().await;
        tracing::info!(key = %key.id, by = %ctx.caller.principal_id, "API key revoked");
        let key = self.store.api_key_fetch(&key.id).await?.ok_or_else(not_found)?;
        Ok((principal, key))
    }
}
