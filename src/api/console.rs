//! The web console at `/console/`: the bundle built from `console/` (TypeScript, Preact, esbuild)
//! and committed in `console/dist`, embedded in the binary so that `bcctl dev` serves it with no
//! Node at run time, plus `/console/whoami`, which tells the console who an API key is.
//!
//! The console calls the API as any client does, over gRPC-web with the key as a bearer token;
//! it routes by the URL's fragment, so every path under `/console/` serves the same page.

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};
use http::{HeaderMap, HeaderValue};

use crate::service::Service;

const INDEX: &str = include_str!("../../console/dist/index.html");
const SCRIPT: &str = include_str!("../../console/dist/app.js");
const STYLE: &str = include_str!("../../console/dist/app.css");

/// The page may load only its own script and style and call only its own origin; nothing may
/// frame it (a signed-in console in a frame invites clickjacking).
const POLICY: &str = "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
     base-uri 'none'; form-action 'none'";

/// The console's routes.
pub fn router(services: Service) -> Router {
    Router::new()
        .route("/console", get(|| async { Redirect::permanent("/console/") }))
        .route("/console/", get(|| async { asset("text/html; charset=utf-8", INDEX) }))
        .route("/console/app.js", get(|| async { asset("text/javascript; charset=utf-8", SCRIPT) }))
        .route("/console/app.css", get(|| async { asset("text/css; charset=utf-8", STYLE) }))
        .route("/console/whoami", get(whoami))
        .with_state(services)
}

/// One embedded file, never cached without asking: a new binary serves a new bundle at once.
fn asset(content_type: &'static str, body: &'static str) -> Response {
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("content-security-policy", HeaderValue::from_static(POLICY));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
    response
}

/// Who the bearer of the request's API key is: principal, kind, tenant and role bindings. The
/// API has no such method (a caller knows who they are); the console does not, as it is handed
/// a bare key, and needs it to offer only what the key may do.
async fn whoami(State(services): State<Service>, headers: HeaderMap) -> Response {
    let authorization = headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    match services.authenticate(authorization).await {
        Ok(caller) => axum::Json(serde_json::json!({
            "principalId": caller.principal_id,
            "kind": caller.kind.as_str(),
            "tenantId": caller.tenant_id,
            "bindings": caller.bindings.iter().map(|b| serde_json::json!({
                "role": b.role, "scopeType": b.scope_type, "scopeId": b.scope_id,
            })).collect::<Vec<_>>(),
        }))
        .into_response(),
        Err(error) => (error.http_status(), axum::Json(error.to_json())).into_response(),
    }
}
