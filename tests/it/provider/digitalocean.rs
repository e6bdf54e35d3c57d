//! The DigitalOcean adapter against the fake DigitalOcean: every call, paging, rate limits and
//! the refusal paths.

use std::time::Duration;

use better_compute::provider::{
    CertificateSpec, Certificates, ErrorKind, ForwardingRule, InstanceSpec, Instances, LoadBalancerSpec, LoadBalancers,
    NetworkSpec, Networks,
};
use fakecloud::{Failure, RateLimitMode};

use serde_json::{Value, json};

use super::{cloud, digitalocean};
use crate::harness::eventually;

/// How long the fake cloud may take to move a resource on.
const LOOK: Duration = Duration::from_secs(5);

fn balancer(name: &str, instance_ids: Vec<u64>) -> LoadBalancerSpec {
    LoadBalancerSpec {
        name: name.into(),
        region: "nyc3".into(),
        size_unit: 1,
        kind: "REGIONAL".into(),
        forwarding_rules: vec![ForwardingRule {
            entry_protocol: "tcp".into(),
            entry_port: 443,
            target_protocol: "tcp".into(),
            target_port: 8443,
            ..Default::default()
        }],
        instance_ids,
        ..Default::default()
    }
}

/// A droplet in `region`'s default VPC (or `vpc`), for balancers to target.
async fn droplet(adapter: &better_compute::provider::digitalocean::DigitalOcean, region: &str, vpc: &str) -> u64 {
    let spec = InstanceSpec {
        name: format!("bc-i-{}", rand_suffix()),
        region: region.into(),
        size: "s-1vcpu-1gb".into(),
        image: "ubuntu-24-04-x64".into(),
        vpc_uuid: vpc.into(),
        ..Default::default()
    };
    adapter.instance_create(&spec).await.unwrap().id
}

fn rand_suffix() -> String {
    better_compute::ids::random("x")[2..12].to_owned()
}

