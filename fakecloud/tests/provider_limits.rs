//! The providers' own limits as the fake enforces them: DigitalOcean's requests per token
//! (its `ratelimit-*` headers, its 429 with `retry-after`), its tokens (a second one, a
//! revoked one), GKE's operations at once per cluster and its requests per project; and what
//! each refused, as tests read it.

mod common;

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use common::{Fixture, LOCATION, PROJECT, start, start_with};
use fakecloud::{CallCounts, FakeCloudConfig, RateWindow};
use http::HeaderMap;
use reqwest::Method;
use serde_json::{Value, json};

const TOKEN: &str = "fake-digitalocean-token";

/// Sends `method path` to the fake with `token`, and returns the status, headers and JSON.
async fn send(
    fixture: &Fixture,
    method: Method,
    path: &str,
    token: &str,
    body: Option<Value>,
) -> (u16, HeaderMap, Value) {
    let mut request = fixture.http.request(method, format!("{}{path}", fixture.cloud.base_url())).bearer_auth(token);
    if let Some(body) = body {
        request = request.header("content-type", "application/json").body(body.to_string());
    }
    let response = request.send().await.expect("the fake answers");
    let (status, headers) = (response.status().as_u16(), response.headers().clone());
    let text = response.text().await.expect("a body");
    (status, headers, serde_json::from_str(&text).unwrap_or(Value::Null))
}

fn header(headers: &HeaderMap, name: &str) -> u64 {
    headers[name].to_str().unwrap().parse().unwrap_or_else(|_| panic!("{name} is a number: {headers:?}"))
}

fn unix_now() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_secs()
}

fn windows(per_short: u32, short: Duration) -> Vec<RateWindow> {
    vec![
        RateWindow { requests: per_short, window: short },
        RateWindow { requests: 1000, window: Duration::from_secs(3600) },
    ]
}

#[tokio::test]
async fn every_answer_carries_digitaloceans_hourly_budget_by_default() {
    let fixture = start().await;
    for remaining in [4999, 4998] {
        let (status, headers, _) = send(&fixture, Method::GET, "/v2/droplets", TOKEN, None).await;
        assert_eq!(status, 200);
        assert_eq!((header(&headers, "ratelimit-limit"), header(&headers, "ratelimit-remaining")), (5000, remaining));
        let reset = header(&headers, "ratelimit-reset");
        assert!((unix_now() + 3590..=unix_now() + 3601).contains(&reset), "the oldest request's hour: {reset}");
    }
    let (status, headers, _) = send(&fixture, Method::GET, "/v2/droplets/404", TOKEN, None).await;
    assert_eq!((status, header(&headers, "ratelimit-remaining")), (404, 4997), "an error spends the budget too");
    assert_eq!(fixture.cloud.digitalocean_calls(TOKEN), CallCounts { answered: 3, throttled: 0, refused: 0 });
}

#[tokio::test]
async fn the_61st_request_in_a_window_of_60_is_429_with_retry_after() {
    let fixture = start().await;
    fixture.cloud.set_digitalocean_rate_limits(&windows(60, Duration::from_secs(30)));
    for n in 1..=60 {
        let (status, headers, body) = send(&fixture, Method::GET, "/v2/droplets", TOKEN, None).await;
        assert_eq!(status, 200, "request {n}: {body}");
        // Of the hourly window, until the short one is full.
        let remaining = if n == 60 { 0 } else { 1000 - n };
        assert_eq!(header(&headers, "ratelimit-remaining"), remaining, "request {n}");
    }
    let (status, headers, body) = send(&fixture, Method::GET, "/v2/droplets", TOKEN, None).await;
    assert_eq!(status, 429, "{body}");
    assert_eq!(
        (body["id"].as_str(), body["message"].as_str()),
        (Some("too_many_requests"), Some("API Rate limit exceeded."))
    );
    let retry_after = header(&headers, "retry-after");
    assert!((1..=30).contains(&retry_after), "until the oldest request leaves the window: {retry_after}");
    assert_eq!((header(&headers, "ratelimit-limit"), header(&headers, "ratelimit-remaining")), (1000, 0));
    assert!(header(&headers, "ratelimit-reset") > unix_now());
    assert!(headers.contains_key("x-request-id"));
    assert_eq!(fixture.cloud.digitalocean_calls(TOKEN), CallCounts { answered: 60, throttled: 1, refused: 0 });
}

