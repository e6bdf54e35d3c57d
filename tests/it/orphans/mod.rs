//! Force delete and orphans end to end: a forced delete of a cluster whose account stopped
//! answering records its GKE cluster as an orphan and the sweeper removes it once the account
//! answers again; who may force, and when; who reads the orphan report and who dismisses; a
//! normal delete that does not end `deleted` while the provider keeps an object.

mod cli;
mod confirm;
mod force;
mod report;

use std::time::Duration;

use better_compute::store::{Backend, CLUSTER_KIND, ORPHAN_SWEEP_KIND};
use serde_json::{Value, json};
use sqlx::Connection;

use crate::harness::{Catalog, Env, System, poll};

/// The platform pool on the fake GKE account, offered to `acme` and `globex`.
pub const POOL: &str = "pool_0000000000000000000000gke1";
/// The platform's GKE account.
pub const ACCOUNT: &str = "acct_0000000000000000000000gke1";

pub const CREATE: &str = "/api/compute/kubernetesClusters/create";
pub const DELETE: &str = "/api/compute/kubernetesClusters/delete";
pub const LIST: &str = "/api/compute/orphans/list";
pub const DISMISS: &str = "/api/compute/orphans/dismiss";

/// The route of every GKE (and Compute Engine) call at the fake cloud; not its token endpoint.
pub const GKE_ROUTE: &str = "/v1/projects/";

/// How long a wait on the worker may take.
pub const LIMIT: Duration = Duration::from_secs(30);

/// The suite's system: a metered GKE pool offered to acme and globex, the clusters' reconciler
/// and the orphan sweeper.
pub fn setup(backend: Backend) -> System {
    let catalog = Catalog::new()
        .gke_account(ACCOUNT, None, &["europe-west1-b"])
        .pool(POOL, ACCOUNT, "metered", &[])
        .offer(POOL, "acme")
        .offer(POOL, "globex");
    System::on(backend).catalog(catalog).reconciling(&[CLUSTER_KIND, ORPHAN_SWEEP_KIND])
}

/// A one-pool cluster request of `tenant`.
pub fn cluster(tenant: &str, name: &str) -> Value {
    json!({
        "tenantId": tenant, "poolId": POOL, "name": name, "mode": "standard", "location": "europe-west1",
        "idempotencyKey": name,
        "nodePools": [{"name": "general", "machineType": "e2-standard-4", "nodeCount": 1, "zones": ["europe-west1-b"]}],
    })
}

/// The GKE name of cluster `id`.
pub fn gke_name(id: &str) -> String {
    format!("bc-k-{}", &id[4..28])
}

impl Env {
    /// Makes a cluster of `tenant` and waits until it is ready; returns its id.
    pub async fn ready_cluster(&self, tenant: &str, name: &str) -> String {
        let created = self.ok_as(self.admin_of(tenant), CREATE, cluster(tenant, name)).await;
        let id = created["id"].as_str().unwrap().to_owned();
        let body = json!({"tenantId": tenant, "clusterId": id});
        let token = self.admin_of(tenant);
        self.get_until(token, "kubernetesClusters", body, LIMIT, "ready", |c| c["state"] == "ready").await;
        id
    }

    /// The orphans `token` lists with `body`.
    pub async fn orphans_as(&self, token: &str, body: Value) -> Vec<Value> {
        self.ok_as(token, LIST, body).await["orphans"].as_array().unwrap().clone()
    }

    /// Polls acme's orphans of `resource` until `check` holds for them.
    pub async fn wait_orphans(&self, resource: &str, what: &str, check: impl Fn(&[Value]) -> bool) -> Vec<Value> {
        poll(LIMIT, what, || async {
            let orphans = self.orphans_as(&self.acme_admin, json!({"tenantId": "acme", "resourceId": resource})).await;
            if check(&orphans) { Ok(orphans) } else { Err(format!("{orphans:?}")) }
        })
        .await
    }

    /// The failed passes and last error of the work item of `object_id`, if it has one.
    pub async fn work_failure(&self, object_id: &str) -> Option<(i64, Option<String>)> {
        let mut conn = sqlx::AnyConnection::connect(&self.db.url).await.unwrap();
        sqlx::query_as("SELECT attempts, last_error FROM work_items WHERE object_id = $1")
            .bind(object_id)
            .fetch_optional(&mut conn)
            .await
            .unwrap()
    }
}
