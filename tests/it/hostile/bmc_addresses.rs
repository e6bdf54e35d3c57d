//! BMC addresses a tenant may not point the worker at (loopback, link-local, the control plane's own listeners), and what a BMC's answers may bring back into a view.
//!
//! A tenant admin enrols the BMC address; the worker then signs in there with the admin's
//! username and password and records what it answers. Without an operator's word (the pool's
//! `policy.metal.bmcAllowedNetworks`) an address on loopback, link-local, unspecified,
//! multicast or this host's own networks is refused at the API and again by the worker right
//! before each connection; a BMC's redirect or link is never followed off the BMC; and what a
//! BMC answers reaches the machine's view, its `lastError` and its events only bounded and
//! sanitised: the HTTP status and a short reason, never the body.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::{DO_TOKEN, ENROLL, Env, PASSWORD, System, poll, violated_fields};

/// Text a hostile "BMC" plants in its answers; none of it may reach a view.
const MARKER: &str = "PLANTED-SECRET-3f9a1c";
/// The policy that allows the loopback networks, as `bcctl dev` has for its fake BMCs.
fn loopback_allowed() -> Value {
    json!({"metal": {"bmcAllowedNetworks": ["127.0.0.0/8", "::1/128"]}})
}

/// This host's own address on its outbound interface (what a socket routed off the host
/// starts from), when it has one other than loopback.
fn this_hosts_address() -> Option<IpAddr> {
    let socket = std::net::UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("203.0.113.1:9").ok()?;
    let address = socket.local_addr().ok()?.ip();
    (!address.is_loopback() && !address.is_unspecified()).then_some(address)
}

fn redfish(pool: &str, key: &str, address: &str) -> Value {
    json!({"poolId": pool, "name": key, "idempotencyKey": key,
        "bmc": {"driver": "redfish", "address": address, "username": "admin", "password": PASSWORD, "insecure": true}})
}

fn ipmi(pool: &str, key: &str, address: &str) -> Value {
    json!({"poolId": pool, "name": key, "idempotencyKey": key,
        "bmc": {"driver": "ipmi", "address": address, "username": "admin", "password": PASSWORD}})
}

/// The addresses refused without the policy: every spelling of loopback, link-local (the
/// cloud's metadata service), unspecified, multicast, and this host's own address.
fn refused_addresses() -> Vec<(&'static str, String)> {
    let mut cases: Vec<(&str, String)> = [
        "https://127.0.0.1",
        "https://127.0.0.1:8443/redfish/v1/Systems/1",
        "http://127.9.9.9:5432",
        "https://169.254.169.254",
        "https://[::1]",
        "https://[::ffff:127.0.0.1]",
        "https://[::ffff:169.254.169.254]",
        "https://localhost",
        "https://2130706433",
        "https://0.0.0.0",
        "https://[::]",
        "https://[fe80::1]",
        "https://224.0.0.1",
    ]
    .into_iter()
    .map(|address| ("redfish", address.to_owned()))
    .collect();
    for address in ["127.0.0.1", "127.0.0.1:623", "[::1]:623", "localhost", "169.254.169.254"] {
        cases.push(("ipmi", address.to_owned()));
    }
    if let Some(own) = this_hosts_address() {
        let host = match own {
            IpAddr::V4(v4) => v4.to_string(),
            IpAddr::V6(v6) => format!("[{v6}]"),
        };
        cases.push(("redfish", format!("https://{host}:8443")));
    }
    cases
}

crate::on_both_backends!(
    a_bmc_on_loopback_link_local_or_this_host_is_refused_at_the_api_without_the_pools_policy,
    a_network_the_pools_policy_allows_is_accepted_and_only_there,
);

