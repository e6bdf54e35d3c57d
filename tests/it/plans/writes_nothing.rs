//! `validateOnly` on every update and delete of every asynchronous kind: the rehearsal leaves
//! every table as it was (the resource's version and state, its events, the audit trail, the
//! work items) and answers what the real call, made right after, answers: its state
//! (`updating`, `deleting`), the changed field's new value and the next version.

use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{Caller, certificate, cluster, instance, load_balancer, network, volume};
use crate::harness::{ENROLL, OwnPool, PASSWORD, System};

crate::on_both_backends!(
    cluster_and_node_pool_rehearsals_write_nothing_and_answer_as_the_call,
    network_instance_certificate_and_volume_rehearsals_write_nothing_and_answer_as_the_call,
    load_balancer_rehearsals_write_nothing_and_answer_as_the_call,
    metal_rehearsals_write_nothing_and_answer_as_the_call,
);

/// `reference` with the fields of `change` added.
pub fn with(reference: &Value, change: Value) -> Value {
    let mut body = reference.clone();
    for (key, value) in change.as_object().unwrap() {
        body[key] = value.clone();
    }
    body
}

/// The version of a view.
fn version(view: &Value) -> i64 {
    view["version"].as_i64().unwrap_or_else(|| panic!("a version in {view}"))
}

async fn cluster_and_node_pool_rehearsals_write_nothing_and_answer_as_the_call(backend: Backend) {
    let mut env = super::setup(backend).start().await;
    env.start_worker();
    let created = env.ok("/api/compute/kubernetesClusters/create", cluster("web")).await;
    let id = created["id"].as_str().unwrap().to_owned();
    let cluster_ref = json!({"tenantId": "acme", "clusterId": id});
    let limit = Duration::from_secs(30);
    let ready = env.get_until(&env.acme_admin, "kubernetesClusters", cluster_ref.clone(), limit, "ready", |c| {
        c["state"] == "ready"
    });
    let ready = ready.await;
    env.stop_worker().await;
    let acme = env.acme();
    let pool_ref = |n: usize| with(&cluster_ref, json!({"nodePoolId": ready["nodePools"][n]["id"]}));

    let change = with(&cluster_ref, json!({"description": "the web tier", "authorizedNetworks": ["203.0.113.0/24"]}));
    let updated = acme.rehearse_then_call("/api/compute/kubernetesClusters/update", change).await;
    assert_eq!((updated["state"].as_str(), version(&updated)), (Some("updating"), version(&ready) + 1), "{updated}");
    assert_eq!(
        (updated["description"].as_str(), &updated["authorizedNetworks"]),
        (Some("the web tier"), &json!(["203.0.113.0/24"]))
    );

    let general = env.get("kubernetesNodePools", &pool_ref(0)).await;
    let resize = with(&pool_ref(0), json!({"nodeCount": 3}));
    let resized = acme.rehearse_then_call("/api/compute/kubernetesNodePools/update", resize).await;
    assert_eq!((resized["state"].as_str(), resized["nodeCount"].as_i64()), (Some("updating"), Some(3)), "{resized}");
    assert_eq!(version(&resized), version(&general) + 1);

    let batch = env.get("kubernetesNodePools", &pool_ref(1)).await;
    let deleting = acme.rehearse_then_call("/api/compute/kubernetesNodePools/delete", pool_ref(1)).await;
    assert_eq!((deleting["state"].as_str(), version(&deleting)), (Some("deleting"), version(&batch) + 1), "{deleting}");

    let before = env.get("kubernetesClusters", &cluster_ref).await;
    let deleting = acme.rehearse_then_call("/api/compute/kubernetesClusters/delete", cluster_ref.clone()).await;
    assert_eq!(
        (deleting["state"].as_str(), version(&deleting)),
        (Some("deleting"), version(&before) + 1),
        "{deleting}"
    );
}

