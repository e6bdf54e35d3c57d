//! The hosted join token: made by the reconciler, never shown, replaced before it expires (the
//! Secret updated, so a node that joins later joins with the new one), the replaced token revoked
//! after its grace, and every token revoked at teardown.

use std::sync::Arc;
use std::time::Duration;

use better_compute::reconcile::KubernetesSubstrates;
use better_compute::store::Backend;
use serde_json::json;

use super::{ZONE, flavor, setup, substrate_policy};

crate::on_both_backends!(the_hosted_token_is_replaced_before_it_expires_and_the_old_one_revoked);

async fn the_hosted_token_is_replaced_before_it_expires_and_the_old_one_revoked(backend: Backend) {
    let mut env = setup(backend).start().await;
    let resources = env.resources();
    // A token lives 60 s and is replaced 50 s before it expires; the old one goes 1 s after.
    let substrates = KubernetesSubstrates {
        backoff: resources.timings.backoff,
        token_lifetime: Duration::from_secs(60),
        token_renew_before: Duration::from_secs(50),
        token_grace: Duration::from_secs(1),
        ..KubernetesSubstrates::new(
            resources.gke.clone(),
            resources.secret_key.clone(),
            resources.daemon_endpoint.clone(),
        )
    };
    env.start_worker_of(env.worker_config.clone(), vec![Arc::new(substrates)]);
    let create = json!({"create": {"location": ZONE, "releaseChannel": "regular"}});
    let pool =
        env.substrate_pool("rotating", substrate_policy(create.clone(), vec![flavor("general", "e2-medium", 1)])).await;
    let ready =
        env.substrate_until(&pool, "ready", |s| s["state"] == "ready" && s["flavors"][0]["joinedNodes"] == 1).await;
    let first = ready["joinTokenId"].as_str().unwrap().to_owned();

    let rotated = env.substrate_until(&pool, "with a new token", |s| s["joinTokenId"] != first.as_str()).await;
    let second = rotated["joinTokenId"].as_str().unwrap().to_owned();
    let get = |id: &str| json!({"poolId": pool, "joinTokenId": id});
    crate::harness::poll(super::CONVERGE, "the replaced token revoked", || async {
        let old = env.server.admin_ok("/api/compute/joinTokens/get", get(&first)).await;
        if old["state"] == "revoked" { Ok(()) } else { Err(old.to_string()) }
    })
    .await;

    // A node that comes later joins with a token the Secret holds now, not the revoked one.
    env.set_policy(&pool, substrate_policy(create, vec![flavor("general", "e2-medium", 2)])).await;
    env.substrate_until(&pool, "with both nodes joined", |s| {
        s["state"] == "ready" && s["flavors"][0]["joinedNodes"] == 2
    })
    .await;
    let nodes = env.pool_nodes(&pool, "ready").await;
    let late = nodes.iter().max_by_key(|n| n["joinedAt"].as_str().unwrap().to_owned()).unwrap();
    assert_ne!(late["joinTokenId"], first.as_str(), "the late node joined with a live token: {late}");

    env.archive_pool(&pool).await;
    env.substrate_until(&pool, "deleted", |s| s["state"] == "deleted").await;
    let listed = env.server.admin_ok("/api/compute/joinTokens/list", json!({"poolId": pool})).await;
    let tokens = listed["joinTokens"].as_array().unwrap();
    assert!(tokens.len() >= 2, "{listed}");
    assert!(tokens.iter().all(|t| t["state"] == "revoked"), "every hosted token is revoked at teardown: {listed}");
    assert!(!listed.to_string().contains("bcjt_"), "never a secret: {listed}");
    let _ = second;
    env.stop_worker().await;
}
