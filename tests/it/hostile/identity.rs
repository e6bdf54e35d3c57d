//! Revoked principals, keys and bindings: what they can still reach, and how many bindings one may hold.
//!
//! A kubeconfig is a service account on the cluster, which outlives the API key it was asked
//! with: deleting its principal, or removing the binding its role needed, must end it on the
//! cluster too (the worker removes the account; the cluster then refuses its token).

use std::time::Duration;

use base64::Engine;
use better_compute::provider::ClusterApi;
use better_compute::provider::kube::{KubeAuth, KubeClient};
use better_compute::store::Backend;
use serde_json::{Value, json};

use crate::harness::System;
use crate::harness::poll;
use crate::kubernetes::{Env, standard};

crate::on_both_backends!(
    a_deleted_principals_kubeconfig_is_refused_by_the_cluster,
    a_removed_role_ends_the_kubeconfigs_it_gave_and_no_others,
);

const CREDENTIALS: &str = "/api/compute/kubernetesClusters/credentials";

/// A client of the cluster that acts with the kubeconfig's token, as kubectl would.
fn client_of(issued: &Value) -> KubeClient {
    let config: Value = serde_yaml::from_str(issued["kubeconfig"].as_str().unwrap()).unwrap();
    let server = config["clusters"][0]["cluster"]["server"].as_str().unwrap();
    let ca = config["clusters"][0]["cluster"]["certificate-authority-data"].as_str().unwrap();
    let ca = String::from_utf8(base64::engine::general_purpose::STANDARD.decode(ca).unwrap()).unwrap();
    let token = config["users"][0]["user"]["token"].as_str().unwrap().to_owned();
    KubeClient::new(server, &ca, KubeAuth::Token(token)).unwrap()
}

/// The HTTP status the cluster answers a namespaced read of `client` with (200 when allowed).
async fn read_status(client: &KubeClient) -> u16 {
    match client.service_account_names("kube-system").await {
        Ok(_) => 200,
        Err(error) => error.status.unwrap_or_else(|| panic!("no answer from the cluster: {error}")),
    }
}

/// Polls until the cluster refuses `client` (401 or 403), within `limit`.
async fn wait_refused(client: &KubeClient, limit: Duration, what: &str) {
    poll(limit, &format!("{what} refused by the cluster"), || async {
        match read_status(client).await {
            401 | 403 => Ok(()),
            status => {
                assert_eq!(status, 200, "{what}: unexpected answer");
                Err("it still works".to_owned())
            }
        }
    })
    .await;
}

/// A ready cluster of acme, with the worker running.
async fn ready_cluster(setup: System) -> (Env, String) {
    let mut env = setup.start().await;
    env.start_worker();
    let id = env.ok("/api/compute/kubernetesClusters/create", standard("web", "web")).await["id"]
        .as_str()
        .unwrap()
        .to_owned();
    env.wait_cluster_state(&id, "ready", Duration::from_secs(30)).await;
    (env, id)
}

/// A user of acme with `roles` bound at the tenant: (principal id, token, binding ids).
async fn user_with(env: &Env, name: &str, roles: &[&str]) -> (String, String, Vec<String>) {
    let user =
        env.ok("/api/platform/principals/create", json!({"tenantId": "acme", "kind": "user", "name": name})).await;
    let id = user["id"].as_str().unwrap().to_owned();
    let mut bindings = Vec::new();
    for role in roles {
        let binding = env
            .ok("/api/platform/roleBindings/create", json!({"tenantId": "acme", "principalId": id, "role": role}))
            .await;
        bindings.push(binding["id"].as_str().unwrap().to_owned());
    }
    let key = env.ok("/api/platform/apiKeys/create", json!({"tenantId": "acme", "principalId": id})).await;
    (id, key["token"].as_str().unwrap().to_owned(), bindings)
}

async fn kubeconfig(env: &Env, token: &str, cluster: &str, role: &str) -> KubeClient {
    let (status, issued) =
        env.post_as(token, CREDENTIALS, json!({"tenantId": "acme", "clusterId": cluster, "role": role})).await;
    assert_eq!(status, 200, "{issued}");
    client_of(&issued)
}

