//! `bcctl dev`'s demo catalog: a GKE and a DigitalOcean account on the in-process fake cloud, a
//! metered pool on each offered to both demo tenants (`acme` and `globex`, which
//! [`crate::dev_seed`] makes first), a `loadBalancers` quota of 5 per tenant on the
//! DigitalOcean pool, and the platform's bare-metal pool (`pools.metal`) for the fake cloud's
//! BMCs, with a default image, room for 10 machines, and the loopback network allowed for BMC
//! addresses (the fake cloud's BMCs listen on 127.0.0.1, which a pool refuses unless its policy
//! allows it).
//!
//! It is made once: a restart finds the accounts by name and keeps everything, only pointing
//! them at the fake cloud of this run (it listens on a new port and has forgotten the
//! service account it knew).

use std::collections::BTreeMap;

use crate::dev_seed::DEMO_TENANTS;
use crate::domain::states::OfferState;
use crate::error::{Error, Result};
use crate::ids::{AccountId, PoolId};
use crate::secrets::SecretKey;
use crate::store::{AccountChange, NewAccount, NewOffer, NewPool, NewQuota, PoolChange, Store, now_micros};
use fakecloud::FakeCloud;

/// The GKE account's zones.
pub const GKE_ZONES: [&str; 4] = ["us-central1-a", "us-central1-b", "us-central1-c", "europe-west1-b"];
/// The DigitalOcean account's regions.
pub const DIGITALOCEAN_REGIONS: [&str; 3] = ["nyc3", "ams3", "sfo3"];
/// The load balancers each tenant may have on the DigitalOcean pool.
pub const LOAD_BALANCER_QUOTA: i64 = 5;

/// One demo provider: its account's name, provider, locations, credentials and the meter its
/// pool prices.
struct Demo {
    name: &'static str,
    provider: &'static str,
    locations: Vec<String>,
    credentials: String,
    meter: &'static str,
    price: i64,
}

/// Seeds the demo catalog (once) and returns `{gke: <pool id>, digitalocean: <pool id>,
/// metal: <pool id>}` for `dev.json`.
pub async fn seed(
    store: &Store,
    key: &SecretKey,
    fakecloud: &FakeCloud,
    digitalocean_token: &str,
) -> Result<serde_json::Map<String, serde_json::Value>> {
    let now = now_micros();
    let demos = [
        Demo {
            name: "demo-gke",
            provider: "gke",
            locations: GKE_ZONES.map(String::from).to_vec(),
            credentials: fakecloud.service_account_key("bc-dev-platform", "bc-platform"),
            meter: "kubernetes.cluster.hours",
            price: 10,
        },
        Demo {
            name: "demo-digitalocean",
            provider: "digitalocean",
            locations: DIGITALOCEAN_REGIONS.map(String::from).to_vec(),
            credentials: digitalocean_token.to_owned(),
            meter: "vps.load-balancer.hours",
            price: 2,
        },
    ];
    let accounts = store.account_list("", true, false).await?;
    let mut pools = serde_json::Map::new();
    for demo in demos {
        let pool_id = match accounts.iter().find(|a| a.name == demo.name && a.provider == demo.provider) {
            Some(account) => {
                let change = AccountChange {
                    endpoint: Some(fakecloud.base_url().to_owned()),
                    sealed_credentials: Some(key.seal(&demo.credentials, &account.id)?),
                    ..AccountChange::default()
                };
                store.account_update(&account.id, &change, now).await?;
                let pool = store.pool_list(&account.id, "", false).await?.into_iter().find(|p| p.name == demo.name);
                pool.map(|p| p.id).ok_or_else(|| {
                    Error::invalid_state(format!("the demo pool {} is gone; remove the data directory", demo.name))
                })?
            }
            None => seed_provider(store, key, fakecloud, &demo, now).await?,
        };
        pools.insert(demo.provider.to_owned(), pool_id.into());
    }
    pools.insert("metal".to_owned(), seed_metal_pool(store, now).await?.into());
    Ok(pools)
}

/// The bare-metal pool's name.
const METAL_POOL: &str = "demo-metal";

