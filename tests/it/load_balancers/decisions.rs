//! A load balancer list decides each item as `get` decides it, with the attributes its
//! authorization row records (`scope`, `region`, ...), so an operator's policy on one of them
//! filters the list exactly as it refuses the `get`.

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{CREATE, GET, LIST, OTHER_REGION, regional};

crate::on_both_backends!(a_policy_on_an_attribute_filters_the_list_as_it_refuses_get);

/// Viewers do not see load balancers in sfo3.
const HIDE_SFO3: &str = r#"
forbid (principal, action == BetterCompute::Action::"compute:load-balancers:read", resource)
    when { resource has region && resource.region == "sfo3" &&
           !(resource has tenant && resource.tenant.admins.contains(principal)) };
"#;

fn names(answer: &Value) -> Vec<String> {
    let items = answer["loadBalancers"].as_array().cloned().unwrap_or_default();
    items.iter().map(|lb| lb["name"].as_str().unwrap_or_default().to_owned()).collect()
}

async fn a_policy_on_an_attribute_filters_the_list_as_it_refuses_get(backend: Backend) {
    let env = super::setup(backend).policies(&[("hide-sfo3.cedar".into(), HIDE_SFO3.into())]).start().await;
    let east = env.ok(CREATE, regional("east", json!({"pool": true}))).await;
    let mut body = regional("west", json!({"pool": true}));
    body["region"] = json!(OTHER_REGION);
    let west = env.ok(CREATE, body).await;

    let viewer = env.acme_viewer.clone();
    let get = |lb: &Value| json!({"tenantId": "acme", "loadBalancerId": lb["id"]});
    assert_eq!(env.post_as(&viewer, GET, get(&east)).await.0, 200);
    assert_eq!(env.post_as(&viewer, GET, get(&west)).await.0, 403);
    let (status, listed) = env.post_as(&viewer, LIST, json!({"tenantId": "acme"})).await;
    assert_eq!((status, names(&listed)), (200, vec!["east".to_owned()]), "{listed}");
    // The tenant's admin reads both, in both ways.
    assert_eq!(names(&env.ok(LIST, json!({"tenantId": "acme"})).await), ["east", "west"]);
    assert_eq!(env.post_as(&env.acme_admin.clone(), GET, get(&west)).await.0, 200);
}
