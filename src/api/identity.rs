//! `Principals`, `ApiKeys` and `RoleBindings`: decode, call the service, turn rows into views.

use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::platform::{
    ApiKey, CreateApiKeyRequest, CreatePrincipalRequest, CreateRoleBindingRequest, DeletePrincipalRequest,
    DeleteRoleBindingRequest, GetPrincipalRequest, ListApiKeysRequest, ListApiKeysResponse, ListPrincipalsRequest,
    ListPrincipalsResponse, ListRoleBindingsRequest, ListRoleBindingsResponse, Principal, RevokeApiKeyRequest,
    RoleBinding, api_keys_server, principals_server, role_bindings_server,
};
use crate::service::Service;
use crate::store::{ApiKeyRow, PrincipalRow, RoleBindingRow, now_micros};

/// The gRPC services of identity.
#[derive(Debug, Clone)]
pub struct IdentityApi {
    service: Service,
}

impl IdentityApi {
    /// The three servers over `service`.
    pub fn servers(
        service: Service,
    ) -> (
        principals_server::PrincipalsServer<Self>,
        api_keys_server::ApiKeysServer<Self>,
        role_bindings_server::RoleBindingsServer<Self>,
    ) {
        let api = Self { service };
        (
            principals_server::PrincipalsServer::new(api.clone()),
            api_keys_server::ApiKeysServer::new(api.clone()),
            role_bindings_server::RoleBindingsServer::new(api),
        )
    }
}

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

fn key_view(principal: &PrincipalRow, row: ApiKeyRow, token: String) -> ApiKey {
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

fn binding_view(row: RoleBindingRow) -> RoleBinding {
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

#[tonic::async_trait]
impl principals_server::Principals for IdentityApi {
    async fn create(&self, request: Request<CreatePrincipalRequest>) -> Result<Response<Principal>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(principal_view(self.service.principal_create(&ctx, request.into_inner()).await?)))
    }

    async fn get(&self, request: Request<GetPrincipalRequest>) -> Result<Response<Principal>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(principal_view(self.service.principal_get(&ctx, request.into_inner()).await?)))
    }

    async fn list(&self, request: Request<ListPrincipalsRequest>) -> Result<Response<ListPrincipalsResponse>, Status> {
        let ctx = context(&request)?;
        let (rows, next_page_token) = self.service.principal_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListPrincipalsResponse {
            principals: rows.into_iter().map(principal_view).collect(),
            next_page_token,
        }))
    }

    async fn delete(&self, request: Request<DeletePrincipalRequest>) -> Result<Response<Principal>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(principal_view(self.service.principal_delete(&ctx, request.into_inner()).await?)))
    }
}

#[tonic::async_trait]
impl api_keys_server::ApiKeys for IdentityApi {
    async fn create(&self, request: Request<CreateApiKeyRequest>) -> Result<Response<ApiKey>, Status> {
        let ctx = context(&request)?;
        let (principal, row, token) = self.service.api_key_create(&ctx, request.into_inner()).await?;
        Ok(Response::new(key_view(&principal, row, token.reveal())))
    }

    async fn list(&self, request: Request<ListApiKeysRequest>) -> Result<Response<ListApiKeysResponse>, Status> {
        let ctx = context(&request)?;
        let (principal, keys, next_page_token) = self.service.api_key_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListApiKeysResponse {
            api_keys: keys.into_iter().map(|key| key_view(&principal, key, String::new())).collect(),
            next_page_token,
        }))
    }

    async fn revoke(&self, request: Request<RevokeApiKeyRequest>) -> Result<Response<ApiKey>, Status> {
        let ctx = context(&request)?;
        let (principal, key) = self.service.api_key_revoke(&ctx, request.into_inner()).await?;
        Ok(Response::new(key_view(&principal, key, String::new())))
    }
}

#[tonic::async_trait]
impl role_bindings_server::RoleBindings for IdentityApi {
    async fn create(&self, request: Request<CreateRoleBindingRequest>) -> Result<Response<RoleBinding>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(binding_view(self.service.role_binding_create(&ctx, request.into_inner()).await?)))
    }

    async fn list(
        &self,
        request: Request<ListRoleBindingsRequest>,
    ) -> Result<Response<ListRoleBindingsResponse>, Status> {
        let ctx = context(&request)?;
        let (rows, next_page_token) = self.service.role_binding_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListRoleBindingsResponse {
            role_bindings: rows.into_iter().map(binding_view).collect(),
            next_page_token,
        }))
    }

    async fn delete(&self, request: Request<DeleteRoleBindingRequest>) -> Result<Response<RoleBinding>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(binding_view(self.service.role_binding_delete(&ctx, request.into_inner()).await?)))
    }
}
