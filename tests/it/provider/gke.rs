//! The GKE adapter against the fake GKE: every call, and the refusals a reconciler must handle.

use std::collections::BTreeMap;

use better_compute::provider::{
    Autoscaling, ClusterChange, ClusterSpec, ErrorKind, ManagedKubernetes, NodePoolChange, NodePoolSpec,
};
use fakecloud::Failure;

use super::{LOCATION, PROJECT, cloud, gke, wait};

fn spec(name: &str) -> ClusterSpec {
    ClusterSpec {
        name: name.into(),
        description: "a test cluster".into(),
        labels: BTreeMap::from([("better-compute-cluster".into(), "kcl_1".into())]),
        release_channel: "REGULAR".into(),
        version: "1.31.9-gke.1300".into(),
        network: String::new(),
        node_pools: vec![NodePoolSpec {
            name: "pool-a".into(),
            node_count: 2,
            machine_type: "e2-standard-4".into(),
            disk_size_gb: 50,
            max_pods_per_node: Some(64),
            ..Default::default()
        }],
        ..Default::default()
    }
}

#[tokio::test]
async fn a_cluster_is_created_read_listed_upgraded_and_deleted() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    let op = gke.cluster_create(&spec("bc-k-one")).await.unwrap();
    assert_eq!(op.operation_type, "CREATE_CLUSTER");
    let provisioning = gke.cluster_get("bc-k-one").await.unwrap();
    assert_eq!(provisioning.status, "PROVISIONING");
    assert!(wait(&gke, &op).await.outcome().unwrap());

    let cluster = gke.cluster_get("bc-k-one").await.unwrap();
    assert_eq!(cluster.status, "RUNNING");
    assert_eq!(cluster.master_version, "1.31.9-gke.1300");
    assert_eq!(cluster.labels["better-compute-cluster"], "kcl_1");
    assert!(cluster.ca_certificate_pem.starts_with("-----BEGIN CERTIFICATE-----"));
    assert!(cluster.endpoint.starts_with("127.0.0.1:"));
    assert_eq!(cluster.node_pools[0].node_count, 2);
    assert_eq!(gke.cluster_list().await.unwrap().iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["bc-k-one"]);

    let upgrade =
        gke.cluster_update("bc-k-one", &ClusterChange::MasterVersion("1.32.6-gke.1200".into())).await.unwrap();
    assert_eq!(gke.cluster_get("bc-k-one").await.unwrap().status, "RECONCILING");
    wait(&gke, &upgrade).await.outcome().unwrap();
    assert_eq!(gke.cluster_get("bc-k-one").await.unwrap().master_version, "1.32.6-gke.1200");
    let channel = gke.cluster_update("bc-k-one", &ClusterChange::ReleaseChannel("RAPID".into())).await.unwrap();
    wait(&gke, &channel).await.outcome().unwrap();
    assert_eq!(gke.cluster_get("bc-k-one").await.unwrap().release_channel, "RAPID");

    let delete = gke.cluster_delete("bc-k-one").await.unwrap();
    assert_eq!(gke.cluster_get("bc-k-one").await.unwrap().status, "STOPPING");
    wait(&gke, &delete).await.outcome().unwrap();
    let gone = gke.cluster_get("bc-k-one").await.unwrap_err();
    assert_eq!(gone.kind, ErrorKind::NotFound);
}

#[tokio::test]
async fn node_pools_are_created_changed_resized_autoscaled_and_deleted() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    wait(&gke, &gke.cluster_create(&spec("bc-k-pools")).await.unwrap()).await;
    let pool =
        NodePoolSpec { name: "pool-b".into(), node_count: 1, machine_type: "e2-medium".into(), ..Default::default() };
    let op = gke.node_pool_create("bc-k-pools", &pool).await.unwrap();
    assert_eq!(gke.node_pool_get("bc-k-pools", "pool-b").await.unwrap().status, "PROVISIONING");
    wait(&gke, &op).await.outcome().unwrap();
    assert_eq!(gke.node_pool_get("bc-k-pools", "pool-b").await.unwrap().status, "RUNNING");

    let op = gke.node_pool_set_size("bc-k-pools", "pool-b", 4).await.unwrap();
    wait(&gke, &op).await.outcome().unwrap();
    assert_eq!(gke.node_pool_get("bc-k-pools", "pool-b").await.unwrap().node_count, 4);

    let autoscaling = Autoscaling { enabled: true, min_node_count: 1, max_node_count: 5 };
    let op = gke.node_pool_set_autoscaling("bc-k-pools", "pool-b", &autoscaling).await.unwrap();
    wait(&gke, &op).await.outcome().unwrap();
    assert_eq!(gke.node_pool_get("bc-k-pools", "pool-b").await.unwrap().autoscaling, Some(autoscaling));

    let labels = BTreeMap::from([("tier".to_owned(), "batch".to_owned())]);
    let op = gke.node_pool_update("bc-k-pools", "pool-b", &NodePoolChange::NodeLabels(labels)).await.unwrap();
    wait(&gke, &op).await.outcome().unwrap();
    assert_eq!(cloud.inspect()["gke"]["clusters"][0]["nodePools"][1]["nodeLabels"]["tier"], "batch");

    // Nodes never pass the control plane: upgrade the master first, then the pool.
    let newer = NodePoolChange::Version("1.32.6-gke.1200".into());
    let refused = gke.node_pool_update("bc-k-pools", "pool-b", &newer).await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Permanent);
    let master =
        gke.cluster_update("bc-k-pools", &ClusterChange::MasterVersion("1.32.6-gke.1200".into())).await.unwrap();
    wait(&gke, &master).await.outcome().unwrap();
    let op = gke.node_pool_update("bc-k-pools", "pool-b", &newer).await.unwrap();
    wait(&gke, &op).await.outcome().unwrap();
    assert_eq!(gke.node_pool_get("bc-k-pools", "pool-b").await.unwrap().version, "1.32.6-gke.1200");

    let op = gke.node_pool_delete("bc-k-pools", "pool-b").await.unwrap();
    wait(&gke, &op).await.outcome().unwrap();
    assert_eq!(gke.node_pool_get("bc-k-pools", "pool-b").await.unwrap_err().kind, ErrorKind::NotFound);
}

