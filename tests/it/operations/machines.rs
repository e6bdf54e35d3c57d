//! A machine whose BMC serves a certificate no trusted CA signed: its first pass shows an
//! `unreachable` problem naming the certificate, and its log the refused call.

use std::time::Duration;

use better_compute::store::Backend;
use serde_json::json;

use crate::harness::{System, poll};

async fn an_untrusted_bmc_certificate_is_an_unreachable_problem_naming_it(backend: Backend) {
    let mut env = System::on(backend).start().await;
    let pool = env.metal_pool(json!({})).await;
    env.start_worker();
    let (node, _) = env.enroll_at_untrusted_bmc(&pool, "untrusted").await;

    let body = json!({"poolId": pool, "nodeId": node});
    let machine = poll(Duration::from_secs(20), "a problem on the machine", || async {
        let machine = env.ok("/api/compute/metal/get", body.clone()).await;
        if machine["problem"].is_object() { Ok(machine) } else { Err(machine.to_string()) }
    })
    .await;
    let problem = &machine["problem"];
    assert_eq!(problem["class"], "unreachable", "{problem}");
    let message = problem["message"].as_str().unwrap();
    assert!(message.contains("the certificate is not trusted"), "{message}");
    assert!(message.contains("UnknownIssuer"), "the TLS library's own words are kept: {message}");
    assert_eq!(machine["provisionState"], "enrolling");

    let log = env.ok("/api/compute/operations/list", json!({"tenantId": "acme", "resourceId": node})).await;
    let calls = log["operations"].as_array().unwrap();
    let call = &calls[0];
    assert_eq!((&call["call"], &call["errorClass"]), (&json!("redfish.powerState"), &json!("unreachable")), "{log}");
    // One pass was enough: the problem dates from the first refused call, whatever passes
    // followed before this read (the log is newest first).
    let first = calls.last().unwrap();
    let attempts = problem["attempts"].as_u64().unwrap();
    assert!(attempts >= 1 && attempts as usize <= calls.len(), "{problem} {log}");
    let (since, first_call) = (problem["since"].as_str().unwrap(), first["time"].as_str().unwrap());
    let micros = |t: &str| {
        let at: prost_types::Timestamp = t.parse().unwrap();
        at.seconds * 1_000_000 + i64::from(at.nanos / 1000)
    };
    assert!((micros(since) - micros(first_call)).abs() < 1_000_000, "since {since}, first call {first_call}");
    if let Some(second) = calls.iter().rev().nth(1) {
        assert!(micros(since) < micros(second["time"].as_str().unwrap()), "the problem came before a second pass");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_bmc_certificate_is_an_unreachable_problem_naming_it_on_postgres() {
    an_untrusted_bmc_certificate_is_an_unreachable_problem_naming_it(Backend::Postgres).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_untrusted_bmc_certificate_is_an_unreachable_problem_naming_it_on_sqlite() {
    an_untrusted_bmc_certificate_is_an_unreachable_problem_naming_it(Backend::Sqlite).await;
}
