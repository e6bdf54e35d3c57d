//! Who sees which clusters. `list` is decided on the tenant (`+ items`): the decision carries the
//! `projectId` the call names, so a role bound at a project lets its holder list that project's
//! clusters; then every cluster is kept only if the caller may read it, decided as `get`
//! decides it (its project, owner and attributes). A role bound at one cluster reaches that
//! cluster, not the tenant's list.

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{Env, FREE_POOL, standard};

crate::on_both_backends!(list_returns_only_the_clusters_the_caller_may_read, the_caller_owns_the_cluster_it_creates);

const LIST: &str = "/api/compute/kubernetesClusters/list";
const GET: &str = "/api/compute/kubernetesClusters/get";

/// A user of acme with an API key and `role` bound at `scope_type` `scope_id`; returns the token.
async fn user_bound_at(env: &Env, name: &str, bindings: &[(&str, &str, &str)]) -> String {
    let user =
        env.ok("/api/platform/principals/create", json!({"tenantId": "acme", "kind": "user", "name": name})).await;
    for (role, scope_type, scope_id) in bindings {
        env.ok(
            "/api/platform/roleBindings/create",
            json!({"tenantId": "acme", "principalId": user["id"], "role": role, "scopeType": scope_type,
                   "scopeId": scope_id}),
        )
        .await;
    }
    let key = env.ok("/api/platform/apiKeys/create", json!({"tenantId": "acme", "principalId": user["id"]})).await;
    key["token"].as_str().unwrap().to_owned()
}

/// The names `token` lists with `body`, or the error code.
async fn listed(env: &Env, token: &str, body: Value) -> Result<Vec<String>, String> {
    let (status, answer) = env.post_as(token, LIST, body).await;
    if status != 200 {
        return Err(answer["error"]["code"].as_str().unwrap_or_default().to_owned());
    }
    let clusters = answer["clusters"].as_array().cloned().unwrap_or_default();
    Ok(clusters.iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect())
}

async fn get_status(env: &Env, token: &str, cluster: &str) -> u16 {
    env.post_as(token, GET, json!({"tenantId": "acme", "clusterId": cluster})).await.0
}

async fn list_returns_only_the_clusters_the_caller_may_read(backend: Backend) {
    // An operator's policy that hides Autopilot clusters from everyone but the tenant's admins:
    // the per-item decisions of `list` see each cluster's attributes, as `get`'s does.
    let hide_autopilot = r#"forbid (principal, action == BetterCompute::Action::"compute:kubernetes:read", resource)
        when { resource has mode && resource.mode == "autopilot" &&
               !(resource has tenant && resource.tenant.admins.contains(principal)) };"#;
    let env = super::setup(backend).policies(&[("hide-autopilot.cedar".into(), hide_autopilot.into())]).start().await;
    let project = |name: &str| {
        let env = &env;
        let name = name.to_owned();
        async move {
            // Projects are the operator's catalog.
            let body = json!({"tenantId": "acme", "name": name});
            let (status, project) = env.post_as(&env.server.admin_token, "/api/platform/projects/create", body).await;
            assert_eq!(status, 200, "{project}");
            project["id"].as_str().unwrap().to_owned()
        }
    };
    let (web, data) = (project("web").await, project("data").await);
    let create = |name: &str, project: Option<&str>| {
        let mut request = standard(name, name);
        if let Some(project) = project {
            request["projectId"] = json!(project);
        }
        let env = &env;
        async move { env.ok("/api/compute/kubernetesClusters/create", request).await["id"].as_str().unwrap().to_owned() }
    };
    let web_1 = create("web-1", Some(&web)).await;
    let web_2 = create("web-2", Some(&web)).await;
    let data_1 = create("data-1", Some(&data)).await;
    let loose = create("loose", None).await;
    let autopilot = json!({"tenantId": "acme", "poolId": FREE_POOL, "name": "web-auto", "mode": "autopilot",
        "location": "europe-west1", "projectId": web, "idempotencyKey": "web-auto"});
    env.ok("/api/compute/kubernetesClusters/create", autopilot).await;
    let all = |project: &str| json!({"tenantId": "acme", "projectId": project});

    // A viewer bound at the project `web` lists web's clusters, naming the project; the tenant as
    // a whole, or another project, is not theirs to list.
    let web_viewer = user_bound_at(&env, "web viewer", &[("viewer", "project", &web)]).await;
    assert_eq!(listed(&env, &web_viewer, all(&web)).await, Ok(vec!["web-1".to_owned(), "web-2".to_owned()]));
    assert_eq!(listed(&env, &web_viewer, json!({"tenantId": "acme"})).await, Err("ACCESS_DENIED".to_owned()));
    assert_eq!(listed(&env, &web_viewer, all(&data)).await, Err("ACCESS_DENIED".to_owned()));
    assert_eq!(get_status(&env, &web_viewer, &web_1).await, 200);
    assert_eq!((get_status(&env, &web_viewer, &data_1).await, get_status(&env, &web_viewer, &loose).await), (403, 403));

    // One bound at the single cluster `data-1` reads that cluster and nothing else; the list is
    // decided on the tenant (and the project), which a role at one cluster does not reach.
    let data_1_viewer = user_bound_at(&env, "data-1 viewer", &[("viewer", "resource", &data_1)]).await;
    assert_eq!(get_status(&env, &data_1_viewer, &data_1).await, 200);
    assert_eq!(get_status(&env, &data_1_viewer, &web_2).await, 403);
    assert_eq!(listed(&env, &data_1_viewer, all(&data)).await, Err("ACCESS_DENIED".to_owned()));
    assert_eq!(listed(&env, &data_1_viewer, json!({"tenantId": "acme"})).await, Err("ACCESS_DENIED".to_owned()));
    // Both roles: the project's list, which the cluster bound elsewhere does not join.
    let both = user_bound_at(&env, "both", &[("viewer", "project", &web), ("editor", "resource", &data_1)]).await;
    assert_eq!(listed(&env, &both, all(&web)).await, Ok(vec!["web-1".to_owned(), "web-2".to_owned()]));
    assert_eq!(get_status(&env, &both, &data_1).await, 200);

    // Per item: the tenant's viewer passes the tenant's decision, and the operator's policy
    // still takes the Autopilot cluster out of what they list; the tenant's admin sees it.
    let names = |list: Result<Vec<String>, String>| list.unwrap().join(" ");
    let viewer = env.acme_viewer.clone();
    assert_eq!(names(listed(&env, &viewer, json!({"tenantId": "acme"})).await), "web-1 web-2 data-1 loose");
    assert_eq!(
        names(listed(&env, &env.acme_admin, json!({"tenantId": "acme"})).await),
        "web-1 web-2 data-1 loose web-auto"
    );
    assert_eq!(names(listed(&env, &web_viewer, all(&web)).await), "web-1 web-2", "web-auto is filtered out");
}

