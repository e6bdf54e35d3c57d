//! Plans and `validateOnly` against a hostile caller: a plan naming both calls, a call of the
//! wrong shape, a malformed id inside the wrapped call, an unknown field, a `validateOnly` that
//! is not a boolean, a plan of a resource that is not the caller's: each is refused with the
//! field named, the server keeps answering, and nothing is written.

use better_compute::store::Backend;
use serde_json::json;

use crate::harness::violated_fields;
use crate::plans::{database_rows, volume};

crate::on_both_backends!(hostile_plans_are_refused_naming_the_field_and_write_nothing);

async fn hostile_plans_are_refused_naming_the_field_and_write_nothing(backend: Backend) {
    let mut env = crate::plans::setup(backend).start().await;
    env.start_worker();
    let data = env.ready("volumes", "volumeId", volume("data", 10)).await;
    env.stop_worker().await;
    let id = data["id"].as_str().unwrap();
    let before = database_rows(&env.server.db).await;
    let plan = "/api/compute/volumes/plan";
    let acme = env.acme_admin.clone();
    let update = json!({"tenantId": "acme", "volumeId": id, "sizeGigabytes": 20});

    let cases = [
        ("both calls", json!({"update": update, "delete": {"tenantId": "acme", "volumeId": id}}), ""),
        ("a call that is a list", json!({"update": [1, 2, 3]}), "update"),
        (
            "a path for an id",
            json!({"update": {"tenantId": "acme", "volumeId": "../../etc/passwd", "sizeGigabytes": 20}}),
            "update.volumeId",
        ),
        (
            "an unknown field inside",
            json!({"update": {"tenantId": "acme", "volumeId": id, "colour": "red"}}),
            "update.colour",
        ),
        (
            "a size past its type",
            json!({"update": {"tenantId": "acme", "volumeId": id, "sizeGigabytes": 4294967296_i64}}),
            "update.sizeGigabytes",
        ),
        (
            "validateOnly as text",
            json!({"update": {"tenantId": "acme", "volumeId": id, "sizeGigabytes": 20, "validateOnly": "yes"}}),
            "update.validateOnly",
        ),
        ("a tenant of bad characters", json!({"delete": {"tenantId": "ac me;", "volumeId": id}}), "delete.tenantId"),
    ];
    for (what, body, field) in cases {
        let (status, answer) = env.post_as(&acme, plan, body.clone()).await;
        assert_eq!(status, 400, "{what}: {body} answered {answer}");
        assert_eq!(answer["error"]["code"], "INVALID_INPUT", "{what}: {answer}");
        if !field.is_empty() {
            assert!(
                violated_fields(&answer["error"]["details"]).iter().any(|f| f == field),
                "{what}: {field} in {answer}"
            );
        }
    }
    // A rehearsal with garbage beside it is refused as the real call would be, writing nothing.
    let garbage = json!({"tenantId": "acme", "volumeId": id, "sizeGigabytes": -1, "validateOnly": true});
    let error = env.expect_failure(&acme, "/api/compute/volumes/update", garbage, 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["sizeGigabytes"], "{error}");
    // A huge wrapped call is bounded like any body.
    let labels: serde_json::Map<String, serde_json::Value> =
        (0..200_000).map(|i| (format!("k{i}"), json!("v"))).collect();
    let huge = json!({"update": {"tenantId": "acme", "volumeId": id, "description": "x", "labels": labels}});
    let (status, answer) = env.post_as(&acme, plan, huge).await;
    assert!(status == 413 || status == 400, "a huge plan: {status} {answer}");

    // Still serving, and nothing was written by any of it.
    let (status, got) =
        env.post_as(&acme, "/api/compute/volumes/get", json!({"tenantId": "acme", "volumeId": id})).await;
    assert_eq!(
        (status, got["sizeGigabytes"].as_i64(), got["version"].as_i64()),
        (200, Some(10), data["version"].as_i64())
    );
    crate::plans::assert_unchanged(&before, &database_rows(&env.server.db).await, "hostile plans");
}
