//! Authorization through the API: every method, found in the descriptor set, refuses a
//! principal of another tenant and a principal with no role, writing nothing; roles grant what
//! their scope covers; keys revoke at once; every decision on a mutation is audited.

use better_compute::methods::MethodTable;
use better_compute::proto::descriptor_pool;
use better_compute::store::{Backend, Store};
use serde_json::{Value, json};
use sqlx::{Connection, Row};

use crate::harness::{System, TestDb, TestServer, tenant_principal};

crate::on_both_backends!(
    every_method_refuses_another_tenant_and_no_role_and_writes_nothing,
    a_tenant_admin_manages_its_own_principals_and_keys_only,
    a_revoked_or_expired_key_or_deleted_principal_is_unauthenticated_at_once,
    role_bindings_mean_what_they_say,
    every_decision_on_a_mutation_is_audited,
    every_resource_gets_its_authorization_row_in_its_own_transaction,
);

/// Row counts of every table but the audit trail (which records refusals by design).
async fn row_counts(db: &TestDb) -> Vec<(String, i64)> {
    sqlx::any::install_default_drivers();
    let mut conn = sqlx::AnyConnection::connect(&db.url).await.unwrap();
    let tables_sql = match db.backend {
        Backend::Postgres => "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'",
        Backend::Sqlite => "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    };
    let tables: Vec<String> =
        sqlx::query(tables_sql).fetch_all(&mut conn).await.unwrap().iter().map(|row| row.get(0)).collect();
    let mut counts = Vec::new();
    for table in tables.into_iter().filter(|t| t != "audit_events") {
        let sql = format!("SELECT COUNT(*) FROM {table}");
        let count: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql)).fetch_one(&mut conn).await.unwrap();
        counts.push((table, count));
    }
    counts.sort();
    counts
}

/// A JSON body that names `tenant` in the method's tenant field and a plausible id in its id
/// field, so the decision has something to refuse; everything else is left out. A request that
/// wraps a call (a plan's `update` or `delete`) names them in the first call it can wrap, where
/// the decision reads them.
fn body_for(method: &better_compute::methods::Method, tenant: &str) -> Value {
    let input = method.descriptor.input();
    let wrapped = input.oneofs().next().and_then(|calls| calls.fields().next()).filter(|_| {
        input.fields().all(|f| f.containing_oneof().is_some() && matches!(f.kind(), prost_reflect::Kind::Message(_)))
    });
    match wrapped {
        Some(call) => {
            let prost_reflect::Kind::Message(call_type) = call.kind() else { unreachable!() };
            json!({call.json_name(): naming(method, &call_type, tenant)})
        }
        None => naming(method, &input, tenant),
    }
}

/// A body of `input` that names `tenant` and a plausible id where `method` decides on them.
fn naming(method: &better_compute::methods::Method, input: &prost_reflect::MessageDescriptor, tenant: &str) -> Value {
    let authorization = method.authorization.as_ref().expect("every method has an authorization");
    let mut body = serde_json::Map::new();
    let tenant_field = match authorization.tenant_field.as_str() {
        "" => Some("tenant_id"),
        "-" => None,
        field => Some(field),
    };
    if let Some(field) = tenant_field.and_then(|f| input.get_field_by_name(f)) {
        body.insert(field.json_name().to_owned(), json!(tenant));
    }
    if let Some(field) = input.get_field_by_name(&authorization.id_field)
        && authorization.id_field != tenant_field.unwrap_or_default()
    {
        body.insert(field.json_name().to_owned(), json!(format!("{}0000000000000000000000000a", id_prefix(&field))));
    }
    Value::Object(body)
}

