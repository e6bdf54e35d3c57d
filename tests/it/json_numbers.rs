//! Integers stay integers however a `google.protobuf.Struct` is read, although the Struct
//! carries them as doubles: an event's `version` and a pool's `maxMachines` are `2` and `10`, not
//! `2.0` and `10.0`, in the store, from the JSON gateway, in its server-sent events and from
//! `bcctl -o json`; a fraction keeps its fraction.

use std::process::Command;
use std::time::Duration;

use better_compute::store::{Backend, EventFilter};
use serde_json::{Value, json};

use crate::harness::System;
use crate::on_both_backends;

on_both_backends!(integers_in_structs_stay_integers_in_the_store_the_gateway_its_events_and_bcctl);

/// `value` written as a JSON number is an integer: `2`, not `2.0`, which `Value` tells apart.
fn integral(value: &Value) -> bool {
    value.is_i64() || value.is_u64()
}

async fn integers_in_structs_stay_integers_in_the_store_the_gateway_its_events_and_bcctl(backend: Backend) {
    let policy = json!({"maxMachines": 10, "share": 0.5});
    let own = System::on(backend).own_pool("own", policy.clone()).await;
    let (server, pool_id) = (&own.server, own.pool.as_str());
    let mut watch = reqwest::Client::new()
        .post(format!("{}/api/compute/events/watch", server.endpoint))
        .bearer_auth(&server.admin_token)
        .json(&json!({"typePrefix": "platform.tenant.updated"}))
        .send()
        .await
        .unwrap();
    assert_eq!(watch.status(), 200);
    let updated =
        server.admin_ok("/api/platform/tenants/update", json!({"tenantId": "acme", "description": "x"})).await;
    let version = updated["version"].clone();
    assert!(integral(&version), "{updated}");
    let changed = server.admin_ok("/api/platform/pools/update", json!({"poolId": pool_id, "policy": policy})).await;
    assert_eq!(changed["policy"], policy, "the update's answer: {changed}");

    // The stored JSON.
    let filter = EventFilter { limit: 1000, ..EventFilter::default() };
    let stored = server.store.event_list_after(&filter).await.unwrap();
    let tenant_update =
        stored.iter().rev().find(|e| e.event_type == "platform.tenant.updated").expect("the update's event");
    assert_eq!(tenant_update.data["version"], version, "stored: {}", tenant_update.data);
    assert_eq!(server.store.pool_fetch(pool_id).await.unwrap().policy, policy);

    // The JSON gateway.
    let listed = server.admin_ok("/api/compute/events/list", json!({"typePrefix": "platform.tenant.updated"})).await;
    let versions: Vec<&Value> = listed["events"].as_array().unwrap().iter().map(|e| &e["data"]["version"]).collect();
    assert_eq!(versions.last(), Some(&&version), "{listed}");
    assert!(versions.iter().all(|v| integral(v)), "{listed}");
    let pool = server.admin_ok("/api/platform/pools/get", json!({"poolId": pool_id})).await;
    assert_eq!(pool["policy"], policy, "{pool}");

    // Its server-sent events.
    let mut text = String::new();
    while text.matches("\n\n").count() < versions.len() {
        let chunk = tokio::time::timeout(Duration::from_secs(5), watch.chunk()).await.unwrap().unwrap().unwrap();
        text.push_str(std::str::from_utf8(&chunk).unwrap());
    }
    let streamed: Vec<Value> = text
        .split("\n\n")
        .filter_map(|block| block.lines().find_map(|l| l.strip_prefix("data: ")))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    assert_eq!(streamed.last().unwrap()["data"]["version"], version, "{text}");
    drop(watch);

    // bcctl, over gRPC.
    let output = tokio::task::block_in_place(|| {
        Command::new(env!("CARGO_BIN_EXE_bcctl"))
            .env("BC_ENDPOINT", &server.endpoint)
            .env("BC_TOKEN", &server.admin_token)
            .args(["-o", "json", "pools", "get", pool_id])
            .output()
            .unwrap()
    });
    assert!(output.status.success(), "bcctl: {}", String::from_utf8_lossy(&output.stderr));
    let printed = String::from_utf8_lossy(&output.stdout);
    let shown: Value = serde_json::from_str(&printed).unwrap();
    assert_eq!(shown["policy"], policy, "{printed}");
    assert!(!printed.contains("10.0"), "{printed}");
}
