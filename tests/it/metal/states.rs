//! The provision state machine through the API: every (state, verb) pair, enrolment, update and
//! delete rules, idempotency, the pool's quota, racing verbs and who may call.

use better_compute::store::Backend;
use serde_json::{Value, json};

use super::{ENROLL, PASSWORD, enrolment, setup, setup_with_policy};
use crate::harness::{tenant_principal, violated_fields};

crate::on_both_backends!(
    every_state_and_verb_pair_moves_as_the_table_says_or_lists_what_is_allowed,
    commission_starts_from_an_inspected_machine_only,
    an_enrolment_records_enrolling_with_its_deadline_and_queues_the_reconciler,
    an_enrolment_names_every_field_it_refuses,
    an_enrolment_retried_with_its_key_returns_the_same_machine_and_a_changed_one_conflicts,
    the_pools_max_machines_is_booked_at_enrolment,
    update_changes_an_idle_machine_only,
    delete_is_allowed_from_manageable_enroll_failed_and_retired_only,
    a_machines_node_is_deleted_only_with_the_machine,
    of_two_racing_verbs_one_wins_and_the_other_sees_the_new_state,
    tenants_without_a_say_over_the_pool_are_refused_on_every_method,
    deadlines_come_from_the_pools_policy,
);

/// Every provision state.
const STATES: [&str; 20] = [
    "enrolling",
    "manageable",
    "enrollFailed",
    "inspecting",
    "inspectFailed",
    "commissioning",
    "commissionFailed",
    "ready",
    "deploying",
    "deployed",
    "deployFailed",
    "rescuing",
    "rescue",
    "rescueFailed",
    "exitingRescue",
    "releasing",
    "releaseFailed",
    "retiring",
    "retired",
    "deleting",
];

/// The provision state table of the API reference: verb (`exitRescue` is `rescue` with
/// `exit: true`), allowed from, goes to.
const TABLE: [(&str, &[&str], &str); 7] = [
    ("inspect", &["manageable", "inspectFailed"], "inspecting"),
    ("commission", &["manageable", "commissionFailed"], "commissioning"),
    ("deploy", &["ready", "deployFailed"], "deploying"),
    ("rescue", &["deployed", "deployFailed", "ready"], "rescuing"),
    ("exitRescue", &["rescue"], "exitingRescue"),
    ("release", &["deployed", "deployFailed", "rescue", "rescueFailed", "releaseFailed"], "releasing"),
    ("retire", &["manageable", "ready", "enrollFailed", "inspectFailed", "commissionFailed"], "retiring"),
];

const IDLE: [&str; 10] = [
    "manageable",
    "ready",
    "deployed",
    "rescue",
    "enrollFailed",
    "inspectFailed",
    "commissionFailed",
    "deployFailed",
    "rescueFailed",
    "releaseFailed",
];
const DELETABLE: [&str; 3] = ["manageable", "enrollFailed", "retired"];

/// What `details.allowed` lists for `state`: the table's verbs, then update and delete.
fn allowed_from(state: &str) -> Vec<&'static str> {
    let mut verbs: Vec<&str> = TABLE.iter().filter(|(_, from, _)| from.contains(&state)).map(|(v, _, _)| *v).collect();
    if IDLE.contains(&state) {
        verbs.push("update");
    }
    if DELETABLE.contains(&state) {
        verbs.push("delete");
    }
    verbs
}

/// The method and extra fields of a verb.
fn request_of(verb: &str) -> (&'static str, Value) {
    match verb {
        "inspect" => ("inspect", json!({})),
        "commission" => ("commission", json!({})),
        "deploy" => ("deploy", json!({"image": "https://images.example.com/debian-13.iso"})),
        "rescue" => ("rescue", json!({})),
        "exitRescue" => ("rescue", json!({"exit": true})),
        "release" => ("release", json!({})),
        "retire" => ("retire", json!({})),
        other => panic!("{other}"),
    }
}

