//! What the fake DigitalOcean shows of what it did (a load balancer's in-place updates, a
//! volume's actions) and the changes made behind the control plane's back, in DigitalOcean's
//! control panel and at a machine's power button.

mod common;

use common::{Fixture, start};
use fakecloud::BmcSystemSpec;
use reqwest::Method;
use serde_json::{Value, json};

fn balancer_body(rules: Value) -> Value {
    json!({"name": "lb", "region": "nyc1", "forwarding_rules": rules})
}

fn http_rule(port: u16) -> Value {
    json!({"entry_protocol": "http", "entry_port": port, "target_protocol": "http", "target_port": 8080})
}

/// The inspection's entry of `kind` (`loadBalancers`, `volumes`) with `id`.
fn inspected(fixture: &Fixture, kind: &str, id: &str) -> Value {
    let snapshot = fixture.cloud.inspect();
    snapshot["digitalocean"][kind].as_array().unwrap().iter().find(|o| o["id"] == id).cloned().unwrap_or_default()
}

async fn load_balancer(fixture: &Fixture) -> String {
    let (status, made) =
        fixture.call(Method::POST, "/v2/load_balancers", Some(balancer_body(json!([http_rule(80)])))).await;
    assert_eq!(status, 202, "{made}");
    made["load_balancer"]["id"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_load_balancer_counts_its_updates_in_place_and_keeps_its_id() {
    let fixture = start().await;
    let id = load_balancer(&fixture).await;
    assert_eq!(inspected(&fixture, "loadBalancers", &id)["updates"], 0);
    for port in [81, 82] {
        let body = balancer_body(json!([http_rule(port)]));
        let (status, answer) = fixture.call(Method::PUT, &format!("/v2/load_balancers/{id}"), Some(body)).await;
        assert_eq!(status, 200, "{answer}");
    }
    let refused = balancer_body(json!([]));
    let (status, _) = fixture.call(Method::PUT, &format!("/v2/load_balancers/{id}"), Some(refused)).await;
    assert_eq!(status, 422, "a refused update is no update");
    let seen = inspected(&fixture, "loadBalancers", &id);
    assert_eq!((&seen["id"], &seen["updates"]), (&json!(id), &json!(2)), "{seen}");
}

#[tokio::test]
async fn a_forwarding_rule_added_in_the_control_panel_shows_in_the_api() {
    let fixture = start().await;
    let id = load_balancer(&fixture).await;
    assert!(fixture.cloud.do_add_forwarding_rule(
        &id,
        json!({"entry_protocol": "tcp", "entry_port": 9000, "target_protocol": "tcp", "target_port": 9000})
    ));

    let (status, got) = fixture.call(Method::GET, &format!("/v2/load_balancers/{id}"), None).await;
    let rules = &got["load_balancer"]["forwarding_rules"];
    let expected = json!([
        {"entry_protocol": "http", "entry_port": 80, "target_protocol": "http", "target_port": 8080,
         "certificate_id": "", "tls_passthrough": false},
        {"entry_protocol": "tcp", "entry_port": 9000, "target_protocol": "tcp", "target_port": 9000,
         "certificate_id": "", "tls_passthrough": false},
    ]);
    assert_eq!((status, rules), (200, &expected), "{got}");
    let seen = inspected(&fixture, "loadBalancers", &id);
    assert_eq!((&seen["forwardingRules"], &seen["updates"]), (&expected, &json!(0)), "not an API update: {seen}");
    assert!(!fixture.cloud.do_add_forwarding_rule("no-such-balancer", http_rule(81)));
}

#[tokio::test]
#[should_panic(expected = "DigitalOcean refuses forwarding rule")]
async fn a_forwarding_rule_digitalocean_would_refuse_is_a_mistake_of_the_test() {
    let fixture = start().await;
    let id = load_balancer(&fixture).await;
    fixture.cloud.do_add_forwarding_rule(&id, http_rule(80));
}

/// Sends a volume action and waits until it completed.
async fn volume_action(fixture: &Fixture, id: &str, body: Value) {
    let (status, answer) = fixture.call(Method::POST, &format!("/v2/volumes/{id}/actions"), Some(body)).await;
    assert_eq!(status, 202, "{answer}");
    let action = answer["action"]["id"].clone();
    fixture
        .eventually("the volume action completes", |snapshot| {
            let volumes = snapshot["digitalocean"]["volumes"].as_array()?;
            let actions = volumes.iter().find(|v| v["id"] == id)?["actions"].as_array()?.clone();
            actions.iter().any(|a| a["id"] == action && a["status"] == "completed").then_some(())
        })
        .await;
}

#[tokio::test]
async fn a_volume_records_its_actions_in_order_and_a_growth_in_the_control_panel() {
    let fixture = start().await;
    let volume = json!({"name": "data", "region": "nyc1", "size_gigabytes": 10});
    let (_, made) = fixture.call(Method::POST, "/v2/volumes", Some(volume)).await;
    let id = made["volume"]["id"].as_str().unwrap().to_owned();
    let droplet = json!({"name": "d", "region": "nyc1", "size": "s-1vcpu-1gb", "image": "ubuntu-24-04-x64"});
    let (_, made) = fixture.call(Method::POST, "/v2/droplets", Some(droplet)).await;
    let droplet = made["droplet"]["id"].as_u64().unwrap();

    volume_action(&fixture, &id, json!({"type": "attach", "droplet_id": droplet})).await;
    volume_action(&fixture, &id, json!({"type": "resize", "size_gigabytes": 20})).await;
    volume_action(&fixture, &id, json!({"type": "detach", "droplet_id": droplet})).await;
    assert!(fixture.cloud.do_set_volume_size(&id, 50));

    let (status, got) = fixture.call(Method::GET, &format!("/v2/volumes/{id}"), None).await;
    assert_eq!((status, &got["volume"]["size_gigabytes"]), (200, &json!(50)), "{got}");
    let seen = inspected(&fixture, "volumes", &id);
    let actions: Vec<Value> = seen["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| json!([a["type"], a["status"], a["dropletId"], a["sizeGigabytes"], a["initiatedBy"]]))
        .collect();
    let expected = [
        json!(["attach_volume", "completed", droplet, null, "api"]),
        json!(["resize_volume", "completed", null, 20, "api"]),
        json!(["detach_volume", "completed", droplet, null, "api"]),
        json!(["resize_volume", "completed", null, 50, "console"]),
    ];
    assert_eq!(actions, expected, "{seen}");
    let (_, listed) = fixture.call(Method::GET, &format!("/v2/volumes/{id}/actions"), None).await;
    assert_eq!(listed["actions"].as_array().map(Vec::len), Some(4), "the API lists the panel's action too");
    assert!(!fixture.cloud.do_set_volume_size("no-such-volume", 60));
}

#[tokio::test]
async fn the_power_button_shows_in_the_redfish_system() {
    let fixture = start().await;
    let spec = BmcSystemSpec { name: "m1".into(), username: "admin".into(), password: "secret".into() };
    let path = fixture.cloud.add_bmc_system(spec);
    let id = path.rsplit('/').next().unwrap().to_owned();
    let power_state = || async {
        let url = format!("{}{path}", fixture.cloud.base_url());
        let response = fixture.http.get(url).basic_auth("admin", Some("secret")).send().await.unwrap();
        let system: Value = serde_json::from_str(&response.text().await.unwrap()).unwrap();
        let inspected = fixture.cloud.inspect()["redfish"]
            .as_array()
            .unwrap()
            .iter()
            .find(|s| s["id"] == id.as_str())
            .cloned()
            .unwrap();
        (system["PowerState"].clone(), inspected["powerState"].clone(), inspected["boots"].as_array().unwrap().len())
    };
    assert_eq!(power_state().await, (json!("Off"), json!("Off"), 0));
    assert!(fixture.cloud.bmc_set_power(&id, true));
    assert_eq!(power_state().await, (json!("On"), json!("On"), 1), "on at once, and it boots");
    assert!(fixture.cloud.bmc_set_power(&id, false));
    assert_eq!(power_state().await, (json!("Off"), json!("Off"), 1));
    assert!(!fixture.cloud.bmc_set_power("system-999", true));
}
