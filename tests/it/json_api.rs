//! The JSON paths (`POST /api/...`): tenants end to end, the error body, authentication,
//! validation from the descriptors, probes, metrics and CORS.

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::{System, violated_fields};

crate::on_both_backends!(
    a_tenant_is_created_read_listed_updated_and_deleted,
    a_taken_id_is_conflict_with_the_id_in_details,
    unknown_fields_wrong_types_long_names_and_bad_patterns_name_the_field,
    malformed_json_is_invalid_input,
    every_violation_is_listed_at_once,
    an_update_must_name_a_field_and_a_deleted_tenant_cannot_change,
    missing_or_wrong_credentials_are_unauthenticated,
    probes_and_metrics_need_no_credentials,
);

const CREATE: &str = "/api/platform/tenants/create";

async fn a_tenant_is_created_read_listed_updated_and_deleted(backend: Backend) {
    let server = System::on(backend).server().await;
    let created = server.admin_ok(CREATE, json!({"id": "acme", "displayName": "Acme", "description": "first"})).await;
    assert_eq!(created["id"], "acme");
    assert_eq!(created["displayName"], "Acme");
    assert_eq!(created["state"], "active");
    assert_eq!(created["version"], 1, "version is a JSON number");
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));
    assert!(created.get("deletedAt").is_none(), "{created}");

    let read = server.admin_ok("/api/platform/tenants/get", json!({"tenantId": "acme"})).await;
    assert_eq!(read, created);

    let other = server.admin_ok(CREATE, json!({"id": "globex"})).await;
    assert_eq!(other["displayName"], "globex", "the display name defaults to the id");

    let updated = server.admin_ok("/api/platform/tenants/update", json!({"tenantId": "acme", "description": ""})).await;
    assert_eq!((updated["description"].as_str(), updated["displayName"].as_str()), (Some(""), Some("Acme")));
    assert_eq!(updated["version"], 2);

    let deleted = server.admin_ok("/api/platform/tenants/delete", json!({"tenantId": "acme"})).await;
    assert_eq!(deleted["state"], "deleted");
    assert!(deleted["deletedAt"].is_string());
    let again = server.admin_ok("/api/platform/tenants/delete", json!({"tenantId": "acme"})).await;
    assert_eq!(again, deleted, "deleting a deleted tenant returns it unchanged");

    let list = server.admin_ok("/api/platform/tenants/list", json!({})).await;
    let ids: Vec<&str> = list["tenants"].as_array().unwrap().iter().map(|t| t["id"].as_str().unwrap()).collect();
    assert_eq!(ids, ["globex"]);
    let list = server.admin_ok("/api/platform/tenants/list", json!({"includeDeleted": true})).await;
    assert_eq!(list["tenants"].as_array().unwrap().len(), 2);
    assert_eq!(list["tenants"][0]["id"], "acme", "oldest first");

    let token = server.admin_token.clone();
    let (status, body) = server.post("/api/platform/tenants/get", Some(&token), json!({"tenantId": "nope"})).await;
    assert_eq!(status, 404);
    assert_eq!(body["error"]["code"], "NOT_FOUND");
    assert!(body["error"]["message"].as_str().unwrap().contains("nope"));
    server.stop().await;
}

async fn a_taken_id_is_conflict_with_the_id_in_details(backend: Backend) {
    let server = System::on(backend).server().await;
    server.admin_ok(CREATE, json!({"id": "acme"})).await;
    let token = server.admin_token.clone();
    let (status, body) = server.post(CREATE, Some(&token), json!({"id": "acme"})).await;
    assert_eq!(status, 409);
    assert_eq!(body["error"]["code"], "CONFLICT");
    assert_eq!(body["error"]["details"]["id"], "acme");
}

async fn unknown_fields_wrong_types_long_names_and_bad_patterns_name_the_field(backend: Backend) {
    let server = System::on(backend).server().await;
    let token = server.admin_token.clone();
    let cases = [
        (json!({"id": "acme", "colour": "red"}), "colour", "is not a field"),
        (json!({"id": 42}), "id", "must be a string"),
        (json!({"id": "acme", "displayName": "x".repeat(129)}), "displayName", "at most 128 characters"),
        (json!({"id": "a".repeat(129)}), "id", "at most 128 characters"),
        (json!({"id": "no spaces allowed"}), "id", "must match"),
        (json!({}), "id", "is required"),
        (json!({"id": "acme", "description": "nul\u{0}byte"}), "description", "NUL"),
    ];
    for (body, field, says) in cases {
        let (status, answer) = server.post(CREATE, Some(&token), body.clone()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], "INVALID_INPUT", "{body}");
        let fields = &answer["error"]["details"]["fields"];
        assert!(violated_fields(&answer["error"]["details"]).contains(&field.to_owned()), "{body}: {answer}");
        let description =
            fields.as_array().unwrap().iter().find(|f| f["field"] == field).unwrap()["description"].clone();
        assert!(description.as_str().unwrap().contains(says), "{body}: {description}");
        assert!(answer["error"]["message"].as_str().unwrap().contains(field), "the message names the field");
    }
    let list = server.admin_ok("/api/platform/tenants/list", json!({"includeDeleted": true})).await;
    assert_eq!(list["tenants"], json!([]), "a refused call writes nothing");
}

