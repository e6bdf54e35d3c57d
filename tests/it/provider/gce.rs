//! The Compute Engine adapter against the fake cloud: custom-mode networks and subnetworks,
//! their operations, and Compute Engine's refusals (a name taken, overlapping ranges, a network
//! or subnetwork in use); and the fake GKE refusing a cluster on a network that does not exist.

use std::time::Duration;

use better_compute::provider::gce::{Gce, GceOperation};
use better_compute::provider::{ClusterSpec, ErrorKind, ManagedKubernetes};

use super::{cloud, gke};
use crate::harness::poll;

/// Polls a compute operation until it is `DONE`; panics after 10 s.
async fn done(gce: &Gce, op: &GceOperation, region: Option<&str>) -> GceOperation {
    poll(Duration::from_secs(10), &format!("operation {} done", op.name), || async {
        let now = match region {
            Some(region) => gce.region_operation_get(region, &op.name).await.unwrap(),
            None => gce.global_operation_get(&op.name).await.unwrap(),
        };
        if now.status == "DONE" { Ok(now) } else { Err(now.status) }
    })
    .await
}

#[tokio::test]
async fn networks_and_subnetworks_are_made_by_operations_and_refused_as_compute_engine_refuses() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    let gce = gke.compute();
    assert_eq!(gce.network_get("bc-n-1").await.unwrap_err().kind, ErrorKind::NotFound);
    let op = gce.network_create("bc-n-1", "a tenant network").await.unwrap();
    assert_eq!(op.status, "RUNNING");
    assert_eq!(gce.network_create("bc-n-1", "").await.unwrap_err().status, Some(409), "a create in flight");
    assert!(done(&gce, &op, None).await.error.is_none());
    let network = gce.network_get("bc-n-1").await.unwrap();
    assert!(!network.auto_create_subnetworks);
    assert!(network.self_link.ends_with("/compute/v1/projects/bc-test/global/networks/bc-n-1"), "{network:?}");

    let op = gce.subnetwork_create("europe-west1", "bc-s-1", "bc-n-1", "10.0.0.0/24").await.unwrap();
    done(&gce, &op, Some("europe-west1")).await;
    let subnetwork = gce.subnetwork_get("europe-west1", "bc-s-1").await.unwrap();
    assert_eq!(subnetwork.ip_cidr_range, "10.0.0.0/24");
    assert!(subnetwork.network.ends_with("/global/networks/bc-n-1"));
    // Ranges of one network may not overlap, whatever the region.
    let overlap = gce.subnetwork_create("us-central1", "bc-s-2", "bc-n-1", "10.0.0.128/25").await.unwrap_err();
    assert_eq!((overlap.status, overlap.reason.as_str()), (Some(400), "invalid"), "{overlap}");
    let missing = gce.subnetwork_create("us-central1", "bc-s-3", "bc-n-9", "10.9.0.0/24").await.unwrap_err();
    assert_eq!(missing.status, Some(400), "{missing}");
    // A network with subnetworks cannot go.
    let in_use = gce.network_delete("bc-n-1").await.unwrap_err();
    assert_eq!(in_use.reason, "resourceInUseByAnotherResource", "{in_use}");
    let inspected = cloud.inspect();
    assert_eq!(inspected["compute"]["subnetworks"][0]["name"], "bc-s-1");

    // The fake GKE refuses a cluster on a network that does not exist, and places it on one that does.
    let spec = |network: &str, subnetwork: &str| ClusterSpec {
        name: format!("c-{network}"),
        network: network.into(),
        subnetwork: subnetwork.into(),
        autopilot: true,
        ..Default::default()
    };
    let refused = gke.cluster_create(&spec("bc-n-9", "")).await.unwrap_err();
    assert_eq!(refused.status, Some(400), "{refused}");
    let refused = gke.cluster_create(&spec("bc-n-1", "bc-s-9")).await.unwrap_err();
    assert_eq!(refused.status, Some(400), "{refused}");
    let created = gke.cluster_create(&spec("bc-n-1", "bc-s-1")).await.unwrap();
    super::wait(&gke, &created).await;
    let cluster = &cloud.inspect()["gke"]["clusters"][0];
    assert_eq!((cluster["network"].as_str(), cluster["subnetwork"].as_str()), (Some("bc-n-1"), Some("bc-s-1")));
    // A subnetwork a cluster uses cannot go.
    let in_use = gce.subnetwork_delete("europe-west1", "bc-s-1").await.unwrap_err();
    assert_eq!(in_use.reason, "resourceInUseByAnotherResource", "{in_use}");
    let deleted = gke.cluster_delete("c-bc-n-1").await.unwrap();
    super::wait(&gke, &deleted).await;

    let op = gce.subnetwork_delete("europe-west1", "bc-s-1").await.unwrap();
    done(&gce, &op, Some("europe-west1")).await;
    let op = gce.network_delete("bc-n-1").await.unwrap();
    done(&gce, &op, None).await;
    assert_eq!(gce.network_get("bc-n-1").await.unwrap_err().kind, ErrorKind::NotFound);
    assert_eq!(gce.subnetwork_delete("europe-west1", "bc-s-1").await.unwrap_err().kind, ErrorKind::NotFound);
}