async fn every_state_and_verb_pair_moves_as_the_table_says_or_lists_what_is_allowed(backend: Backend) {
    let s = setup(backend).await;
    let node = s.enroll("m1").await["id"].as_str().unwrap().to_owned();
    s.put_inspected(&node).await;
    let mut moved = 0;
    for state in STATES {
        for (verb, from, to) in TABLE {
            s.put_in_state(&node, state).await;
            let (method, extra) = request_of(verb);
            let (status, answer) = s.call(method, &node, extra).await;
            if from.contains(&state) {
                // A machine whose BMC was never reached has nothing to power off: retired at once.
                let to = if verb == "retire" && state == "enrollFailed" { "retired" } else { to };
                assert_eq!(status, 200, "{verb} from {state}: {answer}");
                assert_eq!(answer["provisionState"], to, "{verb} from {state}");
                assert_eq!(answer["previousState"], state, "{verb} from {state}");
                assert_eq!(answer["deadline"].is_string(), to != "retired", "{verb} from {state}: {answer}");
                assert_eq!(answer["allowedVerbs"], json!(allowed_from(to)), "the view lists what {to} allows");
                moved += 1;
            } else {
                assert_eq!(status, 409, "{verb} from {state}: {answer}");
                let error = &answer["error"];
                assert_eq!(error["code"], "INVALID_STATE", "{verb} from {state}");
                assert_eq!(error["details"]["state"], state, "{verb} from {state}");
                assert_eq!(error["details"]["allowed"], json!(allowed_from(state)), "{verb} from {state}");
                assert!(error["message"].as_str().unwrap().contains(state), "{error}");
            }
        }
    }
    assert_eq!(moved, TABLE.iter().map(|(_, from, _)| from.len()).sum::<usize>());
    // Leaving rescue returns where the machine was rescued from (the reconciler reads it).
    s.put_in_state(&node, "deployed").await;
    s.call("rescue", &node, json!({})).await;
    let events = s.events().await;
    let rescuing = events.iter().rev().find(|e| e.event_type == "metal.machine.rescuing").unwrap();
    assert_eq!(rescuing.data["previousState"], "deployed");
}

async fn commission_starts_from_an_inspected_machine_only(backend: Backend) {
    let s = setup(backend).await;
    let node = s.enroll("m1").await["id"].as_str().unwrap().to_owned();
    s.put_in_state(&node, "manageable").await;
    let (_, machine) = s.call("get", &node, json!({})).await;
    assert_eq!(machine["allowedVerbs"], json!(["inspect", "retire", "update", "delete"]), "{machine}");
    let (status, refused) = s.call("commission", &node, json!({})).await;
    assert_eq!(status, 409, "{refused}");
    let error = &refused["error"];
    assert_eq!(
        (error["code"].as_str(), error["details"]["reason"].as_str()),
        (Some("INVALID_STATE"), Some("notInspected"))
    );
    let message = error["message"].as_str().unwrap();
    assert!(message.contains("never inspected") && message.contains("inspect it first"), "{message}");
    let (_, untouched) = s.call("get", &node, json!({})).await;
    assert_eq!(
        (untouched["provisionState"].as_str(), &untouched["version"]),
        (Some("manageable"), &machine["version"])
    );
    // Over gRPC the same refusal is FAILED_PRECONDITION.
    let mut client =
        better_compute::proto::compute::metal_client::MetalClient::new(s.server.channel(Some(&s.admin)).await);
    let request =
        better_compute::proto::compute::CommissionMetalRequest { pool_id: s.pool.clone(), node_id: node.clone() };
    let status = client.commission(request).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::FailedPrecondition, "{status:?}");

    s.put_inspected(&node).await;
    let (status, commissioning) = s.call("commission", &node, json!({})).await;
    assert_eq!((status, commissioning["provisionState"].as_str()), (200, Some("commissioning")), "{commissioning}");
}

