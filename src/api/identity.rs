//! `Principals`, `ApiKeys` and `RoleBindings`: the identity services. Their lists are pages
//! (rows and the next page's token), and an API key's secret is in the view of its creation
//! only.

use tonic::{Request, Response, Status};

use super::handlers::{Handlers, thin_service};
use super::{context, timestamp};
use crate::proto::platform::{
    ApiKey, CreateApiKeyRequest, CreatePrincipalRequest, CreateRoleBindingRequest, DeletePrincipalRequest,
    DeleteRoleBindingRequest, GetPrincipalRequest, ListApiKeysRequest, ListApiKeysResponse, ListPrincipalsRequest,
    ListPrincipalsResponse, ListRoleBindingsRequest, ListRoleBindingsResponse, Principal, RevokeApiKeyRequest,
    RoleBinding, api_keys_server, principals_server, role_bindings_server,
};
use crate::store::{ApiKeyRow, PrincipalRow, RoleBindingRow, now_micros};

fn principal_view(row: PrincipalRow) -> Principal {
    Principal {
        id: row.id,
        tenant_id: row.tenant_id.unwrap_or_default(),
        kind: row.kind,
        name: row.name,
        state: if row.deleted_at.is_some() { "deleted" } else { "active" }.to_owned(),
        created_at: Some(timestamp(row.created_at)),
        deleted_at: row.deleted_at.map(timestamp),
    }
}

thin_service! {
    impl principals_server::Principals: Principal by principal_view;
    create(CreatePrincipalRequest) principal_create, get(GetPrincipalRequest) principal_get,
    delete(DeletePrincipalRequest) principal_delete;
    page(ListPrincipalsRequest) principal_list -> ListPrincipalsResponse { principals };
}

fn api_key_view(principal: &PrincipalRow, row: ApiKeyRow, token: String) -> ApiKey {
    let state = if row.revoked_at.is_some() {
        "revoked"
    } else if row.expires_at.is_some_and(|at| at <= now_micros()) {
        "expired"
    } else {
        "active"
    };
    ApiKey {
        id: row.id,
        principal_id: row.principal_id,
        tenant_id: principal.tenant_id.clone().unwrap_or_default(),
        description: row.description,
        state: state.to_owned(),
        created_at: Some(timestamp(row.created_at)),
        expires_at: row.expires_at.map(timestamp),
        revoked_at: row.revoked_at.map(timestamp),
        token,
    }
}

// Not thin: every answer carries the key's principal, and create carries the secret.
#[tonic::async_trait]
impl api_keys_server::ApiKeys for Handlers {
    async fn create(&self, request: Request<CreateApiKeyRequest>) -> Result<Response<ApiKey>, Status> {
        let ctx = context(&request)?;
        let (principal, row, token) = self.service.api_key_create(&ctx, request.into_inner()).await?;
        Ok(Response::new(api_key_view(&principal, row, token.reveal())))
    }

    async fn list(&self, request: Request<ListApiKeysRequest>) -> Result<Response<ListApiKeysResponse>, Status> {
        let ctx = context(&request)?;
        let (principal, keys, next_page_token) = self.service.api_key_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListApiKeysResponse {
            api_keys: keys.into_iter().map(|key| api_key_view(&principal, key, String::new())).collect(),
            next_page_token,
        }))
    }

    async fn revoke(&self, request: Request<RevokeApiKeyRequest>) -> Result<Response<ApiKey>, Status> {
        let ctx = context(&request)?;
        let (principal, key) = self.service.api_key_revoke(&ctx, request.into_inner()).await?;
        Ok(Response::new(api_key_view(&principal, key, String::new())))
    }
}

fn role_binding_view(row: RoleBindingRow) -> RoleBinding {
    RoleBinding {
        id: row.id,
        principal_id: row.principal_id,
        role: row.role,
        scope_type: row.scope_type,
        scope_id: row.scope_id,
        tenant_id: row.tenant_id.unwrap_or_default(),
        created_at: Some(timestamp(row.created_at)),
    }
}

thin_service! {
    impl role_bindings_server::RoleBindings: RoleBinding by role_binding_view;
    create(CreateRoleBindingRequest) role_binding_create, delete(DeleteRoleBindingRequest) role_binding_delete;
    page(ListRoleBindingsRequest) role_binding_list -> ListRoleBindingsResponse { role_bindings };
}
