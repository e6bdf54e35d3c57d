//! What a request to the fake cloud is, in the words tests use to fail it: the emulated API it
//! belongs to, the kind of object, the verb, the object's name (and its parents'), and the
//! accounts it is made on. Known before any emulator sees the request, so that every call of
//! every API, reads and lists included, can be failed.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use http::Method;
use serde_json::Value;

/// Which emulated API a path belongs to: it decides the shape of an injected error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// GKE v1, `/v1/...`.
    Gke,
    /// Compute Engine v1, `/compute/v1/...`.
    Compute,
    /// DigitalOcean v2, `/v2/...`.
    DigitalOcean,
    /// A Redfish BMC, `/redfish/...`.
    Redfish,
    /// Google's OAuth token endpoint, `/token`.
    OAuth,
    /// The fake's own routes: never failed.
    Other,
}

impl Family {
    pub fn of(path: &str) -> Family {
        if path.starts_with("/v1/") {
            Family::Gke
        } else if path.starts_with("/compute/v1/") {
            Family::Compute
        } else if path.starts_with("/v2/") {
            Family::DigitalOcean
        } else if path == "/redfish" || path.starts_with("/redfish/") {
            Family::Redfish
        } else if path == "/token" {
            Family::OAuth
        } else {
            Family::Other
        }
    }
}

/// One request, as a fault rule names it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Call {
    pub family: Family,
    /// `cluster`, `nodePool`, `operation`, `serverConfig`, `network`, `subnetwork`, `droplet`,
    /// `loadBalancer`, `vpc`, `certificate`, `volume`, `system`, `manager`, `session`,
    /// `serviceRoot`, `token`.
    pub kind: String,
    /// `create`, `get`, `list`, `update`, `delete`; a DigitalOcean volume action's `type`
    /// (`attach`, `resize`, ...) and `actions` for their list; Redfish `reset`, `erase`,
    /// `insertMedia`, `ejectMedia`.
    pub verb: String,
    /// The object's name or id first (`*` for a list), then its parents' (a node pool's
    /// cluster; the system a Redfish sub-resource belongs to).
    pub names: Vec<String>,
    /// The accounts the call is made on: a Google project and the service account whose token
    /// it bears, a DigitalOcean token, a Redfish system id.
    pub accounts: Vec<String>,
    /// The object's path as the provider names it in messages (`projects/p/locations/l/clusters/c`).
    pub resource: String,
}

/// Identifies a request from its method, path, bearer token's account (resolved by the
/// caller: the fake OAuth knows it) and body.
pub fn identify(method: &Method, path: &str, bearer: Option<(&str, Option<&str>)>, body: &[u8]) -> Call {
    let family = Family::of(path);
    let json: Value = serde_json::from_slice(body).unwrap_or_default();
    let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
    let (kind, verb, names, resource) = match family {
        Family::Gke => gke(method, &segments[1..], &json),
        Family::Compute => compute(method, &segments[2..], &json),
        Family::DigitalOcean => digitalocean(method, &segments[1..], &json),
        Family::Redfish => redfish(method, &segments[1..]),
        Family::OAuth => {
            ("token".into(), "create".into(), vec![assertion_issuer(body).unwrap_or_default()], String::new())
        }
        Family::Other => (String::new(), String::new(), Vec::new(), String::new()),
    };
    let mut accounts = Vec::new();
    match family {
        Family::Gke | Family::Compute => {
            let project = segments.iter().skip_while(|s| **s != "projects").nth(1);
            accounts.extend(project.map(|p| p.to_string()));
            accounts.extend(bearer.and_then(|(_, email)| email).map(str::to_owned));
        }
        Family::DigitalOcean => accounts.extend(bearer.map(|(token, _)| token.to_owned())),
        Family::Redfish => accounts.extend(names.last().filter(|n| n.starts_with("system-")).cloned()),
        Family::OAuth => accounts.extend(names.first().filter(|n| !n.is_empty()).cloned()),
        Family::Other => {}
    }
    Call { family, kind, verb, names, accounts, resource }
}

type Parts = (String, String, Vec<String>, String);

fn crud(method: &Method, one: bool) -> &'static str {
    match (method, one) {
        (&Method::GET, false) => "list",
        (&Method::POST, false) => "create",
        (&Method::GET, true) => "get",
        (&Method::DELETE, true) => "delete",
        (_, _) => "update",
    }
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| n.to_string()).collect()
}

