//! `validateOnly` refuses exactly what the real call refuses, word for word (status, code,
//! message, details), and writes nothing while refusing; a plan of the same call is `refused`
//! with the real call's violations.

use better_compute::store::Backend;
use serde_json::json;

use super::writes_nothing::with;
use super::{cluster, instance, volume};
use crate::harness::violated_fields;

crate::on_both_backends!(rehearsals_are_refused_as_the_real_call_and_plans_name_the_refusal);

async fn rehearsals_are_refused_as_the_real_call_and_plans_name_the_refusal(backend: Backend) {
    let mut env = super::setup(backend).start().await;
    env.start_worker();
    let web = env.ready("instances", "instanceId", instance("web")).await;
    let data = env.ready("volumes", "volumeId", volume("data", 10)).await;
    let scratch = env.ready("volumes", "volumeId", volume("scratch", 10)).await;
    let created = env.ok("/api/compute/kubernetesClusters/create", cluster("web")).await;
    let web_ref = json!({"tenantId": "acme", "instanceId": web["id"]});
    let data_ref = json!({"tenantId": "acme", "volumeId": data["id"]});
    env.ok("/api/compute/volumes/attach", with(&data_ref, json!({"instanceId": web["id"]}))).await;
    env.wait_state("volumes", "volumeId", data["id"].as_str().unwrap(), "ready").await;
    env.stop_worker().await;
    let acme = env.acme();

    // A volume only grows.
    let shrink = with(&data_ref, json!({"sizeGigabytes": 5}));
    let error = acme.refused_alike("/api/compute/volumes/update", shrink.clone()).await;
    assert_eq!(
        (error["code"].as_str(), violated_fields(&error["details"])),
        (Some("INVALID_INPUT"), vec!["sizeGigabytes".to_owned()])
    );
    let plan = acme.plan("volumes", json!({"update": shrink})).await;
    assert_eq!(plan["effect"], "refused", "{plan}");
    assert_eq!(
        (plan["violations"][0]["code"].as_str(), plan["violations"][0]["field"].as_str()),
        (Some("INVALID_INPUT"), Some("sizeGigabytes"))
    );
    assert_eq!(plan["violations"][0]["description"], error["details"]["fields"][0]["description"], "{plan} / {error}");

    // An instance with a volume on it cannot go.
    let error = acme.refused_alike("/api/compute/instances/delete", web_ref.clone()).await;
    assert_eq!(
        (error["code"].as_str(), error["details"]["reason"].as_str()),
        (Some("INVALID_STATE"), Some("inUse")),
        "{error}"
    );
    let plan = acme.plan("instances", json!({"delete": web_ref})).await;
    assert_eq!(
        (plan["effect"].as_str(), plan["violations"][0]["code"].as_str()),
        (Some("refused"), Some("INVALID_STATE"))
    );
    assert_eq!(plan["violations"][0]["description"], error["message"], "{plan}");

    // A spot pool cannot become a standard one in place.
    let batch = json!({"tenantId": "acme", "clusterId": created["id"], "nodePoolId": created["nodePools"][1]["id"]});
    let unspot = with(&batch, json!({"spot": false}));
    let error = acme.refused_alike("/api/compute/kubernetesNodePools/update", unspot.clone()).await;
    assert_eq!(
        (error["code"].as_str(), violated_fields(&error["details"])),
        (Some("INVALID_INPUT"), vec!["spot".to_owned()])
    );
    let plan = acme.plan("kubernetesNodePools", json!({"update": unspot})).await;
    assert_eq!(
        (plan["effect"].as_str(), plan["violations"][0]["field"].as_str()),
        (Some("refused"), Some("spot")),
        "{plan}"
    );

    // A deleting resource cannot change.
    let scratch_ref = json!({"tenantId": "acme", "volumeId": scratch["id"]});
    env.ok("/api/compute/volumes/delete", scratch_ref.clone()).await;
    let grow = with(&scratch_ref, json!({"sizeGigabytes": 20}));
    let error = acme.refused_alike("/api/compute/volumes/update", grow.clone()).await;
    assert_eq!(error["code"], "INVALID_STATE", "{error}");
    let plan = acme.plan("volumes", json!({"update": grow})).await;
    assert_eq!(
        (plan["effect"].as_str(), plan["violations"][0]["code"].as_str()),
        (Some("refused"), Some("INVALID_STATE"))
    );
    let cluster_ref = json!({"tenantId": "acme", "clusterId": created["id"]});
    env.ok("/api/compute/kubernetesClusters/delete", cluster_ref.clone()).await;
    let describe = with(&cluster_ref, json!({"description": "late"}));
    let error = acme.refused_alike("/api/compute/kubernetesClusters/update", describe).await;
    assert_eq!(error["code"], "INVALID_STATE", "{error}");
    // A delete of what is already deleting is no refusal: nothing more happens.
    let plan = acme.plan("volumes", json!({"delete": scratch_ref})).await;
    assert_eq!((plan["effect"].as_str(), &plan["providerObjects"]), (Some("none"), &json!([])), "{plan}");
}
