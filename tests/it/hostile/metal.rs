//! The metal methods as a hostile caller meets them: a malformed pool or machine id is refused
//! naming its field before any decision, on every method, and a refused enrolment never echoes
//! the BMC password it carried, however large or odd the request around it.

use serde_json::json;

use super::ServerProcess;
use super::decoders::{json_error, post_unread};

const METHODS: [&str; 11] =
    ["enroll", "list", "get", "update", "delete", "inspect", "commission", "deploy", "rescue", "release", "retire"];

#[tokio::test]
async fn a_malformed_pool_or_machine_id_is_refused_naming_it_on_every_metal_method() {
    let server = ServerProcess::start(&[]).await;
    let huge = "p".repeat(1_000_000);
    for method in METHODS {
        let path = format!("/api/compute/metal/{method}");
        for pool in [huge.as_str(), "pool_\u{0}", "../pool"] {
            let body = json!({"poolId": pool, "nodeId": "node_0000000000000000000000000a", "name": "m1",
                "idempotencyKey": "k", "bmc": {"driver": "redfish", "address": "https://h", "username": "u",
                "password": "hostile-secret-1"}});
            let (status, text) = post_unread(&server, &path, Some(&server.admin_token), &body.to_string(), false);
            assert_eq!(status, 400, "{path}: {}", &text[..text.len().min(300)]);
            let error = json_error(&text);
            assert_eq!(error["code"], "INVALID_INPUT");
            assert!(error["message"].as_str().unwrap().contains("poolId"), "{path}: {error}");
            assert!(text.len() < 4096, "{path}: the refusal echoes a bounded part: {} bytes", text.len());
            assert!(!text.contains("hostile-secret-1"), "{path}: the password is not echoed");
        }
        if method != "enroll" && method != "list" {
            let body = json!({"poolId": "pool_0000000000000000000000000a", "nodeId": "node_../x"});
            let (status, text) = post_unread(&server, &path, Some(&server.admin_token), &body.to_string(), false);
            assert_eq!(status, 400, "{path}: {text}");
            assert!(json_error(&text)["message"].as_str().unwrap().contains("nodeId"), "{path}: {text}");
        }
    }
    server.assert_up();
}

#[tokio::test]
async fn a_refused_enrolment_never_echoes_its_password() {
    let server = ServerProcess::start(&[]).await;
    let password = format!("hostile-{}", "s".repeat(300));
    let cases = [
        json!({"poolId": "pool_0000000000000000000000000a", "name": "m1", "idempotencyKey": "k",
            "bmc": {"driver": "redfish", "address": "https://h", "username": "u", "password": password}}),
        json!({"poolId": "pool_0000000000000000000000000a", "name": "m1", "idempotencyKey": "k",
            "bmc": {"driver": "redfish", "address": "https://h", "username": "u", "password": "hostile-short",
                "colour": "hostile-short"}}),
        json!({"poolId": "pool_0000000000000000000000000a", "name": "m1", "idempotencyKey": "k",
            "bmc": {"driver": "redfish", "address": "https://h", "username": "u", "password": 12345678901_i64}}),
    ];
    for body in cases {
        let (status, text) =
            post_unread(&server, "/api/compute/metal/enroll", Some(&server.admin_token), &body.to_string(), false);
        assert_eq!(status, 400, "{}", &text[..text.len().min(300)]);
        let secret = body["bmc"]["password"].to_string();
        let secret = secret.trim_matches('"');
        assert!(!text.contains(secret), "the password is echoed: {text}");
        assert!(!text.contains("sssssssss"), "no part of it either: {text}");
    }
    let log = server.log_text();
    assert!(!log.contains("hostile-s"), "the password is in the log");
    server.assert_up();
}