async fn a_deleted_principals_kubeconfig_is_refused_by_the_cluster(backend: Backend) {
    let (env, cluster) = ready_cluster(crate::kubernetes::setup(backend)).await;
    let (ops, token, _) = user_with(&env, "ops", &["admin"]).await;
    let theirs = kubeconfig(&env, &token, &cluster, "admin").await;
    let colleague = kubeconfig(&env, &env.acme_admin.clone(), &cluster, "admin").await;
    // What the probe did with it: nodes and cluster role bindings, cluster-wide.
    assert!(theirs.nodes_list().await.is_ok());
    assert!(theirs.cluster_role_binding_names().await.unwrap().iter().any(|name| name.starts_with("bc-u-")));

    env.ok("/api/platform/principals/delete", json!({"tenantId": "acme", "principalId": ops})).await;
    // The worker takes the binding away before the account: 403 on the way, then 401.
    poll(Duration::from_secs(20), "the deleted principal's account gone from the cluster", || async {
        match read_status(&theirs).await {
            401 => Ok(()),
            status @ (200 | 403) => Err(format!("it still answers {status}")),
            status => panic!("the deleted principal's kubeconfig: unexpected answer {status}"),
        }
    })
    .await;
    let refused = theirs.nodes_list().await.unwrap_err();
    assert_eq!(refused.status, Some(401), "the account is gone, so is its token: {refused}");
    assert!(theirs.cluster_role_binding_names().await.is_err());

    // Only that principal's accounts went: another admin's kubeconfig still works.
    assert!(colleague.nodes_list().await.is_ok(), "another principal's kubeconfig is untouched");
    let names = colleague.service_account_names("kube-system").await.unwrap();
    let gone = better_compute::service::credential_account(&ops, "admin");
    assert!(!names.contains(&gone), "{gone} is still on the cluster: {names:?}");
    assert!(colleague.cluster_role_binding_names().await.unwrap().iter().all(|name| *name != gone));
}

async fn a_removed_role_ends_the_kubeconfigs_it_gave_and_no_others(backend: Backend) {
    // An operator's policy lets every user of the tenant connect: a viewer may hold a view
    // kubeconfig, and only an admin or an editor an admin one (it needs `compute:kubernetes:delete`).
    let connect = r#"permit (principal, action == BetterCompute::Action::"compute:kubernetes:connect", resource)
        when { principal has tenant && resource has tenant && principal.tenant == resource.tenant };"#;
    let setup = crate::kubernetes::setup(backend).policies(&[("connect.cedar".into(), connect.into())]);
    let (env, cluster) = ready_cluster(setup).await;
    let (_, token, bindings) = user_with(&env, "dev", &["admin", "viewer"]).await;
    let admin = kubeconfig(&env, &token, &cluster, "admin").await;
    let view = kubeconfig(&env, &token, &cluster, "view").await;
    assert!(admin.nodes_list().await.is_ok());
    assert_eq!(read_status(&view).await, 200);

    // The admin role goes: the admin kubeconfig ends on the cluster; the view one, which the
    // viewer role still allows, keeps working.
    env.ok("/api/platform/roleBindings/delete", json!({"tenantId": "acme", "roleBindingId": bindings[0]})).await;
    wait_refused(&admin, Duration::from_secs(20), "the admin kubeconfig of a removed admin role").await;
    assert_eq!(read_status(&view).await, 200, "the view kubeconfig the viewer role still allows keeps working");
    let asked = json!({"tenantId": "acme", "clusterId": cluster, "role": "admin"});
    assert_eq!(env.post_as(&token, CREDENTIALS, asked).await.0, 403, "and a new admin one is refused");
}

mod bindings_and_lists {
    //! Role bindings name scopes that exist, a principal holds a bounded number of them, and
    //! every identity list comes in pages.

    use better_compute::ids::{PrincipalId, RoleBindingId};
    use better_compute::store::{Backend, PrincipalRow, RoleBindingRow, now_micros};
    use serde_json::{Value, json};

    use crate::harness::{System, TestDb, TestServer};

    crate::on_both_backends!(
        a_binding_at_a_scope_the_tenant_does_not_have_is_not_found,
        the_101st_binding_of_a_principal_is_refused_with_the_cap,
        principal_key_and_binding_lists_come_in_pages,
    );