async fn an_enrolment_records_enrolling_with_its_deadline_and_queues_the_reconciler(backend: Backend) {
    let s = setup(backend).await;
    let before = chrono_now_seconds();
    let machine = s.enroll("m1").await;
    let node = machine["id"].as_str().unwrap();
    assert!(node.starts_with("node_"), "{machine}");
    assert_eq!(machine["provisionState"], "enrolling");
    assert_eq!(machine["allowedVerbs"], json!([]), "enrolling allows no verb: {machine}");
    assert_eq!(machine["powerState"], "unknown");
    assert_eq!(machine["credentialsSet"], true);
    assert_eq!((machine["driver"].as_str(), machine["username"].as_str()), (Some("redfish"), Some("admin")));
    assert_eq!(machine["labels"], json!({"rack": "r1"}));
    assert!(machine.get("password").is_none(), "{machine}");
    let deadline = seconds_of(&machine["deadline"]);
    assert!((before + 290..=before + 310).contains(&deadline), "5 minutes: {machine}");

    // The machine is a node of its pool.
    let (status, node_view) = s.as_admin("/api/compute/nodes/get", json!({"poolId": s.pool, "nodeId": node})).await;
    assert_eq!(status, 200, "{node_view}");
    assert_eq!((node_view["state"].as_str(), node_view["hostname"].as_str()), (Some("enrolled"), Some("m1")));

    // The reconciler's work is queued in the transient state, with its deadline.
    let stuck = s.server.store.work_list_stuck(i64::MAX, 100).await.unwrap();
    let queued = stuck.iter().find(|item| item.object_id == node).expect("queued");
    assert_eq!((queued.kind.as_str(), queued.state.as_str()), ("metal.machines", "enrolling"));

    s.put_in_state(node, "manageable").await;
    let (status, inspecting) = s.call("inspect", node, json!({})).await;
    assert_eq!(status, 200, "{inspecting}");
    let events = s.events().await;
    let types: Vec<&str> = events.iter().map(|e| e.event_type.as_str()).collect();
    assert_eq!(types, ["metal.machine.enrolled", "metal.machine.inspecting"]);
    let inspect = &events[1].data;
    assert_eq!((inspect["previousState"].as_str(), inspect["nodeId"].as_str()), (Some("manageable"), Some(node)));
    assert!(inspect["reason"].as_str().unwrap().starts_with("inspect requested by prn_"), "{inspect}");

    let (status, listed) = s.as_admin("/api/compute/metal/list", json!({"poolId": s.pool})).await;
    assert_eq!(status, 200, "{listed}");
    assert_eq!(listed["machines"][0]["provisionState"], "inspecting");
}

fn chrono_now_seconds() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64
}

fn seconds_of(timestamp: &Value) -> i64 {
    let text = timestamp.as_str().unwrap_or_else(|| panic!("a timestamp: {timestamp}"));
    time_of(text)
}

/// Seconds since the epoch of an RFC 3339 time in UTC (`2026-12-02T22:00:00Z`).
fn time_of(text: &str) -> i64 {
    let parsed: prost_types::Timestamp = text.parse().unwrap_or_else(|_| panic!("RFC 3339: {text}"));
    parsed.seconds
}

