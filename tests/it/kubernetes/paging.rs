//! Pages of the cluster list: `pageSize` clusters after the position an opaque `pageToken`
//! names, oldest first by (creation time, id). A walk gives each cluster once whatever the page
//! size, a cluster created during the walk comes on a later page, a page of clusters the caller
//! may not read still moves the walk on (its token telling nothing of them), and a size out of
//! range or a token this list did not give is refused by name. Without `pageSize` and
//! `pageToken` the list is what it always was; `bcctl clusters list` follows the pages to the
//! last. Each listed cluster carries its node pools, as `get` shows them.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{Env, FREE_POOL, standard};

crate::on_both_backends!(
    pages_give_every_cluster_once_in_order,
    a_token_survives_a_cluster_created_during_the_walk,
    a_page_of_hidden_clusters_still_moves_the_walk_on,
    page_sizes_out_of_range_and_foreign_tokens_are_refused_by_name,
    a_page_carries_each_clusters_own_node_pools,
);

const LIST: &str = "/api/compute/kubernetesClusters/list";

const BC: &str = env!("CARGO_BIN_EXE_bcctl");
const CREATE: &str = "/api/compute/kubernetesClusters/create";

/// One page as `token` reads it with `body`: the names on it and the next page's token.
async fn page_as(env: &Env, token: &str, body: Value) -> (Vec<String>, String) {
    let answer = env.ok_as(token, LIST, body).await;
    let names = answer["clusters"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_owned()).collect();
    (names, answer["nextPageToken"].as_str().unwrap_or_default().to_owned())
}

/// Every page of acme's list as `token` reads it, `size` at a time: the pages' names.
async fn walk_as(env: &Env, token: &str, size: usize) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut next = String::new();
    loop {
        let body = json!({"tenantId": "acme", "pageSize": size, "pageToken": next});
        let (names, token_after) = page_as(env, token, body).await;
        pages.push(names);
        if token_after.is_empty() {
            return pages;
        }
        assert!(pages.len() <= 20, "the walk does not end: {pages:?}");
        next = token_after;
    }
}

/// Creates acme's standard clusters `names`, one after another (so in this order).
async fn create_all(env: &Env, names: &[&str]) {
    for name in names {
        env.ok(CREATE, standard(name, name)).await;
    }
}

async fn pages_give_every_cluster_once_in_order(backend: Backend) {
    let env = super::start(backend).await;
    let names = ["c0", "c1", "c2", "c3", "c4", "c5", "c6"];
    create_all(&env, &names).await;

    // Without paging: every cluster, oldest first, and no next page, as before.
    let (all, next) = page_as(&env, &env.acme_admin, json!({"tenantId": "acme"})).await;
    assert_eq!((all.as_slice(), next.as_str()), (names.map(str::to_owned).as_slice(), ""));

    for size in 2..=5 {
        let pages = walk_as(&env, &env.acme_admin, size).await;
        assert_eq!(pages.concat(), all, "pages of {size}: {pages:?}");
        let (last, full) = pages.split_last().unwrap();
        assert!(full.iter().all(|page| page.len() == size), "pages of {size}: {pages:?}");
        assert!(!last.is_empty() && last.len() <= size, "pages of {size}: {pages:?}");
    }

    // A page that holds the rest is the last, token or not.
    assert_eq!(walk_as(&env, &env.acme_admin, 7).await, vec![all.clone()]);
    let (first, next) = page_as(&env, &env.acme_admin, json!({"tenantId": "acme", "pageSize": 3})).await;
    let (rest, end) = page_as(&env, &env.acme_admin, json!({"tenantId": "acme", "pageToken": next})).await;
    assert_eq!(([first, rest].concat(), end.as_str()), (all, ""), "no pageSize after a token: the rest, up to 500");
}

