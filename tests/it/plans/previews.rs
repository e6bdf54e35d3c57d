//! What a plan says, over JSON and gRPC: each change's field and effect (`none`, `inPlace`,
//! `rolling`), the provider objects it asks for, and for a delete every provider object that
//! goes. Every plan leaves the database as it was.

use std::time::Duration;

use better_compute::proto::compute::kubernetes_node_pools_client::KubernetesNodePoolsClient;
use better_compute::proto::compute::volumes_client::VolumesClient;
use better_compute::proto::compute::{
    DeleteVolumeRequest, PlanKubernetesNodePoolRequest, PlanVolumeRequest, UpdateKubernetesNodePoolRequest,
    plan_kubernetes_node_pool_request, plan_volume_request,
};
use better_compute::store::Backend;
use serde_json::{Value, json};

use super::writes_nothing::with;
use super::{cluster, instance, load_balancer, volume};

crate::on_both_backends!(plans_say_what_each_change_does_over_json_and_grpc);

/// The plan's change of `field`.
fn change<'a>(plan: &'a Value, field: &str) -> &'a Value {
    let changes = plan["changes"].as_array().unwrap_or_else(|| panic!("changes in {plan}"));
    changes.iter().find(|c| c["field"] == field).unwrap_or_else(|| panic!("a change of {field} in {plan}"))
}

/// The plan's provider objects as (action, provider, kind, name).
fn objects(plan: &Value) -> Vec<(String, String, String, String)> {
    let text = |o: &Value, key: &str| o[key].as_str().unwrap_or_default().to_owned();
    let objects = plan["providerObjects"].as_array().cloned().unwrap_or_default();
    objects.iter().map(|o| (text(o, "action"), text(o, "provider"), text(o, "kind"), text(o, "name"))).collect()
}

/// `(action, provider, kind, name)` as owned strings.
fn object(action: &str, provider: &str, kind: &str, name: &str) -> (String, String, String, String) {
    (action.into(), provider.into(), kind.into(), name.into())
}

