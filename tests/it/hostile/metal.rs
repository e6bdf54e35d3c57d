//! The metal methods as a hostile caller meets them: a malformed pool or machine id is refused
//! naming its field before any decision, on every method, and a refused enrolment never echoes
//! the BMC password it carried, however large or odd the request around it.

use better_compute::store::Backend;
use serde_json::json;

use super::decoders::{json_error, post_unread};
use crate::harness::System;

const METHODS: [&str; 11] =
    ["enroll", "list", "get", "update", "delete", "inspect", "commission", "deploy", "rescue", "release", "retire"];

#[tokio::test]
async fn a_malformed_pool_or_machine_id_is_refused_naming_it_on_every_metal_method() {
    let server = System::on(Backend::Postgres).process(&[]).await;
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
    let server = System::on(Backend::Postgres).process(&[]).await;
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

/// The boot configuration URL takes no key: its secret is the credential. Anything but a live
/// deploy's secret (too long, not hex, escaping the path, well formed but unknown, a method
/// it does not serve) answers alike without a configuration, and the server stays up.
#[tokio::test]
async fn a_forged_boot_configuration_url_opens_nothing() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let http = reqwest::Client::new();
    let base = format!("{}/api/compute/metal/boot", server.endpoint);
    let long = "a".repeat(60_000);
    for secret in
        [long.as_str(), "zz", "..%2F..%2Fetc%2Fpasswd", &"0".repeat(64), &"G".repeat(64), "%00", "'%20OR%201=1"]
    {
        let response = http.get(format!("{base}/{secret}")).send().await.unwrap();
        let status = response.status().as_u16();
        let text = response.text().await.unwrap();
        assert!(
            [404, 414, 431].contains(&status),
            "{}: {status} {}",
            &secret[..secret.len().min(40)],
            &text[..text.len().min(200)]
        );
        assert!(!text.contains("joinToken"), "{text}");
    }
    let posted = http.post(format!("{base}/{}", "0".repeat(64))).body("{}").send().await.unwrap();
    assert_eq!(posted.status().as_u16(), 405, "only GET is served");
    server.assert_up();
}
