//! `bc dev` seeds the demo catalog once and lists its pools in `dev.json`.

use serde_json::{Value, json};

use crate::binaries::{curl, start_dev};

fn call(dev: &Value, path: &str, body: Value) -> Value {
    let auth = format!("Authorization: Bearer {}", dev["adminToken"].as_str().unwrap());
    let url = format!("{}{path}", dev["endpoint"].as_str().unwrap());
    let text = curl(&["-s", &url, "-H", &auth, "-d", &body.to_string()]);
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: {text}"))
}

#[test]
fn bc_dev_seeds_accounts_pools_offers_and_quotas_once() {
    let dir = tempfile::tempdir().unwrap();
    let (running, dev) = start_dev(dir.path());
    let (gke, digitalocean) = (dev["pools"]["gke"].clone(), dev["pools"]["digitalocean"].clone());
    assert!(gke.as_str().is_some_and(|p| p.starts_with("pool_")), "{dev}");
    assert!(digitalocean.as_str().is_some_and(|p| p.starts_with("pool_")), "{dev}");

    let accounts = call(&dev, "/api/platform/accounts/list", json!({}));
    let mut accounts = accounts["accounts"].as_array().unwrap().clone();
    // Seeded in one instant: order them by provider.
    accounts.sort_by_key(|a| a["provider"].as_str().unwrap().to_owned());
    assert_eq!(accounts.len(), 2, "{accounts:?}");
    let fakecloud = dev["fakecloud"].as_str().unwrap();
    assert!(accounts.iter().all(|a| a["endpoint"] == fakecloud), "the accounts point at the fake cloud");
    assert_eq!(accounts[0]["regions"], json!(["nyc3", "ams3", "sfo3"]));
    assert_eq!(accounts[1]["zones"], json!(["us-central1-a", "us-central1-b", "us-central1-c", "europe-west1-b"]));

    for tenant in ["acme", "globex"] {
        let pools = call(&dev, "/api/compute/pools/list", json!({"tenantId": tenant}));
        let mut ids: Vec<&Value> = pools["pools"].as_array().unwrap().iter().map(|p| &p["id"]).collect();
        ids.sort_by_key(|id| id.as_str().unwrap().to_owned());
        let mut expected = [&gke, &digitalocean];
        expected.sort_by_key(|id| id.as_str().unwrap().to_owned());
        assert_eq!(ids, expected, "{tenant}: {pools}");
        assert!(pools["pools"].as_array().unwrap().iter().all(|p| p["billingMode"] == "metered"));
        let quota = call(
            &dev,
            "/api/platform/quotas/get",
            json!({"poolId": digitalocean, "tenantId": tenant, "resourceKind": "loadBalancers"}),
        );
        assert_eq!(quota["limit"], 5, "{quota}");
        let check = call(
            &dev,
            "/api/compute/pools/checkPlacement",
            json!({"tenantId": tenant, "poolId": digitalocean, "capability": "load-balancers", "location": "ams3",
                "resourceKind": "loadBalancers"}),
        );
        assert_eq!(check["ok"], true, "{check}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(dir.path().join("secret.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the secret key is its owner's alone");
    }
    assert!(running.terminate().success());

    // A restart keeps the catalog and points the accounts at the new fake cloud.
    let (_running, again) = start_dev(dir.path());
    assert_eq!((again["pools"]["gke"].clone(), again["pools"]["digitalocean"].clone()), (gke, digitalocean));
    let accounts = call(&again, "/api/platform/accounts/list", json!({}));
    assert_eq!(accounts["accounts"].as_array().unwrap().len(), 2);
    let fakecloud = again["fakecloud"].as_str().unwrap();
    assert!(accounts["accounts"].as_array().unwrap().iter().all(|a| a["endpoint"] == fakecloud), "{accounts}");
    let offers = call(&again, "/api/platform/offers/list", json!({}));
    assert_eq!(offers["offers"].as_array().unwrap().len(), 4, "seeded once: {offers}");
}
