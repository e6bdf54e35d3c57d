//! `GET /api/compute/metal/boot/<secret>`: a bare-metal deploy's boot configuration, fetched
//! by the machine booting the deploy image (no API key: the URL's secret is the credential).

use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::HeaderValue;
use http::header::CACHE_CONTROL;

use crate::boot_config::PATH;
use crate::service::Service;

/// The route.
pub fn router(services: Service) -> Router {
    Router::new().route(&format!("{PATH}/{{secret}}"), get(boot_config)).with_state(services)
}

async fn boot_config(State(services): State<Service>, Path(secret): Path<String>) -> Response {
    let mut response = match services.metal_boot_config(&secret).await {
        Ok(config) => axum::Json(config).into_response(),
        Err(error) => (error.http_status(), axum::Json(error.to_json())).into_response(),
    };
    // It carries a join token: no cache may keep it.
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}
