//! Servers cache who a key acts as, yet a key revoked, a role binding removed or a principal
//! deleted through one `bc-server` is refused on the very next call to another one sharing the
//! store: the real binaries, two processes, one Postgres.

use serde_json::{Value, json};

use crate::harness::{ServerProcess, System};
use better_compute::store::Backend;

const LIST: &str = "/api/compute/events/list";

/// The status of listing acme's events as `token` through `server`.
async fn list_status(server: &ServerProcess, token: &str) -> u16 {
    server.post(LIST, token, json!({"tenantId": "acme"})).await.0
}

fn id(object: &Value) -> String {
    object["id"].as_str().unwrap().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn changes_made_through_one_server_hold_on_the_next_call_to_another() {
    let first = System::on(Backend::Postgres).process(&[]).await;
    let second = first.another().await;
    let admin = first.admin_token.clone();
    first.ok("/api/platform/tenants/create", &admin, json!({"id": "acme"})).await;
    let user = first
        .ok("/api/platform/principals/create", &admin, json!({"tenantId": "acme", "kind": "user", "name": "u"}))
        .await;
    let viewer = json!({"tenantId": "acme", "principalId": id(&user), "role": "viewer"});
    let binding = first.ok("/api/platform/roleBindings/create", &admin, viewer.clone()).await;
    let new_key = json!({"tenantId": "acme", "principalId": id(&user)});
    let revoked = first.ok("/api/platform/apiKeys/create", &admin, new_key.clone()).await;
    let kept = first.ok("/api/platform/apiKeys/create", &admin, new_key).await;
    let (revoked_token, kept_token) = (revoked["token"].as_str().unwrap(), kept["token"].as_str().unwrap());

    // Both servers have seen both keys, twice: what they know of them is cached.
    for server in [&first, &second] {
        for token in [revoked_token, kept_token, revoked_token, kept_token] {
            assert_eq!(list_status(server, token).await, 200);
        }
    }
    let wrong_secret = format!("{}.{}", id(&kept), "x".repeat(32));
    assert_eq!(list_status(&second, &wrong_secret).await, 401, "a cached key still needs its secret");

    first.ok("/api/platform/apiKeys/revoke", &admin, json!({"tenantId": "acme", "apiKeyId": id(&revoked)})).await;
    let (status, answer) = second.post(LIST, revoked_token, json!({"tenantId": "acme"})).await;
    assert_eq!(status, 401, "a key revoked through the first server, on the second: {answer}");
    assert!(answer.to_string().contains("revoked"), "{answer}");
    assert_eq!(list_status(&second, kept_token).await, 200, "the principal's other key still works");

    first
        .ok("/api/platform/roleBindings/delete", &admin, json!({"tenantId": "acme", "roleBindingId": id(&binding)}))
        .await;
    assert_eq!(list_status(&second, kept_token).await, 403, "a binding removed through the first server");

    // The other way round: a change through the second server holds on the first.
    second.ok("/api/platform/roleBindings/create", &admin, viewer).await;
    assert_eq!(list_status(&first, kept_token).await, 200, "a binding made through the second server");
    second.ok("/api/platform/principals/delete", &admin, json!({"tenantId": "acme", "principalId": id(&user)})).await;
    let (status, answer) = first.post(LIST, kept_token, json!({"tenantId": "acme"})).await;
    assert_eq!(status, 401, "a principal deleted through the second server, on the first: {answer}");
}

/// A server answers a cached caller before it has read the store only with what the store
/// confirms: a key revoked elsewhere hears `UNAUTHENTICATED` on its next call, whatever that
/// call is (a `get` of a resource, a malformed request, a body that is not JSON), never the
/// resource nor what was wrong with its request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_revoked_through_one_server_learns_nothing_more_from_another() {
    let first = System::on(Backend::Postgres).process(&[]).await;
    let second = first.another().await;
    let admin = first.admin_token.clone();
    first.ok("/api/platform/tenants/create", &admin, json!({"id": "acme"})).await;
    let user = first
        .ok("/api/platform/principals/create", &admin, json!({"tenantId": "acme", "kind": "user", "name": "u"}))
        .await;
    first
        .ok(
            "/api/platform/roleBindings/create",
            &admin,
            json!({"tenantId": "acme", "principalId": id(&user), "role": "admin"}),
        )
        .await;
    let key =
        first.ok("/api/platform/apiKeys/create", &admin, json!({"tenantId": "acme", "principalId": id(&user)})).await;
    let token = key["token"].as_str().unwrap();
    let get = "/api/platform/principals/get";
    let own = json!({"tenantId": "acme", "principalId": id(&user)});
    let malformed = json!({"tenantId": "acme", "principalId": "not an id"});
    // Cached on the second server: a get, and a malformed request refused for its field.
    assert_eq!(second.post(get, token, own.clone()).await.0, 200);
    let (status, answer) = second.post(get, token, malformed.clone()).await;
    assert_eq!(status, 400, "{answer}");

    first.ok("/api/platform/apiKeys/revoke", &admin, json!({"tenantId": "acme", "apiKeyId": id(&key)})).await;
    for (what, body) in [("a get", own), ("a malformed id", malformed), ("an unknown field", json!({"nope": 1}))] {
        let (status, answer) = second.post(get, token, body).await;
        assert_eq!(status, 401, "{what} with a key revoked through the other server: {answer}");
        assert!(answer.to_string().contains("revoked"), "{what}: {answer}");
    }
}