async fn network_instance_certificate_and_volume_rehearsals_write_nothing_and_answer_as_the_call(backend: Backend) {
    let mut env = super::setup(backend).start().await;
    env.start_worker();
    let net = env.ready("networks", "networkId", network("net", "10.40.0.0/24")).await;
    let web = env.ready("instances", "instanceId", instance("web")).await;
    let cert = env.ready("certificates", "certificateId", certificate("site", &["www.example.com"])).await;
    let data = env.ready("volumes", "volumeId", volume("data", 10)).await;
    env.stop_worker().await;
    let acme = env.acme();

    let net_ref = json!({"tenantId": "acme", "networkId": net["id"]});
    let described =
        acme.rehearse_then_call("/api/compute/networks/update", with(&net_ref, json!({"description": "edge"}))).await;
    assert_eq!(
        (described["description"].as_str(), version(&described)),
        (Some("edge"), version(&net) + 1),
        "{described}"
    );

    let data_ref = json!({"tenantId": "acme", "volumeId": data["id"]});
    let grown =
        acme.rehearse_then_call("/api/compute/volumes/update", with(&data_ref, json!({"sizeGigabytes": 20}))).await;
    assert_eq!((grown["state"].as_str(), grown["sizeGigabytes"].as_i64()), (Some("updating"), Some(20)), "{grown}");
    assert_eq!(version(&grown), version(&data) + 1);
    let deleting = acme.rehearse_then_call("/api/compute/volumes/delete", data_ref).await;
    assert_eq!((deleting["state"].as_str(), version(&deleting)), (Some("deleting"), version(&grown) + 1), "{deleting}");

    let web_ref = json!({"tenantId": "acme", "instanceId": web["id"]});
    let deleting = acme.rehearse_then_call("/api/compute/instances/delete", web_ref).await;
    assert_eq!((deleting["state"].as_str(), version(&deleting)), (Some("deleting"), version(&web) + 1), "{deleting}");

    let cert_ref = json!({"tenantId": "acme", "certificateId": cert["id"]});
    let deleting = acme.rehearse_then_call("/api/compute/certificates/delete", cert_ref).await;
    assert_eq!((deleting["state"].as_str(), version(&deleting)), (Some("deleting"), version(&cert) + 1), "{deleting}");

    let deleting = acme.rehearse_then_call("/api/compute/networks/delete", net_ref).await;
    assert_eq!(
        (deleting["state"].as_str(), version(&deleting)),
        (Some("deleting"), version(&described) + 1),
        "{deleting}"
    );
}

async fn load_balancer_rehearsals_write_nothing_and_answer_as_the_call(backend: Backend) {
    let mut env = super::setup(backend).start().await;
    env.start_worker();
    let front = env.ready("loadBalancers", "loadBalancerId", load_balancer("front")).await;
    env.stop_worker().await;
    let acme = env.acme();
    let front_ref = json!({"tenantId": "acme", "loadBalancerId": front["id"]});
    let forwarding = json!([{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 9090}]);
    let change = with(&front_ref, json!({"forwarding": forwarding}));
    let updated = acme.rehearse_then_call("/api/compute/loadBalancers/update", change).await;
    assert_eq!((updated["state"].as_str(), version(&updated)), (Some("updating"), version(&front) + 1), "{updated}");
    assert_eq!(updated["forwarding"][0]["targetPort"], 9090, "{updated}");
    let deleting = acme.rehearse_then_call("/api/compute/loadBalancers/delete", front_ref).await;
    assert_eq!(
        (deleting["state"].as_str(), version(&deleting)),
        (Some("deleting"), version(&updated) + 1),
        "{deleting}"
    );
}

/// Enrols machine `name` in acme's own pool and puts it in `state`, as a reconciler would have.
pub async fn machine_in(pool: &OwnPool, name: &str, state: &str) -> String {
    let body = json!({"poolId": pool.pool, "name": name, "idempotencyKey": name, "labels": {"rack": "r1"},
        "bmc": {"driver": "redfish", "address": "https://10.0.0.5", "username": "admin", "password": PASSWORD,
            "insecure": true}});
    let (status, machine) = pool.as_admin(ENROLL, body).await;
    assert_eq!(status, 200, "{machine}");
    let node = machine["id"].as_str().unwrap_or_else(|| panic!("an id in {machine}")).to_owned();
    pool.execute(&format!("UPDATE metal_machines SET provision_state = '{state}' WHERE node_id = '{node}'")).await;
    node
}

async fn metal_rehearsals_write_nothing_and_answer_as_the_call(backend: Backend) {
    let pool = System::on(backend).own_pool("metal", json!({})).await;
    let node = machine_in(&pool, "m1", "ready").await;
    let acme = Caller { server: &pool.server, token: pool.admin.clone() };
    let machine_ref = json!({"poolId": pool.pool, "nodeId": node});
    let before = acme.post("/api/compute/metal/get", machine_ref.clone()).await.1;
    let change = with(&machine_ref, json!({"name": "m2", "address": "https://10.0.0.9", "labels": {"rack": "r2"}}));
    let updated = acme.rehearse_then_call("/api/compute/metal/update", change).await;
    assert_eq!((updated["name"].as_str(), updated["address"].as_str()), (Some("m2"), Some("https://10.0.0.9")));
    assert_eq!(version(&updated), version(&before) + 1, "{updated}");

    // A machine whose BMC never answered is deleted at once (a manageable one is powered off first).
    pool.execute(&format!("UPDATE metal_machines SET provision_state = 'enrollFailed' WHERE node_id = '{node}'")).await;
    let deleted = acme.rehearse_then_call("/api/compute/metal/delete", machine_ref.clone()).await;
    assert!(deleted["deletedAt"].is_string(), "{deleted}");
    let gone = acme.post("/api/compute/metal/get", machine_ref).await;
    assert_eq!(gone.1["provisionState"], deleted["provisionState"], "{gone:?}");
}
