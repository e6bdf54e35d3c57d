//! Each class's answer per API, and the controls that fail calls through a running fake cloud.

use std::time::Duration;

use http::Method;

use super::*;
use crate::calls::identify;
use crate::{BmcSystemSpec, Failure, FakeCloud, FakeCloudConfig};

const CLASSES: [FaultClass; 9] = [
    FaultClass::Retryable,
    FaultClass::Throttled { retry_after: Duration::from_millis(29_500) },
    FaultClass::Quota,
    FaultClass::Permission,
    FaultClass::Unauthenticated,
    FaultClass::Invalid,
    FaultClass::Conflict,
    FaultClass::NotFound,
    FaultClass::NeedsHuman,
];

fn call(method: Method, path: &str) -> Call {
    identify(&method, path, Some(("do-token", Some("sa@p.iam.gserviceaccount.com"))), b"")
}

async fn answered(call: &Call, class: &FaultClass) -> (u16, Value, http::HeaderMap) {
    let response = answer(call, class, "req-1");
    let (parts, body) = response.into_parts();
    let body = axum::body::to_bytes(body, usize::MAX).await.unwrap();
    (parts.status.as_u16(), serde_json::from_slice(&body).unwrap(), parts.headers)
}

/// The reason of a Google error's `ErrorInfo`, if it has one.
fn reason(body: &Value) -> Option<&str> {
    body["error"]["details"]
        .as_array()?
        .iter()
        .find(|d| d["@type"].as_str().is_some_and(|t| t.ends_with("ErrorInfo")))?["reason"]
        .as_str()
}

#[tokio::test]
async fn gke_answers_each_class_with_google_status_and_error_info() {
    let cluster = call(Method::GET, "/v1/projects/p/locations/europe-west1/clusters/c");
    let expected = [
        (503, "UNAVAILABLE", None),
        (429, "RESOURCE_EXHAUSTED", Some("RATE_LIMIT_EXCEEDED")),
        (429, "RESOURCE_EXHAUSTED", Some("QUOTA_EXCEEDED")),
        (403, "PERMISSION_DENIED", Some("IAM_PERMISSION_DENIED")),
        (401, "UNAUTHENTICATED", Some("ACCOUNT_STATE_INVALID")),
        (400, "INVALID_ARGUMENT", None),
        (409, "ALREADY_EXISTS", None),
        (404, "NOT_FOUND", None),
        (403, "PERMISSION_DENIED", Some("BILLING_DISABLED")),
    ];
    for (class, (status, code, why)) in CLASSES.iter().zip(expected) {
        let (got, body, headers) = answered(&cluster, class).await;
        assert_eq!((got, body["error"]["status"].as_str(), reason(&body)), (status, Some(code), why), "{class:?}");
        assert_eq!(body["error"]["code"], status, "{class:?}");
        assert!(!body["error"]["message"].as_str().unwrap().is_empty());
        let throttled = matches!(class, FaultClass::Throttled { .. });
        assert_eq!(headers.get("retry-after").is_some(), throttled, "{class:?}");
    }
    let (_, body, headers) = answered(&cluster, &CLASSES[1]).await;
    assert_eq!(headers["retry-after"], "30");
    let retry = body["error"]["details"].as_array().unwrap().iter().find(|d| d["retryDelay"].is_string()).unwrap();
    assert_eq!(retry["@type"], "type.googleapis.com/google.rpc.RetryInfo");
    assert_eq!(retry["retryDelay"], "30s");
    let (_, body, _) = answered(&cluster, &FaultClass::Permission).await;
    assert_eq!(
        body["error"]["message"],
        "Required \"container.clusters.get\" permission(s) for \"projects/p/locations/europe-west1/clusters/c\"."
    );
}

#[tokio::test]
async fn compute_engine_answers_with_its_errors_list() {
    let network = call(Method::DELETE, "/compute/v1/projects/p/global/networks/n");
    let reasons = [
        "backendError",
        "rateLimitExceeded",
        "quotaExceeded",
        "forbidden",
        "authError",
        "invalid",
        "alreadyExists",
        "notFound",
        "accessNotConfigured",
    ];
    for (class, expected) in CLASSES.iter().zip(reasons) {
        let (status, body, _) = answered(&network, class).await;
        assert_eq!(body["error"]["code"], status);
        assert_eq!(body["error"]["errors"][0]["reason"], expected, "{class:?}");
    }
    let (status, body, _) = answered(&network, &FaultClass::NeedsHuman).await;
    assert_eq!((status, reason(&body)), (403, Some("BILLING_DISABLED")));
    let (_, body, _) = answered(&network, &FaultClass::Permission).await;
    assert_eq!(
        body["error"]["message"],
        "Required 'compute.networks.delete' permission for 'projects/p/global/networks/n'"
    );
}

