//! The test controls of the providers' own limits (DigitalOcean's rate limits and tokens, GKE's
//! operations per cluster and requests per project) and what they refused, on the handle and
//! over HTTP.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::{CallCounts, FakeCloud, RateWindow, Shared, json_response};

impl FakeCloud {
    /// Puts `windows` in force for every DigitalOcean token (each token its own budget): past
    /// any of them a request is answered `429` with `retry-after`. The requests already made
    /// keep their places in the new windows as far back as the longest previous window
    /// reached; no window: no limit. [`FakeCloudConfig::digitalocean_rate_limits`] sets them
    /// at start (DigitalOcean's 250 a minute and 5,000 an hour by default).
    ///
    /// [`FakeCloudConfig::digitalocean_rate_limits`]: crate::FakeCloudConfig::digitalocean_rate_limits
    pub fn set_digitalocean_rate_limits(&self, windows: &[RateWindow]) {
        self.shared.world().digitalocean_tokens.budgets.set_windows(windows);
    }

    /// Makes the fake DigitalOcean accept `token` too (a rotated token, or another account's),
    /// with a budget of its own; every token sees the same objects (one DigitalOcean team).
    /// [`FakeCloud::revoke_credentials`] makes a token refused again.
    pub fn accept_digitalocean_token(&self, token: &str) {
        self.shared.world().digitalocean_tokens.accept(token);
    }

    /// What the fake DigitalOcean answered requests bearing `token`: `answered` (a success or
    /// any error but these), `throttled` (429, past a limit or failed so by a fault) and
    /// `refused` (401: unknown or revoked).
    pub fn digitalocean_calls(&self, token: &str) -> CallCounts {
        self.shared.world().digitalocean_tokens.counts(Some(token))
    }

    /// [`FakeCloud::digitalocean_calls`] of every token together.
    pub fn digitalocean_calls_all(&self) -> CallCounts {
        self.shared.world().digitalocean_tokens.counts(None)
    }

    /// How many operations GKE runs at once on one cluster (GKE's 5 by default): a change of a
    /// node pool while that many run is refused `400 FAILED_PRECONDITION` naming one of them.
    /// (A change of the cluster itself still waits for every operation, and one of a pool for
    /// the operation on the same pool.)
    pub fn set_gke_concurrent_operations_per_cluster(&self, limit: usize) {
        self.shared.world().gke.operation_limit = limit;
    }

    /// How many changes of clusters named `cluster` (in any project and location) GKE refused
    /// because operations ran on the cluster: past the limit or incompatible with one running.
    pub fn gke_operations_refused(&self, cluster: &str) -> u64 {
        self.shared.world().gke.operations_refused.get(cluster).copied().unwrap_or_default()
    }

    /// The most operations that ever ran at once on clusters named `cluster`.
    pub fn gke_max_concurrent_operations(&self, cluster: &str) -> usize {
        self.shared.world().gke.most_operations_running.get(cluster).copied().unwrap_or_default()
    }

    /// Puts `windows` in force for the GKE requests of each Google project (each project its
    /// own budget): past any of them a request is answered `429 RESOURCE_EXHAUSTED` with
    /// `Retry-After`; no window (the default): no limit.
    pub fn set_gke_rate_limits(&self, windows: &[RateWindow]) {
        self.shared.world().gke_budgets.set_windows(windows);
    }

    /// What the fake GKE answered requests on `project`, counted as
    /// [`FakeCloud::digitalocean_calls`] counts them.
    pub fn gke_calls(&self, project: &str) -> CallCounts {
        self.shared.world().gke_counts.get(project).copied().unwrap_or_default()
    }
}

/// The limits over HTTP, for a `bcctl fakecloud` in another process (as under `bcctl dev`):
///
/// - `GET`/`PUT /_fake/digitalocean/rate-limits` with `{"windows": [{"requests": 250,
///   "windowSeconds": 60}, ...]}` (`windowSeconds` may be fractional; `[]`: no limit);
/// - `POST /_fake/digitalocean/tokens` with `{"token": "..."}` accepts one more token;
/// - `GET /_fake/digitalocean/calls?token=T` answers `{"answered", "throttled", "refused"}` of
///   the token (of every token without `token`);
/// - `GET`/`PUT /_fake/gke/limits` with `{"concurrentOperationsPerCluster": 5,
///   "projectRateLimits": [...windows]}` (each optional in a `PUT`);
/// - `GET /_fake/gke/clusters/{name}/operations` answers `{"refused", "maxConcurrent"}`;
/// - `GET /_fake/gke/calls?project=P` the counts of the project's requests.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/_fake/digitalocean/rate-limits", get(do_limits).put(set_do_limits))
        .route("/_fake/digitalocean/tokens", post(accept_token))
        .route("/_fake/digitalocean/calls", get(do_calls))
        .route("/_fake/gke/limits", get(gke_limits).put(set_gke_limits))
        .route("/_fake/gke/clusters/{name}/operations", get(gke_cluster_operations))
        .route("/_fake/gke/calls", get(gke_calls))
}