/// `projects/P/locations/L/...`.
fn gke(method: &Method, s: &[&str], body: &Value) -> Parts {
    let resource = s.join("/");
    let resource = resource.split(':').next().unwrap_or_default().to_owned();
    let parts = match s.get(4..).unwrap_or_default() {
        ["clusters"] => {
            let name = body["cluster"]["name"].as_str().unwrap_or("*");
            ("cluster", crud(method, false), vec![name.to_owned()])
        }
        ["clusters", cluster] => ("cluster", crud(method, true), owned(&[cluster])),
        ["clusters", cluster, "nodePools"] => {
            let name = body["nodePool"]["name"].as_str().unwrap_or("*");
            ("nodePool", crud(method, false), vec![name.to_owned(), cluster.to_string()])
        }
        // Every custom verb (`:setSize`, `:setAutoscaling`, ...) changes the pool: `update`.
        ["clusters", cluster, "nodePools", pool] => {
            let (pool, custom) = pool.split_once(':').map_or((*pool, false), |(pool, _)| (pool, true));
            let verb = if custom { "update" } else { crud(method, true) };
            ("nodePool", verb, owned(&[pool, cluster]))
        }
        ["operations", name] => ("operation", "get", owned(&[name])),
        ["operations"] => ("operation", "list", owned(&["*"])),
        ["serverConfig"] => ("serverConfig", "get", owned(&[s.get(3).copied().unwrap_or("*")])),
        rest => ("other", crud(method, false), owned(&[rest.last().copied().unwrap_or("*")])),
    };
    (parts.0.into(), parts.1.into(), parts.2, resource)
}

/// `projects/P/global/...` or `projects/P/regions/R/...`.
fn compute(method: &Method, s: &[&str], body: &Value) -> Parts {
    let resource = s.join("/");
    let rest = match s.get(2) {
        Some(&"global") => s.get(3..),
        _ => s.get(4..),
    };
    let plural_kind = |plural: &str| match plural {
        "networks" => "network",
        "subnetworks" => "subnetwork",
        "operations" => "operation",
        _ => "other",
    };
    let (kind, verb, names) = match rest.unwrap_or_default() {
        [plural] => (plural_kind(plural), crud(method, false), vec![body["name"].as_str().unwrap_or("*").to_owned()]),
        [plural, name, ..] => (plural_kind(plural), crud(method, true), owned(&[name])),
        [] => ("other", crud(method, false), owned(&["*"])),
    };
    (kind.into(), verb.into(), names, resource)
}

/// `v2/<plural>[/<id>[/actions]]`.
fn digitalocean(method: &Method, s: &[&str], body: &Value) -> Parts {
    let kind = match s.first().copied().unwrap_or_default() {
        "droplets" => "droplet",
        "load_balancers" => "loadBalancer",
        "vpcs" => "vpc",
        "certificates" => "certificate",
        "volumes" => "volume",
        "account" => "account",
        _ => "other",
    };
    let (verb, name) = match &s[1.min(s.len())..] {
        [] => {
            let name = body["name"].as_str().or_else(|| body["names"][0].as_str()).unwrap_or("*");
            (crud(method, false).to_owned(), name.to_owned())
        }
        [id, "actions"] if method == Method::POST => {
            (body["type"].as_str().unwrap_or_default().to_owned(), id.to_string())
        }
        [id, "actions", ..] => ("actions".to_owned(), id.to_string()),
        [id, ..] => (crud(method, true).to_owned(), id.to_string()),
    };
    (kind.into(), verb, vec![name], format!("/{}", s.join("/")))
}

/// `v1/Systems/ID/...`, `v1/Managers/ID/...`, `v1/SessionService/Sessions`.
fn redfish(method: &Method, s: &[&str]) -> Parts {
    let resource = format!("/redfish/{}", s.join("/"));
    let action = s.iter().position(|p| *p == "Actions").and_then(|i| s.get(i + 1));
    let verb = |fallback: &'static str| -> String {
        match action.copied() {
            Some("ComputerSystem.Reset") => "reset".into(),
            Some("Drive.SecureErase") => "erase".into(),
            Some("VirtualMedia.InsertMedia") => "insertMedia".into(),
            Some("VirtualMedia.EjectMedia") => "ejectMedia".into(),
            Some(other) => other.to_owned(),
            None => fallback.into(),
        }
    };
    let (kind, verb, names) = match s.get(1..).unwrap_or_default() {
        [] => ("serviceRoot", "get".to_owned(), owned(&["*"])),
        ["Systems"] => ("system", "list".to_owned(), owned(&["*"])),
        ["Managers"] => ("manager", "list".to_owned(), owned(&["*"])),
        ["Systems", id] => ("system", crud(method, true).to_owned(), owned(&[id])),
        // A system's sub-resources (processors, NICs, drives) and actions belong to it.
        ["Systems", id, ..] => ("system", verb(if method == Method::GET { "get" } else { "update" }), owned(&[id])),
        ["Managers", id, ..] => ("manager", verb(crud(method, true)), owned(&[id])),
        ["SessionService", "Sessions", rest @ ..] => {
            let name = rest.first().copied().unwrap_or("*");
            ("session", crud(method, !rest.is_empty()).to_owned(), owned(&[name]))
        }
        rest => ("other", crud(method, true).to_owned(), owned(&[rest.last().copied().unwrap_or("*")])),
    };
    (kind.into(), verb, names, resource)
}

