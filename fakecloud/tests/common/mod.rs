//! What the fake cloud's own tests share: a fake cloud with short delays, an authenticated
//! client of its APIs, and polling of its inspection.

#![allow(dead_code)]

use std::time::{Duration, Instant};

use fakecloud::{FakeCloud, FakeCloudConfig};
use serde_json::Value;

pub const PROJECT: &str = "p";
pub const LOCATION: &str = "europe-west1";

pub struct Fixture {
    pub cloud: FakeCloud,
    pub http: reqwest::Client,
    pub google_token: String,
}

pub async fn start() -> Fixture {
    start_with(FakeCloudConfig {
        operation_duration: Duration::from_millis(30),
        activation_delay: Duration::from_millis(30),
        ..FakeCloudConfig::default()
    })
    .await
}

pub async fn start_with(config: FakeCloudConfig) -> Fixture {
    let cloud = FakeCloud::start(config).await.expect("the fake cloud starts");
    let google_token = cloud.access_token("tester@p.iam.gserviceaccount.com");
    Fixture { cloud, http: reqwest::Client::new(), google_token }
}

impl Fixture {
    /// Sends `method path` with `body` to the fake, as the provider's client would, and returns
    /// the status and the JSON answer.
    pub async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let token = if path.starts_with("/v2/") { "fake-digitalocean-token" } else { self.google_token.as_str() };
        let mut request = self.http.request(method, format!("{}{path}", self.cloud.base_url())).bearer_auth(token);
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_string());
        }
        let response = request.send().await.expect("the fake answers");
        let status = response.status().as_u16();
        let text = response.text().await.expect("a body");
        (status, serde_json::from_str(&text).unwrap_or(Value::Null))
    }

    /// Polls the inspection until `ready` finds what it waits for in it.
    pub async fn eventually<T>(&self, what: &str, ready: impl Fn(&Value) -> Option<T>) -> T {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let snapshot = self.cloud.inspect();
            if let Some(found) = ready(&snapshot) {
                return found;
            }
            assert!(Instant::now() < deadline, "{what} never happened: {snapshot:#}");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// The cluster `name` in the inspection, once no operation runs on it.
    pub async fn idle_cluster(&self, name: &str) -> Value {
        self.eventually(&format!("cluster {name} idle"), |snapshot| {
            let cluster = cluster(snapshot, name)?;
            let ops = cluster["operations"].as_array()?;
            ops.iter().all(|op| op["status"] == "DONE").then_some(cluster)
        })
        .await
    }
}

/// Cluster `name` of an inspection.
pub fn cluster(snapshot: &Value, name: &str) -> Option<Value> {
    snapshot["gke"]["clusters"].as_array()?.iter().find(|c| c["name"] == name).cloned()
}

/// Pool `pool` of a cluster of the inspection.
pub fn pool(cluster: &Value, pool: &str) -> Value {
    cluster["nodePools"]
        .as_array()
        .and_then(|pools| pools.iter().find(|p| p["name"] == pool))
        .cloned()
        .unwrap_or_default()
}

/// The instance names of a pool of the inspection.
pub fn nodes(pool: &Value) -> Vec<String> {
    pool["nodes"].as_array().into_iter().flatten().filter_map(|n| n.as_str().map(str::to_owned)).collect()
}