async fn a_token_survives_a_cluster_created_during_the_walk(backend: Backend) {
    let env = super::start(backend).await;
    create_all(&env, &["a", "b", "c", "d", "e"]).await;

    let (first, next) = page_as(&env, &env.acme_admin, json!({"tenantId": "acme", "pageSize": 2})).await;
    assert_eq!(first, ["a", "b"]);
    create_all(&env, &["late"]).await;
    let mut seen = first;
    let mut next = next;
    while !next.is_empty() {
        let (names, after) =
            page_as(&env, &env.acme_admin, json!({"tenantId": "acme", "pageSize": 2, "pageToken": next})).await;
        seen.extend(names);
        next = after;
    }
    assert_eq!(seen, ["a", "b", "c", "d", "e", "late"], "the new cluster on a later page, none twice");
}

async fn a_page_of_hidden_clusters_still_moves_the_walk_on(backend: Backend) {
    // An operator's policy hides Autopilot clusters from the tenant's viewers (as in `access`):
    // they are read, then left out of the page, and the token passes them.
    let hide_autopilot = r#"forbid (principal, action == BetterCompute::Action::"compute:kubernetes:read", resource)
        when { resource has mode && resource.mode == "autopilot" &&
               !(resource has tenant && resource.tenant.admins.contains(principal)) };"#;
    let env = super::setup(backend).policies(&[("hide-autopilot.cedar".into(), hide_autopilot.into())]).start().await;
    create_all(&env, &["std-1"]).await;
    for name in ["auto-1", "auto-2"] {
        let autopilot = json!({"tenantId": "acme", "poolId": FREE_POOL, "name": name, "mode": "autopilot",
            "location": "europe-west1", "idempotencyKey": name});
        env.ok(CREATE, autopilot).await;
    }
    create_all(&env, &["std-2"]).await;

    let pages = walk_as(&env, &env.acme_viewer, 2).await;
    assert_eq!(pages, [vec!["std-1".to_owned()], vec!["std-2".to_owned()]], "the hidden ones cut the first page short");
    let pages = walk_as(&env, &env.acme_viewer, 1).await;
    let expected: [&[&str]; 4] = [&["std-1"], &[], &[], &["std-2"]];
    assert_eq!(pages, expected.map(|page| page.iter().map(|n| (*n).to_owned()).collect::<Vec<_>>()));
    assert_eq!(walk_as(&env, &env.acme_admin, 1).await.concat(), ["std-1", "auto-1", "auto-2", "std-2"]);

    // The viewer's tokens pass the hidden clusters without telling their ids: each is sealed.
    let all = env.ok_as(&env.acme_admin, LIST, json!({"tenantId": "acme"})).await;
    let hidden: Vec<String> = all["clusters"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["mode"] == "autopilot")
        .map(|c| c["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(hidden.len(), 2, "{all}");
    let mut next = String::new();
    for _ in 0..3 {
        let body = json!({"tenantId": "acme", "pageSize": 1, "pageToken": next});
        next = page_as(&env, &env.acme_viewer, body).await.1;
        let bytes = URL_SAFE_NO_PAD.decode(&next).expect("a token is URL-safe base64");
        let text = String::from_utf8_lossy(&bytes);
        for id in &hidden {
            let body = id.split_once('_').unwrap().1;
            assert!(!text.contains(body) && !next.contains(body), "token {next} tells {id}");
        }
    }
}

async fn page_sizes_out_of_range_and_foreign_tokens_are_refused_by_name(backend: Backend) {
    let env = super::start(backend).await;
    create_all(&env, &["a", "b", "c"]).await;
    let (_, token) = page_as(&env, &env.acme_admin, json!({"tenantId": "acme", "pageSize": 1})).await;
    assert!(!token.is_empty());

    for size in [501, -1, 100_000] {
        let (status, code, details) = env.refused(LIST, json!({"tenantId": "acme", "pageSize": size})).await;
        assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"), "pageSize {size}");
        let violation = &details["fields"][0];
        assert_eq!(violation["field"], "pageSize", "{details}");
        assert!(violation.to_string().contains("from 0 to 500"), "names the accepted range: {details}");
    }

    // The token edited, cut, too long, in the shape of another list's tokens, or carried to other
    // filters or another tenant: each is not this list's token.
    let mut edited = token.clone().into_bytes();
    edited[3] = if edited[3] == b'A' { b'B' } else { b'A' };
    let edited = String::from_utf8(edited).unwrap();
    let refused = [
        (json!({"tenantId": "acme", "pageToken": edited}), &env.acme_admin),
        (json!({"tenantId": "acme", "pageToken": &token[..token.len() - 2]}), &env.acme_admin),
        (json!({"tenantId": "acme", "pageToken": "A".repeat(129)}), &env.acme_admin),
        (json!({"tenantId": "acme", "pageToken": "1764965668901000.kcl_abcdefghjkmnpqrstvwxyz0123"}), &env.acme_admin),
        (json!({"tenantId": "acme", "pageToken": token, "includeDeleted": true}), &env.acme_admin),
        (json!({"tenantId": "acme", "pageToken": token, "poolId": FREE_POOL}), &env.acme_admin),
        (json!({"tenantId": "globex", "pageToken": token}), &env.globex_admin),
    ];
    for (body, caller) in refused {
        let (status, code, details) = env.refused_as(caller, LIST, body.clone()).await;
        assert_eq!((status, code.as_str()), (400, "INVALID_INPUT"), "{body}");
        assert_eq!(details["fields"][0]["field"], "pageToken", "{body}: {details}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bcctl_lists_every_page_of_clusters() {
    // One more cluster than a page holds when the request names no size.
    const CLUSTERS: usize = 501;
    let env = super::setup(Backend::Postgres).max_clusters_per_tenant(1000).start().await;
    for n in 0..CLUSTERS {
        let body = json!({"tenantId": "acme", "poolId": FREE_POOL, "name": format!("c-{n}"), "mode": "autopilot",
            "location": "europe-west1", "idempotencyKey": format!("c-{n}")});
        env.ok(CREATE, body).await;
    }

    let bcctl = |args: &[&str]| {
        let output = std::process::Command::new(BC)
            .env("BC_ENDPOINT", &env.server.endpoint)
            .env("BC_TOKEN", &env.acme_admin)
            .env("COLUMNS", "120")
            .env_remove("BC_OUTPUT")
            .args(args)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        assert!(output.status.success(), "bcctl {args:?}: {}", String::from_utf8_lossy(&output.stderr));
        stdout
    };
    let listed: Value = serde_json::from_str(&bcctl(&["-o", "json", "clusters", "list", "--tenant", "acme"])).unwrap();
    let mut names: Vec<&str> =
        listed["clusters"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(names.len(), CLUSTERS, "every cluster, over two pages");
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), CLUSTERS, "none twice");
    assert!(
        listed["nextPageToken"].as_str().unwrap_or_default().is_empty(),
        "no page left: {}",
        listed["nextPageToken"]
    );
    let table = bcctl(&["clusters", "list", "--tenant", "acme"]);
    assert_eq!(table.lines().count(), CLUSTERS + 1, "a header and a row each");
}

async fn a_page_carries_each_clusters_own_node_pools(backend: Backend) {
    let env = super::start(backend).await;
    create_all(&env, &["p0", "p1", "p2", "p3", "p4"]).await;
    let mut next = String::new();
    let mut listed = 0;
    loop {
        let body = json!({"tenantId": "acme", "pageSize": 2, "pageToken": next});
        let answer = env.ok(LIST, body).await;
        for cluster in answer["clusters"].as_array().unwrap() {
            let got = env
                .ok("/api/compute/kubernetesClusters/get", json!({"tenantId": "acme", "clusterId": cluster["id"]}))
                .await;
            assert_eq!(cluster["nodePools"].as_array().map(Vec::len), Some(2), "{cluster}");
            assert_eq!(cluster["nodePools"], got["nodePools"], "the list and get of {} agree", cluster["name"]);
            listed += 1;
        }
        next = answer["nextPageToken"].as_str().unwrap_or_default().to_owned();
        if next.is_empty() {
            break;
        }
    }
    assert_eq!(listed, 5);
}
