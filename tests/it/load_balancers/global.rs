//! Global load balancers: they target the tenant's regional load balancers (sent to the provider
//! as their provider ids), serve their domains with the tenant's certificates, and hold the
//! regional ones they target (`inUse`) until they no longer do.

use serde_json::{Value, json};

use super::{CREATE, DELETE, Env, OTHER_REGION, POOL, REGION, UPDATE, regional};
use better_compute::store::Backend;

crate::on_both_backends!(a_global_load_balancer_targets_regional_ones_and_serves_its_domains);

fn provider_id(env: &Env, lb: &Value) -> String {
    let name = format!("bc-lb-{}", &lb["id"].as_str().unwrap()[4..28]);
    env.fake_load_balancer(&name).unwrap()["id"].as_str().unwrap().to_owned()
}

async fn a_global_load_balancer_targets_regional_ones_and_serves_its_domains(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    env.instance("acme", POOL, REGION, None).await;
    env.instance("acme", POOL, OTHER_REGION, None).await;
    let certificate = env.certificate("acme", POOL, true).await;
    let east = env.ok(CREATE, regional("east", json!({"pool": true}))).await;
    let mut west = regional("west", json!({"pool": true}));
    west["region"] = json!(OTHER_REGION);
    let west = env.ok(CREATE, west).await;
    let edge = json!({"tenantId": "acme", "poolId": POOL, "name": "edge", "scope": "global",
        "targets": {"loadBalancerIds": [east["id"], west["id"]]},
        "forwarding": [
            {"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 8080},
            {"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http", "targetPort": 8080,
             "certificateId": certificate},
        ],
        "domains": [{"name": "shop.example.com", "certificateId": certificate}, {"name": "www.example.com"}],
        "idempotencyKey": "edge"});
    let edge = env.ok(CREATE, edge).await;
    let id = edge["id"].as_str().unwrap().to_owned();
    assert_eq!(
        (edge["scope"].as_str(), edge["region"].as_str(), edge["subnetId"].as_str()),
        (Some("global"), Some(""), Some(""))
    );
    let ready = env.wait_load_balancer_state("acme", &id, "ready").await;
    assert_eq!(ready["reachedIds"], json!([east["id"], west["id"]]));
    assert!(!ready["address"].as_str().unwrap().is_empty());
    let fake = env.fake_load_balancer(&format!("bc-lb-{}", &id[4..28])).unwrap();
    assert_eq!(fake["type"], "GLOBAL");
    let mut targets: Vec<String> =
        fake["targetLoadBalancerIds"].as_array().unwrap().iter().map(|t| t.as_str().unwrap().to_owned()).collect();
    targets.sort();
    let mut wanted = vec![provider_id(&env, &east), provider_id(&env, &west)];
    wanted.sort();
    assert_eq!(targets, wanted, "the regional ones, by their provider ids");
    assert_eq!(fake["dropletIds"], json!([]), "a global one reaches no droplet itself");
    let provider_certificate = env.store.certificate_fetch(&certificate).await.unwrap().unwrap().provider_id;
    assert_eq!(fake["domains"][0]["name"], "shop.example.com");
    assert_eq!(fake["domains"][0]["certificate_id"], provider_certificate.as_str());
    assert_eq!(fake["domains"][1]["certificate_id"], "");
    assert_eq!(fake["glbSettings"], json!({"target_protocol": "http", "target_port": 8080}));

    // Retargeted to the east one only: the west one is no longer in use and can go.
    let retarget = json!({"tenantId": "acme", "loadBalancerId": id, "targets": {"loadBalancerIds": [east["id"]]}});
    assert_eq!(env.ok(UPDATE, retarget).await["state"], "updating");
    env.wait_fake("acme", &id, "retargeted", |fake| fake["targetLoadBalancerIds"].as_array().unwrap().len() == 1).await;
    env.wait_load_balancer_state("acme", &id, "ready").await;
    let events = env.events("acme", &id).await;
    assert!(
        events
            .iter()
            .any(|e| e["type"] == "providerLoadBalancer.updated" && e["data"]["changed"] == json!(["targets"]))
    );
    env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": west["id"]})).await;
    env.wait_load_balancer_state("acme", west["id"].as_str().unwrap(), "deleted").await;
    let (_, code, details) = env.refused(DELETE, json!({"tenantId": "acme", "loadBalancerId": east["id"]})).await;
    assert_eq!((code.as_str(), details["reason"].as_str()), ("INVALID_STATE", Some("inUse")));
    // Domains replaced with none (setDomains), then the global one goes, and the east one after it.
    let clear = json!({"tenantId": "acme", "loadBalancerId": id, "setDomains": true});
    assert_eq!(env.ok(UPDATE, clear).await["domains"], json!([]));
    env.wait_fake("acme", &id, "no domains", |fake| fake["domains"] == json!([])).await;
    env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    env.wait_load_balancer_state("acme", &id, "deleted").await;
    env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": east["id"]})).await;
    env.wait_load_balancer_state("acme", east["id"].as_str().unwrap(), "deleted").await;
    assert!(env.fake_load_balancers().is_empty());
    assert_eq!(env.quota_used("acme").await, 0);
}
