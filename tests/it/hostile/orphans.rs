//! Force delete and the orphan report against a hostile caller: another tenant cannot force a
//! tenant's resource (it answers as one that does not exist, or refuses naming the tenant), a
//! viewer cannot, a resource whose provider answers is not forced, a `force` of the wrong type
//! is refused naming it; the report refuses malformed filters naming each, another tenant's
//! report is refused, and only operators dismiss.

use better_compute::store::Backend;
use serde_json::json;

use crate::harness::violated_fields;
use crate::vps::DO_POOL;

crate::on_both_backends!(no_caller_forces_or_reads_what_is_not_theirs);

const DELETE: &str = "/api/compute/volumes/delete";
const LIST: &str = "/api/compute/orphans/list";
const DISMISS: &str = "/api/compute/orphans/dismiss";

async fn no_caller_forces_or_reads_what_is_not_theirs(backend: Backend) {
    let env = crate::vps::setup(backend).start().await;
    let (acme, globex, viewer) = (env.acme_admin.clone(), env.globex_admin.clone(), env.acme_viewer.clone());
    let request = json!({"tenantId": "acme", "poolId": DO_POOL, "name": "data", "region": "nyc3",
                         "sizeGigabytes": 10, "idempotencyKey": "data"});
    let volume = env.ok("/api/compute/volumes/create", request).await;
    let id = volume["id"].as_str().unwrap();

    // Globex forces nothing of acme's, through its own tenant or acme's; a viewer neither.
    let theirs = json!({"tenantId": "globex", "volumeId": id, "force": true});
    env.expect_failure(&globex, DELETE, theirs, 404, "NOT_FOUND").await;
    let named = json!({"tenantId": "acme", "volumeId": id, "force": true});
    env.expect_failure(&globex, DELETE, named.clone(), 403, "ACCESS_DENIED").await;
    env.expect_failure(&viewer, DELETE, named.clone(), 403, "ACCESS_DENIED").await;
    // Its reconciler never failed: not a resource to force.
    let error = env.expect_failure(&acme, DELETE, named, 409, "INVALID_STATE").await;
    assert_eq!(error["details"]["field"], "force", "{error}");
    for force in [json!("yes"), json!(1), json!({"value": true}), json!([true])] {
        let body = json!({"tenantId": "acme", "volumeId": id, "force": force});
        let error = env.expect_failure(&acme, DELETE, body, 400, "INVALID_INPUT").await;
        assert!(error.to_string().contains("force"), "{force}: {error}");
    }
    let unchanged = env.ok("/api/compute/volumes/get", json!({"tenantId": "acme", "volumeId": id})).await;
    assert_eq!(
        (unchanged["state"].clone(), unchanged["version"].clone()),
        (volume["state"].clone(), volume["version"].clone())
    );

    // The report: malformed filters name their field; another tenant's is refused.
    for (field, body) in [
        ("tenantId", json!({"tenantId": "acme' OR '1'='1"})),
        ("resourceId", json!({"resourceId": "vol_../../etc"})),
        ("status", json!({"status": "removed' --"})),
    ] {
        let error = env.expect_failure(&acme, LIST, body, 400, "INVALID_INPUT").await;
        assert_eq!(violated_fields(&error["details"]), [field], "{error}");
    }
    env.expect_failure(&globex, LIST, json!({"tenantId": "acme"}), 403, "ACCESS_DENIED").await;
    let (status, _) = env.server.post(LIST, None, json!({})).await;
    assert_eq!(status, 401);

    // Dismissal is an operator's; a malformed id is refused naming it before any decision.
    let orphan = json!({"orphanId": "orph_0000000000000000000000zzzz"});
    env.expect_failure(&acme, DISMISS, orphan, 403, "ACCESS_DENIED").await;
    let error = env.expect_failure(&acme, DISMISS, json!({"orphanId": "orph_;DROP TABLE"}), 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["orphanId"], "{error}");
}