async fn an_enrolment_names_every_field_it_refuses(backend: Backend) {
    let s = setup(backend).await;
    let cases = [
        (json!({"bmc": {"driver": "amt"}}), "bmc.driver"),
        (json!({"bmc": {"password": ""}}), "bmc.password"),
        (json!({"bmc": {"address": "https://10.0.0.5/x y"}}), "bmc.address"),
        (json!({"bmc": {"address": "10.0.0.5"}}), "bmc.address"),
        (json!({"bmc": {"address": "http://10.0.0.5", "insecure": false}}), "bmc.address"),
        (json!({"bmc": {"caCertificate": "not a pem", "insecure": false}}), "bmc.caCertificate"),
        (json!({"bmc": {"caCertificate": "-----BEGIN CERTIFICATE-----\nx\n"}}), "bmc.insecure"),
        (json!({"name": "Not A Label"}), "name"),
        (json!({"idempotencyKey": ""}), "idempotencyKey"),
        (json!({"labels": {"bad key!": "x"}}), "labels"),
    ];
    for (change, field) in cases {
        let mut body = enrolment(&s.pool, "m1", "k");
        merge(&mut body, &change);
        let (status, answer) = s.as_admin(ENROLL, body).await;
        assert_eq!(status, 400, "{change}: {answer}");
        assert_eq!(answer["error"]["code"], "INVALID_INPUT");
        let fields = violated_fields(&answer["error"]["details"]);
        assert!(fields.iter().any(|f| f.starts_with(field)), "{change}: {field} in {fields:?}");
        assert!(!answer.to_string().contains(PASSWORD), "the password is not echoed: {answer}");
    }
    let mut no_bmc = enrolment(&s.pool, "m1", "k");
    no_bmc.as_object_mut().unwrap().remove("bmc");
    let (status, answer) = s.as_admin(ENROLL, no_bmc).await;
    assert_eq!(status, 400);
    assert!(violated_fields(&answer["error"]["details"]).contains(&"bmc".to_owned()), "{answer}");
    // An IPMI BMC is a host and port.
    let mut ipmi = enrolment(&s.pool, "m2", "k2");
    merge(&mut ipmi, &json!({"bmc": {"driver": "ipmi", "address": "10.0.0.6:623", "insecure": false}}));
    let (status, answer) = s.as_admin(ENROLL, ipmi).await;
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["driver"], "ipmi");
}

/// Merges `change` into `body`, object by object.
fn merge(body: &mut Value, change: &Value) {
    for (key, value) in change.as_object().unwrap() {
        match (body.get_mut(key), value) {
            (Some(inner @ Value::Object(_)), Value::Object(_)) => merge(inner, value),
            _ => {
                body[key] = value.clone();
            }
        }
    }
}

async fn an_enrolment_retried_with_its_key_returns_the_same_machine_and_a_changed_one_conflicts(backend: Backend) {
    let s = setup(backend).await;
    let first = s.enroll("m1").await;
    let (status, again) = s.as_admin(ENROLL, enrolment(&s.pool, "m1", "m1")).await;
    assert_eq!(status, 200, "{again}");
    assert_eq!(again["id"], first["id"]);
    assert_eq!(again["version"], first["version"], "nothing new was written");
    let (status, changed) = s.as_admin(ENROLL, enrolment(&s.pool, "m2", "m1")).await;
    assert_eq!(status, 409, "{changed}");
    assert_eq!(changed["error"]["code"], "CONFLICT");
    assert_eq!(changed["error"]["details"]["reason"], "idempotencyKeyReused");
    let (status, same_name) = s.as_admin(ENROLL, enrolment(&s.pool, "m1", "other-key")).await;
    assert_eq!(status, 409, "{same_name}");
    assert_eq!(same_name["error"]["details"]["name"], "m1", "{same_name}");
    let (_, listed) = s.as_admin("/api/compute/metal/list", json!({"poolId": s.pool})).await;
    assert_eq!(listed["machines"].as_array().unwrap().len(), 1);
    assert_eq!(s.events().await.len(), 1, "one enrolled event");
}

