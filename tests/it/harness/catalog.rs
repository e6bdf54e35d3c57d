//! The platform catalog a suite runs on, seeded straight into the store: accounts on the fake
//! cloud (their credentials sealed with the environment's key), pools, offers and quotas.

use std::collections::BTreeMap;

use better_compute::secrets::SecretKey;
use better_compute::store::{NewAccount, NewOffer, NewPool, NewQuota, Store, now_micros};
use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::json;

/// The GCP project of the fake cloud's GKE accounts.
pub const PROJECT: &str = "bc-platform";

/// An account to seed.
struct Account {
    id: String,
    /// `None` for a platform account.
    tenant: Option<String>,
    /// `gke` or `digitalocean`.
    provider: String,
    /// Zones (GKE) or regions (DigitalOcean).
    locations: Vec<String>,
}

/// A catalog described as data and seeded by [`Catalog::seed`].
#[derive(Default)]
pub struct Catalog {
    accounts: Vec<Account>,
    pools: Vec<NewPool>,
    offers: Vec<NewOffer>,
    quotas: Vec<NewQuota>,
}

impl Catalog {
    /// An empty catalog.
    pub fn new() -> Catalog {
        Catalog::default()
    }

    /// A GKE account in [`PROJECT`] with `zones`, the platform's or `tenant`'s own.
    pub fn gke_account(self, id: &str, tenant: Option<&str>, zones: &[&str]) -> Catalog {
        self.account(id, tenant, "gke", zones)
    }

    /// A DigitalOcean account with `regions`, the platform's or `tenant`'s own.
    pub fn digitalocean_account(self, id: &str, tenant: Option<&str>, regions: &[&str]) -> Catalog {
        self.account(id, tenant, "digitalocean", regions)
    }

    fn account(mut self, id: &str, tenant: Option<&str>, provider: &str, locations: &[&str]) -> Catalog {
        self.accounts.push(Account {
            id: id.to_owned(),
            tenant: tenant.map(str::to_owned),
            provider: provider.to_owned(),
            locations: locations.iter().map(|location| location.to_string()).collect(),
        });
        self
    }

    /// A pool on `account` billed by `billing_mode`, with `prices` per meter.
    pub fn pool(mut self, id: &str, account: &str, billing_mode: &str, prices: &[(&str, i64)]) -> Catalog {
        self.pools.push(NewPool {
            id: id.to_owned(),
            account_id: account.to_owned(),
            name: format!("pool-{}", &id[id.len() - 4..]),
            description: String::new(),
            billing_mode: billing_mode.to_owned(),
            policy: json!({}),
            prices: prices.iter().map(|(meter, price)| (meter.to_string(), *price)).collect::<BTreeMap<_, _>>(),
            now: 0,
        });
        self
    }

    /// An active offer of `pool` to `tenant` in every region.
    pub fn offer(self, pool: &str, tenant: &str) -> Catalog {
        self.offer_in(pool, tenant, "active", &[])
    }

    /// An offer of `pool` to `tenant` in `state`, without `excluded_regions`.
    pub fn offer_in(mut self, pool: &str, tenant: &str, state: &str, excluded_regions: &[&str]) -> Catalog {
        self.offers.push(NewOffer {
            pool_id: pool.to_owned(),
            tenant_id: tenant.to_owned(),
            state: state.parse().expect("an offer state"),
            excluded_regions: excluded_regions.iter().map(|region| region.to_string()).collect(),
            now: 0,
        });
        self
    }

    /// A quota of `limit` objects of `resource_kind` for `tenant` on `pool`.
    pub fn quota(mut self, pool: &str, tenant: &str, resource_kind: &str, limit: i64) -> Catalog {
        self.quotas.push(NewQuota {
            pool_id: pool.to_owned(),
            tenant_id: tenant.to_owned(),
            resource_kind: resource_kind.to_owned(),
            limit,
            now: 0,
        });
        self
    }

    /// Writes it to `store`, every account pointed at `cloud` with credentials it accepts.
    pub async fn seed(&self, store: &Store, key: &SecretKey, cloud: &FakeCloud) {
        let now = now_micros();
        for account in &self.accounts {
            let credentials = match account.provider.as_str() {
                "gke" => cloud.service_account_key(PROJECT, "better-compute"),
                _ => FakeCloudConfig::default().digitalocean_token,
            };
            store
                .account_create(&NewAccount {
                    id: account.id.clone(),
                    tenant_id: account.tenant.clone(),
                    provider: account.provider.clone(),
                    name: format!("{}-{}", account.provider, &account.id[account.id.len() - 4..]),
                    description: String::new(),
                    endpoint: cloud.base_url().to_owned(),
                    locations: account.locations.clone(),
                    sealed_credentials: key.seal(&credentials, &account.id).unwrap(),
                    rate_limits: String::new(),
                    now,
                })
                .await
                .unwrap();
        }
        for pool in &self.pools {
            store.pool_create(&NewPool { now, ..pool.clone() }).await.unwrap();
        }
        for offer in &self.offers {
            store.offer_create(&NewOffer { now, ..offer.clone() }).await.unwrap();
        }
        for quota in &self.quotas {
            store.quota_create(&NewQuota { now, ..quota.clone() }).await.unwrap();
        }
    }
}
