//! The orphan report is read like the tenant's other data: acme's admin and viewer see acme's
//! orphans, globex sees none of them (and is refused naming acme), an operator sees every
//! tenant's; dismissing one is an operator's, and stops the sweeper's retries.

use better_compute::store::Backend;
use serde_json::json;

use super::{DELETE, DISMISS, Env, GKE_ROUTE, LIST};

crate::on_both_backends!(orphans_are_read_like_the_tenants_data_and_dismissed_by_an_operator);

/// Forces the delete of a ready acme cluster while its account fails; returns the cluster's id.
async fn forced_cluster(env: &Env, name: &str) -> String {
    let id = env.ready_cluster("acme", name).await;
    env.cloud.set_error_rate(GKE_ROUTE, 1.0, 503);
    let body = json!({"tenantId": "acme", "clusterId": id});
    env.ok(DELETE, body.clone()).await;
    let mut forced = body;
    forced["force"] = json!(true);
    assert_eq!(env.ok(DELETE, forced).await["state"], "deleted");
    id
}

async fn orphans_are_read_like_the_tenants_data_and_dismissed_by_an_operator(backend: Backend) {
    let mut env = super::setup(backend).start().await;
    env.start_worker();
    let id = forced_cluster(&env, "left").await;
    let acme = json!({"tenantId": "acme"});

    let seen = env.orphans_as(&env.acme_admin, acme.clone()).await;
    assert_eq!(seen.len(), 1, "{seen:?}");
    let ids = |orphans: &[serde_json::Value]| orphans.iter().map(|o| o["id"].clone()).collect::<Vec<_>>();
    let viewed = env.orphans_as(&env.acme_viewer, json!({})).await;
    assert_eq!(ids(&viewed), ids(&seen), "a viewer reads its own tenant's by default");
    assert!(env.orphans_as(&env.globex_admin, json!({})).await.is_empty(), "globex has none");
    let refused = env.expect_failure(&env.globex_admin, LIST, acme.clone(), 403, "ACCESS_DENIED").await;
    assert!(!refused.to_string().contains(&id), "the refusal says nothing of acme's orphans: {refused}");
    let operator = env.server.admin_ok(LIST, json!({})).await;
    assert!(operator["orphans"].as_array().unwrap().iter().any(|o| o["resourceId"] == id.as_str()), "{operator}");

    // Only an operator dismisses, and a dismissed orphan is no longer retried.
    let orphan_id = seen[0]["id"].as_str().unwrap().to_owned();
    env.expect_failure(&env.acme_admin, DISMISS, json!({"orphanId": orphan_id}), 403, "ACCESS_DENIED").await;
    let dismissed = env.server.admin_ok(DISMISS, json!({"orphanId": orphan_id})).await;
    assert_eq!(dismissed["status"], "dismissed", "{dismissed}");
    let tries = dismissed["updatedAt"].clone();
    env.cloud.set_error_rate(GKE_ROUTE, 0.0, 503);
    crate::harness::poll(super::LIMIT, "the sweep ended with nothing left to try", || async {
        match env.work_failure(better_compute::store::ORPHAN_SWEEP_OBJECT).await {
            None => Ok(()),
            Some(item) => Err(format!("{item:?}")),
        }
    })
    .await;
    let later = env.orphans_as(&env.acme_admin, json!({"tenantId": "acme", "status": "dismissed"})).await;
    assert_eq!((later.len(), &later[0]["updatedAt"]), (1, &tries), "{later:?}");
    let missing = "orph_0000000000000000000000zzzz";
    env.expect_failure(&env.server.admin_token, DISMISS, json!({"orphanId": missing}), 404, "NOT_FOUND").await;
}
