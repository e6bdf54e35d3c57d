//! Provider accounts: stored credentials never follow an endpoint to a new address.

use better_compute::store::Backend;
use serde_json::json;

use crate::harness::{Client, DO_TOKEN, System, violated_fields};

crate::on_both_backends!(
    changing_only_the_endpoint_of_an_account_is_refused_naming_the_credentials,
    changing_the_endpoint_with_new_credentials_is_accepted,
);

/// An account of acme's whose endpoint the test then tries to move.
async fn account(client: &Client<'_>) -> String {
    client.ok("/api/platform/tenants/create", json!({"id": "acme"})).await;
    let created = client
        .ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": DO_TOKEN,
                "endpoint": "http://127.0.0.1:1", "regions": ["fra1"]}),
        )
        .await;
    created["id"].as_str().unwrap().to_owned()
}

async fn changing_only_the_endpoint_of_an_account_is_refused_naming_the_credentials(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let id = account(&client).await;
    // The prober's listener: had the change been taken, the worker would present the stored
    // token to it.
    let prober = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let prober_url = format!("http://{}", prober.local_addr().unwrap());

    let error = client
        .fails("/api/platform/accounts/update", json!({"accountId": id, "endpoint": prober_url}), 400, "INVALID_INPUT")
        .await;
    assert_eq!(violated_fields(&error["details"]), ["credentials"], "{error}");
    assert!(error["message"].as_str().unwrap().contains("endpoint"), "the error says why: {error}");
    // Another change riding along does not make it pass.
    client
        .fails(
            "/api/platform/accounts/update",
            json!({"accountId": id, "endpoint": prober_url, "description": "moved"}),
            400,
            "INVALID_INPUT",
        )
        .await;
    let stored = client.ok("/api/platform/accounts/get", json!({"accountId": id})).await;
    assert_eq!((stored["endpoint"].as_str(), stored["version"].as_i64()), (Some("http://127.0.0.1:1"), Some(1)));
    // Naming the endpoint it already has changes nothing and needs nothing.
    client
        .ok(
            "/api/platform/accounts/update",
            json!({"accountId": id, "endpoint": "http://127.0.0.1:1", "description": "d"}),
        )
        .await;
    assert!(!client.transcript().contains(DO_TOKEN), "the token never comes back");
}

async fn changing_the_endpoint_with_new_credentials_is_accepted(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let id = account(&client).await;
    let moved = client
        .ok(
            "/api/platform/accounts/update",
            json!({"accountId": id, "endpoint": "http://127.0.0.1:2", "credentials": "dop_v1_for_the_new_endpoint"}),
        )
        .await;
    assert_eq!(
        (moved["endpoint"].as_str(), moved["credentialsSet"].as_bool()),
        (Some("http://127.0.0.1:2"), Some(true))
    );
}