fn windows_json(windows: &[RateWindow]) -> Value {
    let windows: Vec<Value> =
        windows.iter().map(|w| json!({"requests": w.requests, "windowSeconds": w.window.as_secs_f64()})).collect();
    json!(windows)
}

/// The windows of `value` (a list of `{requests, windowSeconds}`), or the refusal naming
/// what is wrong.
fn parse_windows(field: &str, value: &Value) -> Result<Vec<RateWindow>, Response> {
    let invalid = |message: String| json_response(400, json!({ "error": message }));
    let Some(items) = value.as_array() else {
        return Err(invalid(format!("{field} must be a list of {{\"requests\", \"windowSeconds\"}}")));
    };
    items
        .iter()
        .enumerate()
        .map(|(i, item)| {
            let requests = item["requests"].as_u64().and_then(|r| u32::try_from(r).ok());
            let seconds = item["windowSeconds"].as_f64().filter(|s| s.is_finite() && *s > 0.0);
            match (requests, seconds) {
                (Some(requests), Some(seconds)) => {
                    Ok(RateWindow { requests, window: Duration::from_secs_f64(seconds) })
                }
                _ => Err(invalid(format!(
                    "{field}[{i}] needs \"requests\" (a whole number up to {}) and \"windowSeconds\" (a number \
                     above 0)",
                    u32::MAX
                ))),
            }
        })
        .collect()
}

async fn do_limits(State(shared): State<Arc<Shared>>) -> Response {
    let world = shared.world();
    json_response(200, json!({"windows": windows_json(world.digitalocean_tokens.budgets.windows())}))
}

async fn set_do_limits(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    let windows = match parse_windows("windows", &body["windows"]) {
        Ok(windows) => windows,
        Err(refusal) => return refusal,
    };
    shared.world().digitalocean_tokens.budgets.set_windows(&windows);
    json_response(200, json!({"windows": windows_json(&windows)}))
}

async fn accept_token(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    match body["token"].as_str().filter(|token| !token.is_empty()) {
        Some(token) => {
            shared.world().digitalocean_tokens.accept(token);
            json_response(200, json!({}))
        }
        None => json_response(400, json!({"error": "token must be a non-empty string"})),
    }
}

fn counts_json(counts: CallCounts) -> Value {
    json!({"answered": counts.answered, "throttled": counts.throttled, "refused": counts.refused})
}

async fn do_calls(State(shared): State<Arc<Shared>>, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let counts = shared.world().digitalocean_tokens.counts(query.get("token").map(String::as_str));
    json_response(200, counts_json(counts))
}

fn gke_limits_json(shared: &Shared) -> Value {
    let world = shared.world();
    json!({
        "concurrentOperationsPerCluster": world.gke.operation_limit,
        "projectRateLimits": windows_json(world.gke_budgets.windows()),
    })
}

async fn gke_limits(State(shared): State<Arc<Shared>>) -> Response {
    json_response(200, gke_limits_json(&shared))
}

async fn set_gke_limits(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    let limit = match &body["concurrentOperationsPerCluster"] {
        Value::Null => None,
        value => match value.as_u64() {
            Some(limit) => Some(limit as usize),
            None => {
                return json_response(
                    400,
                    json!({"error": "concurrentOperationsPerCluster must be a whole number (GKE's is 5)"}),
                );
            }
        },
    };
    let windows = match &body["projectRateLimits"] {
        Value::Null => None,
        value => match parse_windows("projectRateLimits", value) {
            Ok(windows) => Some(windows),
            Err(refusal) => return refusal,
        },
    };
    {
        let mut world = shared.world();
        if let Some(limit) = limit {
            world.gke.operation_limit = limit;
        }
        if let Some(windows) = windows {
            world.gke_budgets.set_windows(&windows);
        }
    }
    json_response(200, gke_limits_json(&shared))
}

async fn gke_cluster_operations(State(shared): State<Arc<Shared>>, Path(name): Path<String>) -> Response {
    let world = shared.world();
    let refused = world.gke.operations_refused.get(&name).copied().unwrap_or_default();
    let most = world.gke.most_operations_running.get(&name).copied().unwrap_or_default();
    json_response(200, json!({"refused": refused, "maxConcurrent": most}))
}

async fn gke_calls(State(shared): State<Arc<Shared>>, Query(query): Query<BTreeMap<String, String>>) -> Response {
    let project = query.get("project").map(String::as_str).unwrap_or_default();
    let counts = shared.world().gke_counts.get(project).copied().unwrap_or_default();
    json_response(200, counts_json(counts))
}
