//! `bettercompute.platform.v1.Accounts`: Provider accounts; the view never carries credentials.

use super::handlers::thin_service;
use super::timestamp;
use super::views::stamps;
use crate::domain::rate_limits;
use crate::proto::platform::{
    Account, CreateAccountRequest, CredentialsCheck, DeleteAccountRequest, GetAccountRequest, ListAccountsRequest,
    ListAccountsResponse, RateLimit, UpdateAccountRequest, accounts_server,
};
use crate::service::checks::{provider_capabilities, zones_and_regions};
use crate::store::AccountRow;

/// The view of an account: its credentials are never in it, only that they are set (an
/// account cannot exist without them).
fn account_view(row: AccountRow) -> Account {
    let (zones, regions) = zones_and_regions(&row.provider, &row.locations);
    let rate_limits = rate_limits::windows_of(&row.provider, &row.rate_limits)
        .into_iter()
        .map(|window| RateLimit { requests: window.requests, per_seconds: window.per_seconds })
        .collect();
    let refused = row.breaker_state == "open";
    let credentials_check = CredentialsCheck {
        state: if refused { "credentialsRefused" } else { "ok" }.to_owned(),
        since: row.breaker_since.filter(|_| refused).map(timestamp),
        message: if refused { row.breaker_message } else { String::new() },
        next_probe_at: row.breaker_probe_at.filter(|_| refused).map(timestamp),
    };
    Account {
        rate_limits,
        rate_limits_set: !row.rate_limits.trim().is_empty(),
        credentials_check: Some(credentials_check),
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
