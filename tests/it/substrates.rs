//! Kubernetes pool substrates as far as they are built: a pool's `policy.substrate` is checked
//! at the call, every fault named by its path, its account must be a live GKE account of the
//! pool's owner, and a live pool keeps its substrate's cluster (archive it to switch).

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::catalog::{Client, Platform, gke_key};
use crate::harness::{TestDb, TestServer};

crate::on_both_backends!(
    a_substrate_policy_is_checked_at_the_call_with_every_fault_by_its_path,
    a_substrate_is_on_a_gke_account_of_the_pools_owner,
    a_live_pool_keeps_its_substrates_cluster_until_it_is_archived,
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
    let db = TestDb::new(backend).await;
    let server = TestServer::start(&db).await;
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
    let db = TestDb::new(backend).await;
    let server = TestServer::start(&db).await;
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
    let db = TestDb::new(backend).await;
    let server = TestServer::start(&db).await;
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
