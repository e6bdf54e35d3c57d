//! A normal delete confirms at the provider that nothing of its plan is left: while DigitalOcean
//! accepts a load balancer's delete and keeps it, the load balancer stays `deleting`, its pass
//! fails naming the load balancer, and it ends `deleted` only once the provider lets it go.

use better_compute::store::Backend;
use serde_json::json;

use crate::harness::poll;
use crate::load_balancers::{CREATE, DELETE, POOL, REGION, regional};

crate::on_both_backends!(a_delete_does_not_end_deleted_while_the_provider_keeps_an_object);

async fn a_delete_does_not_end_deleted_while_the_provider_keeps_an_object(backend: Backend) {
    let mut env = crate::load_balancers::start(backend).await;
    env.instance("acme", POOL, REGION, None).await;
    let created = env.ok(CREATE, regional("kept", json!({"pool": true}))).await;
    let id = created["id"].as_str().unwrap().to_owned();
    env.start_worker();
    let ready = env.wait_load_balancer_state("acme", &id, "ready").await;
    let name = ready["providerName"].as_str().unwrap().to_owned();
    let fake_id = env.fake_load_balancer(&name).unwrap()["id"].as_str().unwrap().to_owned();

    env.cloud.do_keep_after_delete(&fake_id, true);
    env.ok(DELETE, json!({"tenantId": "acme", "loadBalancerId": id})).await;
    let expected = format!("the DigitalOcean load balancer {name} is still there after its delete");
    let error = poll(super::LIMIT, "the pass naming the load balancer left", || async {
        match env.work_failure(&id).await {
            Some((_, Some(error))) if error.contains(&expected) => Ok(error),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    assert!(error.contains(&name), "{error}");
    let still = env.ok("/api/compute/loadBalancers/get", json!({"tenantId": "acme", "loadBalancerId": id})).await;
    assert_eq!(still["state"], "deleting", "not deleted over what is left: {still}");
    assert!(env.fake_load_balancer(&name).is_some());

    // The provider lets it go: the next pass deletes it again and the delete ends.
    env.cloud.do_keep_after_delete(&fake_id, false);
    env.wait_load_balancer_state("acme", &id, "deleted").await;
    assert!(env.fake_load_balancer(&name).is_none());
}
