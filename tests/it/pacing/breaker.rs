//! Credentials refused at the provider open the account's breaker: within one pass every
//! resource on the account shows `problem.class = permission`, the account's view says
//! `credentialsRefused`, and no further call reaches the provider; new credentials given
//! through the API close it and every resource converges at once, whatever its backoff.

use std::time::Duration;

use better_compute::store::Backend;
use fakecloud::FakeCloudConfig;
use serde_json::{Value, json};

use super::{ACCOUNT, Env, load_balancer, setup};
use crate::harness::eventually;

crate::on_both_backends!(refused_credentials_stop_the_account_until_new_ones_resume_every_resource);

const LIMIT: Duration = Duration::from_secs(30);

/// Changes the load balancer's target port, so its next pass calls the provider.
async fn retarget(env: &Env, id: &str, port: u16) {
    let forwarding = json!([{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": port}]);
    let body = json!({"tenantId": "acme", "loadBalancerId": id, "forwarding": forwarding});
    env.ok("/api/compute/loadBalancers/update", body).await;
}

async fn view(env: &Env, id: &str) -> Value {
    env.ok("/api/compute/loadBalancers/get", json!({"tenantId": "acme", "loadBalancerId": id})).await
}

async fn refused_credentials_stop_the_account_until_new_ones_resume_every_resource(backend: Backend) {
    let mut env = setup(backend).start().await;
    env.start_worker();
    let mut ids = Vec::new();
    for n in 0..4 {
        let created = env.ok("/api/compute/loadBalancers/create", load_balancer("acme", &format!("lb-{n}"))).await;
        ids.push(created["id"].as_str().unwrap().to_owned());
    }
    for id in &ids {
        env.wait_state("loadBalancers", "loadBalancerId", id, "ready").await;
    }

    // DigitalOcean revokes the token; every load balancer has a change to make.
    let token = FakeCloudConfig::default().digitalocean_token;
    let revoked = env.cloud.revoke_credentials(&token);
    for id in &ids {
        retarget(&env, id, 8081).await;
    }
    for id in &ids {
        let stuck = eventually(LIMIT, "a permission problem", || async {
            let lb = view(&env, id).await;
            (lb["problem"]["class"] == "permission").then_some(lb)
        })
        .await;
        let message = stuck["problem"]["message"].as_str().unwrap();
        assert!(message.contains("credentials"), "says what to do: {message}");
    }
    let account = env.account().await;
    let check = &account["credentialsCheck"];
    assert_eq!(check["state"], "credentialsRefused", "{account}");
    assert!(check["since"].is_string() && check["nextProbeAt"].is_string(), "{check}");
    assert!(!check["message"].as_str().unwrap().is_empty(), "the provider's words: {check}");
    let refused_at_the_provider = env.cloud.fault_hits(revoked).unwrap();
    assert!(refused_at_the_provider >= 1);

    // More changes: the passes run (each records another failed attempt) but nothing is sent.
    for id in &ids {
        let attempts = view(&env, id).await["problem"]["attempts"].as_i64().unwrap();
        retarget(&env, id, 8082).await;
        eventually(LIMIT, "another refused pass", || async {
            let lb = view(&env, id).await;
            (lb["problem"]["attempts"].as_i64().unwrap_or(0) > attempts).then_some(())
        })
        .await;
        let message = view(&env, id).await["problem"]["message"].as_str().unwrap().to_owned();
        assert!(message.contains(": not sent: "), "the breaker refused it before the provider: {message}");
    }
    assert_eq!(
        env.cloud.fault_hits(revoked).unwrap(),
        refused_at_the_provider,
        "no call reached the provider while the breaker was open"
    );

    // DigitalOcean takes the token again once it is given anew: every load balancer converges
    // to its last change at once (their backoff was ten minutes).
    env.cloud.clear_fault(revoked);
    env.server.admin_ok("/api/platform/accounts/update", json!({"accountId": ACCOUNT, "credentials": token})).await;
    assert_eq!(env.account().await["credentialsCheck"]["state"], "ok");
    for id in &ids {
        let body = json!({"tenantId": "acme", "loadBalancerId": id});
        env.get_until(&env.acme_admin, "loadBalancers", body, LIMIT, "ready without a problem", |lb| {
            lb["state"] == "ready" && lb.get("problem").is_none() && lb["forwarding"][0]["targetPort"] == 8082
        })
        .await;
    }
}
