//! A pool's `policy.substrate` is checked at the call, every fault named by its path, its
//! account must be a live GKE account of the pool's owner, a live pool keeps its substrate's
//! cluster (archive it to switch), and the substrate is recorded for the pool's people to read.

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::{Client, Platform, System, gke_key, tenant_principal};

crate::on_both_backends!(
    a_substrate_policy_is_checked_at_the_call_with_every_fault_by_its_path,
    a_substrate_is_on_a_gke_account_of_the_pools_owner,
    a_live_pool_keeps_its_substrates_cluster_until_it_is_archived,
    a_pools_policy_records_its_substrate_pending_for_the_pools_people_to_read,
);

const CREATE: &str = "/api/platform/pools/create";
const UPDATE: &str = "/api/platform/pools/update";

fn substrate(account: &str, cluster: Value) -> Value {
    json!({"substrate": {"kind": "kubernetes", "account": account, "cluster": cluster,
        "flavors": [{"name": "general", "machineType": "e2-standard-4", "nodeCount": 2},
                    {"name": "gpu", "machineType": "g2-standard-8", "autoscaling": {"min": 0, "max": 3},
                     "accelerators": {"type": "nvidia-l4", "count": 1}}]}})
}

fn fields(error: &Value) -> Vec<String> {
    error["error"]["details"]["fields"]
        .as_array()
        .map(|fields| fields.iter().map(|f| f["field"].as_str().unwrap_or_default().to_owned()).collect())
        .unwrap_or_default()
}

async fn a_substrate_policy_is_checked_at_the_call_with_every_fault_by_its_path(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;

    let mut policy = substrate(&platform.gke_account, json!({"create": {"location": "us-central1-a"}}));
    let made = client
        .ok(
            CREATE,
            json!({"accountId": platform.gke_account, "name": "substrate", "billingMode": "none", "policy": policy}),
        )
        .await;
    assert_eq!(made["policy"]["substrate"]["flavors"][1]["name"], "gpu", "the policy is kept as given");

    policy["substrate"]["flavors"][1]["machineType"] = json!("G2 standard");
    policy["substrate"]["flavors"][0]["nodeCount"] = json!(-1);
    policy["substrate"]["cluster"] =
        json!({"create": {"location": "us-central1-a"}, "adopt": {"name": "x", "location": "us-east1"}});
    let (status, refused) = client
        .call(
            CREATE,
            json!({"accountId": platform.gke_account, "name": "bad", "billingMode": "none", "policy": policy}),
        )
        .await;
    assert_eq!((status, refused["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{refused}");
    let named = fields(&refused);
    for field in
        ["policy.substrate.flavors[1].machineType", "policy.substrate.flavors[0].nodeCount", "policy.substrate.cluster"]
    {
        assert!(named.iter().any(|f| f == field), "{field} is named: {refused}");
    }
    let listed = client.ok("/api/platform/pools/list", json!({"accountId": platform.gke_account})).await;
    assert!(listed["pools"].as_array().unwrap().iter().all(|pool| pool["name"] != "bad"), "nothing was written");
    server.stop().await;
}

async fn a_substrate_is_on_a_gke_account_of_the_pools_owner(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let cluster = json!({"adopt": {"name": "shared", "location": "us-central1"}});
    let refusal =
        |answer: &Value| answer["error"]["details"]["fields"][0]["description"].as_str().unwrap_or("").to_owned();

    let policy = substrate(&platform.do_account, cluster.clone());
    let (status, refused) = client
        .call(
            CREATE,
            json!({"accountId": platform.gke_account, "name": "on-do", "billingMode": "none", "policy": policy}),
        )
        .await;
    assert_eq!((status, fields(&refused)), (400, vec!["policy.substrate.account".to_owned()]), "{refused}");
    assert!(refusal(&refused).contains("needs a gke account"), "{refused}");

    let acme_gke = client
        .ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "gke", "name": "acme-gke", "credentials": gke_key(),
                "endpoint": "http://127.0.0.1:1", "zones": ["us-central1-a"]}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let policy = substrate(&platform.gke_account, cluster.clone());
    let (status, refused) = client
        .call(CREATE, json!({"accountId": acme_gke, "name": "borrowing", "billingMode": "none", "policy": policy}))
        .await;
    assert_eq!((status, fields(&refused)), (400, vec!["policy.substrate.account".to_owned()]), "{refused}");
    assert!(refusal(&refused).contains("not one of tenant acme"), "{refused}");

    let policy = substrate(&acme_gke, cluster);
    client.ok(CREATE, json!({"accountId": acme_gke, "name": "own", "billingMode": "none", "policy": policy})).await;
    server.stop().await;
}

async fn a_live_pool_keeps_its_substrates_cluster_until_it_is_archived(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let account = platform.gke_account.clone();
    let created = substrate(&account, json!({"create": {"location": "us-central1-a", "releaseChannel": "stable"}}));
    let pool = client
        .ok(CREATE, json!({"accountId": account, "name": "substrate", "billingMode": "none", "policy": created}))
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let update = |policy: Value| json!({"poolId": pool, "updateMask": "policy", "policy": policy});

    // In place: the channel, the flavors.
    let mut changed = substrate(&account, json!({"create": {"location": "us-central1-a", "releaseChannel": "rapid"}}));
    changed["substrate"]["flavors"][0]["machineType"] = json!("e2-standard-8");
    client.ok(UPDATE, update(changed)).await;

    let adopted = substrate(&account, json!({"adopt": {"name": "shared", "location": "us-central1"}}));
    let (status, refused) = client.call(UPDATE, update(adopted.clone())).await;
    assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("INVALID_STATE")), "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().contains("from create to adopt"), "{refused}");
    let moved = substrate(&account, json!({"create": {"location": "europe-west1-b"}}));
    let (status, _) = client.call(UPDATE, update(moved)).await;
    assert_eq!(status, 409, "a made cluster does not move");

    client.ok(UPDATE, json!({"poolId": pool, "updateMask": "state", "state": "archived"})).await;
    client.ok(UPDATE, update(adopted)).await;
    server.stop().await;
}