#[tokio::test]
async fn a_full_window_frees_a_request_after_retry_after() {
    let fixture = start().await;
    fixture.cloud.set_digitalocean_rate_limits(&windows(2, Duration::from_secs(2)));
    for _ in 0..2 {
        assert_eq!(send(&fixture, Method::GET, "/v2/vpcs", TOKEN, None).await.0, 200);
    }
    let (status, headers, _) = send(&fixture, Method::GET, "/v2/vpcs", TOKEN, None).await;
    assert_eq!(status, 429);
    let retry_after = header(&headers, "retry-after");
    assert!((1..=2).contains(&retry_after), "{retry_after}");
    // What the client is told to wait is enough, as a client trusting it would find.
    tokio::time::sleep(Duration::from_secs(retry_after)).await;
    let (status, _, body) = send(&fixture, Method::GET, "/v2/vpcs", TOKEN, None).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(fixture.cloud.digitalocean_calls(TOKEN), CallCounts { answered: 3, throttled: 1, refused: 0 });
    // No window: no limit.
    fixture.cloud.set_digitalocean_rate_limits(&[]);
    for _ in 0..5 {
        assert_eq!(send(&fixture, Method::GET, "/v2/vpcs", TOKEN, None).await.0, 200);
    }
}

#[tokio::test]
async fn two_tokens_of_one_team_see_the_same_objects_on_budgets_of_their_own() {
    let fixture = start().await;
    fixture.cloud.accept_digitalocean_token("rotated-token");
    fixture.cloud.set_digitalocean_rate_limits(&windows(3, Duration::from_secs(30)));
    let droplet = json!({"name": "d1", "region": "nyc3", "size": "s-1vcpu-1gb", "image": "ubuntu-24-04-x64"});
    let (status, _, made) = send(&fixture, Method::POST, "/v2/droplets", TOKEN, Some(droplet)).await;
    assert_eq!(status, 202, "{made}");
    for _ in 0..2 {
        assert_eq!(send(&fixture, Method::GET, "/v2/droplets", TOKEN, None).await.0, 200);
    }
    assert_eq!(send(&fixture, Method::GET, "/v2/droplets", TOKEN, None).await.0, 429);
    let (status, headers, listed) = send(&fixture, Method::GET, "/v2/droplets", "rotated-token", None).await;
    assert_eq!(status, 200, "the other token's budget is its own");
    assert_eq!(header(&headers, "ratelimit-remaining"), 999);
    assert_eq!(listed["droplets"][0]["id"], made["droplet"]["id"], "one team, the same droplets");
    assert_eq!(fixture.cloud.digitalocean_calls(TOKEN), CallCounts { answered: 3, throttled: 1, refused: 0 });
    assert_eq!(fixture.cloud.digitalocean_calls("rotated-token"), CallCounts { answered: 1, throttled: 0, refused: 0 });
    assert_eq!(fixture.cloud.digitalocean_calls_all(), CallCounts { answered: 4, throttled: 1, refused: 0 });
}

#[tokio::test]
async fn a_revoked_or_unknown_token_is_refused_401_and_counted() {
    let fixture = start().await;
    fixture.cloud.accept_digitalocean_token("rotated-token");
    let revoked = fixture.cloud.revoke_credentials(TOKEN);
    for token in [TOKEN, "never-issued"] {
        let (status, headers, body) = send(&fixture, Method::GET, "/v2/load_balancers", token, None).await;
        assert_eq!(status, 401, "{token}");
        assert_eq!(
            (body["id"].as_str(), body["message"].as_str()),
            (Some("unauthorized"), Some("Unable to authenticate you")),
            "{token}"
        );
        assert_eq!(header(&headers, "ratelimit-remaining"), 5000, "a refused request spends nothing");
    }
    assert_eq!(send(&fixture, Method::GET, "/v2/load_balancers", "rotated-token", None).await.0, 200);
    assert_eq!(fixture.cloud.digitalocean_calls(TOKEN), CallCounts { answered: 0, throttled: 0, refused: 1 });
    assert_eq!(fixture.cloud.digitalocean_calls("never-issued").refused, 1);
    assert!(fixture.cloud.clear_fault(revoked));
    assert_eq!(send(&fixture, Method::GET, "/v2/load_balancers", TOKEN, None).await.0, 200);
}