async fn the_pools_max_machines_is_booked_at_enrolment(backend: Backend) {
    let s = setup_with_policy(backend, json!({"maxMachines": 2})).await;
    let first = s.enroll("m1").await;
    s.enroll("m2").await;
    let (status, refused) = s.as_admin(ENROLL, enrolment(&s.pool, "m3", "m3")).await;
    assert_eq!(status, 429, "{refused}");
    let error = &refused["error"];
    assert_eq!(error["code"], "QUOTA_EXCEEDED");
    assert_eq!(
        (error["details"]["poolId"].as_str(), error["details"]["limit"].as_i64()),
        (Some(s.pool.as_str()), Some(2))
    );
    assert!(error["message"].as_str().unwrap().contains(&s.pool), "{error}");
    // A deleted machine frees its booking (enrollFailed: deleted at once, no BMC to call).
    let node = first["id"].as_str().unwrap();
    s.put_in_state(node, "enrollFailed").await;
    let (status, deleted) = s.call("delete", node, json!({})).await;
    assert_eq!(status, 200, "{deleted}");
    let (status, third) = s.as_admin(ENROLL, enrolment(&s.pool, "m3", "m3")).await;
    assert_eq!(status, 200, "{third}");
    // A policy's metal block is checked at the pool's update, each fault by its path.
    let client = crate::harness::Client::new(&s.server);
    let refused = client
        .fails(
            "/api/platform/pools/update",
            json!({"poolId": s.pool, "policy": {"maxMachines": -1, "metal": {"deadlines": {"ready": 5}}}}),
            400,
            "INVALID_INPUT",
        )
        .await;
    let fields = violated_fields(&refused["details"]);
    assert_eq!(fields, ["policy.maxMachines", "policy.metal.deadlines.ready"], "{refused}");
}

async fn update_changes_an_idle_machine_only(backend: Backend) {
    let s = setup(backend).await;
    let node = s.enroll("m1").await["id"].as_str().unwrap().to_owned();
    let (status, refused) = s.call("update", &node, json!({"name": "m2"})).await;
    assert_eq!(status, 409, "enrolling is not idle: {refused}");
    assert_eq!(refused["error"]["details"]["state"], "enrolling");
    s.put_in_state(&node, "ready").await;
    let (status, updated) = s
        .call(
            "update",
            &node,
            json!({"name": "m2", "labels": {"rack": "r2"}, "address": "https://10.0.0.9", "password": "rotated-9d2c"}),
        )
        .await;
    assert_eq!(status, 200, "{updated}");
    assert_eq!((updated["name"].as_str(), updated["address"].as_str()), (Some("m2"), Some("https://10.0.0.9")));
    assert_eq!(updated["labels"], json!({"rack": "r2"}));
    assert_eq!((updated["provisionState"].as_str(), updated["credentialsSet"].as_bool()), (Some("ready"), Some(true)));
    let (_, node_view) = s.as_admin("/api/compute/nodes/get", json!({"poolId": s.pool, "nodeId": node})).await;
    assert_eq!(node_view["labels"], json!({"rack": "r2"}), "the node and the metal view are one record");
    assert!(!updated.to_string().contains("rotated-9d2c"));
    let (status, refused) = s.call("update", &node, json!({"address": "10.0.0.9"})).await;
    assert_eq!(status, 400, "a Redfish address stays a URL: {refused}");
    assert_eq!(violated_fields(&refused["error"]["details"]), ["address"]);
    for state in ["deploying", "retired"] {
        s.put_in_state(&node, state).await;
        let (status, refused) = s.call("update", &node, json!({"name": "m3"})).await;
        assert_eq!(status, 409, "{state}: {refused}");
        assert_eq!(refused["error"]["code"], "INVALID_STATE");
    }
}

