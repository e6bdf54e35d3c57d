//! From a provider account to the adapter that speaks for it: the one place the Kubernetes
//! module (its service for credentials and versions, its reconciler for everything else) turns
//! an account id and a location into a GKE adapter, and the `vps` reconcilers turn an account
//! id into a DigitalOcean adapter ([`DigitalOceanAccounts`], [`StoreDigitalOceanAccounts`]).
//!
//! [`GkeAccounts`] is the seam: [`StoreGkeAccounts`] reads the catalog's accounts (sealed
//! service-account keys, endpoint override) and is what the server and the worker use;
//! [`StaticGkeAccounts`] serves accounts given up front, for tests of the adapters alone.
//! Adapters are cached per account, location, endpoint and key, so their access tokens are
//! reused across passes and a rotated key or a moved endpoint is picked up at once.
//!
//! The adapters' HTTPS clients trust the public roots and the extra roots this process was
//! told to trust with [`trust_root`] (`bcctl dev` trusts its fake cloud's CA, so an account
//! pointed at the fake cloud's `https://` address verifies it like any other provider).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, RwLock};

use sha2::{Digest, Sha256};

use crate::secrets::SecretKey;
use crate::store::{AccountCredentials, Store};

use super::digitalocean::{DigitalOcean, DigitalOceanConfig};
use super::error::{ErrorKind, ProviderError, ProviderResult};
use super::gke::{Gke, GkeConfig};
use super::google_auth::{ServiceAccountKey, TokenSource};
use super::pacing::Pacing;

/// The default GKE API.
pub const GKE_BASE_URL: &str = "https://container.googleapis.com/";

/// The CAs, PEM, that this process's adapters trust beside the public roots.
static EXTRA_ROOTS: RwLock<Vec<String>> = RwLock::new(Vec::new());

/// Makes the adapters made from now on trust `pem` (one or more CA certificates) beside the
/// public roots. Refused when the PEM holds no certificate.
pub fn trust_root(pem: &str) -> ProviderResult<()> {
    let parsed = reqwest::Certificate::from_pem_bundle(pem.as_bytes())
        .map_err(|error| ProviderError::new(ErrorKind::Permanent, "tls", format!("not a CA certificate: {error}")))?;
    if parsed.is_empty() {
        return Err(ProviderError::new(ErrorKind::Permanent, "tls", "the PEM holds no certificate"));
    }
    let mut roots = EXTRA_ROOTS.write().unwrap_or_else(|poisoned| poisoned.into_inner());
    if !roots.iter().any(|known| known == pem) {
        roots.push(pem.to_owned());
    }
    Ok(())
}

/// An adapter's HTTP client: a 30 s deadline, the public roots and the extra ones.
fn http_client(provider: &'static str) -> ProviderResult<reqwest::Client> {
    let mut builder = reqwest::Client::builder().timeout(std::time::Duration::from_secs(30));
    for pem in EXTRA_ROOTS.read().unwrap_or_else(|poisoned| poisoned.into_inner()).iter() {
        for certificate in reqwest::Certificate::from_pem_bundle(pem.as_bytes()).unwrap_or_default() {
            builder = builder.add_root_certificate(certificate);
        }
    }
    builder.build().map_err(|error| ProviderError::transport(provider, error))
}

/// Resolves a provider account to its GKE adapter at a location.
#[async_trait::async_trait]
pub trait GkeAccounts: Send + Sync + std::fmt::Debug {
    /// The adapter of `account_id` in `location`: `NotFound` for an account it does not know.
    async fn gke(&self, account_id: &str, location: &str) -> ProviderResult<Gke>;

    /// [`GkeAccounts::gke`] for a caller that read the account's row `version` with its own
    /// row: a resolver that made the adapter at that version may answer it without reading the
    /// account again (every change of an account's endpoint or credentials bumps its version).
    async fn gke_at(&self, account_id: &str, location: &str, version: Option<i64>) -> ProviderResult<Gke> {
        let _ = version;
        self.gke(account_id, location).await
    }
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
    let http = http_client("gke")?;
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

/// The catalog's accounts: credentials opened with the server's secret key at each use, calls
/// paced per account.
pub struct StoreGkeAccounts {
    store: Store,
    key: SecretKey,
    pacing: Arc<Pacing>,
    /// (account, location, digest of endpoint and key) to adapter.
    cache: Mutex<HashMap<(String, String, String), Gke>>,
    /// (account, location) to the account's row version its latest adapter was made at, and
    /// that adapter: what a pass that read the version with its own row takes unread.
    by_version: Mutex<HashMap<(String, String), (i64, Gke)>>,
}

impl std::fmt::Debug for StoreGkeAccounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreGkeAccounts").finish_non_exhaustive()
    }
}

impl StoreGkeAccounts {
    /// Accounts of `store`, opened with `key`.
    pub fn new(store: Store, key: SecretKey) -> Arc<Self> {
        let pacing = Pacing::new(store.clone(), key.clone());
        Arc::new(Self { store, key, pacing, cache: Mutex::default(), by_version: Mutex::default() })
    }

    /// Remembers `gke` as the adapter of `account_id` in `location` at the row's `version`.
    fn remember_version(&self, account_id: &str, location: &str, version: i64, gke: &Gke) {
        let key = (account_id.to_owned(), location.to_owned());
        self.by_version.lock().expect("not poisoned").insert(key, (version, gke.clone()));
    }
}

