//! The web console at `/console/`: the bundle built from `console/` (TypeScript, Preact, esbuild)
//! and committed in `console/dist`, embedded in the binary so that `bcctl dev` serves it with no
//! Node at run time, plus `/console/whoami`, which tells the console who an API key is.
//!
//! The console calls the API as any client does, over gRPC-web with the key as a bearer token;
//! it routes by the URL's fragment, so every path under `/console/` serves the same page.
//!
//! The script and the style are served under names carrying their content's hash
//! (`app.3f9c….js`), cached for a year as immutable, and compressed as the browser accepts
//! (brotli or gzip, both made at build time); the page naming them is never cached without
//! asking, and answers `304` to the `ETag` it was last sent with, so a new binary's bundle is
//! fetched once and an unchanged one never again.

use std::sync::LazyLock;

use axum::Router;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::get;
use http::header::{ACCEPT_ENCODING, CACHE_CONTROL, CONTENT_ENCODING, CONTENT_TYPE, ETAG, IF_NONE_MATCH, VARY};
use http::{HeaderMap, HeaderValue, StatusCode};
use sha2::{Digest, Sha256};

use crate::service::Service;

const INDEX: &str = include_str!("../../console/dist/index.html");

/// The page may load only its own script and style and call only its own origin; nothing may
/// frame it (a signed-in console in a frame invites clickjacking).
const POLICY: &str = "default-src 'self'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; \
     base-uri 'none'; form-action 'none'";

/// How long a hashed asset may be kept: its name changes with its content.
const IMMUTABLE: &str = "public, max-age=31536000, immutable";

/// One embedded file in each encoding the build made of it.
struct Encoded {
    identity: &'static [u8],
    gzip: &'static [u8],
    brotli: &'static [u8],
}

/// A file of the bundle as served: its hashed name, its type, its bodies and their ETag.
struct Asset {
    /// `app.3f9c0a1b2c3d4e5f.js`.
    name: String,
    content_type: &'static str,
    bodies: Encoded,
    etag: String,
}

impl Asset {
    fn new(stem: &str, extension: &str, content_type: &'static str, bodies: Encoded) -> Self {
        let hash = content_hash(bodies.identity);
        Asset { name: format!("{stem}.{hash}.{extension}"), content_type, etag: format!("\"{hash}\""), bodies }
    }
}

/// The first 16 hex digits of the SHA-256 of `body`: enough to tell two builds apart.
fn content_hash(body: &[u8]) -> String {
    Sha256::digest(body).iter().take(8).map(|b| format!("{b:02x}")).collect()
}

static SCRIPT: LazyLock<Asset> = LazyLock::new(|| {
    let bodies = Encoded {
        identity: include_bytes!("../../console/dist/app.js"),
        gzip: include_bytes!("../../console/dist/app.js.gz"),
        brotli: include_bytes!("../../console/dist/app.js.br"),
    };
    Asset::new("app", "js", "text/javascript; charset=utf-8", bodies)
});

static STYLE: LazyLock<Asset> = LazyLock::new(|| {
    let bodies = Encoded {
        identity: include_bytes!("../../console/dist/app.css"),
        gzip: include_bytes!("../../console/dist/app.css.gz"),
        brotli: include_bytes!("../../console/dist/app.css.br"),
    };
    Asset::new("app", "css", "text/css; charset=utf-8", bodies)
});

/// The page, naming the hashed assets, and its ETag.
static PAGE: LazyLock<(String, String)> = LazyLock::new(|| {
    let page = INDEX
        .replace(r#"src="app.js""#, &format!(r#"src="{}""#, SCRIPT.name))
        .replace(r#"href="app.css""#, &format!(r#"href="{}""#, STYLE.name));
    let etag = format!("\"{}\"", content_hash(page.as_bytes()));
    (page, etag)
});

/// The console's routes.
pub fn router(services: Service) -> Router {
    Router::new()
        .route("/console", get(|| async { Redirect::permanent("/console/") }))
        .route("/console/", get(page))
        .route("/console/whoami", get(whoami))
        .route("/console/{file}", get(asset))
        .with_state(services)
}

/// The headers every file of the console carries.
fn secure(headers: &mut HeaderMap, content_type: &'static str) {
    headers.insert(CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert("content-security-policy", HeaderValue::from_static(POLICY));
    headers.insert("x-content-type-options", HeaderValue::from_static("nosniff"));
    headers.insert("referrer-policy", HeaderValue::from_static("no-referrer"));
}

/// Whether the request's `If-None-Match` names `etag` (or is `*`).
fn unchanged(request: &HeaderMap, etag: &str) -> bool {
    request
        .get_all(IF_NONE_MATCH)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|tag| tag.trim().trim_start_matches("W/"))
        .any(|tag| tag == etag || tag == "*")
}

/// A `304 Not Modified` for `etag`, with the caching the full answer would have had.
fn not_modified(etag: &str, cache: &'static str) -> Response {
    let mut response = StatusCode::NOT_MODIFIED.into_response();
    let headers = response.headers_mut();
    headers.insert(ETAG, HeaderValue::from_str(etag).expect("a hex ETag"));
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(cache));
    headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
    response
}

/// The page: revalidated on every load (`no-cache`), so a new binary's assets are named at once.
async fn page(request: HeaderMap) -> Response {
    let (body, etag) = &*PAGE;
    if unchanged(&request, etag) {
        return not_modified(etag, "no-cache");
    }
    let mut response = body.clone().into_response();
    let headers = response.headers_mut();
    secure(headers, "text/html; charset=utf-8");
    headers.insert(CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert(ETAG, HeaderValue::from_str(etag).expect("a hex ETag"));
    response
}

/// The encodings the request accepts, best first, of those the build made: `br`, then `gzip`,
/// then none. A coding listed with `q=0` is refused.
fn encoding(request: &HeaderMap) -> Option<&'static str> {
    let accepted: Vec<(String, bool)> = request
        .get_all(ACCEPT_ENCODING)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|part| {
            let mut pieces = part.split(';');
            let coding = pieces.next().unwrap_or_default().trim().to_ascii_lowercase();
            let refused = pieces.any(|p| {
                p.trim().strip_prefix("q=").and_then(|q| q.trim().parse::<f32>().ok()).is_some_and(|q| q <= 0.0)
            });
            (coding, !refused)
        })
        .collect();
    let accepts = |coding: &str| {
        accepted
            .iter()
            .find(|(c, _)| c == coding)
            .or_else(|| accepted.iter().find(|(c, _)| c == "*"))
            .is_some_and(|(_, ok)| *ok)
    };
    ["br", "gzip"].into_iter().find(|coding| accepts(coding))
}

