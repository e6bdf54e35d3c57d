//! Google's own CLI reads the fake GKE: `gcloud container clusters list` and `describe` show the
//! clusters the adapter made.

use std::process::Command;

use better_compute::provider::{ClusterSpec, ManagedKubernetes};
use serde_json::Value;

use super::{LOCATION, PROJECT, cloud, gke, wait};

fn gcloud(config: &std::path::Path, base_url: &str, args: &[&str]) -> Value {
    let output = Command::new("gcloud")
        .args(args)
        .arg("--format=json")
        .env("CLOUDSDK_CONFIG", config)
        .env("CLOUDSDK_API_ENDPOINT_OVERRIDES_CONTAINER", format!("{base_url}/"))
        .env("CLOUDSDK_AUTH_ACCESS_TOKEN_FILE", config.join("token"))
        .env("CLOUDSDK_CORE_PROJECT", PROJECT)
        .env("CLOUDSDK_CORE_DISABLE_PROMPTS", "1")
        .output()
        .expect("gcloud must be installed (the machine image and CI carry the Google Cloud SDK); it is not on PATH");
    assert!(output.status.success(), "gcloud {args:?} failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout).expect("gcloud prints JSON")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gcloud_lists_and_describes_what_the_adapter_made() {
    let cloud = cloud().await;
    let gke = gke(&cloud);
    let spec = ClusterSpec {
        name: "bc-k-gcloud".into(),
        labels: [("better-compute-cluster".to_owned(), "kcl_9".to_owned())].into(),
        ..Default::default()
    };
    wait(&gke, &gke.cluster_create(&spec).await.unwrap()).await.outcome().unwrap();
    let made = gke.cluster_get("bc-k-gcloud").await.unwrap();

    let config = std::env::temp_dir().join(format!("bc-gcloud-{}", std::process::id()));
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(config.join("token"), cloud.access_token(&format!("reconciler@{PROJECT}.iam.gserviceaccount.com")))
        .unwrap();

    let list = tokio::task::block_in_place(|| gcloud(&config, cloud.base_url(), &["container", "clusters", "list"]));
    let listed = &list.as_array().expect("a list")[0];
    assert_eq!(listed["name"], "bc-k-gcloud");
    assert_eq!(listed["status"], "RUNNING");
    assert_eq!(listed["currentMasterVersion"], made.master_version.as_str());

    let describe = tokio::task::block_in_place(|| {
        gcloud(&config, cloud.base_url(), &["container", "clusters", "describe", "bc-k-gcloud", "--location", LOCATION])
    });
    assert_eq!(describe["endpoint"], made.endpoint.as_str());
    assert_eq!(describe["resourceLabels"]["better-compute-cluster"], "kcl_9");
    assert_eq!(describe["status"], "RUNNING");
    std::fs::remove_dir_all(&config).unwrap();
}