/// A raw request to the fake DigitalOcean, for bodies the adapter never sends.
async fn raw(cloud: &fakecloud::FakeCloud, method: reqwest::Method, path: &str, body: Value) -> (u16, Value) {
    let response = super::http()
        .request(method, format!("{}/v2/{path}", cloud.base_url()))
        .bearer_auth("fake-digitalocean-token")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn load_balancers_are_created_activated_listed_replaced_and_deleted() {
    let cloud = cloud().await;
    let adapter = digitalocean(&cloud);
    let (one, two, three) =
        (droplet(&adapter, "nyc3", "").await, droplet(&adapter, "nyc3", "").await, droplet(&adapter, "nyc3", "").await);
    let mut spec = balancer("bc-lb-1", vec![one, two]);
    spec.network_stack = "DUALSTACK".into();
    let created = adapter.load_balancer_create(&spec).await.unwrap();
    assert_eq!((created.status.as_str(), created.ip.as_str()), ("new", ""));
    eventually(LOOK, "activation", || async {
        (adapter.load_balancer_get(&created.id).await.unwrap().status == "active").then_some(())
    })
    .await;
    let active = adapter.load_balancer_get(&created.id).await.unwrap();
    assert!(!active.ip.is_empty() && !active.ipv6.is_empty(), "a dual-stack balancer has both addresses");

    let mut replaced = created.spec.clone();
    replaced.instance_ids = vec![three];
    let updated = adapter.load_balancer_update(&created.id, &replaced).await.unwrap();
    assert_eq!(updated.spec.instance_ids, [three]);
    assert_eq!(cloud.inspect()["digitalocean"]["loadBalancers"][0]["dropletIds"], json!([three]));

    // More than one page: the adapter follows links.pages.next.
    for index in 0..120 {
        adapter.load_balancer_create(&balancer(&format!("bc-lb-page-{index}"), vec![])).await.unwrap();
    }
    assert_eq!(adapter.load_balancer_list().await.unwrap().len(), 121);
    assert!(adapter.rate_limit().is_some_and(|r| r.limit == 5000));

    adapter.load_balancer_delete(&created.id).await.unwrap();
    let gone = adapter.load_balancer_get(&created.id).await.unwrap_err();
    assert_eq!((gone.kind, gone.reason.as_str()), (ErrorKind::NotFound, "not_found"));
    assert!(gone.request_id.is_some());
    assert_eq!(adapter.load_balancer_delete(&created.id).await.unwrap_err().kind, ErrorKind::NotFound);
    assert_eq!(cloud.inspect()["digitalocean"]["loadBalancerRequestsWithTag"], 0, "the adapter never sends a tag");
}

#[tokio::test]
async fn an_invalid_balancer_is_refused_permanently_with_the_providers_words() {
    let cloud = cloud().await;
    let adapter = digitalocean(&cloud);
    let mut empty = balancer("bc-lb-bad", vec![]);
    empty.forwarding_rules.clear();
    let refused = adapter.load_balancer_create(&empty).await.unwrap_err();
    assert_eq!(
        (refused.kind, refused.status, refused.reason.as_str()),
        (ErrorKind::Permanent, Some(422), "unprocessable_entity")
    );
    assert!(refused.message.contains("forwarding_rules"));
    cloud.fail_next("loadBalancer", "create", "bc-lb-x", Failure::Refuse { status: 500, message: "boom".into() });
    let failed = adapter.load_balancer_create(&balancer("bc-lb-x", vec![])).await.unwrap_err();
    assert_eq!((failed.kind, failed.message.as_str()), (ErrorKind::Transient, "boom"));
}

/// The fake follows DigitalOcean's OpenAPI for load balancers: what a body must hold, where its
/// droplets must be, and what a PUT resets.
#[tokio::test]
async fn the_fake_load_balancers_follow_digitaloceans_rules() {
    let cloud = cloud().await;
    let adapter = digitalocean(&cloud);
    let here = droplet(&adapter, "nyc3", "").await;
    let elsewhere = droplet(&adapter, "sfo3", "").await;
    let vpc = adapter
        .network_create(&NetworkSpec { name: "bc-n-1".into(), region: "nyc3".into(), ..Default::default() })
        .await
        .unwrap();
    let private = droplet(&adapter, "nyc3", &vpc.id).await;
    let rule = json!({"entry_protocol": "http", "entry_port": 80, "target_protocol": "http", "target_port": 80});
    let body = |extra: Value| {
        let mut body = json!({"name": "bc-lb-raw", "region": "nyc3", "forwarding_rules": [rule.clone()]});
        for (key, value) in extra.as_object().unwrap() {
            body[key] = value.clone();
        }
        body
    };
    let refusals = [
        (body(json!({"droplet_ids": [here], "tag": "web"})), "mutually exclusive"),
        (body(json!({"droplet_ids": [elsewhere]})), "not in region"),
        (body(json!({"droplet_ids": [private]})), "VPC"),
        (body(json!({"droplet_ids": [999_999_999]})), "not found"),
        (body(json!({"vpc_uuid": vpc.id, "droplet_ids": [here]})), "VPC"),
        (body(json!({"firewall": {"allow": ["10.0.0.0/8"]}})), "cidr:"),
        (body(json!({"sticky_sessions": {"type": "cookies"}})), "cookie_name"),
        (
            body(
                json!({"forwarding_rules": [{"entry_protocol": "https", "entry_port": 443, "target_protocol": "http", "target_port": 80}]}),
            ),
            "certificate_id",
        ),
        (
            body(
                json!({"forwarding_rules": [{"entry_protocol": "https", "entry_port": 443, "target_protocol": "http", "target_port": 80, "certificate_id": "nope"}]}),
            ),
            "not found",
        ),
        (
            body(
                json!({"forwarding_rules": [{"entry_protocol": "udp", "entry_port": 53, "target_protocol": "tcp", "target_port": 53}]}),
            ),
            "udp",
        ),
        (body(json!({"health_check": {"protocol": "udp", "port": 53}})), "health_check.protocol"),
        (body(json!({"type": "GLOBAL", "droplet_ids": [here]})), "global"),
        (body(json!({"type": "GLOBAL", "target_load_balancer_ids": ["missing"]})), "not found"),
        (body(json!({"domains": [{"name": "example.com"}]})), "global"),
        (json!({"name": "bc-lb-raw", "forwarding_rules": [rule.clone()]}), "region is required"),
    ];
    for (asked, words) in refusals {
        let (status, answer) = raw(&cloud, reqwest::Method::POST, "load_balancers", asked.clone()).await;
        assert_eq!((status, answer["id"].as_str()), (422, Some("unprocessable_entity")), "{asked}: {answer}");
        assert!(answer["message"].as_str().unwrap().contains(words), "{asked}: {answer}");
    }
    assert_eq!(cloud.inspect()["digitalocean"]["loadBalancerRequestsWithTag"], 1, "the one tagged request is recorded");
    assert!(cloud.inspect()["digitalocean"]["loadBalancers"].as_array().unwrap().is_empty());

    // In its VPC, a balancer reaches that VPC's droplets; a PUT is a full representation.
    let (status, made) = raw(
        &cloud,
        reqwest::Method::POST,
        "load_balancers",
        body(json!({"vpc_uuid": vpc.id, "droplet_ids": [private], "redirect_http_to_https": true,
            "sticky_sessions": {"type": "cookies", "cookie_name": "c", "cookie_ttl_seconds": 60},
            "firewall": {"deny": ["ip:192.0.2.1", "cidr:198.51.100.0/24"]}})),
    )
    .await;
    assert_eq!(status, 202, "{made}");
    let id = made["load_balancer"]["id"].as_str().unwrap().to_owned();
    let (status, put) =
        raw(&cloud, reqwest::Method::PUT, &format!("load_balancers/{id}"), body(json!({"vpc_uuid": vpc.id}))).await;
    assert_eq!(status, 200, "{put}");
    let lb = &put["load_balancer"];
    assert_eq!(lb["droplet_ids"], json!([]), "what a PUT leaves out goes back to its default");
    assert_eq!(lb["sticky_sessions"], json!({"type": "none"}));
    assert_eq!(lb["firewall"], json!({"allow": [], "deny": []}));
    assert_eq!(lb["redirect_http_to_https"], false);
    assert_eq!(lb["health_check"]["unhealthy_threshold"], 5);
    let (status, moved) = raw(&cloud, reqwest::Method::PUT, &format!("load_balancers/{id}"), body(json!({}))).await;
    assert_eq!(status, 422, "the VPC cannot change: {moved}");

    // A global balancer targets regional ones; a targeted one cannot go first.
    let (status, global) = raw(
        &cloud,
        reqwest::Method::POST,
        "load_balancers",
        json!({"name": "bc-lb-edge", "type": "GLOBAL", "forwarding_rules": [rule],
            "target_load_balancer_ids": [id], "domains": [{"name": "example.com"}],
            "glb_settings": {"target_protocol": "http", "target_port": 80}}),
    )
    .await;
    assert_eq!(status, 202, "{global}");
    assert_eq!(global["load_balancer"]["region"], Value::Null);
    let (status, _) = raw(&cloud, reqwest::Method::DELETE, &format!("load_balancers/{id}"), Value::Null).await;
    assert_eq!(status, 422, "a balancer a global one targets is in use");
}

#[tokio::test]
async fn a_short_rate_limit_is_waited_out_and_a_long_one_returned() {
    let cloud = cloud().await;
    let adapter = digitalocean(&cloud);
    cloud.set_rate_limit(Some(RateLimitMode { limit: 1, window: Duration::from_secs(1) }));
    adapter.network_list().await.unwrap();
    let started = std::time::Instant::now();
    adapter.network_list().await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(900), "the 429 was waited out");
    cloud.set_rate_limit(Some(RateLimitMode { limit: 1, window: Duration::from_secs(60) }));
    adapter.network_list().await.unwrap();
    let limited = adapter.network_list().await.unwrap_err();
    assert_eq!(
        (limited.kind, limited.status, limited.reason.as_str()),
        (ErrorKind::Transient, Some(429), "too_many_requests")
    );
    assert!(limited.retry_after.is_some_and(|wait| wait > Duration::from_secs(3)));
    assert_eq!(adapter.rate_limit().map(|r| r.remaining), Some(0));
}