fn clusters_path(project: &str) -> String {
    format!("/v1/projects/{project}/locations/{LOCATION}/clusters")
}

/// A fake whose GKE operations run long enough for several to overlap, with running clusters
/// `c1` (pools `p1`..`p7`) and `c2` (pool `p1`).
async fn clusters_with_pools() -> Fixture {
    let fixture =
        start_with(FakeCloudConfig { operation_duration: Duration::from_secs(2), ..FakeCloudConfig::default() }).await;
    for (name, pools) in [("c1", 7), ("c2", 1)] {
        let pools: Vec<Value> = (1..=pools).map(|i| json!({"name": format!("p{i}"), "initialNodeCount": 1})).collect();
        let body = json!({"cluster": {"name": name, "nodePools": pools}});
        let (status, answer) = fixture.call(Method::POST, &clusters_path(PROJECT), Some(body)).await;
        assert_eq!(status, 200, "{answer}");
    }
    fixture.idle_cluster("c1").await;
    fixture.idle_cluster("c2").await;
    fixture
}

async fn set_size(fixture: &Fixture, cluster: &str, pool: &str, count: u64) -> (u16, Value) {
    let path = format!("{}/{cluster}/nodePools/{pool}:setSize", clusters_path(PROJECT));
    fixture.call(Method::POST, &path, Some(json!({"nodeCount": count}))).await
}

#[tokio::test]
async fn a_sixth_operation_on_a_cluster_waits_while_another_cluster_takes_one() {
    let fixture = clusters_with_pools().await;
    let mut started = Vec::new();
    for pool in ["p1", "p2", "p3", "p4", "p5"] {
        let (status, operation) = set_size(&fixture, "c1", pool, 2).await;
        assert_eq!((status, operation["status"].as_str()), (200, Some("RUNNING")), "{pool}: {operation}");
        started.push(operation["name"].as_str().unwrap().to_owned());
    }
    let (status, refused) = set_size(&fixture, "c1", "p6", 2).await;
    assert_eq!((status, refused["error"]["status"].as_str()), (400, Some("FAILED_PRECONDITION")), "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert_eq!(
        message,
        format!(
            "Operation {} is currently running on cluster c1. Please wait and try again once it is done.",
            started[0]
        )
    );
    let (status, answer) = set_size(&fixture, "c2", "p1", 2).await;
    assert_eq!(status, 200, "another cluster's operations are its own: {answer}");
    // One pool takes one operation at a time, whatever the limit.
    fixture.cloud.set_gke_concurrent_operations_per_cluster(10);
    let (status, busy) = set_size(&fixture, "c1", "p1", 3).await;
    assert_eq!((status, busy["error"]["status"].as_str()), (400, Some("FAILED_PRECONDITION")), "{busy}");
    assert!(busy["error"]["message"].as_str().unwrap().contains(&started[0]), "{busy}");
    assert_eq!((fixture.cloud.gke_operations_refused("c1"), fixture.cloud.gke_operations_refused("c2")), (2, 0));
    assert_eq!(
        (fixture.cloud.gke_max_concurrent_operations("c1"), fixture.cloud.gke_max_concurrent_operations("c2")),
        (5, 1)
    );
    // A change of the cluster itself waits for every operation on it.
    let update = json!({"update": {"desiredMasterAuthorizedNetworksConfig": {"enabled": true}}});
    let (status, busy) =
        fixture.call(Method::PUT, &format!("{}/c1", clusters_path(PROJECT)), Some(update.clone())).await;
    assert_eq!(status, 400, "{busy}");
    let cluster = fixture.idle_cluster("c1").await;
    assert_eq!(cluster["status"], "RUNNING", "{cluster}");
    let sizes: Vec<Value> = (1..=5).map(|i| common::pool(&cluster, &format!("p{i}"))["nodeCount"].clone()).collect();
    assert!(sizes.iter().all(|size| *size == 2), "every accepted change applied: {cluster}");
    let (status, answer) = fixture.call(Method::PUT, &format!("{}/c1", clusters_path(PROJECT)), Some(update)).await;
    assert_eq!(status, 200, "{answer}");
}

