//! What a refused or cross-tenant caller can make the server write, echo or reveal.
//!
//! A security review found that a viewer's 3.9 MB `tenantId` was decided on, audited whole
//! and echoed back (six calls grew the store from 0.45 MB to 47 MB); that globex could file
//! refusals under acme; and that naming acme's instance as a load balancer target answered
//! `ACCESS_DENIED` naming acme, where an unknown id answered `NOT_FOUND`. Both now answer the
//! page's `ACCESS_DENIED`, word for word, naming only the caller's tenant.

use better_compute::store::Backend;
use serde_json::{Value, json};
use sqlx::{Connection, Row};

use crate::harness::{System, TestDb, TestServer, tenant_principal, violated_fields};
use crate::load_balancers::{CREATE, POOL, REGION, regional};

crate::on_both_backends!(
    a_viewers_huge_tenant_id_is_refused_before_the_decision_and_grows_nothing,
    a_caller_cannot_file_refusals_under_another_tenant,
    another_tenants_instance_as_a_target_answers_as_an_unknown_id_does,
);

mod postgres_only {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_nul_in_a_decided_field_is_refused_never_internal() {
        super::a_nul_in_a_decided_field_is_refused_never_internal().await;
    }
}

/// The characters of every text the audit trail holds, summed.
async fn audit_text_length(db: &TestDb) -> i64 {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    let sql = "SELECT CAST(COALESCE(SUM(LENGTH(principal_id) + LENGTH(method) + LENGTH(permission) + \
               LENGTH(resource_type) + LENGTH(resource_id) + LENGTH(tenant_id) + LENGTH(requested_tenant_id) + \
               LENGTH(decision) + LENGTH(policies) + LENGTH(request_id)), 0) AS BIGINT) FROM audit_events";
    sqlx::query(sql).fetch_one(&mut conn).await.unwrap().get(0)
}

/// The size of the Postgres database, in bytes.
async fn database_bytes(db: &TestDb) -> i64 {
    let mut conn = sqlx::PgConnection::connect(&db.url).await.unwrap();
    sqlx::query_scalar("SELECT pg_database_size(current_database())").fetch_one(&mut conn).await.unwrap()
}

async fn seed_tenants(server: &TestServer) {
    for id in ["acme", "globex"] {
        server.admin_ok("/api/platform/tenants/create", json!({"id": id})).await;
    }
}