#[tokio::test]
async fn every_in_place_node_pool_change_is_one_operation_and_reads_back() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    wait(&gke, &gke.cluster_create(&spec("bc-k-edit")).await.unwrap()).await;
    let cluster = gke.cluster_get("bc-k-edit").await.unwrap();
    let pool = gke.node_pool_get("bc-k-edit", "pool-a").await.unwrap();
    assert_eq!(pool.locations, cluster.locations, "a pool without zones runs in the cluster's");
    let taint = ("gpu".to_owned(), "true".to_owned(), "NoSchedule".to_owned());
    let zones = vec!["europe-west1-b".to_owned(), "europe-west1-c".to_owned()];
    let changes = [
        NodePoolChange::Taints(vec![taint.clone()]),
        NodePoolChange::MachineType("g2-standard-8".into()),
        NodePoolChange::DiskSizeGb(120),
        NodePoolChange::DiskType("pd-ssd".into()),
        NodePoolChange::Accelerators(vec![("nvidia-l4".into(), 2)]),
        NodePoolChange::Locations(zones.clone()),
    ];
    for change in &changes {
        let op = gke.node_pool_update("bc-k-edit", "pool-a", change).await.unwrap();
        // GKE takes one operation at a time: the next change waits for this one.
        let busy = gke.node_pool_update("bc-k-edit", "pool-a", &NodePoolChange::DiskSizeGb(130)).await.unwrap_err();
        assert_eq!(busy.kind, ErrorKind::ConflictInProgress, "{change:?}");
        wait(&gke, &op).await.outcome().unwrap();
    }
    let pool = gke.node_pool_get("bc-k-edit", "pool-a").await.unwrap();
    assert_eq!(pool.taints, [taint]);
    assert_eq!(
        (pool.machine_type.as_str(), pool.disk_size_gb, pool.disk_type.as_str()),
        ("g2-standard-8", 120, "pd-ssd")
    );
    assert_eq!(pool.accelerators, [("nvidia-l4".to_owned(), 2)]);
    assert_eq!(pool.locations, zones);
    assert!(!pool.spot);
    let op = gke.node_pool_update("bc-k-edit", "pool-a", &NodePoolChange::Accelerators(Vec::new())).await.unwrap();
    wait(&gke, &op).await.outcome().unwrap();
    assert!(gke.node_pool_get("bc-k-edit", "pool-a").await.unwrap().accelerators.is_empty());
    // GKE's own refusals: a zone of another region, no zones at all.
    for zones in [vec!["us-central1-a".to_owned()], Vec::new()] {
        let refused = gke.node_pool_update("bc-k-edit", "pool-a", &NodePoolChange::Locations(zones)).await.unwrap_err();
        assert_eq!(refused.kind, ErrorKind::Permanent, "{refused}");
    }
}

#[tokio::test]
async fn a_second_change_while_an_operation_runs_is_conflict_in_progress() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    let create = gke.cluster_create(&spec("bc-k-busy")).await.unwrap();
    let refused = gke.node_pool_set_size("bc-k-busy", "pool-a", 3).await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::ConflictInProgress);
    assert_eq!(refused.status, Some(400));
    assert_eq!(refused.reason, "FAILED_PRECONDITION");
    assert!(refused.message.contains(&create.name), "{}", refused.message);
    assert!(refused.request_id.is_some());
    wait(&gke, &create).await;
    // Once the operation is done, the same change goes through.
    wait(&gke, &gke.node_pool_set_size("bc-k-busy", "pool-a", 3).await.unwrap()).await.outcome().unwrap();
}

