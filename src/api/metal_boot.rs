//! `GET /api/compute/metal/boot/<secret>`: a bare-metal deploy's boot configuration, fetched
//! by the machine booting the deploy image (no API key: the URL's secret is the credential);
//! `GET /api/compute/metal/pxe/<mac>`: the iPXE script a machine booting from the network
//! fetches with its MAC address (what a DHCP server's boot filename points iPXE at).

use axum::Router;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use http::HeaderValue;
use http::header::{CACHE_CONTROL, CONTENT_TYPE};

use crate::boot_config::{PATH, PXE_PATH};
use crate::service::Service;

/// The route.
pub fn router(services: Service) -> Router {
    Router::new()
        .route(&format!("{PATH}/{{secret}}"), get(boot_config))
        .route(&format!("{PXE_PATH}/{{mac}}"), get(pxe_script))
        .with_state(services)
}

async fn pxe_script(State(services): State<Service>, Path(mac): Path<String>) -> Response {
    let mut response = match services.metal_pxe_script(&mac).await {
        Ok(script) => ([(CONTENT_TYPE, "text/plain; charset=utf-8")], script).into_response(),
        Err(error) => (error.http_status(), axum::Json(error.to_json())).into_response(),
    };
    response.headers_mut().insert(CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
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