async fn a_pools_policy_records_its_substrate_pending_for_the_pools_people_to_read(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let _platform = Platform::create(&client).await;
    let acme_gke = client
        .ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "gke", "name": "acme-gke", "credentials": gke_key(),
                "endpoint": "http://127.0.0.1:1", "zones": ["us-central1-a"]}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let plain = client.ok(CREATE, json!({"accountId": acme_gke, "name": "plain", "billingMode": "none"})).await;
    let policy = substrate(&acme_gke, json!({"adopt": {"name": "shared", "location": "us-central1"}}));
    let pool = client
        .ok(CREATE, json!({"accountId": acme_gke, "name": "substrate", "billingMode": "none", "policy": policy}))
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    let admin = tenant_principal(&server.store, "acme", "admin").await;
    let get = "/api/compute/kubernetesSubstrates/get";

    let (status, recorded) = server.post(get, Some(&admin), json!({"poolId": pool})).await;
    assert_eq!(status, 200, "{recorded}");
    assert_eq!((recorded["state"].as_str(), recorded["mode"].as_str()), (Some("pending"), Some("adopt")));
    assert_eq!(recorded["clusterName"], "shared");
    let body = &pool["pool_".len()..];
    assert_eq!(recorded["flavors"][0]["nodePool"], json!(format!("bc-{}-general", &body[..10])));
    assert_eq!(recorded["flavors"][0]["desiredNodes"], 2);
    assert_eq!(recorded["flavors"][1]["desiredNodes"], 0, "an autoscaled flavor asks for its minimum");
    let (_, listed) =
        server.post("/api/compute/kubernetesSubstrates/list", Some(&admin), json!({"poolId": pool})).await;
    assert_eq!(listed["substrates"].as_array().map(Vec::len), Some(1), "{listed}");

    let (status, none) = server.post(get, Some(&admin), json!({"poolId": plain["id"]})).await;
    assert_eq!((status, none["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{none}");
    let (_, empty) =
        server.post("/api/compute/kubernetesSubstrates/list", Some(&admin), json!({"poolId": plain["id"]})).await;
    assert_eq!(empty["substrates"], json!([]), "{empty}");
    let globex = tenant_principal(&server.store, "globex", "admin").await;
    let (status, _) = server.post(get, Some(&globex), json!({"poolId": pool})).await;
    assert_eq!(status, 403, "another tenant reads nothing of it");

    // A changed flavor bumps its version; archiving asks for the teardown, and the worker is told.
    let mut changed = substrate(&acme_gke, json!({"adopt": {"name": "shared", "location": "us-central1"}}));
    changed["substrate"]["flavors"][0]["nodeCount"] = json!(3);
    client.ok(UPDATE, json!({"poolId": pool, "updateMask": "policy", "policy": changed})).await;
    let (_, updated) = server.post(get, Some(&admin), json!({"poolId": pool})).await;
    assert_eq!((updated["version"].as_i64(), updated["flavors"][0]["desiredNodes"].as_i64()), (Some(2), Some(3)));
    client.ok(UPDATE, json!({"poolId": pool, "updateMask": "state", "state": "archived"})).await;
    let (_, archived) = server.post(get, Some(&admin), json!({"poolId": pool})).await;
    assert_eq!(archived["version"], 3, "{archived}");
    let due = server.store.work_next_due(better_compute::store::SUBSTRATE_KIND).await.unwrap();
    assert!(due.is_some(), "the reconciler is told");
    let filter = better_compute::store::EventFilter {
        subject: pool.clone(),
        type_prefix: "kubernetes.substrate.".into(),
        limit: 10,
        ..Default::default()
    };
    let events = server.store.event_list_after(&filter).await.unwrap();
    assert_eq!(events.iter().map(|e| e.event_type.as_str()).collect::<Vec<_>>(), ["kubernetes.substrate.created"]);
    server.stop().await;
}
