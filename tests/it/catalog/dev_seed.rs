//! `bcctl dev` seeds the demo catalog once and lists its pools in `dev.json`.

use std::process::{Command, Output};

use serde_json::{Value, json};

use crate::harness::{System, curl};
use better_compute::store::Backend;

fn call(dev: &Value, path: &str, body: Value) -> Value {
    let auth = format!("Authorization: Bearer {}", dev["adminToken"].as_str().unwrap());
    let url = format!("{}{path}", dev["endpoint"].as_str().unwrap());
    let text = curl(&["-s", &url, "-H", &auth, "-d", &body.to_string()]);
    serde_json::from_str(&text).unwrap_or_else(|_| panic!("{path}: {text}"))
}

/// Runs `bcctl` against the `bcctl dev` of `dev` as its operator.
fn bcctl(dev: &Value, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bcctl"))
        .args(args)
        .env("BC_ENDPOINT", dev["endpoint"].as_str().unwrap())
        .env("BC_TOKEN", dev["adminToken"].as_str().unwrap())
        .output()
        .unwrap()
}

fn bc_json(dev: &Value, args: &[&str]) -> Value {
    let output = bcctl(dev, &[&["-o", "json"], args].concat());
    assert!(output.status.success(), "bcctl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).unwrap()
}

#[test]
fn bc_dev_seeds_accounts_pools_offers_and_quotas_once() {
    let dir = tempfile::tempdir().unwrap();
    let (running, dev) = System::on(Backend::Sqlite).dev(dir.path());
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

    // The same catalog through `bcctl`; credentials go in by file and never come out.
    let visible = bc_json(&dev, &["pools", "visible", "--tenant", "acme"]);
    assert_eq!(visible["pools"].as_array().unwrap().len(), 2, "{visible}");
    let quota = bc_json(
        &dev,
        &["quotas", "get", "--pool", digitalocean.as_str().unwrap(), "--tenant", "globex", "--kind", "loadBalancers"],
    );
    assert_eq!(quota["limit"], 5);
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, "dop_v1_CLISECRET77\n").unwrap();
    let created = bcctl(
        &dev,
        &[
            "-o",
            "json",
            "accounts",
            "create",
            "--provider",
            "digitalocean",
            "--name",
            "cli",
            "--region",
            "nyc3",
            "--credentials-file",
            token_file.to_str().unwrap(),
        ],
    );
    assert!(created.status.success(), "{}", String::from_utf8_lossy(&created.stderr));
    let stdout = String::from_utf8(created.stdout).unwrap();
    assert!(stdout.contains("\"credentialsSet\": true") && !stdout.contains("CLISECRET"), "{stdout}");
    let refused = bcctl(
        &dev,
        &[
            "pools",
            "check-placement",
            "--tenant",
            "acme",
            "--pool",
            gke.as_str().unwrap(),
            "--capability",
            "managed-kubernetes",
            "--location",
            "asia-east1-a",
        ],
    );
    assert!(!refused.status.success());
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(stderr.contains("INVALID_INPUT") && stderr.contains("us-central1-a"), "{stderr}");
    assert!(running.terminate().success());

    // A restart keeps the catalog and points the accounts at the new fake cloud.
    let (_running, again) = System::on(Backend::Sqlite).dev(dir.path());
    assert_eq!((again["pools"]["gke"].clone(), again["pools"]["digitalocean"].clone()), (gke, digitalocean));
    let accounts = call(&again, "/api/platform/accounts/list", json!({}));
    assert_eq!(accounts["accounts"].as_array().unwrap().len(), 3, "the two seeded and the one bcctl made");
    let fakecloud = again["fakecloud"].as_str().unwrap();
    let seeded = accounts["accounts"].as_array().unwrap().iter().filter(|a| a["name"] != "cli");
    assert!(seeded.clone().count() == 2 && seeded.into_iter().all(|a| a["endpoint"] == fakecloud), "{accounts}");
    let offers = call(&again, "/api/platform/offers/list", json!({}));
    assert_eq!(offers["offers"].as_array().unwrap().len(), 4, "seeded once: {offers}");
}