/// The prefix (`acct_`) that the id field's documented pattern (`^acct_[0-9a-hjkmnp-tv-z]{26}$`)
/// asks for: the decided fields are held to their rules before the decision, so the id must be
/// well formed for the decision to be what refuses.
fn id_prefix(field: &prost_reflect::FieldDescriptor) -> String {
    let extension = descriptor_pool().get_extension_by_name("buf.validate.field").expect("buf.validate is in the pool");
    let rules = field.options().get_extension(&extension).into_owned();
    let string = rules.as_message().and_then(|rules| rules.get_field_by_name("string")).map(|s| s.into_owned());
    let pattern = string
        .as_ref()
        .and_then(|string| string.as_message())
        .and_then(|string| string.get_field_by_name("pattern").and_then(|p| p.as_str().map(str::to_owned)))
        .unwrap_or_default();
    match pattern.strip_prefix('^').and_then(|rest| rest.split_once('_')) {
        Some((prefix, _)) if prefix.bytes().all(|b| b.is_ascii_lowercase()) => format!("{prefix}_"),
        _ => "x_".to_owned(),
    }
}

async fn seed_tenants(server: &TestServer) {
    for id in ["acme", "globex"] {
        server.admin_ok("/api/platform/tenants/create", json!({"id": id})).await;
    }
}

async fn every_method_refuses_another_tenant_and_no_role_and_writes_nothing(backend: Backend) {
    let server = System::on(backend).server().await;
    let db = server.db.clone();
    seed_tenants(&server).await;
    let globex_admin = tenant_principal(&server.store, "globex", "admin").await;
    let acme_nobody = tenant_principal(&server.store, "acme", "").await;
    let before = row_counts(&db).await;

    let methods = MethodTable::from_pool(descriptor_pool());
    let mut checked = 0;
    for method in methods.iter() {
        let path = method.http_path.as_deref().expect("every method has a JSON path");
        let body = body_for(method, "acme");
        // A node daemon's method takes its own credential: an API key, anyone's, is not one.
        let daemon = method.authorization.as_ref().is_some_and(|a| !a.credential.is_empty());
        let (status, code) = if daemon { (401, "UNAUTHENTICATED") } else { (403, "ACCESS_DENIED") };
        for (who, token) in [("globex's admin", &globex_admin), ("acme's principal without a role", &acme_nobody)] {
            let (got, answer) = server.post(path, Some(token), body.clone()).await;
            assert_eq!(got, status, "{} as {who} with {body}: {answer}", method.name);
            assert_eq!(answer["error"]["code"], code, "{} as {who}", method.name);
            checked += 1;
        }
    }
    assert!(checked >= 2 * 16, "every method was called twice ({checked} calls)");
    assert_eq!(row_counts(&db).await, before, "refused calls wrote nothing");
}