async fn the_caller_owns_the_cluster_it_creates(backend: Backend) {
    let env = super::start(backend).await;
    // An editor of the tenant creates a cluster, then loses the role: as its owner they keep
    // reading, changing and deleting it, and nothing else.
    let user =
        env.ok("/api/platform/principals/create", json!({"tenantId": "acme", "kind": "user", "name": "builder"})).await;
    let binding = env
        .ok(
            "/api/platform/roleBindings/create",
            json!({"tenantId": "acme", "principalId": user["id"], "role": "editor"}),
        )
        .await;
    let key = env.ok("/api/platform/apiKeys/create", json!({"tenantId": "acme", "principalId": user["id"]})).await;
    let token = key["token"].as_str().unwrap().to_owned();
    let (status, mine) = env.post_as(&token, "/api/compute/kubernetesClusters/create", standard("mine", "mine")).await;
    assert_eq!(status, 200, "{mine}");
    let mine = mine["id"].as_str().unwrap().to_owned();
    let theirs = env.ok("/api/compute/kubernetesClusters/create", standard("theirs", "theirs")).await;
    let theirs = theirs["id"].as_str().unwrap().to_owned();
    env.ok("/api/platform/roleBindings/delete", json!({"tenantId": "acme", "roleBindingId": binding["id"]})).await;

    assert_eq!(get_status(&env, &token, &mine).await, 200);
    assert_eq!(get_status(&env, &token, &theirs).await, 403);
    let change = json!({"tenantId": "acme", "clusterId": mine, "description": "still mine"});
    assert_eq!(env.post_as(&token, "/api/compute/kubernetesClusters/update", change).await.0, 200);
    let (status, _) = env
        .post_as(
            &token,
            "/api/compute/kubernetesClusters/update",
            json!({"tenantId": "acme", "clusterId": theirs, "description": "x"}),
        )
        .await;
    assert_eq!(status, 403);
    let (status, deleting) = env
        .post_as(&token, "/api/compute/kubernetesClusters/delete", json!({"tenantId": "acme", "clusterId": mine}))
        .await;
    assert_eq!((status, deleting["state"].as_str()), (200, Some("deleting")));
    assert_eq!(listed(&env, &token, json!({"tenantId": "acme"})).await, Err("ACCESS_DENIED".to_owned()));
}
