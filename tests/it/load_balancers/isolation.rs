//! Tenant isolation at the provider: two tenants with instances in the same pool and region;
//! every load balancer either makes reaches exactly its own tenant's droplets on its own network,
//! as the fake cloud's inspection shows, under pool targets, named targets and after instance
//! deletions; and no load-balancer request ever carried a tag.

use std::collections::BTreeSet;

use serde_json::json;

use super::fixtures::{Machine, droplets};
use super::{CREATE, Env, POOL, REGION, as_tenant, regional};
use better_compute::store::{Backend, now_micros};

crate::on_both_backends!(every_load_balancer_reaches_exactly_its_own_tenants_droplets);

async fn every_load_balancer_reaches_exactly_its_own_tenants_droplets(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let acme1 = env.instance("acme", POOL, REGION, None).await;
    let acme2 = env.instance("acme", POOL, REGION, None).await;
    let globex1 = env.instance("globex", POOL, REGION, None).await;
    let globex2 = env.instance("globex", POOL, REGION, None).await;
    let acme_subnet = env.subnet("acme", POOL, REGION, "10.10.0.0/24").await;
    let globex_subnet = env.subnet("globex", POOL, REGION, "10.11.0.0/24").await;
    let acme_private = env.instance("acme", POOL, REGION, Some(&acme_subnet)).await;
    let globex_private = env.instance("globex", POOL, REGION, Some(&globex_subnet)).await;
    let acme_unborn = env.instance_row("acme", POOL, REGION, None).await;
    // Of the tenant, but in another pool or region: no pool target of POOL in REGION reaches them.
    let acme_elsewhere = env.instance("acme", POOL, super::OTHER_REGION, None).await;
    let acme_own_pool = env.instance("acme", super::OWN_POOL, REGION, None).await;

    let globex = env.globex_admin.clone();
    let make = |tenant: &'static str, name: &'static str, targets: serde_json::Value, subnet: Option<&str>| {
        let mut body = as_tenant(regional(name, targets), tenant);
        if let Some(subnet) = subnet {
            body["subnetId"] = json!(subnet);
        }
        let token = if tenant == "acme" { env.acme_admin.clone() } else { globex.clone() };
        let env = &env;
        async move { env.ok_as(&token, CREATE, body).await["id"].as_str().unwrap().to_owned() }
    };
    let acme_pool = make("acme", "acme-pool", json!({"pool": true}), None).await;
    let acme_named = make("acme", "acme-named", json!({"instanceIds": [acme1.id]}), None).await;
    let acme_net = make("acme", "acme-net", json!({"pool": true}), Some(&acme_subnet)).await;
    let globex_pool = make("globex", "globex-pool", json!({"pool": true}), None).await;
    let globex_named = make("globex", "globex-named", json!({"instanceIds": [globex2.id, globex1.id]}), None).await;
    let globex_net = make("globex", "globex-net", json!({"pool": true}), Some(&globex_subnet)).await;

    let expect = |tenant: &'static str, id: String, machines: Vec<&Machine>| {
        let wanted = droplets(&machines);
        let env = &env;
        async move {
            let fake =
                env.wait_fake(tenant, &id, "reaches its droplets", |fake| Env::fake_droplets(fake) == wanted).await;
            assert_eq!(Env::fake_droplets(&fake), wanted, "{id}");
            fake
        }
    };
    expect("acme", acme_pool.clone(), vec![&acme1, &acme2]).await;
    expect("acme", acme_named.clone(), vec![&acme1]).await;
    let net = expect("acme", acme_net.clone(), vec![&acme_private]).await;
    expect("globex", globex_pool.clone(), vec![&globex1, &globex2]).await;
    expect("globex", globex_named.clone(), vec![&globex1, &globex2]).await;
    expect("globex", globex_net.clone(), vec![&globex_private]).await;
    let acme_vpc = env.store.subnet_fetch(&acme_subnet).await.unwrap().unwrap().provider_id;
    assert_eq!(net["vpcUuid"], acme_vpc.as_str(), "a load balancer on a subnet lives in its VPC");
    let default = env.fake_load_balancers().into_iter().find(|lb| lb["dropletIds"] == json!([acme1.droplet])).unwrap();
    assert_ne!(default["vpcUuid"], acme_vpc.as_str());
    let _ = acme_unborn;
    let everywhere: BTreeSet<u64> = env.fake_load_balancers().iter().flat_map(Env::fake_droplets).collect();
    assert!(!everywhere.contains(&acme_elsewhere.droplet) && !everywhere.contains(&acme_own_pool.droplet));

    // Deleting instances updates the load balancers that reached them at once (the settled pass
    // is ten minutes away here), the droplets themselves still running at the provider.
    env.store.instance_delete(&acme1.id, now_micros(), None).await.unwrap();
    env.store.instance_delete(&globex2.id, now_micros(), None).await.unwrap();
    expect("acme", acme_pool, vec![&acme2]).await;
    expect("acme", acme_named.clone(), vec![]).await;
    expect("globex", globex_pool, vec![&globex1]).await;
    expect("globex", globex_named, vec![&globex1]).await;
    expect("acme", acme_net, vec![&acme_private]).await;
    expect("globex", globex_net, vec![&globex_private]).await;
    let droplets_at_provider: BTreeSet<u64> = env.cloud.inspect()["digitalocean"]["droplets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["id"].as_u64().unwrap())
        .collect();
    assert!(droplets_at_provider.contains(&acme1.droplet) && droplets_at_provider.contains(&globex2.droplet));
    // The provider sees the change a moment before the reconciler records it.
    env.wait_until("acme", &acme_named, "ready reaching nothing", |lb| {
        lb["state"] == "ready" && lb["reachedIds"] == json!([])
    })
    .await;

    // Across every load balancer at the provider, no droplet of one tenant is reached by a load
    // balancer of the other, and no request carried a tag.
    let acme_droplets: BTreeSet<u64> =
        [&acme1, &acme2, &acme_private, &acme_elsewhere, &acme_own_pool].iter().map(|m| m.droplet).collect();
    let globex_droplets: BTreeSet<u64> = [&globex1, &globex2, &globex_private].iter().map(|m| m.droplet).collect();
    for lb in env.fake_load_balancers() {
        let reached: BTreeSet<u64> = Env::fake_droplets(&lb).into_iter().collect();
        assert!(reached.is_subset(&acme_droplets) || reached.is_subset(&globex_droplets), "{lb}");
        assert_eq!(lb["tag"], "", "{lb}");
    }
    assert_eq!(env.tag_requests(), 0, "no load-balancer request ever carried a tag");
}