async fn a_tenant_admin_manages_its_own_principals_and_keys_only(backend: Backend) {
    let server = System::on(backend).server().await;
    seed_tenants(&server).await;
    let acme_admin = tenant_principal(&server.store, "acme", "admin").await;

    let (status, user) = server
        .post(
            "/api/platform/principals/create",
            Some(&acme_admin),
            json!({"tenantId": "acme", "kind": "service-account", "name": "ci"}),
        )
        .await;
    assert_eq!(status, 200, "{user}");
    assert_eq!((user["tenantId"].as_str(), user["state"].as_str()), (Some("acme"), Some("active")));
    let user_id = user["id"].as_str().unwrap();

    let (status, key) = server
        .post(
            "/api/platform/apiKeys/create",
            Some(&acme_admin),
            json!({"tenantId": "acme", "principalId": user_id, "description": "ci"}),
        )
        .await;
    assert_eq!(status, 200, "{key}");
    let token = key["token"].as_str().unwrap().to_owned();
    assert!(token.starts_with(&format!("{}.", key["id"].as_str().unwrap())));

    // The key works, and until it holds a role its principal may do nothing.
    let (status, _) = server.post("/api/compute/events/list", Some(&token), json!({"tenantId": "acme"})).await;
    assert_eq!(status, 403);
    let (status, binding) = server
        .post(
            "/api/platform/roleBindings/create",
            Some(&acme_admin),
            json!({"tenantId": "acme", "principalId": user_id, "role": "viewer"}),
        )
        .await;
    assert_eq!(status, 200, "{binding}");
    assert_eq!((binding["scopeType"].as_str(), binding["scopeId"].as_str()), (Some("tenant"), Some("acme")));
    let (status, answer) = server.post("/api/compute/events/list", Some(&token), json!({"tenantId": "acme"})).await;
    assert_eq!(status, 200, "{answer}");

    // Listing keys never shows a secret.
    let (status, keys) = server
        .post("/api/platform/apiKeys/list", Some(&acme_admin), json!({"tenantId": "acme", "principalId": user_id}))
        .await;
    assert_eq!(status, 200);
    assert_eq!(keys["apiKeys"][0]["token"], "", "{keys}");
    assert!(!keys.to_string().contains(token.split_once('.').unwrap().1));

    // Another tenant's principals and the platform's stay out of reach.
    for (path, body) in [
        ("/api/platform/principals/create", json!({"tenantId": "globex", "kind": "user", "name": "x"})),
        ("/api/platform/principals/create", json!({"kind": "operator", "name": "x"})),
        ("/api/platform/roleBindings/create", json!({"principalId": user_id, "role": "platform-admin"})),
        ("/api/platform/principals/list", json!({"tenantId": "globex"})),
    ] {
        let (status, answer) = server.post(path, Some(&acme_admin), body.clone()).await;
        assert_eq!(status, 403, "{path} {body}: {answer}");
    }
    // A principal of acme named under globex by an operator is not found there.
    let (status, answer) = server
        .post(
            "/api/platform/principals/get",
            Some(&server.admin_token.clone()),
            json!({"tenantId": "globex", "principalId": user_id}),
        )
        .await;
    assert_eq!((status, answer["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{answer}");
    // Kinds and tenants must agree.
    let (status, answer) = server
        .post(
            "/api/platform/principals/create",
            Some(&server.admin_token.clone()),
            json!({"kind": "user", "name": "x"}),
        )
        .await;
    assert_eq!(
        (status, answer["error"]["details"]["fields"][0]["field"].as_str()),
        (400, Some("tenantId")),
        "{answer}"
    );
}

async fn a_revoked_or_expired_key_or_deleted_principal_is_unauthenticated_at_once(backend: Backend) {
    let server = System::on(backend).server().await;
    seed_tenants(&server).await;
    let admin = server.admin_token.clone();
    let user = server
        .admin_ok("/api/platform/principals/create", json!({"tenantId": "acme", "kind": "user", "name": "u"}))
        .await;
    let user_id = user["id"].as_str().unwrap();
    server
        .admin_ok(
            "/api/platform/roleBindings/create",
            json!({"tenantId": "acme", "principalId": user_id, "role": "viewer"}),
        )
        .await;
    let make_key =
        || server.admin_ok("/api/platform/apiKeys/create", json!({"tenantId": "acme", "principalId": user_id}));
    let key = make_key().await;
    let token = key["token"].as_str().unwrap().to_owned();
    let list = json!({"tenantId": "acme"});
    assert_eq!(server.post("/api/compute/events/list", Some(&token), list.clone()).await.0, 200);

    let revoked =
        server.admin_ok("/api/platform/apiKeys/revoke", json!({"tenantId": "acme", "apiKeyId": key["id"]})).await;
    assert_eq!(revoked["state"], "revoked");
    let (status, answer) = server.post("/api/compute/events/list", Some(&token), list.clone()).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (401, Some("UNAUTHENTICATED")), "{answer}");

    // An expired key: made with the shortest life, then moved into the past behind the API.
    let key = make_key().await;
    let token = key["token"].as_str().unwrap().to_owned();
    expire_key(&server.store, key["id"].as_str().unwrap()).await;
    let (status, answer) = server.post("/api/compute/events/list", Some(&token), list.clone()).await;
    assert_eq!((status, answer["error"]["message"].as_str()), (401, Some("this API key has expired")), "{answer}");

    // Deleting the principal stops its keys at once.
    let key = make_key().await;
    let token = key["token"].as_str().unwrap().to_owned();
    assert_eq!(server.post("/api/compute/events/list", Some(&token), list.clone()).await.0, 200);
    let deleted =
        server.admin_ok("/api/platform/principals/delete", json!({"tenantId": "acme", "principalId": user_id})).await;
    assert_eq!(deleted["state"], "deleted");
    assert_eq!(server.post("/api/compute/events/list", Some(&token), list).await.0, 401);
    let (status, _) = server.post("/api/platform/tenants/list", Some(&admin), json!({})).await;
    assert_eq!(status, 200, "the operator is untouched");
}

async fn expire_key(store: &Store, id: &str) {
    store.api_key_expire_now(id).await.unwrap();
}

async fn role_bindings_mean_what_they_say(backend: Backend) {
    let server = System::on(backend).server().await;
    seed_tenants(&server).await;
    let viewer = tenant_principal(&server.store, "acme", "viewer").await;
    let editor = tenant_principal(&server.store, "acme", "editor").await;
    let list = json!({"tenantId": "acme"});
    assert_eq!(server.post("/api/compute/events/list", Some(&viewer), list.clone()).await.0, 200);
    assert_eq!(server.post("/api/compute/events/list", Some(&editor), list.clone()).await.0, 200);
    // Neither a viewer nor an editor administers the tenant's principals.
    for token in [&viewer, &editor] {
        let (status, _) = server.post("/api/platform/principals/list", Some(token), json!({"tenantId": "acme"})).await;
        assert_eq!(status, 403);
    }
    // Bindings that mean nothing are refused, naming the field.
    let user = server
        .admin_ok("/api/platform/principals/create", json!({"tenantId": "acme", "kind": "user", "name": "u"}))
        .await;
    let admin = server.admin_token.clone();
    for (body, field) in [
        (json!({"tenantId": "acme", "principalId": user["id"], "role": "platform-admin"}), "role"),
        (json!({"principalId": user["id"], "role": "viewer"}), "scopeType"),
        (json!({"tenantId": "acme", "principalId": user["id"], "role": "viewer", "scopeType": "project"}), "scopeId"),
        (json!({"principalId": user["id"], "role": "platform-admin"}), "principalId"),
    ] {
        let (status, answer) = server.post("/api/platform/roleBindings/create", Some(&admin), body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["error"]["details"]["fields"][0]["field"], field, "{body}: {answer}");
    }
    let binding = server
        .admin_ok(
            "/api/platform/roleBindings/create",
            json!({"tenantId": "acme", "principalId": user["id"], "role": "viewer"}),
        )
        .await;
    let (status, again) = server
        .post(
            "/api/platform/roleBindings/create",
            Some(&admin),
            json!({"tenantId": "acme", "principalId": user["id"], "role": "viewer"}),
        )
        .await;
    assert_eq!((status, again["error"]["code"].as_str()), (409, Some("CONFLICT")));
    let listed = server
        .admin_ok("/api/platform/roleBindings/list", json!({"tenantId": "acme", "principalId": user["id"]}))
        .await;
    assert_eq!(listed["roleBindings"].as_array().unwrap().len(), 1);
    server
        .admin_ok("/api/platform/roleBindings/delete", json!({"tenantId": "acme", "roleBindingId": binding["id"]}))
        .await;
    let listed = server
        .admin_ok("/api/platform/roleBindings/list", json!({"tenantId": "acme", "principalId": user["id"]}))
        .await;
    assert_eq!(listed["roleBindings"], json!([]));
}

async fn every_decision_on_a_mutation_is_audited(backend: Backend) {
    let server = System::on(backend).server().await;
    seed_tenants(&server).await;
    let outsider = tenant_principal(&server.store, "globex", "admin").await;
    let admin = server.admin_token.clone();
    let (status, _) = server.post("/api/platform/tenants/delete", Some(&outsider), json!({"tenantId": "acme"})).await;
    assert_eq!(status, 403);
    let http = reqwest::Client::new();
    let response = http
        .post(format!("{}/api/platform/tenants/update", server.endpoint))
        .bearer_auth(&admin)
        .header("x-request-id", "req-audit-1")
        .json(&json!({"tenantId": "acme", "description": "audited"}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    // Allowed, then refused by the request's own rules: the decision was `allow`, the call failed.
    let response = http
        .post(format!("{}/api/platform/tenants/update", server.endpoint))
        .bearer_auth(&admin)
        .header("x-request-id", "req-audit-2")
        .json(&json!({"tenantId": "acme", "description": "x".repeat(300)}))
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 400);
    // Reads are not audited.
    server.admin_ok("/api/platform/tenants/get", json!({"tenantId": "acme"})).await;

    // How each call ended is recorded once its answer is sent.
    let trail = crate::harness::eventually(std::time::Duration::from_secs(10), "every call's outcome", || async {
        let trail = server.admin_ok("/api/platform/audit/list", json!({"resourceId": "acme"})).await;
        let settled = trail["auditEvents"].as_array().unwrap().iter().all(|e| e["outcome"] != "");
        settled.then_some(trail)
    })
    .await;
    let events = trail["auditEvents"].as_array().unwrap();
    assert_eq!(events.len(), 4, "create, refused delete, update, failed update: {trail}");
    let failed = &events[0];
    assert_eq!(
        (failed["requestId"].as_str(), failed["decision"].as_str(), failed["outcome"].as_str()),
        (Some("req-audit-2"), Some("allow"), Some("INVALID_INPUT")),
        "an allowed call that failed says so: {trail}"
    );
    assert_eq!(events[2]["outcome"], "ACCESS_DENIED", "{trail}");
    assert_eq!(events[3]["outcome"], "OK", "the tenant's create: {trail}");
    let outsider_name = events[2]["principalName"].as_str().unwrap();
    assert!(!outsider_name.is_empty(), "the caller is named: {trail}");
    let update = &events[1];
    assert_eq!(update["outcome"], "OK");
    assert_eq!(update["permission"], "platform:tenants:update");
    assert_eq!(update["decision"], "allow");
    assert_eq!(update["policies"], json!(["platform-admin"]));
    assert_eq!(update["requestId"], "req-audit-1");
    assert_eq!(update["method"], "bettercompute.platform.v1.Tenants/Update");
    let denied = &events[2];
    assert_eq!(
        (denied["decision"].as_str(), denied["permission"].as_str()),
        (Some("deny"), Some("platform:tenants:delete"))
    );
    // Filed under the caller's own tenant: a refusal is never written into the trail of the
    // tenant it named.
    assert_eq!(denied["tenantId"], "globex");
    let outsider_id = denied["principalId"].as_str().unwrap();
    let theirs = server.admin_ok("/api/platform/audit/list", json!({"principalId": outsider_id})).await;
    assert_eq!(theirs["auditEvents"].as_array().unwrap().len(), 1);
    let future = server.admin_ok("/api/platform/audit/list", json!({"since": "2999-01-01T00:00:00Z"})).await;
    assert_eq!(future["auditEvents"], json!([]));
    let (status, _) = server.post("/api/platform/audit/list", Some(&outsider), json!({})).await;
    assert_eq!(status, 403, "the trail is for operators");
}

async fn every_resource_gets_its_authorization_row_in_its_own_transaction(backend: Backend) {
    let server = System::on(backend).server().await;
    seed_tenants(&server).await;
    let project = server.admin_ok("/api/platform/projects/create", json!({"tenantId": "acme", "name": "web"})).await;
    let account = server
        .admin_ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": "dop_v1_x", "regions": ["nyc3"]}),
        )
        .await;
    let pool = server
        .admin_ok(
            "/api/platform/pools/create",
            json!({"accountId": account["id"], "name": "own", "billingMode": "none"}),
        )
        .await;
    for (resource_type, id) in [
        ("platform-tenant", "acme"),
        ("platform-project", project["id"].as_str().unwrap()),
        ("platform-account", account["id"].as_str().unwrap()),
        ("platform-pool", pool["id"].as_str().unwrap()),
    ] {
        let row = server.store.authz_resource_fetch(resource_type, id).await.unwrap();
        let row = row.unwrap_or_else(|| panic!("{resource_type} {id} has no authorization row"));
        assert_eq!(row.tenant_id.as_deref(), Some("acme"), "{resource_type}");
    }
    let row = server.store.authz_resource_fetch("platform-pool", pool["id"].as_str().unwrap()).await.unwrap().unwrap();
    assert_eq!(row.attributes["providerAccountId"], account["id"]);
}