#[tokio::test]
async fn digitalocean_answers_with_id_message_and_request_id() {
    let droplets = identify(&Method::POST, "/v2/droplets", Some(("t", None)), br#"{"name":"d"}"#);
    let expected = [
        (500, "server_error"),
        (429, "too_many_requests"),
        (422, "unprocessable_entity"),
        (403, "forbidden"),
        (401, "unauthorized"),
        (422, "unprocessable_entity"),
        (409, "conflict"),
        (404, "not_found"),
        (403, "forbidden"),
    ];
    for (class, (status, id)) in CLASSES.iter().zip(expected) {
        let (got, body, headers) = answered(&droplets, class).await;
        assert_eq!((got, body["id"].as_str()), (status, Some(id)), "{class:?}");
        assert_eq!(body["request_id"], "req-1");
        assert_eq!(headers["x-request-id"], "req-1");
    }
    let (_, body, _) = answered(&droplets, &FaultClass::Quota).await;
    assert_eq!(body["message"], "creating this/these droplet(s) will exceed your droplet limit");
    let (_, body, _) = answered(&droplets, &FaultClass::NeedsHuman).await;
    assert!(body["message"].as_str().unwrap().contains("locked"));
    let (_, _, headers) = answered(&droplets, &CLASSES[1]).await;
    assert_eq!(headers["retry-after"], "30");
    assert_eq!(headers["ratelimit-remaining"], "0");
    let reset: u64 = headers["ratelimit-reset"].to_str().unwrap().parse().unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs();
    assert!((now + 29..=now + 31).contains(&reset), "reset {reset} is not 30 s from {now}");
}

#[tokio::test]
async fn a_bmc_answers_a_general_error_with_the_base_registry_message() {
    let reset = call(Method::POST, "/redfish/v1/Systems/system-1/Actions/ComputerSystem.Reset");
    let expected = [
        (500, "InternalError"),
        (503, "ServiceTemporarilyUnavailable"),
        (400, "CreateLimitReachedForResource"),
        (403, "InsufficientPrivilege"),
        (401, "NoValidSession"),
        (400, "PropertyValueFormatError"),
        (409, "ResourceInUse"),
        (404, "ResourceMissingAtURI"),
        (403, "PasswordChangeRequired"),
    ];
    for (class, (status, message)) in CLASSES.iter().zip(expected) {
        let (got, body, headers) = answered(&reset, class).await;
        let info = &body["error"]["@Message.ExtendedInfo"][0];
        assert_eq!((got, body["error"]["code"].as_str()), (status, Some("Base.1.8.GeneralError")), "{class:?}");
        assert_eq!(info["MessageId"], format!("Base.1.8.{message}"));
        assert!(info["Resolution"].is_string());
        let throttled = matches!(class, FaultClass::Throttled { .. });
        assert_eq!(headers.get("retry-after").is_some(), throttled, "{class:?}");
    }
}

#[tokio::test]
async fn unreachable_is_marked_to_hang_up() {
    let response = answer(&call(Method::GET, "/v2/droplets"), &FaultClass::Unreachable, "r");
    assert!(response.extensions().get::<HangUp>().is_some());
}

const DO_TOKEN: &str = "fake-digitalocean-token";

fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

#[tokio::test]
async fn any_call_fails_once_or_until_cleared_and_an_account_can_be_revoked() {
    let cloud = FakeCloud::start(FakeCloudConfig::default()).await.unwrap();
    let http = client();
    let droplets = format!("{}/v2/droplets", cloud.base_url());
    let get = || http.get(&droplets).bearer_auth(DO_TOKEN).send();

    cloud.fail_next(
        "droplet",
        "list",
        "*",
        Failure::Class(FaultClass::Throttled { retry_after: Duration::from_secs(7) }),
    );
    let throttled = get().await.unwrap();
    assert_eq!((throttled.status().as_u16(), throttled.headers()["retry-after"].to_str().unwrap()), (429, "7"));
    assert_eq!(get().await.unwrap().status(), 200);

    let revoked = cloud.revoke_credentials(DO_TOKEN);
    for _ in 0..2 {
        let refused = get().await.unwrap();
        assert_eq!(refused.status(), 401);
        assert_eq!(refused.json::<Value>().await.unwrap()["id"], "unauthorized");
    }
    assert_eq!(cloud.fault_hits(revoked), Some(2));
    assert!(cloud.clear_fault(revoked));
    assert_eq!(get().await.unwrap().status(), 200);

    let email = "reconciler@p.iam.gserviceaccount.com";
    let _ = cloud.service_account_key("p", "reconciler");
    let token = cloud.access_token(email);
    let clusters = format!("{}/v1/projects/p/locations/europe-west1/clusters", cloud.base_url());
    let billing = cloud.fail_account("p", FaultClass::NeedsHuman);
    let refused = http.get(&clusters).bearer_auth(&token).send().await.unwrap();
    assert_eq!(refused.status(), 403);
    assert_eq!(reason(&refused.json().await.unwrap()), Some("BILLING_DISABLED"));
    cloud.clear_fault(billing);
    assert_eq!(http.get(&clusters).bearer_auth(&token).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn an_unreachable_call_gets_no_answer_and_the_next_one_does() {
    let cloud = FakeCloud::start(FakeCloudConfig::default()).await.unwrap();
    let http = client();
    let path = cloud.add_bmc_system(BmcSystemSpec { name: "m".into(), username: "u".into(), password: "p".into() });
    let system = format!("{}{path}", cloud.base_url());
    let id = cloud.fail_calls("system", "*", path.rsplit('/').next().unwrap(), FaultClass::Unreachable);
    let error = http.get(&system).basic_auth("u", Some("p")).send().await.unwrap_err();
    assert!(error.status().is_none() && error.is_request(), "{error:?}");
    cloud.clear_fault(id);
    assert_eq!(http.get(&system).basic_auth("u", Some("p")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn a_bmc_behind_the_untrusted_certificate_is_refused_as_of_an_unknown_issuer() {
    let cloud = FakeCloud::start(FakeCloudConfig::default()).await.unwrap();
    let path = cloud.add_bmc_system(BmcSystemSpec { name: "m".into(), username: "u".into(), password: "p".into() });
    let id = path.rsplit('/').next().unwrap();
    assert_eq!(cloud.bmc_untrusted_url("system-0"), None);
    let untrusted = cloud.bmc_untrusted_url(id).unwrap();
    assert!(untrusted.starts_with(cloud.untrusted_https_url()) && untrusted.ends_with(&path));
    let trusting = |pem: &str| {
        reqwest::Client::builder()
            .no_proxy()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(pem.as_bytes()).unwrap())
            .build()
            .unwrap()
    };
    let error = trusting(cloud.ca_pem()).get(&untrusted).basic_auth("u", Some("p")).send().await.unwrap_err();
    let chain = std::iter::successors(Some(&error as &dyn std::error::Error), |e| e.source())
        .map(|e| format!("{e:?}"))
        .collect::<Vec<_>>()
        .join(" / ");
    assert!(chain.contains("UnknownIssuer"), "{chain}");
    let trusted = format!("{}{path}", cloud.https_url());
    assert_eq!(trusting(cloud.ca_pem()).get(&trusted).basic_auth("u", Some("p")).send().await.unwrap().status(), 200);
    let trusting_it = trusting(cloud.untrusted_ca_pem());
    assert_eq!(trusting_it.get(&untrusted).basic_auth("u", Some("p")).send().await.unwrap().status(), 200);
}

#[tokio::test]
async fn the_http_controls_put_a_rule_in_force_show_its_hits_and_end_it() {
    let cloud = FakeCloud::start(FakeCloudConfig::default()).await.unwrap();
    let http = client();
    let controls = format!("{}/_fake/faults", cloud.base_url());
    let _ = cloud.service_account_key("p", "reconciler");
    let token = cloud.access_token("reconciler@p.iam.gserviceaccount.com");
    let cluster = format!("{}/v1/projects/p/locations/europe-west1/clusters/c", cloud.base_url());
    let rule = json!({"class": "throttled", "retryAfterSeconds": 5, "kind": "cluster", "verb": "get"});
    let id = http.post(&controls).json(&rule).send().await.unwrap().json::<Value>().await.unwrap()["id"].clone();
    let throttled = http.get(&cluster).bearer_auth(&token).send().await.unwrap();
    assert_eq!((throttled.status().as_u16(), throttled.headers()["retry-after"].to_str().unwrap()), (429, "5"));
    let listed: Value = http.get(&controls).send().await.unwrap().json().await.unwrap();
    assert_eq!(
        listed["faults"],
        json!([{"id": id, "class": "throttled", "retryAfterSeconds": 5, "kind": "cluster", "verb": "get",
                "name": "*", "hits": 1}])
    );
    assert_eq!(http.delete(format!("{controls}/{id}")).send().await.unwrap().status(), 200);
    assert_eq!(http.get(&cluster).bearer_auth(&token).send().await.unwrap().status(), 404);
    let refused = http.post(&controls).json(&json!({"class": "flaky"})).send().await.unwrap();
    assert_eq!(refused.status(), 400);
}

#[test]
fn every_class_has_the_name_the_control_plane_gives_it() {
    let names = [
        "retryable",
        "throttled",
        "quota",
        "permission",
        "unauthenticated",
        "invalid",
        "conflict",
        "notFound",
        "needsHuman",
    ];
    for (class, name) in CLASSES.iter().zip(names) {
        assert_eq!(crate::fault_controls::class_json(class)["class"], name);
        assert!(crate::fault_controls::class_named(name, 30).is_some());
    }
    assert_eq!(crate::fault_controls::class_named("unreachable", 0), Some(FaultClass::Unreachable));
}