async fn a_bmc_on_loopback_link_local_or_this_host_is_refused_at_the_api_without_the_pools_policy(backend: Backend) {
    let s = System::on(backend).own_pool("metal", json!({})).await;
    for (n, (driver, address)) in refused_addresses().into_iter().enumerate() {
        let key = format!("k{n}");
        let body = if driver == "ipmi" { ipmi(&s.pool, &key, &address) } else { redfish(&s.pool, &key, &address) };
        let (status, refused) = s.as_admin(ENROLL, body).await;
        assert_eq!(status, 400, "{driver} {address}: {refused}");
        assert_eq!(refused["error"]["code"], "INVALID_INPUT", "{address}: {refused}");
        assert_eq!(violated_fields(&refused["error"]["details"]), ["bmc.address"], "{address}: {refused}");
        let message = refused["error"]["message"].as_str().unwrap();
        assert!(message.contains("refused"), "says what is refused: {message}");
        assert!(message.contains("policy.metal.bmcAllowedNetworks"), "says an operator can allow it: {message}");
    }
    // Nothing was enrolled.
    let (_, listed) = s.as_admin("/api/compute/metal/list", json!({"poolId": s.pool})).await;
    assert_eq!(listed["machines"].as_array().map_or(0, Vec::len), 0, "{listed}");

    // An update cannot move an enrolled machine there either.
    let (status, machine) = s.as_admin(ENROLL, redfish(&s.pool, "ok", "https://10.0.0.5")).await;
    assert_eq!(status, 200, "a private network's BMC is enrolled: {machine}");
    let node = machine["id"].as_str().unwrap().to_owned();
    s.put_in_state(&node, "manageable").await;
    for address in ["https://127.0.0.1", "https://169.254.169.254", "https://[::ffff:127.0.0.1]", "https://localhost"] {
        let (status, refused) = s.call("update", &node, json!({"address": address, "updateMask": "address"})).await;
        assert_eq!(status, 400, "update to {address}: {refused}");
        assert_eq!(violated_fields(&refused["error"]["details"]), ["address"], "{refused}");
    }
    let (_, kept) = s.call("get", &node, json!({})).await;
    assert_eq!(kept["address"], "https://10.0.0.5", "{kept}");
}

async fn a_network_the_pools_policy_allows_is_accepted_and_only_there(backend: Backend) {
    let policy = json!({"metal": {"bmcAllowedNetworks": ["127.0.0.0/8", "::1/128", "169.254.169.254/32"]}});
    let s = System::on(backend).own_pool("metal", policy).await;
    for (n, address) in [
        "https://127.0.0.1",
        "https://127.0.0.1:8443/redfish/v1/Systems/1",
        "https://[::1]",
        "https://[::ffff:127.0.0.1]",
        "https://169.254.169.254",
    ]
    .into_iter()
    .enumerate()
    {
        let (status, machine) = s.as_admin(ENROLL, redfish(&s.pool, &format!("a{n}"), address)).await;
        assert_eq!(status, 200, "{address} is in an allowed network: {machine}");
    }
    let (status, machine) = s.as_admin(ENROLL, ipmi(&s.pool, "ipmi", "127.0.0.1:6230")).await;
    assert_eq!(status, 200, "{machine}");
    // The rest of link-local is still refused.
    let (status, refused) = s.as_admin(ENROLL, redfish(&s.pool, "r1", "https://169.254.1.1")).await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(violated_fields(&refused["error"]["details"]), ["bmc.address"], "{refused}");

    // The policy's networks are checked: each a CIDR, and not too many.
    let server = &s.server;
    let platform =
        |body: Value| async move { server.post("/api/platform/pools/update", Some(&server.admin_token), body).await };
    let bad = json!({"poolId": s.pool, "updateMask": "policy",
        "policy": {"metal": {"bmcAllowedNetworks": ["127.0.0.1", "10.0.0.5/33", "x", "10.0.0.5/24", 7]}}});
    let (status, refused) = platform(bad).await;
    assert_eq!(status, 400, "{refused}");
    let fields = violated_fields(&refused["error"]["details"]);
    for n in 0..5 {
        let path = format!("policy.metal.bmcAllowedNetworks[{n}]");
        assert!(fields.contains(&path), "{path} in {fields:?}");
    }
    let many: Vec<String> = (0..100).map(|n| format!("10.{n}.0.0/16")).collect();
    let (status, refused) = platform(json!({"poolId": s.pool, "updateMask": "policy",
        "policy": {"metal": {"bmcAllowedNetworks": many}}}))
    .await;
    assert_eq!(status, 400, "{refused}");
    assert_eq!(violated_fields(&refused["error"]["details"]), ["policy.metal.bmcAllowedNetworks"], "{refused}");

    // Only an operator sets a pool's policy: the tenant's admin cannot allow a network.
    let (status, refused) = s
        .as_admin(
            "/api/platform/pools/update",
            json!({"poolId": s.pool, "updateMask": "policy", "policy": loopback_allowed()}),
        )
        .await;
    assert_eq!(status, 403, "{refused}");
}