#[tokio::test]
async fn unknown_versions_and_downgrades_are_refused() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    let unknown =
        gke.cluster_create(&ClusterSpec { version: "1.2.3-gke.4".into(), ..spec("bc-k-v") }).await.unwrap_err();
    assert_eq!(unknown.kind, ErrorKind::Permanent);
    assert!(unknown.message.contains("1.2.3-gke.4"));
    wait(&gke, &gke.cluster_create(&spec("bc-k-v")).await.unwrap()).await;
    let down = ClusterChange::MasterVersion("1.30.12-gke.1400".into());
    let refused = gke.cluster_update("bc-k-v", &down).await.unwrap_err();
    assert_eq!((refused.kind, refused.reason.as_str()), (ErrorKind::Permanent, "INVALID_ARGUMENT"));
    assert!(refused.message.contains("downgraded"), "{}", refused.message);
    // A release-channel upgrade moves the control plane without an operation of ours; the nodes
    // stay where they are until their pool is upgraded, never past the control plane.
    let before = gke.cluster_get("bc-k-v").await.unwrap().node_version;
    assert!(cloud.upgrade_cluster(PROJECT, LOCATION, "bc-k-v", "1.33.2-gke.1100"));
    let moved = gke.cluster_get("bc-k-v").await.unwrap();
    assert_eq!((moved.master_version.as_str(), moved.node_version.as_str()), ("1.33.2-gke.1100", before.as_str()));
    let pool = moved.node_pools[0].name.clone();
    let up = gke.node_pool_update("bc-k-v", &pool, &NodePoolChange::Version("1.33.2-gke.1100".into())).await.unwrap();
    wait(&gke, &up).await.outcome().unwrap();
    let followed = gke.cluster_get("bc-k-v").await.unwrap();
    assert_eq!(
        (followed.node_version.as_str(), followed.node_pools[0].version.as_str()),
        ("1.33.2-gke.1100", "1.33.2-gke.1100")
    );
}

#[tokio::test]
async fn server_config_lists_channels_and_versions() {
    let cloud = cloud().await;
    let config = gke(&cloud).server_config().await.unwrap();
    assert_eq!(config.default_version, "1.32.6-gke.1200");
    assert_eq!(config.valid_master_versions[0], "1.33.2-gke.1100");
    let stable = config.channels.iter().find(|c| c.channel == "STABLE").unwrap();
    assert_eq!(stable.default_version, "1.31.9-gke.1300");
}

#[tokio::test]
async fn a_scripted_failure_ends_the_operation_done_with_an_error_and_the_cluster_in_error() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    cloud.fail_next("cluster", "create", "bc-k-err", Failure::OperationError { message: "quota exceeded".into() });
    let op = gke.cluster_create(&spec("bc-k-err")).await.unwrap();
    let done = wait(&gke, &op).await;
    let error = done.outcome().unwrap_err();
    assert_eq!(error.kind, ErrorKind::Permanent);
    assert!(error.message.contains("quota exceeded"));
    let cluster = gke.cluster_get("bc-k-err").await.unwrap();
    assert_eq!((cluster.status.as_str(), cluster.status_message.as_str()), ("ERROR", "quota exceeded"));

    cloud.fail_next("cluster", "delete", "bc-k-err", Failure::Refuse { status: 503, message: "try later".into() });
    assert_eq!(gke.cluster_delete("bc-k-err").await.unwrap_err().kind, ErrorKind::Transient);
    wait(&gke, &gke.cluster_delete("bc-k-err").await.unwrap()).await.outcome().unwrap();
}

#[tokio::test]
async fn rate_limits_and_error_rates_are_transient() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    gke.cluster_list().await.unwrap();
    cloud.set_error_rate("/v1/", 1.0, 503);
    let failed = gke.cluster_list().await.unwrap_err();
    assert_eq!((failed.kind, failed.status), (ErrorKind::Transient, Some(503)));
    cloud.set_error_rate("/v1/", 0.0, 503);
    cloud.set_rate_limit(Some(fakecloud::RateLimitMode { limit: 1, window: std::time::Duration::from_secs(30) }));
    gke.cluster_list().await.unwrap();
    let limited = gke.cluster_list().await.unwrap_err();
    assert_eq!((limited.kind, limited.status), (ErrorKind::Transient, Some(429)));
    assert!(limited.retry_after.is_some());
}

#[tokio::test]
async fn a_key_the_token_endpoint_does_not_know_is_refused() {
    let cloud = cloud().await;
    let other = fakecloud::FakeCloud::start(Default::default()).await.unwrap();
    // A key issued by another fake cloud names another token endpoint's audience and account.
    let key = other.service_account_key(PROJECT, "stranger").replace(&other.token_uri(), &cloud.token_uri());
    let key = better_compute::provider::google_auth::ServiceAccountKey::from_json(&key).unwrap();
    let source = better_compute::provider::google_auth::TokenSource::new(key, super::http());
    let refused = source.access_token().await.unwrap_err();
    assert_eq!((refused.status, refused.reason.as_str()), (Some(400), "invalid_grant"));
    assert!(!refused.to_string().contains("PRIVATE KEY"));
}
