//! `operations/list` against a hostile caller: an id that is a path or SQL, a NUL, a huge page, a
//! forged page token, a resource of another tenant named under the caller's own: each is refused
//! with the field named (or answered as an unknown id), and the server keeps answering.

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::{System, violated_fields};

crate::on_both_backends!(hostile_operation_log_reads_are_refused_naming_the_field);

async fn hostile_operation_log_reads_are_refused_naming_the_field(backend: Backend) {
    let env = System::on(backend).start().await;
    let list = "/api/compute/operations/list";
    let cases: [(&str, Value, &str); 6] = [
        ("a path for an id", json!({"tenantId": "acme", "resourceId": "../../etc/passwd"}), "resourceId"),
        ("SQL for an id", json!({"tenantId": "acme", "resourceId": "kcl_x' OR '1'='1"}), "resourceId"),
        (
            "a NUL in the id",
            json!({"tenantId": "acme", "resourceId": "kcl_\u{0}abcdefghjkmnpqrstvwxyz01"}),
            "resourceId",
        ),
        ("no resource", json!({"tenantId": "acme"}), "resourceId"),
        (
            "a page past the bound",
            json!({"tenantId": "acme", "resourceId": "kcl_abcdefghjkmnpqrstvwxyz0123", "pageSize": 100000}),
            "pageSize",
        ),
        (
            "a huge page token",
            json!({"tenantId": "acme", "resourceId": "kcl_abcdefghjkmnpqrstvwxyz0123", "pageToken": "9".repeat(4096)}),
            "pageToken",
        ),
    ];
    for (what, body, field) in cases {
        let (status, code, details) = env.refused(list, body).await;
        assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"), "{what}: {details}");
        let mut fields = violated_fields(&details);
        fields.dedup();
        assert_eq!(fields, [field], "{what}: {details}");
    }

    // A forged token of the right shape reads nothing it should not: the resource decides.
    let forged = json!({"tenantId": "acme", "resourceId": "kcl_abcdefghjkmnpqrstvwxyz0123",
        "pageToken": "9223372036854775807.opl_' OR 1=1 --"});
    let (status, code, _) = env.refused(list, forged).await;
    assert_eq!((status, code.as_str()), (404, "NOT_FOUND"), "an unknown resource is not found, whatever the token");

    // The server still answers.
    env.ok("/api/compute/events/list", json!({"tenantId": "acme"})).await;
}