async fn a_viewers_huge_tenant_id_is_refused_before_the_decision_and_grows_nothing(backend: Backend) {
    let server = System::on(backend).server().await;
    let db = server.db.clone();
    seed_tenants(&server).await;
    let viewer = tenant_principal(&server.store, "acme", "viewer").await;
    let audited_before = audit_text_length(&db).await;
    let size_before = if backend == Backend::Postgres { database_bytes(&db).await } else { 0 };

    let huge = "a".repeat(3_900_000);
    let cluster = "kcl_0000000000000000000000000a";
    let calls = [
        ("/api/compute/kubernetesClusters/delete", json!({"tenantId": huge, "clusterId": cluster}), "tenantId"),
        ("/api/compute/kubernetesClusters/delete", json!({"tenantId": "acme", "clusterId": huge}), "clusterId"),
        ("/api/platform/tenants/delete", json!({"tenantId": huge}), "tenantId"),
        ("/api/compute/loadBalancers/delete", json!({"tenantId": huge, "loadBalancerId": "plb_x"}), "tenantId"),
        ("/api/compute/instances/delete", json!({"tenantId": "acme", "instanceId": huge}), "instanceId"),
        ("/api/compute/kubernetesClusters/create", json!({"tenantId": "acme", "projectId": huge}), "projectId"),
    ];
    for (path, body, field) in calls {
        let (status, answer) = server.post(path, Some(&viewer), body).await;
        let text = answer.to_string();
        assert_eq!((status, answer["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{path}: {:.300}", text);
        assert!(violated_fields(&answer["error"]["details"]).contains(&field.to_owned()), "{path}: {:.300}", text);
        assert!(text.len() < 2_000, "{path}: the answer repeats {} bytes: {:.300}", text.len(), text);
    }

    let audited = audit_text_length(&db).await - audited_before;
    assert_eq!(audited, 0, "a malformed id is neither decided on nor audited");
    if backend == Backend::Postgres {
        let grown = database_bytes(&db).await - size_before;
        assert!(grown < 2 * 1024 * 1024, "six refusals grew the database by {grown} bytes");
    }
}

async fn a_caller_cannot_file_refusals_under_another_tenant(backend: Backend) {
    let server = System::on(backend).server().await;
    let db = server.db.clone();
    seed_tenants(&server).await;
    let globex = tenant_principal(&server.store, "globex", "admin").await;
    let attempts = [
        ("/api/platform/tenants/delete", json!({"tenantId": "acme"})),
        (
            "/api/compute/kubernetesClusters/delete",
            json!({"tenantId": "acme", "clusterId": "kcl_0000000000000000000000000a"}),
        ),
        ("/api/platform/principals/create", json!({"tenantId": "acme", "kind": "user", "name": "mallory"})),
    ];
    for (path, body) in attempts {
        let (status, answer) = server.post(path, Some(&globex), body).await;
        assert_eq!((status, answer["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{path}: {answer}");
    }

    let acme = server.admin_ok("/api/platform/audit/list", json!({"tenantId": "acme"})).await;
    let acme = acme["auditEvents"].as_array().unwrap();
    assert!(acme.iter().all(|e| e["decision"] == "allow"), "acme's trail holds no refusal of globex: {acme:?}");
    let globex_trail = server.admin_ok("/api/platform/audit/list", json!({"tenantId": "globex"})).await;
    let refusals: Vec<&Value> =
        globex_trail["auditEvents"].as_array().unwrap().iter().filter(|e| e["decision"] == "deny").collect();
    assert_eq!(refusals.len(), 3, "the refusals are filed under the caller's tenant: {globex_trail}");

    // The tenant the call named is kept beside, for operators.
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    let named: Vec<String> = sqlx::query("SELECT requested_tenant_id FROM audit_events WHERE decision = 'deny'")
        .fetch_all(&mut conn)
        .await
        .unwrap()
        .iter()
        .map(|row| row.get(0))
        .collect();
    assert_eq!(named, ["acme", "acme", "acme"]);
}

async fn a_nul_in_a_decided_field_is_refused_never_internal() {
    let server = System::on(Backend::Postgres).server().await;
    seed_tenants(&server).await;
    let viewer = tenant_principal(&server.store, "acme", "viewer").await;
    let cluster = "kcl_0000000000000000000000000a";
    let malformed = [
        ("/api/platform/tenants/delete", json!({"tenantId": "ac\u{0}me"}), "tenantId"),
        ("/api/compute/kubernetesClusters/delete", json!({"tenantId": "ac\u{0}me", "clusterId": cluster}), "tenantId"),
        ("/api/compute/kubernetesClusters/delete", json!({"tenantId": "acme", "clusterId": "kcl_\u{0}"}), "clusterId"),
        ("/api/compute/instances/delete", json!({"tenantId": "acme", "instanceId": "inst_\u{0}x"}), "instanceId"),
    ];
    for (path, body, field) in malformed {
        let (status, answer) = server.post(path, Some(&viewer), body.clone()).await;
        assert_eq!((status, answer["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{path} {body}: {answer}");
        let mut fields = violated_fields(&answer["error"]["details"]);
        fields.dedup();
        assert_eq!(fields, [field], "{path}: {answer}");
    }
    // A NUL in a field that is not decided on: the viewer is refused (403), as without it.
    let (status, answer) = server
        .post("/api/platform/tenants/update", Some(&viewer), json!({"tenantId": "acme", "description": "a\u{0}b"}))
        .await;
    assert_eq!((status, answer["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{answer}");
    let trail = server.admin_ok("/api/platform/audit/list", json!({"tenantId": "acme"})).await;
    assert!(trail["auditEvents"].as_array().unwrap().iter().any(|e| e["decision"] == "deny"), "{trail}");
}

async fn another_tenants_instance_as_a_target_answers_as_an_unknown_id_does(backend: Backend) {
    let env = crate::load_balancers::start(backend).await;
    let acmes = env.instance("acme", POOL, REGION, None).await;
    let unknown = better_compute::ids::InstanceId::random().to_string();
    let globex_admin = env.globex_admin.clone();
    let attempt = |name: &str, id: &str| {
        let mut body = regional(name, json!({"instanceIds": [id]}));
        body["tenantId"] = json!("globex");
        body
    };
    let (theirs_status, theirs) = env.post_as(&globex_admin, CREATE, attempt("steal", &acmes.id)).await;
    let (unknown_status, missing) = env.post_as(&globex_admin, CREATE, attempt("ghost", &unknown)).await;
    assert_eq!((theirs_status, theirs["error"]["code"].as_str()), (403, Some("ACCESS_DENIED")), "{theirs}");
    assert_eq!(unknown_status, theirs_status, "{missing}");
    let shape = |answer: &Value, id: &str| answer["error"].to_string().replace(id, "<id>");
    assert_eq!(shape(&theirs, &acmes.id), shape(&missing, &unknown), "the same answer, word for word");
    assert!(!theirs.to_string().contains("acme"), "nothing names the other tenant: {theirs}");

    // And nothing was decided on acme's instance for globex: no refusal of it in any trail.
    let trail =
        env.ok_as(&env.server.admin_token.clone(), "/api/platform/audit/list", json!({"resourceId": acmes.id})).await;
    assert_eq!(trail["auditEvents"], json!([]), "{trail}");
}