/// A hashed asset, compressed as the request accepts; any other name is `404`.
async fn asset(axum::extract::Path(file): axum::extract::Path<String>, request: HeaderMap) -> Response {
    let Some(asset) = [&*SCRIPT, &*STYLE].into_iter().find(|a| a.name == file) else {
        return (StatusCode::NOT_FOUND, format!("the console has no file {file}: reload the console")).into_response();
    };
    if unchanged(&request, &asset.etag) {
        return not_modified(&asset.etag, IMMUTABLE);
    }
    let coding = encoding(&request);
    let body = match coding {
        Some("br") => asset.bodies.brotli,
        Some(_) => asset.bodies.gzip,
        None => asset.bodies.identity,
    };
    let mut response = body.into_response();
    let headers = response.headers_mut();
    secure(headers, asset.content_type);
    headers.insert(CACHE_CONTROL, HeaderValue::from_static(IMMUTABLE));
    headers.insert(ETAG, HeaderValue::from_str(&asset.etag).expect("a hex ETag"));
    headers.insert(VARY, HeaderValue::from_static("accept-encoding"));
    if let Some(coding) = coding {
        headers.insert(CONTENT_ENCODING, HeaderValue::from_static(coding));
    }
    response
}

/// Who the bearer of the request's API key is: principal (id and name), kind, tenant (id and
/// display name) and role bindings. The API has no such method (a caller knows who they are);
/// the console does not, as it is handed a bare key, and needs it to name the caller and to
/// offer only what the key may do.
async fn whoami(State(services): State<Service>, headers: HeaderMap) -> Response {
    let authorization = headers.get(http::header::AUTHORIZATION).and_then(|v| v.to_str().ok());
    let caller = match services.authenticate(authorization).await {
        Ok(caller) => caller,
        Err(error) => return (error.http_status(), axum::Json(error.to_json())).into_response(),
    };
    let (name, tenant_name) = match services.caller_names(&caller).await {
        Ok(names) => names,
        Err(error) => return (error.http_status(), axum::Json(error.to_json())).into_response(),
    };
    axum::Json(serde_json::json!({
        "principalId": caller.principal_id,
        "name": name,
        "kind": caller.kind.as_str(),
        "tenantId": caller.tenant_id,
        "tenantName": tenant_name,
        "bindings": caller.bindings.iter().map(|b| serde_json::json!({
            "role": b.role, "scopeType": b.scope_type, "scopeId": b.scope_id,
        })).collect::<Vec<_>>(),
    }))
    .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepting(value: &str) -> HeaderMap {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT_ENCODING, HeaderValue::from_str(value).unwrap());
        headers
    }

    #[test]
    fn brotli_is_preferred_then_gzip_and_a_refused_coding_is_not_sent() {
        assert_eq!(encoding(&accepting("gzip, deflate, br, zstd")), Some("br"));
        assert_eq!(encoding(&accepting("gzip")), Some("gzip"));
        assert_eq!(encoding(&accepting("br;q=0, gzip;q=0.5")), Some("gzip"));
        assert_eq!(encoding(&accepting("*")), Some("br"));
        assert_eq!(encoding(&accepting("*;q=0")), None);
        assert_eq!(encoding(&accepting("identity")), None);
        assert_eq!(encoding(&HeaderMap::new()), None);
    }

    #[test]
    fn the_page_names_the_assets_by_their_content_hash() {
        let (page, _) = &*PAGE;
        assert!(SCRIPT.name.len() == "app..js".len() + 16 && page.contains(&format!(r#"src="{}""#, SCRIPT.name)));
        assert!(page.contains(&format!(r#"href="{}""#, STYLE.name)), "{page}");
    }

    #[test]
    fn if_none_match_matches_any_listed_or_weak_tag() {
        let mut headers = HeaderMap::new();
        headers.insert(IF_NONE_MATCH, HeaderValue::from_static(r#""a", W/"b""#));
        assert!(unchanged(&headers, "\"b\"") && unchanged(&headers, "\"a\"") && !unchanged(&headers, "\"c\""));
    }
}