/// What a request to a [`Rogue`] gets: status, extra headers and body.
type Answer = (u16, Vec<(String, String)>, String);

/// A "BMC" that answers what its test says and records every request it gets.
struct Rogue {
    /// `http://ip:port`.
    url: String,
    seen: Arc<Mutex<Vec<String>>>,
}

impl Rogue {
    async fn start(ip: &str, answer: impl Fn(&str, &str) -> Answer + Send + Sync + 'static) -> Rogue {
        let listener = tokio::net::TcpListener::bind((ip, 0)).await.unwrap();
        let address: SocketAddr = listener.local_addr().unwrap();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let recorded = seen.clone();
        let answer = Arc::new(answer);
        let app = axum::Router::new().fallback(move |method: http::Method, uri: http::Uri| {
            let recorded = recorded.clone();
            let answer = answer.clone();
            async move {
                recorded.lock().unwrap().push(format!("{method} {}", uri.path()));
                let (status, headers, body) = answer(method.as_str(), uri.path());
                let mut response = http::Response::builder().status(status).header("content-type", "application/json");
                for (name, value) in headers {
                    response = response.header(name, value);
                }
                response.body(axum::body::Body::from(body)).unwrap()
            }
        });
        tokio::spawn(async move { axum::serve(listener, app).await });
        Rogue { url: format!("http://{address}"), seen }
    }

