//! `bcctl dev` serves the console's embedded bundle at `/console/` with a strict content security
//! policy, with no Node on its `PATH` and away from the source tree, and `/console/whoami` tells
//! the console who a key is.

use serde_json::Value;

use crate::harness::{System, curl};
use better_compute::store::Backend;

#[test]
fn bc_dev_without_node_serves_the_embedded_console_and_says_who_a_key_is() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).bare().dev(dir.path());
    let endpoint = dev["endpoint"].as_str().unwrap();

    let headers = curl(&["-s", "-D", "-", "-o", "/dev/null", &format!("{endpoint}/console/")]).to_lowercase();
    assert!(headers.starts_with("http/1.1 200"), "{headers}");
    assert!(headers.contains("content-type: text/html"), "{headers}");
    assert!(headers.contains("content-security-policy: default-src 'self'"), "{headers}");
    assert!(curl(&["-s", &format!("{endpoint}/console/")]).contains(r#"<script src="app.js">"#));
    let script = curl(&["-s", "-w", "\n%{content_type}", &format!("{endpoint}/console/app.js")]);
    assert!(script.ends_with("text/javascript; charset=utf-8") && script.len() > 10_000, "the bundle is served");
    let moved = curl(&["-s", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", &format!("{endpoint}/console")]);
    assert_eq!(moved, format!("308 {endpoint}/console/"));

    let whoami = |token: &str| -> Value {
        let auth = format!("Authorization: Bearer {token}");
        serde_json::from_str(&curl(&["-s", &format!("{endpoint}/console/whoami"), "-H", &auth])).unwrap()
    };
    let viewer = whoami(dev["tenants"][0]["viewerToken"].as_str().unwrap());
    assert_eq!((viewer["kind"].as_str(), viewer["tenantId"].as_str()), (Some("user"), Some("acme")), "{viewer}");
    assert_eq!(viewer["bindings"][0]["role"], "viewer", "{viewer}");
    let operator = whoami(dev["adminToken"].as_str().unwrap());
    assert_eq!((operator["kind"].as_str(), &operator["tenantId"]), (Some("operator"), &Value::Null), "{operator}");
    let refused = whoami("bck_nope.nope");
    assert_eq!(refused["error"]["code"], "UNAUTHENTICATED", "{refused}");
}
