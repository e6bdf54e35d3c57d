//! The DigitalOcean adapter against the fake DigitalOcean: every call, paging, rate limits and
//! the refusal paths.

use std::time::Duration;

use better_compute::fakecloud::{Failure, RateLimitMode};
use better_compute::provider::{
    CertificateSpec, Certificates, ErrorKind, ForwardingRule, InstanceSpec, Instances, LoadBalancerSpec, LoadBalancers,
    NetworkSpec, Networks,
};

use super::{cloud, digitalocean};

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

async fn eventually<F: AsyncFn() -> bool>(what: &str, check: F) {
    for _ in 0..100 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} did not happen in 5 s");
}

#[tokio::test]
async fn load_balancers_are_created_activated_listed_replaced_and_deleted() {
    let cloud = cloud().await;
    let adapter = digitalocean(&cloud);
    let created = adapter.load_balancer_create(&balancer("bc-lb-1", vec![11, 12])).await.unwrap();
    assert_eq!((created.status.as_str(), created.ip.as_str()), ("new", ""));
    eventually("activation", async || adapter.load_balancer_get(&created.id).await.unwrap().status == "active").await;
    assert!(!adapter.load_balancer_get(&created.id).await.unwrap().ip.is_empty());

    let mut replaced = created.spec.clone();
    replaced.instance_ids = vec![13];
    let updated = adapter.load_balancer_update(&created.id, &replaced).await.unwrap();
    assert_eq!(updated.spec.instance_ids, [13]);
    assert_eq!(cloud.inspect()["digitalocean"]["loadBalancers"][0]["dropletIds"], serde_json::json!([13]));

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
}

#[tokio::test]
async fn an_invalid_balancer_is_refused_permanently_with_the_providers_words() {
    let cloud = cloud().await;
    let adapter = digitalocean(&cloud);
    let mut both = balancer("bc-lb-bad", vec![1]);
    both.tag = "web".into();
    both.instance_ids.clear();
    both.forwarding_rules.clear();
    let refused = adapter.load_balancer_create(&both).await.unwrap_err();
    assert_eq!(
        (refused.kind, refused.status, refused.reason.as_str()),
        (ErrorKind::Permanent, Some(422), "unprocessable_entity")
    );
    assert!(refused.message.contains("forwarding_rules"));
    cloud.fail_next("loadBalancer", "create", "bc-lb-x", Failure::Refuse { status: 500, message: "boom".into() });
    let failed = adapter.load_balancer_create(&balancer("bc-lb-x", vec![])).await.unwrap_err();
    assert_eq!((failed.kind, failed.message.as_str()), (ErrorKind::Transient, "boom"));
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
    eventually("droplet active", async || adapter.instance_get(droplet.id).await.unwrap().status == "active").await;
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
    eventually("certificate verified", async || adapter.certificate_get(&cert.id).await.unwrap().state == "verified")
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
    let tagged = LoadBalancerSpec { tag: "bc-pool-1".into(), ..balancer("bc-lb-tag", vec![]) };
    adapter.load_balancer_create(&tagged).await.unwrap();
    let seen = &cloud.inspect()["digitalocean"]["loadBalancers"][0];
    assert_eq!((seen["name"].as_str(), seen["tag"].as_str()), (Some("bc-lb-tag"), Some("bc-pool-1")));
}