    const BIND: &str = "/api/platform/roleBindings/create";

    async fn start(backend: Backend) -> (TestDb, TestServer) {
        let server = System::on(backend).server().await;
        let db = server.db.clone();
        for tenant in ["acme", "globex"] {
            server.admin_ok("/api/platform/tenants/create", json!({"id": tenant})).await;
        }
        (db, server)
    }

    async fn user(server: &TestServer, name: &str) -> String {
        let body = json!({"tenantId": "acme", "kind": "user", "name": name});
        server.admin_ok("/api/platform/principals/create", body).await["id"].as_str().unwrap().to_owned()
    }

    async fn a_binding_at_a_scope_the_tenant_does_not_have_is_not_found(backend: Backend) {
        let (_db, server) = start(backend).await;
        let token = server.admin_token.clone();
        let principal = user(&server, "dev").await;
        let project = |tenant: &str| {
            let server = &server;
            let body = json!({"tenantId": tenant, "name": format!("{tenant}-web")});
            async move { server.admin_ok("/api/platform/projects/create", body).await["id"].as_str().unwrap().to_owned() }
        };
        let (ours, theirs) = (project("acme").await, project("globex").await);
        let bind = |scope_type: &str, scope_id: &str| {
            json!({"tenantId": "acme", "principalId": principal, "role": "viewer", "scopeType": scope_type,
                   "scopeId": scope_id})
        };
        let missing_project = "prj_0000000000000000000000zzzz";
        let missing_cluster = "kcl_0000000000000000000000zzzz";
        for (scope_type, scope_id) in
            [("project", missing_project), ("project", theirs.as_str()), ("resource", missing_cluster)]
        {
            let (status, answer) = server.post(BIND, Some(&token), bind(scope_type, scope_id)).await;
            assert_eq!((status, answer["error"]["code"].as_str()), (404, Some("NOT_FOUND")), "{answer}");
            let message = answer["error"]["message"].as_str().unwrap();
            assert!(message.contains(scope_id) && message.contains("acme"), "names the scope: {message}");
            assert_eq!(answer["error"]["details"]["field"], "scopeId", "{answer}");
        }
        let listed = server.admin_ok("/api/platform/roleBindings/list", json!({"tenantId": "acme"})).await;
        assert!(listed["roleBindings"].as_array().is_none_or(Vec::is_empty), "nothing was bound: {listed}");
        // The tenant's own project is a scope it has.
        let (status, bound) = server.post(BIND, Some(&token), bind("project", &ours)).await;
        assert_eq!(status, 200, "{bound}");
        assert_eq!(bound["scopeId"], ours.as_str());
    }

    async fn the_101st_binding_of_a_principal_is_refused_with_the_cap(backend: Backend) {
        let (_db, server) = start(backend).await;
        let principal = user(&server, "collector").await;
        // A hundred bindings, as a caller binding one scope after another would make them.
        for _ in 0..100 {
            let row = RoleBindingRow {
                id: RoleBindingId::random().to_string(),
                principal_id: principal.clone(),
                role: "viewer".into(),
                scope_type: "resource".into(),
                scope_id: RoleBindingId::random().to_string(),
                tenant_id: Some("acme".into()),
                created_at: now_micros(),
            };
            server.store.role_binding_create(&row, i64::MAX).await.unwrap();
        }
        let token = server.admin_token.clone();
        let one_more = json!({"tenantId": "acme", "principalId": principal, "role": "editor"});
        let (status, answer) = server.post(BIND, Some(&token), one_more.clone()).await;
        assert_eq!((status, answer["error"]["code"].as_str()), (429, Some("QUOTA_EXCEEDED")), "{answer}");
        assert_eq!(answer["error"]["details"]["limit"], 100, "{answer}");
        assert!(answer["error"]["message"].as_str().unwrap().contains("100"), "{answer}");
        let all = json!({"tenantId": "acme", "principalId": principal, "pageSize": 500});
        let listed = server.admin_ok("/api/platform/roleBindings/list", all).await;
        assert_eq!(listed["roleBindings"].as_array().unwrap().len(), 100, "the refused one was not written");

        // Once one goes, there is room for one more.
        let first = listed["roleBindings"][0]["id"].clone();
        server.admin_ok("/api/platform/roleBindings/delete", json!({"tenantId": "acme", "roleBindingId": first})).await;
        assert_eq!(server.post(BIND, Some(&token), one_more).await.0, 200);
    }