async fn malformed_json_is_invalid_input(backend: Backend) {
    let server = System::on(backend).server().await;
    let token = server.admin_token.clone();
    for body in ["{\"id\": ", "[1, 2]", "\"acme\"", "{\"id\": \"acme\",}", " ", "null"] {
        let (status, answer) = server.post_raw(CREATE, Some(&token), body.to_owned()).await;
        assert_eq!(status, 400, "{body}: {answer}");
        assert_eq!(answer["error"]["code"], "INVALID_INPUT", "{body}");
    }
    let (status, answer) = server.post_raw("/api/platform/tenants/list", Some(&token), String::new()).await;
    assert_eq!(status, 200, "an empty body is an empty request: {answer}");
}

async fn every_violation_is_listed_at_once(backend: Backend) {
    let server = System::on(backend).server().await;
    let token = server.admin_token.clone();
    let body = json!({"id": "bad id", "displayName": "y".repeat(200), "description": 3, "extra": true});
    let (status, answer) = server.post(CREATE, Some(&token), body).await;
    assert_eq!(status, 400);
    assert_eq!(violated_fields(&answer["error"]["details"]), ["description", "displayName", "extra", "id"]);
}

async fn an_update_must_name_a_field_and_a_deleted_tenant_cannot_change(backend: Backend) {
    let server = System::on(backend).server().await;
    let token = server.admin_token.clone();
    server.admin_ok(CREATE, json!({"id": "acme"})).await;
    let (status, answer) = server.post("/api/platform/tenants/update", Some(&token), json!({"tenantId": "acme"})).await;
    assert_eq!((status, answer["error"]["code"].as_str()), (400, Some("INVALID_INPUT")), "{answer}");
    server.admin_ok("/api/platform/tenants/delete", json!({"tenantId": "acme"})).await;
    let (status, answer) = server
        .post("/api/platform/tenants/update", Some(&token), json!({"tenantId": "acme", "description": "x"}))
        .await;
    assert_eq!((status, answer["error"]["code"].as_str()), (409, Some("INVALID_STATE")), "{answer}");
}

async fn missing_or_wrong_credentials_are_unauthenticated(backend: Backend) {
    let server = System::on(backend).server().await;
    let (id, _) = server.admin_token.split_once('.').unwrap();
    let wrong_secret = format!("{id}.{}", "0".repeat(64));
    let unknown_key = format!("bck_{}.{}", "0".repeat(26), "0".repeat(64));
    for token in [None, Some("garbage"), Some(wrong_secret.as_str()), Some(unknown_key.as_str())] {
        let (status, answer) = server.post(CREATE, token, json!({"id": "acme"})).await;
        assert_eq!(status, 401, "{token:?}: {answer}");
        assert_eq!(answer["error"]["code"], "UNAUTHENTICATED");
    }
    assert_eq!(server.store.tenant_list(true).await.unwrap().len(), 0, "nothing was written");
}

async fn probes_and_metrics_need_no_credentials(backend: Backend) {
    let server = System::on(backend).server().await;
    server.admin_ok("/api/platform/tenants/list", json!({})).await;
    let http = reqwest::Client::new();
    for path in ["/healthz", "/readyz"] {
        let response = http.get(format!("{}{path}", server.endpoint)).send().await.unwrap();
        assert_eq!(response.status(), 200, "{path}");
    }
    let metrics = http.get(format!("{}/metrics", server.endpoint)).send().await.unwrap().text().await.unwrap();
    assert!(
        metrics.contains(r#"bc_api_calls_total{method="bettercompute.platform.v1.Tenants/List",code="OK"} 1"#),
        "{metrics}"
    );
    assert!(metrics.contains("bc_api_call_seconds_bucket"), "{metrics}");

    // A browser's preflight from another origin is answered with the headers gRPC-web needs.
    let preflight = http
        .request(reqwest::Method::OPTIONS, format!("{}/api/platform/tenants/list", server.endpoint))
        .header("origin", "https://console.example")
        .header("access-control-request-method", "POST")
        .header("access-control-request-headers", "authorization,content-type,x-grpc-web")
        .send()
        .await
        .unwrap();
    assert!(preflight.status().is_success());
    let allowed = preflight.headers()["access-control-allow-origin"].to_str().unwrap();
    assert_eq!(allowed, "https://console.example");
    let headers = preflight.headers()["access-control-allow-headers"].to_str().unwrap().to_lowercase();
    assert!(headers.contains("authorization") && headers.contains("x-grpc-web"), "{headers}");

    let get = http.get(format!("{}/api/platform/tenants/list", server.endpoint)).send().await.unwrap();
    assert_eq!(get.status(), 405, "another verb than POST");
    assert_eq!(get.headers()["allow"], "POST");
    let body: Value = get.json().await.unwrap();
    assert_eq!(body["error"]["code"], "INVALID_INPUT");

    let (status, body) = server.post("/api/platform/no-such-thing", None, Value::Null).await;
    assert_eq!((status, body["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{body}");
}