async fn delete_is_allowed_from_manageable_enroll_failed_and_retired_only(backend: Backend) {
    let s = setup(backend).await;
    let node = s.enroll("m1").await["id"].as_str().unwrap().to_owned();
    for state in ["ready", "deployed", "enrolling", "inspecting"] {
        s.put_in_state(&node, state).await;
        let (status, refused) = s.call("delete", &node, json!({})).await;
        assert_eq!(status, 409, "{state}: {refused}");
        assert_eq!(refused["error"]["details"]["state"], state);
    }
    // From manageable the machine is deleting: the reconciler powers it off, then deletes it.
    let deleting = s.enroll("d-managed").await["id"].as_str().unwrap().to_owned();
    s.put_in_state(&deleting, "manageable").await;
    let (status, answer) = s.call("delete", &deleting, json!({})).await;
    assert_eq!((status, answer["provisionState"].as_str()), (200, Some("deleting")), "{answer}");
    assert!(answer["deletedAt"].is_null() && answer["deadline"].is_string(), "{answer}");
    assert_eq!(answer["allowedVerbs"], json!([]), "{answer}");
    let (status, again) = s.call("delete", &deleting, json!({})).await;
    assert_eq!((status, &again["version"]), (200, &answer["version"]), "a deleting machine is returned as it is");
    let stuck = s.server.store.work_list_stuck(i64::MAX, 100).await.unwrap();
    let queued = stuck.iter().find(|item| item.object_id == deleting).expect("queued");
    assert_eq!((queued.kind.as_str(), queued.state.as_str()), ("metal.machines", "deleting"));
    for (i, state) in ["enrollFailed", "retired"].into_iter().enumerate() {
        let node = s.enroll(&format!("d{i}")).await["id"].as_str().unwrap().to_owned();
        s.put_in_state(&node, state).await;
        let (status, deleted) = s.call("delete", &node, json!({})).await;
        assert_eq!(status, 200, "{state}: {deleted}");
        assert!(deleted["deletedAt"].is_string(), "{deleted}");
        let (status, again) = s.call("delete", &node, json!({})).await;
        assert_eq!((status, &again["version"]), (200, &deleted["version"]), "a deleted machine is returned as it is");
        let (_, node_view) = s.as_admin("/api/compute/nodes/get", json!({"poolId": s.pool, "nodeId": node})).await;
        assert_eq!(node_view["state"], "deleted");
        let (status, refused) = s.call("inspect", &node, json!({})).await;
        assert_eq!((status, refused["error"]["details"]["state"].as_str()), (409, Some("deleted")));
    }
    let (_, listed) = s.as_admin("/api/compute/metal/list", json!({"poolId": s.pool})).await;
    assert_eq!(listed["machines"].as_array().unwrap().len(), 2, "deleted machines are left out: {listed}");
    let (status, _) = s.call("get", "node_0000000000000000000000000a", json!({})).await;
    assert_eq!(status, 404);
}

async fn a_machines_node_is_deleted_only_with_the_machine(backend: Backend) {
    let s = setup(backend).await;
    let node = s.enroll("m1").await["id"].as_str().unwrap().to_owned();
    let by_node = json!({"poolId": s.pool, "nodeId": node});
    // Deleting the node alone would leave a live machine without its node.
    for state in ["deployed", "manageable"] {
        s.put_in_state(&node, state).await;
        let (status, refused) = s.as_admin("/api/compute/nodes/delete", by_node.clone()).await;
        assert_eq!((status, refused["error"]["code"].as_str()), (409, Some("INVALID_STATE")), "{state}: {refused}");
        assert_eq!(refused["error"]["details"]["state"], state);
        assert!(refused["error"]["message"].as_str().unwrap().contains("metal delete"), "{refused}");
        let (_, machine) = s.call("get", &node, json!({})).await;
        assert!(machine["deletedAt"].is_null(), "{machine}");
        let (_, node_view) = s.as_admin("/api/compute/nodes/get", by_node.clone()).await;
        assert_ne!(node_view["state"], "deleted", "{node_view}");
    }
    // The machine's own delete ends both; deleting the node then answers it as it is.
    s.put_in_state(&node, "retired").await;
    let (status, deleted) = s.call("delete", &node, json!({})).await;
    assert_eq!(status, 200, "{deleted}");
    let (status, node_view) = s.as_admin("/api/compute/nodes/delete", by_node).await;
    assert_eq!((status, node_view["state"].as_str()), (200, Some("deleted")), "{node_view}");
}

