//! The fake GKE v1 API: clusters, node pools, operations that take time, server config per
//! location, and GKE's refusals (a change while operations it must wait for run on the
//! cluster, an unknown version, a downgrade, more than one change per update).
//!
//! This file routes a request to its handler, a method of [`Context`] (the caller's project and
//! location) in the file of its concern: `clusters`, `node_pools`, `operations`, `versions`;
//! `state` holds the objects.

mod clusters;
pub mod console;
mod inspect;
mod instances;
mod node_pools;
mod operations;
mod state;
mod versions;

use std::sync::Arc;

use axum::Router;
use axum::body::Bytes;
use axum::extract::State;
use axum::response::Response;
use axum::routing::any;
use http::{HeaderMap, Method, Uri};
use serde_json::{Value, json};

pub use state::{ClusterKey, FakeCluster, FakeNode, GkeState};
pub use versions::VersionCatalog;

use super::{Shared, bearer, json_response};
use state::region_of;

/// Google's error body.
pub fn error(status: u16, message: &str) -> Response {
    let code = match status {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        409 => "ALREADY_EXISTS",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    };
    status_error(status, code, message)
}

fn status_error(status: u16, code: &str, message: &str) -> Response {
    json_response(status, json!({"error": {"code": status, "message": message, "status": code}}))
}

pub fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/v1/{*rest}", any(handle))
}

/// A parsed GKE path.
enum Target {
    Clusters,
    Cluster(String),
    Pools(String),
    Pool(String, String, Option<String>),
    Operation(String),
    ServerConfig,
}

fn parse(path: &str) -> Option<(String, String, Target)> {
    let rest = path.strip_prefix("/v1/projects/")?;
    let parts: Vec<&str> = rest.split('/').collect();
    let (project, scope, location) = (parts.first()?, parts.get(1)?, parts.get(2)?);
    if *scope != "locations" && *scope != "zones" {
        return None;
    }
    let target = match &parts[3..] {
        ["clusters"] => Target::Clusters,
        ["clusters", name] => Target::Cluster(name.to_string()),
        ["clusters", name, "nodePools"] => Target::Pools(name.to_string()),
        ["clusters", name, "nodePools", pool] => match pool.split_once(':') {
            Some((pool, verb)) => Target::Pool(name.to_string(), pool.to_string(), Some(verb.to_string())),
            None => Target::Pool(name.to_string(), pool.to_string(), None),
        },
        ["operations", name] => Target::Operation(name.to_string()),
        ["serverConfig"] => Target::ServerConfig,
        _ => return None,
    };
    Some((project.to_string(), location.to_string(), target))
}

async fn handle(
    State(shared): State<Arc<Shared>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let authorized = bearer(&headers).is_some_and(|token| shared.world().oauth.account_of(token).is_some());
    if !authorized {
        return error(401, "Request had invalid authentication credentials. Expected OAuth 2 access token.");
    }
    let Some((project, location, target)) = parse(uri.path()) else {
        return error(404, &format!("Not found: {}", uri.path()));
    };
    let body: Value = if body.is_empty() {
        Value::Null
    } else {
        match serde_json::from_slice(&body) {
            Ok(value) => value,
            Err(e) => return error(400, &format!("Invalid JSON payload received. {e}")),
        }
    };
    let context = Context { shared: &shared, project, location };
    match (method, target) {
        (Method::GET, Target::Clusters) => context.list(),
        (Method::POST, Target::Clusters) => context.create(&body),
        (Method::GET, Target::Cluster(name)) => context.get(&name),
        (Method::PUT, Target::Cluster(name)) => context.update(&name, &body),
        (Method::DELETE, Target::Cluster(name)) => context.delete(&name),
        (Method::GET, Target::Pools(cluster)) => context.pools(&cluster),
        (Method::POST, Target::Pools(cluster)) => context.pool_create(&cluster, &body),
        (Method::GET, Target::Pool(cluster, pool, None)) => context.pool_get(&cluster, &pool),
        (Method::PUT, Target::Pool(cluster, pool, None)) => context.pool_update(&cluster, &pool, &body),
        (Method::DELETE, Target::Pool(cluster, pool, None)) => context.pool_delete(&cluster, &pool),
        (Method::POST, Target::Pool(cluster, pool, Some(verb))) => context.pool_verb(&cluster, &pool, &verb, &body),
        (Method::GET, Target::Operation(name)) => context.operation(&name),
        (Method::GET, Target::ServerConfig) => context.server_config(),
        _ => error(404, &format!("Method not found: {}", uri.path())),
    }
}

struct Context<'a> {
    shared: &'a Arc<Shared>,
    project: String,
    location: String,
}

fn valid_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !name.is_empty()
        && name.len() <= 40
        && bytes[0].is_ascii_lowercase()
        && bytes.iter().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'-')
        && !name.ends_with('-')
}

impl Context<'_> {
    /// Node-pool zones, each of which must be in the cluster's region.
    fn zones_of_region(&self, zones: &[Value]) -> Result<Vec<String>, Response> {
        let region = region_of(&self.location);
        zones
            .iter()
            .map(|zone| match zone.as_str() {
                Some(zone) if region_of(zone) == region && zone != region => Ok(zone.to_owned()),
                _ => Err(error(400, &format!("Location {zone} is not a zone of the cluster's region {region}."))),
            })
            .collect()
    }

    fn key(&self, name: &str) -> ClusterKey {
        (self.project.clone(), self.location.clone(), name.to_owned())
    }

    fn catalog(&self, gke: &GkeState) -> VersionCatalog {
        gke.catalogs.get(&self.location).cloned().unwrap_or_else(|| self.shared.config.versions.clone())
    }

    fn prefix(&self, location: &str) -> String {
        format!("{}/v1/projects/{}/locations/{location}", self.shared.base_url, self.project)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_parse_with_custom_verbs() {
        let (project, location, target) = parse("/v1/projects/p/locations/l/clusters/c/nodePools/np:setSize").unwrap();
        assert_eq!((project.as_str(), location.as_str()), ("p", "l"));
        assert!(matches!(target, Target::Pool(c, p, Some(v)) if c == "c" && p == "np" && v == "setSize"));
        assert!(parse("/v1/projects/p/regions/l/clusters").is_none());
    }
}
