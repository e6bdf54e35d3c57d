//! The two hosting models use the same calls: besides the platform's pools offered to tenants
//! (every other test), a pool on the tenant's own GKE account puts the cluster in the tenant's
//! cloud project; such a pool is the tenant's alone, and on `platform-fee` it bills the cluster.

use std::time::Duration;

use better_compute::store::Backend;
use serde_json::json;
use sqlx::Connection;

use super::{PROJECT, standard};

crate::on_both_backends!(a_pool_on_the_tenants_own_account_puts_the_cluster_in_the_tenants_project);

async fn a_pool_on_the_tenants_own_account_puts_the_cluster_in_the_tenants_project(backend: Backend) {
    let mut env = super::start(backend).await;
    env.start_worker();
    let admin = env.server.admin_token.clone();
    let account = json!({"tenantId": "acme", "provider": "gke", "name": "acme-gke",
        "credentials": env.cloud.service_account_key("acme-gcp", "acme-deployer"), "endpoint": env.cloud.base_url(),
        "zones": ["europe-west1-b", "europe-west1-c"]});
    let (status, account) = env.post_as(&admin, "/api/platform/accounts/create", account).await;
    assert_eq!(status, 200, "{account}");
    let pool = json!({"accountId": account["id"], "name": "acme-own", "billingMode": "platform-fee"});
    let (status, pool) = env.post_as(&admin, "/api/platform/pools/create", pool).await;
    assert_eq!(status, 200, "{pool}");
    let pool_id = pool["id"].as_str().unwrap();

    let mut request = standard("own", "own");
    request["poolId"] = json!(pool_id);
    let created = env.ok("/api/compute/kubernetesClusters/create", request.clone()).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(20)).await;
    let fake = env.fake_clusters();
    assert_eq!(fake.len(), 1);
    assert_eq!(fake[0]["project"], "acme-gcp", "the cluster lives in the tenant's project, not {PROJECT}");
    assert_eq!(fake[0]["labels"]["better-compute-cluster"], id.as_str());

    // Another tenant cannot see the pool.
    let mut theirs = request;
    theirs["tenantId"] = json!("globex");
    let (status, answer) = env.post_as(&env.globex_admin, "/api/compute/kubernetesClusters/create", theirs).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{answer}");

    // `platform-fee` bills the cluster to the tenant, from acceptance until deletion.
    env.ok("/api/compute/kubernetesClusters/delete", json!({"tenantId": "acme", "clusterId": id})).await;
    env.wait_cluster_state(&id, "deleted", Duration::from_secs(20)).await;
    assert!(env.fake_clusters().is_empty());
    let billed: Vec<(String, Option<i64>)> = sqlx::query_as(
        "SELECT tenant_id, billing_end FROM usage_billables WHERE meter = 'kubernetes.cluster.hours' AND resource_id = $1",
    )
    .bind(&id)
    .fetch_all(&mut sqlx::AnyConnection::connect(&env.db.url).await.unwrap())
    .await
    .unwrap();
    assert_eq!(billed.len(), 1, "{billed:?}");
    assert_eq!(billed[0].0, "acme");
    assert!(billed[0].1.is_some(), "billing ended at deletion");
}
