//! A certificate's delete racing load balancers that start to name it, on Postgres (many
//! connections, row locks): whichever commits first wins, and a certificate being deleted is
//! never named by a live load balancer.

use serde_json::{Value, json};

use super::{CREATE, POOL, UPDATE, regional};
use better_compute::store::Backend;

const CERTIFICATE_DELETE: &str = "/api/compute/certificates/delete";
const ROUNDS: usize = 15;

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_certificate_being_deleted_is_never_named_by_a_live_load_balancer() {
    let env = super::start(Backend::Postgres).await;
    let mut load_balancers = Vec::new();
    for name in ["race-a", "race-b"] {
        load_balancers
            .push(env.ok(CREATE, regional(name, json!({"pool": true}))).await["id"].as_str().unwrap().to_owned());
    }
    let http = reqwest::Client::new();
    let post = |path: &str, body: Value| {
        http.post(format!("{}{path}", env.server.endpoint))
            .bearer_auth(&env.acme_admin)
            .header("content-type", "application/json")
            .body(body.to_string())
    };
    let (mut deleted, mut refused) = (0, 0);
    for _ in 0..ROUNDS {
        let certificate = env.certificate("acme", POOL, true).await;
        let mut calls = tokio::task::JoinSet::new();
        for id in &load_balancers {
            let forwarding = json!([{"entryProtocol": "https", "entryPort": 443, "targetProtocol": "http",
                "targetPort": 8080, "certificateId": certificate}]);
            let request = post(UPDATE, json!({"tenantId": "acme", "loadBalancerId": id, "forwarding": forwarding}));
            calls.spawn(async move { ("update", request.send().await.unwrap().status().as_u16()) });
        }
        let request = post(CERTIFICATE_DELETE, json!({"tenantId": "acme", "certificateId": certificate}));
        calls.spawn(async move { ("delete", request.send().await.unwrap().status().as_u16()) });
        let answers = calls.join_all().await;
        for (call, status) in &answers {
            assert!(matches!(status, 200 | 409), "{call}: {status} ({answers:?})");
        }

        let row = env.store.certificate_fetch(&certificate).await.unwrap().unwrap();
        let naming: Vec<&String> = {
            let mut naming = Vec::new();
            for id in &load_balancers {
                let lb = env.store.load_balancer_fetch(id).await.unwrap().unwrap();
                if lb.settings.certificate_ids().contains(&certificate) {
                    naming.push(id);
                }
            }
            naming
        };
        if row.delete_requested_at.is_some() {
            deleted += 1;
            assert!(naming.is_empty(), "certificate {certificate} is being deleted yet named by {naming:?}");
        } else {
            refused += 1;
            assert!(!naming.is_empty(), "the delete of {certificate} was refused with nothing naming it: {answers:?}");
        }
    }
    println!("{ROUNDS} rounds: the delete won {deleted}, the load balancers won {refused}");
}