/// The issuer (a service account's email) of the JWT-bearer assertion of a token request,
/// unverified: the endpoint verifies it; this only says whose it claims to be.
fn assertion_issuer(form: &[u8]) -> Option<String> {
    let form = std::str::from_utf8(form).ok()?;
    let assertion = form.split('&').find_map(|pair| pair.strip_prefix("assertion="))?;
    let claims = assertion.split('.').nth(1)?;
    let claims: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(claims).ok()?).ok()?;
    claims["iss"].as_str().map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn call(method: Method, path: &str, body: &str) -> Call {
        identify(&method, path, Some(("tok", Some("sa@p.iam.gserviceaccount.com"))), body.as_bytes())
    }

    #[test]
    fn every_family_names_its_calls() {
        let c = call(Method::POST, "/v1/projects/p/locations/l/clusters", r#"{"cluster":{"name":"a"}}"#);
        assert_eq!((c.kind.as_str(), c.verb.as_str(), c.names[0].as_str()), ("cluster", "create", "a"));
        assert_eq!(c.accounts, ["p", "sa@p.iam.gserviceaccount.com"]);
        let c = call(Method::POST, "/v1/projects/p/locations/l/clusters/a/nodePools/np:setSize", "{}");
        assert_eq!((c.kind.as_str(), c.verb.as_str(), c.names.clone()), ("nodePool", "update", owned(&["np", "a"])));
        assert_eq!(c.resource, "projects/p/locations/l/clusters/a/nodePools/np");
        let c = call(Method::GET, "/v1/projects/p/locations/l/operations/op-1", "");
        assert_eq!((c.kind.as_str(), c.verb.as_str()), ("operation", "get"));
        let c = call(Method::DELETE, "/compute/v1/projects/p/regions/r/subnetworks/s", "");
        assert_eq!((c.kind.as_str(), c.verb.as_str(), c.names[0].as_str()), ("subnetwork", "delete", "s"));
        let c = call(Method::POST, "/compute/v1/projects/p/global/networks", r#"{"name":"n"}"#);
        assert_eq!((c.kind.as_str(), c.verb.as_str(), c.names[0].as_str()), ("network", "create", "n"));
        let c = call(Method::POST, "/v2/volumes/v-1/actions", r#"{"type":"attach"}"#);
        assert_eq!((c.kind.as_str(), c.verb.as_str(), c.accounts.clone()), ("volume", "attach", owned(&["tok"])));
        let c = call(Method::GET, "/v2/load_balancers", "");
        assert_eq!((c.kind.as_str(), c.verb.as_str(), c.names[0].as_str()), ("loadBalancer", "list", "*"));
        let c = call(Method::POST, "/redfish/v1/Systems/system-3/Actions/ComputerSystem.Reset", "{}");
        assert_eq!((c.kind.as_str(), c.verb.as_str(), c.accounts.clone()), ("system", "reset", owned(&["system-3"])));
        let c = call(Method::PATCH, "/redfish/v1/Managers/system-3/VirtualMedia/Cd", "{}");
        assert_eq!((c.kind.as_str(), c.verb.as_str()), ("manager", "update"));
        let c = call(Method::POST, "/redfish/v1/SessionService/Sessions", "{}");
        assert_eq!((c.kind.as_str(), c.verb.as_str()), ("session", "create"));
    }

    #[test]
    fn a_token_request_is_made_on_the_account_its_assertion_claims() {
        let claims = URL_SAFE_NO_PAD.encode(r#"{"iss":"sa@p.iam.gserviceaccount.com"}"#);
        let form = format!("grant_type=x&assertion=h.{claims}.s");
        let c = identify(&Method::POST, "/token", None, form.as_bytes());
        assert_eq!((c.family, c.accounts.clone()), (Family::OAuth, owned(&["sa@p.iam.gserviceaccount.com"])));
    }
}