    /// Every item of a list, a page of `size` at a time; and how many pages it took.
    async fn all_pages(server: &TestServer, path: &str, body: Value, size: i32, field: &str) -> (Vec<String>, usize) {
        let mut ids = Vec::new();
        let mut token = String::new();
        for pages in 1.. {
            let mut asked = body.clone();
            asked["pageSize"] = json!(size);
            asked["pageToken"] = json!(token);
            let page = server.admin_ok(path, asked).await;
            let items = page[field].as_array().cloned().unwrap_or_default();
            assert!(items.len() <= size as usize, "{page}");
            ids.extend(items.iter().map(|item| item["id"].as_str().unwrap().to_owned()));
            token = page["nextPageToken"].as_str().unwrap_or_default().to_owned();
            if token.is_empty() {
                return (ids, pages);
            }
            assert!(pages < 1000, "the pages never end");
        }
        unreachable!()
    }

    async fn principal_key_and_binding_lists_come_in_pages(backend: Backend) {
        let (_db, server) = start(backend).await;
        // 130 principals: more than a default page, which is what a list without a page size
        // returns now instead of all of them.
        for i in 0..130 {
            let row = PrincipalRow {
                id: PrincipalId::random().to_string(),
                kind: "user".into(),
                tenant_id: Some("acme".into()),
                name: format!("user {i}"),
                created_at: now_micros(),
                deleted_at: None,
            };
            server.store.principal_create(&row).await.unwrap();
        }
        let principals = "/api/platform/principals/list";
        let first = server.admin_ok(principals, json!({"tenantId": "acme"})).await;
        assert_eq!(first["principals"].as_array().unwrap().len(), 100, "the default page");
        assert!(!first["nextPageToken"].as_str().unwrap().is_empty(), "{}", first["nextPageToken"]);
        let (ids, pages) = all_pages(&server, principals, json!({"tenantId": "acme"}), 7, "principals").await;
        let unique: std::collections::BTreeSet<&String> = ids.iter().collect();
        assert_eq!((ids.len(), unique.len(), pages), (130, 130, 19), "each principal once, in 19 pages of 7");

        let principal = ids[0].clone();
        for _ in 0..5 {
            let body = json!({"tenantId": "acme", "principalId": principal});
            server.admin_ok("/api/platform/apiKeys/create", body).await;
        }
        let keys = json!({"tenantId": "acme", "principalId": principal});
        let (key_ids, pages) = all_pages(&server, "/api/platform/apiKeys/list", keys, 2, "apiKeys").await;
        assert_eq!((key_ids.len(), pages), (5, 3));

        for (role, other) in [("admin", &ids[1]), ("editor", &principal), ("viewer", &principal), ("admin", &principal)]
        {
            server.admin_ok(BIND, json!({"tenantId": "acme", "principalId": other, "role": role})).await;
        }
        let bindings = json!({"tenantId": "acme", "principalId": principal});
        let (binding_ids, pages) =
            all_pages(&server, "/api/platform/roleBindings/list", bindings, 2, "roleBindings").await;
        assert_eq!((binding_ids.len(), pages), (3, 2), "only the named principal's, two to a page");

        // A page size past the bound, or a token this API did not give, is refused by name.
        for (body, field) in [
            (json!({"tenantId": "acme", "pageSize": 501}), "pageSize"),
            (json!({"tenantId": "acme", "pageToken": "12.prn_../../etc"}), "pageToken"),
            (json!({"tenantId": "acme", "pageToken": "x".repeat(4096)}), "pageToken"),
        ] {
            let (status, answer) = server.post(principals, Some(&server.admin_token.clone()), body).await;
            assert_eq!(status, 400, "{answer}");
            assert!(answer.to_string().contains(field), "names {field}: {answer}");
        }
    }
}