async fn of_two_racing_verbs_one_wins_and_the_other_sees_the_new_state(backend: Backend) {
    let s = setup(backend).await;
    let node = s.enroll("m1").await["id"].as_str().unwrap().to_owned();
    s.put_inspected(&node).await;
    for round in 0..5 {
        s.put_in_state(&node, "manageable").await;
        let (a, b) = tokio::join!(s.call("inspect", &node, json!({})), s.call("commission", &node, json!({})));
        let answers = [a, b];
        let won: Vec<&Value> = answers.iter().filter(|(status, _)| *status == 200).map(|(_, v)| v).collect();
        assert_eq!(won.len(), 1, "round {round}: {answers:?}");
        let lost = answers.iter().find(|(status, _)| *status != 200).unwrap();
        assert_eq!(lost.0, 409, "round {round}: {lost:?}");
        assert_eq!(lost.1["error"]["details"]["state"], won[0]["provisionState"], "round {round}");
    }
}

async fn tenants_without_a_say_over_the_pool_are_refused_on_every_method(backend: Backend) {
    let s = setup(backend).await;
    let node = s.enroll("m1").await["id"].as_str().unwrap().to_owned();
    let globex = tenant_principal(&s.server.store, "globex", "admin").await;
    let viewer = tenant_principal(&s.server.store, "acme", "viewer").await;
    let editor = tenant_principal(&s.server.store, "acme", "editor").await;
    let methods =
        ["enroll", "list", "get", "update", "delete", "inspect", "commission", "deploy", "rescue", "release", "retire"];
    for method in methods {
        let path = format!("/api/compute/metal/{method}");
        let body =
            if method == "enroll" { enrolment(&s.pool, "x1", "x1") } else { json!({"poolId": s.pool, "nodeId": node}) };
        for (who, token) in [("globex's admin", &globex), ("acme's viewer", &viewer), ("acme's editor", &editor)] {
            let body = if method == "list" { json!({"poolId": s.pool}) } else { body.clone() };
            let (status, answer) = s.server.post(&path, Some(token), body).await;
            assert_eq!(status, 403, "{who} on {method}: {answer}");
            assert_eq!(answer["error"]["code"], "ACCESS_DENIED");
        }
        // acme is offered the platform's pool, but has no say over it.
        let body = match method {
            "enroll" => enrolment(&s.offered, "x1", "x1"),
            "list" => json!({"poolId": s.offered}),
            _ => json!({"poolId": s.offered, "nodeId": node}),
        };
        let (status, answer) = s.server.post(&path, Some(&s.admin), body).await;
        assert_eq!(status, 403, "acme's admin on the platform's pool, {method}: {answer}");
    }
    let (_, got) = s.call("get", &node, json!({})).await;
    assert_eq!((got["name"].as_str(), got["provisionState"].as_str()), (Some("m1"), Some("enrolling")), "untouched");
}

async fn deadlines_come_from_the_pools_policy(backend: Backend) {
    let s = setup_with_policy(
        backend,
        json!({"metal": {"deadlines": {"enrolling": 30, "inspecting": 90}, "image": "https://images.example.com/os.iso"}}),
    )
    .await;
    let before = chrono_now_seconds();
    let machine = s.enroll("m1").await;
    let node = machine["id"].as_str().unwrap();
    assert!((before + 25..=before + 40).contains(&seconds_of(&machine["deadline"])), "{machine}");
    s.put_in_state(node, "manageable").await;
    let (_, inspecting) = s.call("inspect", node, json!({})).await;
    assert!((before + 85..=before + 100).contains(&seconds_of(&inspecting["deadline"])), "{inspecting}");
    s.put_in_state(node, "ready").await;
    let (status, deploying) = s.call("deploy", node, json!({})).await;
    assert_eq!(status, 200, "{deploying}");
    assert_eq!(deploying["image"], "https://images.example.com/os.iso", "the pool's default image");
    assert!((before + 2390..=before + 2420).contains(&seconds_of(&deploying["deadline"])), "the table's 40 minutes");
}