#[tokio::test]
async fn a_lower_limit_refuses_sooner_and_counts() {
    let fixture = clusters_with_pools().await;
    fixture.cloud.set_gke_concurrent_operations_per_cluster(2);
    assert_eq!(set_size(&fixture, "c1", "p1", 2).await.0, 200);
    assert_eq!(set_size(&fixture, "c1", "p2", 2).await.0, 200);
    for pool in ["p3", "p4"] {
        let (status, refused) = set_size(&fixture, "c1", pool, 2).await;
        assert_eq!(status, 400, "{refused}");
        assert!(refused["error"]["message"].as_str().unwrap().contains("is currently running on cluster c1"));
    }
    assert_eq!((fixture.cloud.gke_operations_refused("c1"), fixture.cloud.gke_max_concurrent_operations("c1")), (2, 2));
}

#[tokio::test]
async fn a_project_past_its_gke_request_rate_is_resource_exhausted() {
    let fixture = start().await;
    fixture.cloud.set_gke_rate_limits(&[RateWindow { requests: 2, window: Duration::from_secs(30) }]);
    for _ in 0..2 {
        assert_eq!(fixture.call(Method::GET, &clusters_path(PROJECT), None).await.0, 200);
    }
    let token = fixture.google_token.clone();
    let (status, headers, refused) = send(&fixture, Method::GET, &clusters_path(PROJECT), &token, None).await;
    assert_eq!((status, refused["error"]["status"].as_str()), (429, Some("RESOURCE_EXHAUSTED")), "{refused}");
    assert!((1..=30).contains(&header(&headers, "retry-after")));
    assert_eq!(fixture.call(Method::GET, &clusters_path("other"), None).await.0, 200, "a budget per project");
    assert_eq!(fixture.cloud.gke_calls(PROJECT), CallCounts { answered: 2, throttled: 1, refused: 0 });
}

#[tokio::test]
async fn the_limits_are_set_and_read_over_http() {
    let fixture = start().await;
    let url = |path: &str| format!("{}{path}", fixture.cloud.base_url());
    let put = |path: &str, body: Value| fixture.http.put(url(path)).json(&body).send();
    let windows = json!({"windows": [{"requests": 1, "windowSeconds": 30}]});
    assert_eq!(put("/_fake/digitalocean/rate-limits", windows).await.unwrap().status(), 200);
    let bad = put("/_fake/digitalocean/rate-limits", json!({"windows": [{"requests": 1}]})).await.unwrap();
    assert_eq!(bad.status(), 400);
    assert!(bad.text().await.unwrap().contains("windowSeconds"));
    let accepted = fixture.http.post(url("/_fake/digitalocean/tokens")).json(&json!({"token": "second"})).send();
    assert_eq!(accepted.await.unwrap().status(), 200);
    for token in [TOKEN, TOKEN, "second"] {
        send(&fixture, Method::GET, "/v2/droplets", token, None).await;
    }
    let calls: Value = fixture
        .http
        .get(url("/_fake/digitalocean/calls?token=fake-digitalocean-token"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(calls, json!({"answered": 1, "throttled": 1, "refused": 0}));
    let all: Value = fixture.http.get(url("/_fake/digitalocean/calls")).send().await.unwrap().json().await.unwrap();
    assert_eq!(all, json!({"answered": 2, "throttled": 1, "refused": 0}));
    let gke = put("/_fake/gke/limits", json!({"concurrentOperationsPerCluster": 3})).await.unwrap();
    let gke: Value = gke.json().await.unwrap();
    assert_eq!(gke, json!({"concurrentOperationsPerCluster": 3, "projectRateLimits": []}));
    let cluster: Value =
        fixture.http.get(url("/_fake/gke/clusters/c1/operations")).send().await.unwrap().json().await.unwrap();
    assert_eq!(cluster, json!({"refused": 0, "maxConcurrent": 0}));
}