#[tokio::test]
async fn droplets_vpcs_and_certificates_round_trip() {
    let cloud = cloud().await;
    let adapter = digitalocean(&cloud);
    let vpc = adapter
        .network_create(&NetworkSpec { name: "bc-net-1".into(), region: "nyc3".into(), ..Default::default() })
        .await
        .unwrap();
    assert_eq!(adapter.network_get(&vpc.id).await.unwrap().name, "bc-net-1");
    assert_eq!(adapter.network_list().await.unwrap().len(), 1);
    let duplicate = NetworkSpec { name: "bc-net-1".into(), region: "nyc3".into(), ..Default::default() };
    assert_eq!(adapter.network_create(&duplicate).await.unwrap_err().status, Some(409));
    // A range must be RFC 1918, /16 to /28, and not overlap another VPC of the region (422).
    let ranged = |name: &str, region: &str, range: &str| NetworkSpec {
        name: name.into(),
        region: region.into(),
        ip_range: range.into(),
        ..Default::default()
    };
    let taken = adapter.network_get(&vpc.id).await.unwrap().ip_range;
    let overlap = adapter.network_create(&ranged("bc-net-2", "nyc3", &taken)).await.unwrap_err();
    assert_eq!(overlap.status, Some(422), "{overlap}");
    assert!(overlap.message.contains("overlaps"), "{overlap}");
    let elsewhere = adapter.network_create(&ranged("bc-net-3", "ams3", &taken)).await.unwrap();
    adapter.network_delete(&elsewhere.id).await.unwrap();
    for range in ["8.8.8.0/24", "10.0.0.0/12", "10.0.0.0/29"] {
        let refused = adapter.network_create(&ranged("bc-net-4", "sfo3", range)).await.unwrap_err();
        assert_eq!(refused.status, Some(422), "{range}: {refused}");
    }

    let spec = InstanceSpec {
        name: "bc-i-1".into(),
        region: "nyc3".into(),
        size: "s-1vcpu-1gb".into(),
        image: "ubuntu-24-04-x64".into(),
        vpc_uuid: vpc.id.clone(),
        tags: vec!["bc-pool".into()],
        user_data: String::new(),
    };
    let droplet = adapter.instance_create(&spec).await.unwrap();
    assert_eq!(droplet.status, "new");
    eventually(LOOK, "droplet active", || async {
        (adapter.instance_get(droplet.id).await.unwrap().status == "active").then_some(())
    })
    .await;
    assert!(!droplet.private_ipv4.is_empty());
    assert_eq!(adapter.instance_list("bc-pool").await.unwrap().len(), 1);
    assert!(adapter.instance_list("other").await.unwrap().is_empty());
    // A VPC with members cannot go: 403, as DigitalOcean documents.
    assert_eq!(adapter.network_delete(&vpc.id).await.unwrap_err().status, Some(403));
    adapter.instance_delete(droplet.id).await.unwrap();
    assert_eq!(adapter.instance_get(droplet.id).await.unwrap_err().kind, ErrorKind::NotFound);
    adapter.network_delete(&vpc.id).await.unwrap();

    let cert = adapter
        .certificate_create(&CertificateSpec::LetsEncrypt {
            name: "bc-cert".into(),
            dns_names: vec!["example.com".into()],
        })
        .await
        .unwrap();
    assert_eq!(cert.state, "pending");
    eventually(LOOK, "certificate verified", || async {
        (adapter.certificate_get(&cert.id).await.unwrap().state == "verified").then_some(())
    })
    .await;
    assert_eq!(adapter.certificate_list().await.unwrap().len(), 1);
    adapter.certificate_delete(&cert.id).await.unwrap();
    assert_eq!(adapter.certificate_get(&cert.id).await.unwrap_err().kind, ErrorKind::NotFound);
}

#[tokio::test]
async fn latency_slows_every_call_and_inspection_shows_what_exists() {
    let cloud = cloud().await;
    let adapter = digitalocean(&cloud);
    cloud.set_latency(Duration::from_millis(300));
    let started = std::time::Instant::now();
    adapter.network_list().await.unwrap();
    assert!(started.elapsed() >= Duration::from_millis(300));
    cloud.set_latency(Duration::ZERO);
    let tagged = json!({"name": "bc-lb-tag", "region": "nyc3", "tag": "bc-pool-1", "forwarding_rules": [
        {"entry_protocol": "tcp", "entry_port": 443, "target_protocol": "tcp", "target_port": 8443}]});
    assert_eq!(raw(&cloud, reqwest::Method::POST, "load_balancers", tagged).await.0, 202);
    let seen = &cloud.inspect()["digitalocean"]["loadBalancers"][0];
    assert_eq!((seen["name"].as_str(), seen["tag"].as_str()), (Some("bc-lb-tag"), Some("bc-pool-1")));
    let listed = adapter.load_balancer_list().await.unwrap();
    assert_eq!(listed[0].tag, "bc-pool-1", "a tag set by someone else is reported");
}
