//! From a provider account to the adapter that speaks for it: the one place the Kubernetes
//! module (its service for credentials and versions, its reconciler for everything else) turns
//! an account id and a location into a GKE adapter.
//!
//! [`GkeAccounts`] is the seam: [`StaticGkeAccounts`] serves accounts given as (endpoint, key)
//! pairs, which is what tests and `bc dev` hand it; the catalog's store-backed accounts (sealed
//! keys, endpoint override) plug in behind the same trait. Adapters are cached per account and
//! location so that their access tokens are reused across passes.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::error::{ErrorKind, ProviderError, ProviderResult};
use super::gke::{Gke, GkeConfig};
use super::google_auth::{ServiceAccountKey, TokenSource};

/// The default GKE API.
pub const GKE_BASE_URL: &str = "https://container.googleapis.com/";

/// Resolves a provider account to its GKE adapter at a location.
#[async_trait::async_trait]
pub trait GkeAccounts: Send + Sync + std::fmt::Debug {
    /// The adapter of `account_id` in `location`: `NotFound` for an account it does not know.
    async fn gke(&self, account_id: &str, location: &str) -> ProviderResult<Gke>;
}

/// One account as the static resolver knows it. `Debug` hides the key.
#[derive(Clone)]
pub struct GkeAccount {
    /// The API's base URL (the endpoint override), empty for Google's own.
    pub endpoint: String,
    /// The service-account JSON key.
    pub key_json: String,
}

impl std::fmt::Debug for GkeAccount {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GkeAccount").field("endpoint", &self.endpoint).finish_non_exhaustive()
    }
}

/// Accounts given up front, with their adapters cached.
#[derive(Debug, Default)]
pub struct StaticGkeAccounts {
    accounts: Mutex<HashMap<String, GkeAccount>>,
    cache: Mutex<HashMap<(String, String), Gke>>,
}

impl StaticGkeAccounts {
    /// No accounts yet.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// Adds (or replaces) an account.
    pub fn insert(&self, account_id: &str, account: GkeAccount) {
        self.accounts.lock().expect("not poisoned").insert(account_id.to_owned(), account);
        self.cache.lock().expect("not poisoned").retain(|(id, _), _| id != account_id);
    }
}

/// A GKE adapter for `account` in `location`, authenticating with its key.
pub fn gke_for(account: &GkeAccount, location: &str) -> ProviderResult<Gke> {
    let key = ServiceAccountKey::from_json(&account.key_json)?;
    let http = reqwest::Client::builder()
        .timeout(std::time::Duration::from_secs(30))
        .build()
        .map_err(|error| ProviderError::transport("gke", error))?;
    let base_url = if account.endpoint.is_empty() { GKE_BASE_URL.to_owned() } else { account.endpoint.clone() };
    let config = GkeConfig { base_url, project: key.project_id.clone(), location: location.to_owned() };
    Ok(Gke::new(config, http.clone(), TokenSource::new(key, http)))
}

#[async_trait::async_trait]
impl GkeAccounts for StaticGkeAccounts {
    async fn gke(&self, account_id: &str, location: &str) -> ProviderResult<Gke> {
        let cache_key = (account_id.to_owned(), location.to_owned());
        if let Some(gke) = self.cache.lock().expect("not poisoned").get(&cache_key) {
            return Ok(gke.clone());
        }
        let account = self.accounts.lock().expect("not poisoned").get(account_id).cloned().ok_or_else(|| {
            ProviderError::new(ErrorKind::NotFound, "gke", format!("provider account {account_id:?} is not configured"))
        })?;
        let gke = gke_for(&account, location)?;
        self.cache.lock().expect("not poisoned").insert(cache_key, gke.clone());
        Ok(gke)
    }
}
