//! `bettercompute.platform.v1.Accounts`: Provider accounts; the view never carries credentials.

use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::platform::{
    Account, CreateAccountRequest, DeleteAccountRequest, GetAccountRequest, ListAccountsRequest, ListAccountsResponse,
    UpdateAccountRequest, accounts_server,
};
use crate::service::Service;
use crate::service::checks::{provider_capabilities, zones_and_regions};
use crate::store::AccountRow;

/// The gRPC service of accounts.
#[derive(Debug)]
pub struct AccountsApi {
    service: Service,
}

impl AccountsApi {
    /// The service over `service`.
    pub fn server(service: Service) -> accounts_server::AccountsServer<Self> {
        accounts_server::AccountsServer::new(Self { service })
    }
}

/// The view of an account: its credentials are never in it, only that they are set (an
/// account cannot exist without them).
fn view(row: AccountRow) -> Account {
    let (zones, regions) = zones_and_regions(&row.provider, &row.locations);
    Account {
        capabilities: provider_capabilities(&row.provider).iter().map(|c| (*c).to_owned()).collect(),
        id: row.id,
        tenant_id: row.tenant_id.unwrap_or_default(),
        provider: row.provider,
        name: row.name,
        description: row.description,
        endpoint: row.endpoint,
        zones,
        regions: if row.locations.is_empty() { Vec::new() } else { regions },
        credentials_set: true,
        state: row.state,
        version: row.version,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        deleted_at: row.deleted_at.map(timestamp),
    }
}

#[tonic::async_trait]
impl accounts_server::Accounts for AccountsApi {
    async fn create(&self, request: Request<CreateAccountRequest>) -> Result<Response<Account>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.account_create(&ctx, request.into_inner()).await?)))
    }

    async fn get(&self, request: Request<GetAccountRequest>) -> Result<Response<Account>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.account_get(&ctx, request.into_inner()).await?)))
    }

    async fn list(&self, request: Request<ListAccountsRequest>) -> Result<Response<ListAccountsResponse>, Status> {
        let ctx = context(&request)?;
        let rows = self.service.account_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListAccountsResponse { accounts: rows.into_iter().map(view).collect() }))
    }

    async fn update(&self, request: Request<UpdateAccountRequest>) -> Result<Response<Account>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.account_update(&ctx, request.into_inner()).await?)))
    }

    async fn delete(&self, request: Request<DeleteAccountRequest>) -> Result<Response<Account>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.account_delete(&ctx, request.into_inner()).await?)))
    }
}