async fn plans_say_what_each_change_does_over_json_and_grpc(backend: Backend) {
    let mut env = super::setup(backend).start().await;
    env.start_worker();
    let created = env.ok("/api/compute/kubernetesClusters/create", cluster("web")).await;
    let cluster_ref = json!({"tenantId": "acme", "clusterId": created["id"]});
    let limit = Duration::from_secs(30);
    let ready = env.get_until(&env.acme_admin, "kubernetesClusters", cluster_ref.clone(), limit, "ready", |c| {
        c["state"] == "ready"
    });
    let ready = ready.await;
    let web = env.ready("instances", "instanceId", instance("web")).await;
    let data = env.ready("volumes", "volumeId", volume("data", 10)).await;
    let front = env.ready("loadBalancers", "loadBalancerId", load_balancer("front")).await;
    env.stop_worker().await;
    let acme = env.acme();
    let provider_cluster = format!("bc-k-{}", &created["id"].as_str().unwrap()[4..28]);
    let general_ref = with(&cluster_ref, json!({"nodePoolId": ready["nodePools"][0]["id"]}));

    // A new machine type recreates every node of the pool, a few at a time.
    let machine = acme
        .plan("kubernetesNodePools", json!({"update": with(&general_ref, json!({"machineType": "e2-standard-8"}))}))
        .await;
    assert_eq!(machine["effect"], "rolling", "{machine}");
    let changed = change(&machine, "machineType");
    assert_eq!(
        (changed["from"].as_str(), changed["to"].as_str()),
        (Some("\"e2-standard-4\""), Some("\"e2-standard-8\""))
    );
    assert_eq!(changed["effect"], "rolling");
    assert!(!machine["disruptions"].as_array().unwrap().is_empty(), "{machine}");
    let pool_object = object("update", "gke", "node pool", &format!("{provider_cluster}/general"));
    assert_eq!(objects(&machine), std::slice::from_ref(&pool_object), "{machine}");
    assert_eq!(machine["violations"], json!([]));

    // More nodes is a resize where the pool stands.
    let resize = acme.plan("kubernetesNodePools", json!({"update": with(&general_ref, json!({"nodeCount": 3}))})).await;
    assert_eq!(
        (resize["effect"].as_str(), change(&resize, "nodeCount")["effect"].as_str()),
        (Some("inPlace"), Some("inPlace"))
    );
    assert_eq!(objects(&resize), std::slice::from_ref(&pool_object), "{resize}");

    // The description is ours alone.
    let described = acme
        .plan("kubernetesClusters", json!({"update": with(&cluster_ref, json!({"description": "the web tier"}))}))
        .await;
    assert_eq!(described["effect"], "none", "{described}");
    assert_eq!(change(&described, "description")["to"], "\"the web tier\"");
    assert_eq!(described["providerObjects"], json!([]), "{described}");

    // A volume grows where it stands; a load balancer's rules change where it stands.
    let data_ref = json!({"tenantId": "acme", "volumeId": data["id"]});
    let grow = acme.plan("volumes", json!({"update": with(&data_ref, json!({"sizeGigabytes": 20}))})).await;
    assert_eq!((grow["effect"].as_str(), change(&grow, "sizeGigabytes")["to"].as_str()), (Some("inPlace"), Some("20")));
    let volume_name = format!("bc-v-{}", &data["id"].as_str().unwrap()[5..29]);
    assert_eq!(objects(&grow), [object("update", "digitalocean", "volume", &volume_name)], "{grow}");
    let front_ref = json!({"tenantId": "acme", "loadBalancerId": front["id"]});
    let forwarding = json!([{"entryProtocol": "http", "entryPort": 80, "targetProtocol": "http", "targetPort": 9090}]);
    let rules =
        acme.plan("loadBalancers", json!({"update": with(&front_ref, json!({"forwarding": forwarding}))})).await;
    assert_eq!(
        (rules["effect"].as_str(), change(&rules, "forwarding")["effect"].as_str()),
        (Some("inPlace"), Some("inPlace"))
    );
    let lb_name = front["providerName"].as_str().unwrap();
    assert_eq!(objects(&rules), [object("update", "digitalocean", "load balancer", lb_name)], "{rules}");

    // A delete lists every provider object that goes.
    let gone = acme.plan("kubernetesClusters", json!({"delete": cluster_ref.clone()})).await;
    assert_eq!(gone["effect"], "delete", "{gone}");
    let mut expected = vec![object("delete", "gke", "cluster", &provider_cluster)];
    for pool in ["general", "batch"] {
        expected.push(object("delete", "gke", "node pool", &format!("{provider_cluster}/{pool}")));
    }
    assert_eq!(objects(&gone), expected, "{gone}");
    let gone = acme.plan("kubernetesNodePools", json!({"delete": general_ref.clone()})).await;
    assert_eq!(
        (gone["effect"].as_str(), objects(&gone)),
        (Some("delete"), vec![object("delete", "gke", "node pool", &format!("{provider_cluster}/general"))])
    );
    let gone = acme.plan("loadBalancers", json!({"delete": front_ref})).await;
    assert_eq!(
        (gone["effect"].as_str(), objects(&gone)),
        (Some("delete"), vec![object("delete", "digitalocean", "load balancer", lb_name)])
    );
    assert!(!gone["quotaEffects"].as_array().unwrap().is_empty(), "{gone}");
    let gone = acme.plan("volumes", json!({"delete": data_ref.clone()})).await;
    assert_eq!(
        (gone["effect"].as_str(), objects(&gone)),
        (Some("delete"), vec![object("delete", "digitalocean", "volume", &volume_name)])
    );
    let web_ref = json!({"tenantId": "acme", "instanceId": web["id"]});
    let droplet = format!("bc-i-{}", &web["id"].as_str().unwrap()[5..29]);
    let gone = acme.plan("instances", json!({"delete": web_ref})).await;
    assert_eq!(
        (gone["effect"].as_str(), objects(&gone)),
        (Some("delete"), vec![object("delete", "digitalocean", "droplet", &droplet)])
    );

    // gRPC answers the same plans.
    let channel = env.server.channel(Some(&env.acme_admin)).await;
    let update = UpdateKubernetesNodePoolRequest {
        tenant_id: "acme".into(),
        cluster_id: created["id"].as_str().unwrap().into(),
        node_pool_id: ready["nodePools"][0]["id"].as_str().unwrap().into(),
        machine_type: Some("e2-standard-8".into()),
        ..Default::default()
    };
    let request =
        PlanKubernetesNodePoolRequest { change: Some(plan_kubernetes_node_pool_request::Change::Update(update)) };
    let plan = KubernetesNodePoolsClient::new(channel.clone()).plan(request).await.unwrap().into_inner();
    assert_eq!(plan.effect, machine["effect"].as_str().unwrap());
    let fields: Vec<(&str, &str, &str)> =
        plan.changes.iter().map(|c| (c.field.as_str(), c.to.as_str(), c.effect.as_str())).collect();
    assert!(fields.contains(&("machineType", "\"e2-standard-8\"", "rolling")), "{plan:?}");
    let grpc_objects: Vec<_> =
        plan.provider_objects.iter().map(|o| object(&o.action, &o.provider, &o.kind, &o.name)).collect();
    assert_eq!(grpc_objects, objects(&machine));
    let delete = DeleteVolumeRequest {
        tenant_id: "acme".into(),
        volume_id: data["id"].as_str().unwrap().into(),
        ..Default::default()
    };
    let request = PlanVolumeRequest { change: Some(plan_volume_request::Change::Delete(delete)) };
    let before = acme.footprint().await;
    let plan = VolumesClient::new(channel).plan(request).await.unwrap().into_inner();
    acme.assert_untouched(&before, "a volume's plan over gRPC").await;
    assert_eq!(plan.effect, "delete");
    let grpc_objects: Vec<_> =
        plan.provider_objects.iter().map(|o| object(&o.action, &o.provider, &o.kind, &o.name)).collect();
    assert_eq!(grpc_objects, [object("delete", "digitalocean", "volume", &volume_name)]);
}
