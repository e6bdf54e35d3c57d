//! The node daemon's ways in (`Nodes.Join` with a join token, `Heartbeat` and `Leave` with a
//! node credential) and the join token methods, as a hostile caller meets them: a forged or
//! mistaken credential of any shape is refused before the body is read, and a malformed pool or
//! token id is refused naming its field, before any decision.

use better_compute::store::Backend;
use serde_json::json;

use super::decoders::{json_error, json_with_unknown_keys, post_unread};
use crate::harness::System;

#[tokio::test]
async fn a_forged_daemon_credential_is_refused_before_the_body_is_read() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let body = json_with_unknown_keys(300_000);
    let baseline = server.rss_mib();
    let forged_token = format!("bcjt_{}.{}", "0".repeat(26), "a".repeat(64));
    let forged_node = format!("bcn_{}.{}", "0".repeat(26), "a".repeat(64));
    let huge = format!("bcjt_{}", "x".repeat(16_000));
    let cases = [
        ("/api/compute/nodes/join", None, "invalid join token"),
        ("/api/compute/nodes/join", Some(forged_token.as_str()), "invalid join token"),
        ("/api/compute/nodes/join", Some(huge.as_str()), "invalid join token"),
        ("/api/compute/nodes/join", Some(server.admin_token.as_str()), "invalid join token"),
        ("/api/compute/nodes/join", Some(forged_node.as_str()), "invalid join token"),
        ("/api/compute/nodes/heartbeat", Some(forged_token.as_str()), "invalid node credential"),
        ("/api/compute/nodes/heartbeat", Some(forged_node.as_str()), "invalid node credential"),
        ("/api/compute/nodes/leave", Some("bcn_ü.x"), "invalid node credential"),
    ];
    for (path, credential, message) in cases {
        for _ in 0..3 {
            let (status, text) = post_unread(&server, path, credential, &body, false);
            assert_eq!(status, 401, "{path} {credential:?}: {text}");
            let error = json_error(&text);
            assert_eq!((error["code"].as_str(), error["message"].as_str()), (Some("UNAUTHENTICATED"), Some(message)));
            assert!(text.len() < 1024, "the refusal is small: {} bytes", text.len());
        }
    }
    server.assert_up();
    let after = server.rss_mib();
    assert!(after < baseline + 64, "resident memory went from {baseline} MiB to {after} MiB");
}

#[tokio::test]
async fn a_malformed_pool_or_token_id_is_refused_naming_it_on_every_join_token_and_node_method() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let huge = "p".repeat(1_000_000);
    let methods = [
        "joinTokens/create",
        "joinTokens/list",
        "joinTokens/get",
        "joinTokens/revoke",
        "nodes/list",
        "nodes/get",
        "nodes/cordon",
        "nodes/uncordon",
        "nodes/delete",
    ];
    for method in methods {
        let path = format!("/api/compute/{method}");
        for pool in [huge.as_str(), "pool_\u{0}", "../pool"] {
            let body = json!({"poolId": pool, "joinTokenId": "jt_0000000000000000000000000a",
                "nodeId": "node_0000000000000000000000000a", "idempotencyKey": "k"});
            let (status, text) = post_unread(&server, &path, Some(&server.admin_token), &body.to_string(), false);
            assert_eq!(status, 400, "{path}: {}", &text[..text.len().min(300)]);
            let error = json_error(&text);
            assert_eq!(error["code"], "INVALID_INPUT");
            assert!(error["message"].as_str().unwrap().contains("poolId"), "{path}: {error}");
            assert!(text.len() < 4096, "{path}: the refusal echoes a bounded part: {} bytes", text.len());
        }
    }
    server.assert_up();
}