#[async_trait::async_trait]
impl GkeAccounts for StoreGkeAccounts {
    async fn gke(&self, account_id: &str, location: &str) -> ProviderResult<Gke> {
        let (opened, version) = open_account(&self.store, &self.key, account_id, "gke", "GKE").await?;
        let row_version = opened.version;
        let cache_key = (account_id.to_owned(), location.to_owned(), version);
        let cached = self.cache.lock().expect("not poisoned").get(&cache_key).cloned();
        if let Some(gke) = cached {
            self.remember_version(account_id, location, row_version, &gke);
            return Ok(gke);
        }
        let pacer = self.pacing.account(account_id, opened.version, &opened.credentials);
        let account = GkeAccount { endpoint: opened.endpoint, key_json: opened.credentials.expose().to_owned() };
        let gke = gke_for(&account, location)?.paced(pacer);
        let mut cache = self.cache.lock().expect("not poisoned");
        cache.retain(|(id, at, _), _| !(id == account_id && at == location));
        cache.insert(cache_key, gke.clone());
        drop(cache);
        self.remember_version(account_id, location, row_version, &gke);
        Ok(gke)
    }

    async fn gke_at(&self, account_id: &str, location: &str, version: Option<i64>) -> ProviderResult<Gke> {
        let key = (account_id.to_owned(), location.to_owned());
        let known = self.by_version.lock().expect("not poisoned").get(&key).cloned();
        match (known, version) {
            (Some((made_at, gke)), Some(version)) if made_at == version => Ok(gke),
            _ => self.gke(account_id, location).await,
        }
    }
}

/// The credentials of `account_id`, an account of `provider` (`gke`; `name` says it to a reader),
/// and a digest of its endpoint and credentials: the version of the cached adapter, so a rotated
/// key or a moved endpoint makes a new one.
async fn open_account(
    store: &Store,
    key: &SecretKey,
    account_id: &str,
    provider: &'static str,
    name: &str,
) -> ProviderResult<(AccountCredentials, String)> {
    let opened = store.account_credentials(key, account_id).await.map_err(|error| {
        let kind = if error.code == crate::error::Code::NotFound { ErrorKind::NotFound } else { ErrorKind::Transient };
        ProviderError::new(kind, provider, format!("provider account {account_id:?}: {}", error.message))
    })?;
    if opened.provider != provider {
        let message = format!("provider account {account_id:?} is a {} account, not {name}", opened.provider);
        return Err(ProviderError::new(ErrorKind::Permanent, provider, message));
    }
    let mut digest = Sha256::new();
    digest.update(opened.endpoint.as_bytes());
    digest.update([0]);
    digest.update(opened.credentials.expose().as_bytes());
    let version = digest.finalize().iter().take(8).map(|b| format!("{b:02x}")).collect();
    Ok((opened, version))
}

/// Resolves a provider account to its DigitalOcean adapter.
#[async_trait::async_trait]
pub trait DigitalOceanAccounts: Send + Sync + std::fmt::Debug {
    /// The adapter of `account_id`: `NotFound` for an account it does not know, `Permanent` for
    /// an account of another provider.
    async fn digitalocean(&self, account_id: &str) -> ProviderResult<DigitalOcean>;
}

/// The default DigitalOcean API.
pub const DIGITALOCEAN_BASE_URL: &str = "https://api.digitalocean.com";

/// A DigitalOcean adapter for an account's endpoint (empty: DigitalOcean's own) and token.
pub fn digitalocean_for(endpoint: &str, token: &str) -> ProviderResult<DigitalOcean> {
    let http = http_client("digitalocean")?;
    let base_url = if endpoint.is_empty() { DIGITALOCEAN_BASE_URL.to_owned() } else { endpoint.to_owned() };
    let config = DigitalOceanConfig {
        base_url,
        token: token.to_owned(),
        max_rate_limit_wait: std::time::Duration::from_secs(2),
    };
    Ok(DigitalOcean::new(config, http))
}

/// The catalog's DigitalOcean accounts: tokens opened with the server's secret key at each use,
/// adapters cached per account, endpoint and token (so a rotated token is picked up at once).
pub struct StoreDigitalOceanAccounts {
    store: Store,
    key: SecretKey,
    pacing: Arc<Pacing>,
    /// (account, digest of endpoint and token) to adapter.
    cache: Mutex<HashMap<(String, String), DigitalOcean>>,
}

impl std::fmt::Debug for StoreDigitalOceanAccounts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreDigitalOceanAccounts").finish_non_exhaustive()
    }
}

impl StoreDigitalOceanAccounts {
    /// Accounts of `store`, opened with `key`.
    pub fn new(store: Store, key: SecretKey) -> Arc<Self> {
        let pacing = Pacing::new(store.clone(), key.clone());
        Arc::new(Self { store, key, pacing, cache: Mutex::default() })
    }
}

#[async_trait::async_trait]
impl DigitalOceanAccounts for StoreDigitalOceanAccounts {
    async fn digitalocean(&self, account_id: &str) -> ProviderResult<DigitalOcean> {
        let (opened, version) =
            open_account(&self.store, &self.key, account_id, "digitalocean", "DigitalOcean").await?;
        let cache_key = (account_id.to_owned(), version);
        if let Some(adapter) = self.cache.lock().expect("not poisoned").get(&cache_key) {
            return Ok(adapter.clone());
        }
        let pacer = self.pacing.account(account_id, opened.version, &opened.credentials);
        let adapter = digitalocean_for(&opened.endpoint, opened.credentials.expose())?.paced(pacer);
        let mut cache = self.cache.lock().expect("not poisoned");
        cache.retain(|(id, _), _| id != account_id);
        cache.insert(cache_key, adapter.clone());
        Ok(adapter)
    }
}
