//! The operation log and the `problem` of a stuck resource, end to end: the real worker's GKE
//! calls against the fake cloud, read back through `operations/list` and the cluster's view.

mod clusters;
mod machines;
mod problems;

use std::time::Duration;

use better_compute::domain::dates::rfc3339_seconds;
use serde_json::{Value, json};

use crate::harness::Env;

/// The seconds since the epoch of a view's timestamp field.
fn seconds(value: &Value) -> i64 {
    rfc3339_seconds(value.as_str().unwrap_or_default()).unwrap_or_else(|| panic!("{value} is not a timestamp"))
}

/// The seconds since the epoch now.
fn now_seconds() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

impl Env {
    /// Acme's cluster, polled until it shows a problem of `class`.
    async fn wait_problem(&self, cluster_id: &str, class: &str) -> Value {
        let body = json!({"tenantId": "acme", "clusterId": cluster_id});
        let what = format!("with a {class} problem");
        let limit = Duration::from_secs(20);
        self.get_until(&self.acme_admin, "kubernetesClusters", body, limit, &what, |c| c["problem"]["class"] == class)
            .await
    }

    /// The operation log of acme's resource `id`, one page.
    async fn operations(&self, id: &str, page_size: i32, page_token: &str) -> Value {
        let body = json!({"tenantId": "acme", "resourceId": id, "pageSize": page_size, "pageToken": page_token});
        self.ok("/api/compute/operations/list", body).await
    }
}