/// The networks the bare-metal pool allows BMC addresses on: the fake cloud's loopback.
fn metal_bmc_networks() -> serde_json::Value {
    serde_json::json!(["127.0.0.0/8"])
}

/// The bare-metal pool, on the DigitalOcean demo account (a pool needs an account; its machines
/// are driven through their BMCs, not the account): made once, found by name after.
async fn seed_metal_pool(store: &Store, now: i64) -> Result<String> {
    let accounts = store.account_list("", true, false).await?;
    let account = accounts
        .iter()
        .find(|a| a.name == "demo-digitalocean")
        .ok_or_else(|| Error::invalid_state("the demo DigitalOcean account is gone; remove the data directory"))?;
    if let Some(pool) = store.pool_list(&account.id, "", false).await?.into_iter().find(|p| p.name == METAL_POOL) {
        // A data directory made before BMC addresses were checked gets the allowance too.
        if pool.policy.pointer("/metal/bmcAllowedNetworks").is_none() {
            let mut policy = pool.policy.clone();
            let metal = policy.as_object_mut().map(|p| p.entry("metal").or_insert_with(|| serde_json::json!({})));
            if let Some(metal) = metal.and_then(serde_json::Value::as_object_mut) {
                metal.insert("bmcAllowedNetworks".to_owned(), metal_bmc_networks());
            }
            let change = PoolChange { policy: Some(policy), ..PoolChange::default() };
            store.pool_update(&pool.id, &change, now).await?;
        }
        return Ok(pool.id);
    }
    let pool_id = PoolId::random().to_string();
    store
        .pool_create(&NewPool {
            id: pool_id.clone(),
            account_id: account.id.clone(),
            name: METAL_POOL.to_owned(),
            description: "bare-metal machines behind the fake cloud's Redfish BMCs".to_owned(),
            billing_mode: "none".to_owned(),
            policy: serde_json::json!({
                "maxMachines": 10,
                "metal": {
                    "image": "https://images.better-compute.dev/node/latest.iso",
                    "bmcAllowedNetworks": metal_bmc_networks(),
                },
            }),
            prices: BTreeMap::new(),
            now,
        })
        .await?;
    Ok(pool_id)
}

/// Makes one demo account, its pool, the offers and (DigitalOcean) the quotas.
async fn seed_provider(store: &Store, key: &SecretKey, fakecloud: &FakeCloud, demo: &Demo, now: i64) -> Result<String> {
    let account_id = AccountId::random().to_string();
    store
        .account_create(&NewAccount {
            id: account_id.clone(),
            tenant_id: None,
            provider: demo.provider.to_owned(),
            name: demo.name.to_owned(),
            description: "the platform's demo account on the fake cloud".to_owned(),
            endpoint: fakecloud.base_url().to_owned(),
            locations: demo.locations.clone(),
            sealed_credentials: key.seal(&demo.credentials, &account_id)?,
            rate_limits: String::new(),
            now,
        })
        .await?;
    let pool_id = PoolId::random().to_string();
    store
        .pool_create(&NewPool {
            id: pool_id.clone(),
            account_id,
            name: demo.name.to_owned(),
            description: "a metered demo pool".to_owned(),
            billing_mode: "metered".to_owned(),
            policy: serde_json::json!({}),
            prices: BTreeMap::from([(demo.meter.to_owned(), demo.price)]),
            now,
        })
        .await?;
    for tenant in DEMO_TENANTS {
        store
            .offer_create(&NewOffer {
                pool_id: pool_id.clone(),
                tenant_id: tenant.to_owned(),
                state: OfferState::Active,
                excluded_regions: Vec::new(),
                now,
            })
            .await?;
        if demo.provider == "digitalocean" {
            store
                .quota_create(&NewQuota {
                    pool_id: pool_id.clone(),
                    tenant_id: tenant.to_owned(),
                    resource_kind: "loadBalancers".to_owned(),
                    limit: LOAD_BALANCER_QUOTA,
                    now,
                })
                .await?;
        }
    }
    Ok(pool_id)
}
