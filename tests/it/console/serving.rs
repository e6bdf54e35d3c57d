//! `bcctl dev` serves the console's embedded bundle at `/console/` with a strict content security
//! policy, with no Node on its `PATH` and away from the source tree, compressed and cached by its
//! content hash, and `/console/whoami` tells the console who a key is.

use serde_json::Value;

use crate::harness::{System, curl};

/// The hashed script the page names: `app.<16 hex digits>.js`.
fn assets(page: &str) -> String {
    let script = regex::Regex::new(r#"<script src="(app\.[0-9a-f]{16}\.js)">"#).unwrap();
    let style = regex::Regex::new(r#"<link rel="stylesheet" href="app\.[0-9a-f]{16}\.css">"#).unwrap();
    assert!(style.is_match(page), "the page names the hashed style: {page}");
    script.captures(page).unwrap_or_else(|| panic!("the page names the hashed script: {page}"))[1].to_owned()
}

/// The status line and headers (lowercased) of a GET of `url` with `extra` curl arguments,
/// and the size of the body as sent.
fn head(url: &str, extra: &[&str]) -> (String, usize) {
    let body = tempfile::NamedTempFile::new().unwrap();
    let path = body.path().to_str().unwrap();
    let headers = curl(&[&["-s", "-D", "-", "-o", path][..], extra, &[url]].concat()).to_lowercase();
    (headers, std::fs::metadata(path).unwrap().len() as usize)
}

/// The value of `name` in `headers` (lowercased), if present.
fn header<'a>(headers: &'a str, name: &str) -> Option<&'a str> {
    headers.lines().find_map(|l| l.strip_prefix(&format!("{name}: "))).map(str::trim)
}

#[test]
fn the_bundle_is_sent_compressed_as_accepted_and_cached_by_its_content_hash() {
    let dir = tempfile::tempdir().unwrap();
    let (_running, dev) = System::on(Backend::Sqlite).bare().dev(dir.path());
    let endpoint = dev["endpoint"].as_str().unwrap();
    let page_url = format!("{endpoint}/console/");
    let script_url = format!("{endpoint}/console/{}", assets(&curl(&["-s", &page_url])));

    // The page: revalidated each time, and 304 while it is the same.
    let (page, _) = head(&page_url, &[]);
    let etag = header(&page, "etag").unwrap_or_else(|| panic!("the page has an etag: {page}")).to_owned();
    assert_eq!(header(&page, "cache-control"), Some("no-cache"), "{page}");
    let (again, size) = head(&page_url, &["-H", &format!("If-None-Match: {etag}")]);
    assert!(again.starts_with("http/1.1 304") && size == 0, "an unchanged page is not sent again: {again}");

    // The script: a year, immutable, in the encoding asked for; each decodes to the same bytes.
    let (plain, plain_size) = head(&script_url, &["-H", "Accept-Encoding: identity"]);
    assert!(plain.starts_with("http/1.1 200") && header(&plain, "content-encoding").is_none(), "{plain}");
    assert_eq!(header(&plain, "cache-control"), Some("public, max-age=31536000, immutable"), "{plain}");
    assert_eq!(header(&plain, "vary"), Some("accept-encoding"), "{plain}");
    let identity = curl(&["-s", "-H", "Accept-Encoding: identity", &script_url]);
    for (accept, coding) in [("gzip, deflate", "gzip"), ("gzip, deflate, br", "br")] {
        let (sent, size) = head(&script_url, &["-H", &format!("Accept-Encoding: {accept}")]);
        assert_eq!(header(&sent, "content-encoding"), Some(coding), "{sent}");
        assert!(size * 3 < plain_size, "{coding} sends {size} bytes of {plain_size}");
        println!("app.js: {plain_size} bytes, {size} as {coding}");
        let decoded = curl(&["-s", "--compressed", "-H", &format!("Accept-Encoding: {coding}"), &script_url]);
        assert!(decoded == identity, "the {coding} body decodes to the script");
    }
    let tag = header(&plain, "etag").unwrap().to_owned();
    let (revalidated, _) = head(&script_url, &["-H", &format!("If-None-Match: {tag}")]);
    assert!(revalidated.starts_with("http/1.1 304"), "{revalidated}");

    // A name no build of this binary made (an old page's, say) is not found.
    let stale = curl(&["-s", "-o", "/dev/null", "-w", "%{http_code}", &format!("{endpoint}/console/app.js")]);
    assert_eq!(stale, "404");
}
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
    assert!(headers.contains("cache-control: no-cache"), "the page is revalidated on every load: {headers}");
    let script = assets(&curl(&["-s", &format!("{endpoint}/console/")]));
    let script_url = format!("{endpoint}/console/{script}");
    let js = curl(&["-s", "-w", "\n%{content_type}", &script_url]);
    assert!(js.ends_with("text/javascript; charset=utf-8") && js.len() > 10_000, "the bundle is served");
    let moved = curl(&["-s", "-o", "/dev/null", "-w", "%{http_code} %{redirect_url}", &format!("{endpoint}/console")]);
    assert_eq!(moved, format!("308 {endpoint}/console/"));

    let whoami = |token: &str| -> Value {
        let auth = format!("Authorization: Bearer {token}");
        serde_json::from_str(&curl(&["-s", &format!("{endpoint}/console/whoami"), "-H", &auth])).unwrap()
    };
    let viewer = whoami(dev["tenants"][0]["viewerToken"].as_str().unwrap());
    assert_eq!((viewer["kind"].as_str(), viewer["tenantId"].as_str()), (Some("user"), Some("acme")), "{viewer}");
    assert_eq!(viewer["bindings"][0]["role"], "viewer", "{viewer}");
    assert_eq!(
        (viewer["name"].as_str(), viewer["tenantName"].as_str()),
        (Some("acme viewer"), Some("Acme")),
        "{viewer}"
    );
    let operator = whoami(dev["adminToken"].as_str().unwrap());
    assert_eq!((operator["kind"].as_str(), &operator["tenantId"]), (Some("operator"), &Value::Null), "{operator}");
    assert_eq!((operator["name"].as_str(), &operator["tenantName"]), (Some("operator"), &Value::Null), "{operator}");
    let refused = whoami("bck_nope.nope");
    assert_eq!(refused["error"]["code"], "UNAUTHENTICATED", "{refused}");
}
