//! Who may plan: a plan is decided like a read of the resource it names. A viewer of the tenant
//! may plan a change it could not make; another tenant's plan of the resource answers exactly as
//! its read does (`NOT_FOUND`, word for word); a plan that names no call is `INVALID_INPUT`
//! naming `update`.

use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::writes_nothing::with;
use super::{cluster, volume};
use crate::harness::violated_fields;

crate::on_both_backends!(a_plan_is_decided_like_a_read);

async fn a_plan_is_decided_like_a_read(backend: Backend) {
    let mut env = super::setup(backend).start().await;
    env.start_worker();
    let data = env.ready("volumes", "volumeId", volume("data", 10)).await;
    let created = env.ok("/api/compute/kubernetesClusters/create", cluster("web")).await;
    let cluster_ref = json!({"tenantId": "acme", "clusterId": created["id"]});
    let limit = Duration::from_secs(30);
    env.get_until(&env.acme_admin, "kubernetesClusters", cluster_ref.clone(), limit, "ready", |c| {
        c["state"] == "ready"
    })
    .await;
    let volume_ref = json!({"tenantId": "acme", "volumeId": data["id"]});
    let grow = json!({"update": with(&volume_ref, json!({"sizeGigabytes": 20}))});

    // The viewer plans what it may not do: the plan says what the change would do, and the
    // change itself is still refused to it.
    let (status, plan) = env.post_as(&env.acme_viewer, "/api/compute/volumes/plan", grow.clone()).await;
    assert_eq!((status, plan["effect"].as_str()), (200, Some("inPlace")), "{plan}");
    let update = with(&volume_ref, json!({"sizeGigabytes": 20}));
    env.expect_failure(&env.acme_viewer, "/api/compute/volumes/update", update, 403, "ACCESS_DENIED").await;
    let (status, plan) =
        env.post_as(&env.acme_viewer, "/api/compute/kubernetesClusters/plan", json!({"delete": cluster_ref})).await;
    assert_eq!((status, plan["effect"].as_str()), (200, Some("delete")), "{plan}");

    // Globex learns nothing of acme's volume or cluster: each plan answers as its get does.
    for (kind, reference, plan_body) in [
        ("volumes", volume_ref.clone(), grow.clone()),
        ("volumes", volume_ref.clone(), json!({"delete": volume_ref})),
        ("kubernetesClusters", cluster_ref.clone(), json!({"delete": cluster_ref})),
    ] {
        let (plan_status, planned) =
            env.post_as(&env.globex_admin, &format!("/api/compute/{kind}/plan"), plan_body.clone()).await;
        let (get_status, got) = env.post_as(&env.globex_admin, &format!("/api/compute/{kind}/get"), reference).await;
        assert_eq!(plan_status, get_status, "{kind}: plan {planned} / get {got}");
        assert_eq!(plan_status, 403, "globex is refused on acme's tenant: {planned}");
        assert_eq!(planned["error"]["code"], got["error"]["code"], "{planned} / {got}");
        assert_eq!(planned["error"]["message"], got["error"]["message"], "{planned} / {got}");
    }
    // Globex naming its own tenant around acme's volume id: as a volume that does not exist.
    let theirs = json!({"update": {"tenantId": "globex", "volumeId": data["id"], "sizeGigabytes": 20}});
    let missing =
        json!({"update": {"tenantId": "globex", "volumeId": "pvol_0000000000000000000000zzzz", "sizeGigabytes": 20}});
    let foreign = env.expect_failure(&env.globex_admin, "/api/compute/volumes/plan", theirs, 404, "NOT_FOUND").await;
    let unknown = env.expect_failure(&env.globex_admin, "/api/compute/volumes/plan", missing, 404, "NOT_FOUND").await;
    let text = |error: &Value, id: &str| error["message"].as_str().unwrap().replace(id, "ID");
    assert_eq!(text(&foreign, data["id"].as_str().unwrap()), text(&unknown, "pvol_0000000000000000000000zzzz"));

    // A plan of nothing.
    let error = env.expect_failure(&env.acme_admin, "/api/compute/volumes/plan", json!({}), 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["update"], "{error}");
}