    fn requests(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

fn ok(body: Value) -> Answer {
    (200, Vec::new(), body.to_string())
}

/// An environment with acme's metal pool (with `policy`) and a running worker.
async fn metal_env(policy: Value) -> (Env, String) {
    let mut env = System::on(Backend::Postgres).start().await;
    let account = env
        .server
        .admin_ok(
            "/api/platform/accounts/create",
            json!({"tenantId": "acme", "provider": "digitalocean", "name": "acme-do", "credentials": DO_TOKEN,
                "regions": ["nyc3"]}),
        )
        .await;
    let pool = env
        .server
        .admin_ok(
            "/api/platform/pools/create",
            json!({"accountId": account["id"], "name": "metal", "billingMode": "none", "policy": policy}),
        )
        .await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.start_worker();
    (env, pool)
}

async fn enroll(env: &Env, pool: &str, name: &str, address: &str) -> String {
    env.ok(ENROLL, redfish(pool, name, address)).await["id"].as_str().unwrap().to_owned()
}

async fn call(env: &Env, pool: &str, node: &str, method: &str) -> Value {
    env.ok(&format!("/api/compute/metal/{method}"), json!({"poolId": pool, "nodeId": node})).await
}

async fn wait_for(env: &Env, pool: &str, node: &str, state: &str) -> Value {
    poll(Duration::from_secs(60), &format!("machine {node} {state}"), || async {
        let machine = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await;
        if machine["provisionState"] == state { Ok(machine) } else { Err(machine.to_string()) }
    })
    .await
}

/// Everything the pool's events carry, as text.
async fn events_text(env: &Env, pool: &str) -> String {
    let filter = better_compute::store::EventFilter { subject: pool.to_owned(), limit: 1000, ..Default::default() };
    let events = env.store.event_list_after(&filter).await.unwrap();
    events.iter().map(|event| format!("{} {}\n", event.event_type, event.data)).collect()
}

/// A system a BMC reports, in Redfish's shape.
fn system(path: &str, power: &str) -> Value {
    json!({"@odata.id": path, "Id": "s1", "PowerState": power, "Manufacturer": "Acme",
        "Model": "R100", "SerialNumber": "SN-1", "ProcessorSummary": {"Count": 4, "Model": "Xeon"},
        "MemorySummary": {"TotalSystemMemoryGiB": 8}})
}

#[tokio::test]
async fn the_worker_checks_the_address_again_before_it_connects() {
    let rogue = Rogue::start("127.0.0.1", |_, path| ok(system(path, "Off"))).await;
    let (env, pool) = metal_env(loopback_allowed()).await;
    let node = enroll(&env, &pool, "m1", &format!("{}/redfish/v1/Systems/s1", rogue.url)).await;
    wait_for(&env, &pool, &node, "manageable").await;
    let before = rogue.requests().len();
    assert!(before > 0, "the allowed BMC was asked");

    // The operator takes the allowance back: the next connection is refused by the worker.
    env.server
        .admin_ok("/api/platform/pools/update", json!({"poolId": pool, "updateMask": "policy", "policy": {}}))
        .await;
    call(&env, &pool, &node, "inspect").await;
    let failed = wait_for(&env, &pool, &node, "inspectFailed").await;
    let error = failed["lastError"].as_str().unwrap();
    assert!(error.contains("refused") && error.contains("policy.metal.bmcAllowedNetworks"), "{error}");
    assert_eq!(rogue.requests().len(), before, "no request reached the refused address: {:?}", rogue.requests());
    assert!(failed["inventory"].is_null(), "{failed}");
}

#[tokio::test]
async fn a_bmcs_redirect_or_link_is_not_followed_off_the_bmc() {
    // The second listener stands for a service the operator never allowed (127.0.0.2).
    let inner = Rogue::start("127.0.0.2", |_, path| ok(system(path, "Off"))).await;
    let inner_url = inner.url.clone();
    let inner_host = inner_url.trim_start_matches("http://").to_owned();
    let rogue = Rogue::start("127.0.0.1", move |_, path| match path {
        "/redfish/v1/Systems/redirects" => {
            (307, vec![("location".into(), format!("{inner_url}/redfish/v1/Systems/s1"))], String::new())
        }
        _ => {
            let mut answer = system(path, "Off");
            answer["EthernetInterfaces"] = json!({"@odata.id": format!("@{inner_host}/redfish/v1/Systems/s1/Nics")});
            answer["Storage"] = json!({"@odata.id": format!("http://{inner_host}/redfish/v1/Systems/s1/Storage")});
            ok(answer)
        }
    })
    .await;
    let (env, pool) = metal_env(json!({"metal": {"bmcAllowedNetworks": ["127.0.0.1/32"]}})).await;

    let redirected = enroll(&env, &pool, "m1", &format!("{}/redfish/v1/Systems/redirects", rogue.url)).await;
    let failed = wait_for(&env, &pool, &redirected, "enrollFailed").await;
    assert!(failed["lastError"].as_str().unwrap().contains("307"), "{failed}");

    let linking = enroll(&env, &pool, "m2", &format!("{}/redfish/v1/Systems/links", rogue.url)).await;
    wait_for(&env, &pool, &linking, "manageable").await;
    call(&env, &pool, &linking, "inspect").await;
    let failed = wait_for(&env, &pool, &linking, "inspectFailed").await;
    assert!(failed["lastError"].as_str().unwrap().contains("outside"), "{failed}");

    assert_eq!(inner.requests(), Vec::<String>::new(), "nothing reached the address the BMC pointed at");
}

/// `filler` characters, then the marker: a cut at a short length keeps none of the marker.
fn buried(filler: char) -> String {
    format!("{}{MARKER}", filler.to_string().repeat(300))
}

#[tokio::test]
async fn a_bmcs_answers_reach_the_view_only_as_a_status_and_a_short_reason() {
    let power = Arc::new(Mutex::new("Off".to_owned()));
    let reported = power.clone();
    let leak = MARKER.repeat(20_000);
    let rogue = Rogue::start("127.0.0.1", move |method, path| {
        let base = "/redfish/v1/Systems/s1";
        if method == "PATCH" {
            let body = json!({"error": {"code": format!("Base.1.8.{MARKER}"), "message": buried('m'),
                "@Message.ExtendedInfo": [{"Message": buried('e')}, {"Message": MARKER}]}, "Leak": leak});
            return (400, Vec::new(), body.to_string());
        }
        let answer = match path.trim_start_matches(base) {
            "" => json!({"@odata.id": base, "Id": "s1", "PowerState": reported.lock().unwrap().clone(),
                "Manufacturer": buried('v'), "Model": format!("R100\u{1b}[2J\u{7}{}", buried('o')),
                "SerialNumber": buried('s'), "ProcessorSummary": {"Count": 4, "Model": buried('c')},
                "MemorySummary": {"TotalSystemMemoryGiB": 8}, "Leak": leak,
                "EthernetInterfaces": {"@odata.id": format!("{base}/Nics")},
                "Storage": {"@odata.id": format!("{base}/Storage")}}),
            "/Nics" => json!({"Members": [{"@odata.id": format!("{base}/Nics/1")}]}),
            "/Nics/1" => json!({"Name": buried('n'), "MACAddress": format!("AA:BB:CC:DD:EE:FF {MARKER}")}),
            "/Storage" => json!({"Members": [{"@odata.id": format!("{base}/Storage/1")}]}),
            "/Storage/1" => json!({"Drives": [{"@odata.id": format!("{base}/Storage/1/Drives/1")}]}),
            "/Storage/1/Drives/1" => json!({"Name": buried('d'), "CapacityBytes": 1_000_000}),
            _ => return (404, Vec::new(), format!("{{\"error\": {{\"message\": \"{}\"}}}}", buried('x'))),
        };
        ok(answer)
    })
    .await;
    let policy = json!({"metal": {"bmcAllowedNetworks": ["127.0.0.0/8"], "deadlines": {"commissioning": 3}}});
    let (env, pool) = metal_env(policy).await;
    let node = enroll(&env, &pool, "m1", &format!("{}/redfish/v1/Systems/s1", rogue.url)).await;
    wait_for(&env, &pool, &node, "manageable").await;

    // The inventory: every text bounded and printable, none of the marker.
    call(&env, &pool, &node, "inspect").await;
    let inspected = poll(Duration::from_secs(30), "the inventory", || async {
        let machine = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await;
        let done = machine["provisionState"] == "manageable" && machine["inventory"].is_object();
        if done { Ok(machine) } else { Err(machine.to_string()) }
    })
    .await;
    let inventory = &inspected["inventory"];
    assert_eq!(inventory["cpus"], 4, "{inventory}");
    let texts = [
        &inventory["vendor"],
        &inventory["model"],
        &inventory["serial"],
        &inventory["cpuModel"],
        &inventory["nics"][0]["name"],
        &inventory["disks"][0]["name"],
    ];
    for text in texts {
        let text = text.as_str().unwrap_or_default();
        assert!(text.chars().count() <= 64, "bounded: {} chars", text.chars().count());
        assert!(!text.chars().any(char::is_control), "printable: {text:?}");
    }
    assert!(inventory["model"].as_str().unwrap().starts_with("R100"), "{inventory}");
    let mac = inventory["nics"][0]["mac"].as_str().unwrap_or_default();
    assert!(mac.is_empty() || mac == "aa:bb:cc:dd:ee:ff", "a MAC or nothing: {mac:?}");

    // A refusal: the status and at most a short reason.
    call(&env, &pool, &node, "commission").await;
    let failed = wait_for(&env, &pool, &node, "commissionFailed").await;
    let error = failed["lastError"].as_str().unwrap().to_owned();
    assert!(error.contains("HTTP 400"), "names the status: {error}");
    assert!(error.len() <= 400, "a short reason: {} bytes: {error}", error.len());

    // A power state no BMC reports, retried until the deadline.
    *power.lock().unwrap() = buried('p');
    call(&env, &pool, &node, "commission").await;
    let timed_out = poll(Duration::from_secs(30), "the commission times out", || async {
        let machine = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await;
        let error = machine["lastError"].as_str().unwrap_or_default().to_owned();
        let done = machine["provisionState"] == "commissionFailed" && error.contains("timed out");
        if done { Ok(error) } else { Err(machine.to_string()) }
    })
    .await;
    assert!(timed_out.len() <= 1000, "{} bytes: {timed_out}", timed_out.len());

    let view = env.ok("/api/compute/metal/get", json!({"poolId": pool, "nodeId": node})).await.to_string();
    let listed = env.ok("/api/compute/metal/list", json!({"poolId": pool})).await.to_string();
    let events = events_text(&env, &pool).await;
    for (what, text) in [("the view", &view), ("the list", &listed), ("the events", &events)] {
        assert!(!text.contains(MARKER), "{what} holds the BMC's planted text: {}", &text[..text.len().min(2000)]);
        assert!(!text.contains(&"m".repeat(150)), "{what} holds a long run of the BMC's message");
    }
}
