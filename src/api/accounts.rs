//! `bettercompute.platform.v1.Accounts`: Provider accounts; the view never carries credentials.

use super::handlers::thin_service;
use super::views::stamps;
use crate::proto::platform::{
    Account, CreateAccountRequest, DeleteAccountRequest, GetAccountRequest, ListAccountsRequest, ListAccountsResponse,
    UpdateAccountRequest, accounts_server,
};
use crate::service::checks::{provider_capabilities, zones_and_regions};
use crate::store::AccountRow;

/// The view of an account: its credentials are never in it, only that they are set (an
/// account cannot exist without them).
fn account_view(row: AccountRow) -> Account {
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
        ..stamps(row.version, row.created_at, row.updated_at, row.deleted_at)
    }
}

thin_service! {
    impl accounts_server::Accounts: Account by account_view;
    create(CreateAccountRequest) account_create, get(GetAccountRequest) account_get,
    update(UpdateAccountRequest) account_update, delete(DeleteAccountRequest) account_delete;
    list(ListAccountsRequest) account_list -> ListAccountsResponse { accounts };
}
