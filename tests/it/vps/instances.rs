//! Instances: a DigitalOcean droplet per instance, on a subnet's VPC when it names one; the
//! machine recorded once assigned; `deleting` from the delete call on; every refusal of create
//! (the pool, the region, the offer, the subnet) and another tenant's instance not found.

use better_compute::store::Backend;
use fakecloud::Failure;
use serde_json::{Value, json};

use super::networks::subnet_name;
use super::{DO_POOL, Env, GKE_POOL, OWN_DO_POOL, SUSPENDED_POOL, do_network, instance, network, ready_network};
use crate::harness::{grpc_error, violated_fields};

const CREATE: &str = "/api/compute/instances/create";
const GET: &str = "/api/compute/instances/get";
const LIST: &str = "/api/compute/instances/list";
const DELETE: &str = "/api/compute/instances/delete";

/// The fake's droplet with id `machine`.
fn droplet(env: &Env, machine: &str) -> Option<Value> {
    let droplets = env.inspect()["digitalocean"]["droplets"].as_array().cloned().unwrap_or_default();
    droplets.into_iter().find(|d| d["id"].as_u64().is_some_and(|id| id.to_string() == machine))
}

async fn an_instance_is_a_droplet_with_a_machine_until_deleted(backend: Backend) {
    let env = super::start(backend).await;
    let body = instance("web-1", "nyc3", "");
    let created = env.ok(CREATE, body.clone()).await;
    let id = created["id"].as_str().unwrap().to_owned();
    assert!(id.starts_with("inst_"), "{created}");
    assert_eq!((created["state"].as_str(), created["machineId"].as_str()), (Some("pending"), Some("")));
    assert_eq!(env.ok(CREATE, body.clone()).await["id"], created["id"], "a retry is the same instance");
    let mut changed = body.clone();
    changed["size"] = json!("s-2vcpu-4gb");
    env.expect_failure(&env.acme_admin, CREATE, changed, 409, "CONFLICT").await;

    let ready = env.wait_state("instances", "instanceId", &id, "ready").await;
    let machine = ready["machineId"].as_str().unwrap();
    assert!(!machine.is_empty() && !ready["publicIpv4"].as_str().unwrap().is_empty(), "{ready}");
    let found = droplet(&env, machine).expect("the machine is a droplet");
    assert_eq!((found["name"].as_str(), found["size_slug"].as_str()), (Some("web-1"), Some("s-1vcpu-1gb")));
    let tags = found["tags"].as_array().unwrap();
    assert!(tags.contains(&json!("better-compute")) && tags.len() == 2, "{found}");
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme"})).await["instances"][0]["id"], created["id"]);

    // `deleting` from the delete call on, before the provider has done anything.
    let deleting = env.ok(DELETE, json!({"tenantId": "acme", "instanceId": id})).await;
    assert_eq!((deleting["state"].as_str(), deleting["machineId"].as_str()), (Some("deleting"), Some(machine)));
    let deleted = env.wait_state("instances", "instanceId", &id, "deleted").await;
    assert!(deleted["deletedAt"].is_string());
    assert!(droplet(&env, machine).is_none(), "the droplet is gone");
    assert_eq!(
        env.event_types(&id).await,
        ["instance.created", "instance.ready", "instance.deleting", "instance.deleted"]
    );
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme"})).await["instances"], json!([]));
}

async fn an_instance_on_a_subnet_is_in_the_subnets_vpc(backend: Backend) {
    let env = super::start(backend).await;
    let net =
        ready_network(&env, do_network("tier", &[("a", "nyc3", "10.50.0.0/24"), ("b", "ams3", "10.51.0.0/24")])).await;
    let subnet = &net["subnets"][1];
    let created = env.ok(CREATE, instance("db-1", "ams3", subnet["id"].as_str().unwrap())).await;
    assert_eq!((&created["subnetId"], &created["networkId"]), (&subnet["id"], &net["id"]));
    let ready = env.wait_state("instances", "instanceId", created["id"].as_str().unwrap(), "ready").await;
    let vpcs = env.inspect()["digitalocean"]["vpcs"].as_array().cloned().unwrap();
    let vpc = vpcs.iter().find(|v| v["name"] == subnet_name(subnet["id"].as_str().unwrap())).unwrap();
    let found = droplet(&env, ready["machineId"].as_str().unwrap()).unwrap();
    assert_eq!(found["vpc_uuid"], vpc["id"], "the droplet is in the subnet's VPC");
}

async fn create_refuses_what_the_pool_region_offer_and_subnet_do_not_allow(backend: Backend) {
    let mut env = super::start(backend).await;
    let token = env.acme_admin.clone();
    // A GKE pool has no instances.
    let mut on_gke = instance("a", "europe-west1", "");
    on_gke["poolId"] = json!(GKE_POOL);
    let error = env.expect_failure(&token, CREATE, on_gke, 422, "UNSUPPORTED").await;
    assert_eq!(error["details"]["capability"], "instances");
    // A region the account does not have; one the offer excludes; a suspended offer.
    let error = env.expect_failure(&token, CREATE, instance("a", "lon1", ""), 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["region"]);
    let error = env.expect_failure(&token, CREATE, instance("a", "sfo3", ""), 400, "INVALID_INPUT").await;
    assert_eq!(
        (violated_fields(&error["details"]), &error["details"]["excludedRegions"]),
        (vec!["region".to_owned()], &json!(["sfo3"]))
    );
    let mut suspended = instance("a", "nyc3", "");
    suspended["poolId"] = json!(SUSPENDED_POOL);
    let error = env.expect_failure(&token, CREATE, suspended, 409, "INVALID_STATE").await;
    assert_eq!(error["details"]["offerState"], "suspended");
    // Subnets: another tenant's is not found, one of another account or region is refused.
    let ours = ready_network(&env, do_network("net", &[("a", "nyc3", "10.60.0.0/24")])).await;
    let subnet = ours["subnets"][0]["id"].as_str().unwrap().to_owned();
    let mut theirs = network(DO_POOL, "theirs", &[("a", "nyc3", "10.61.0.0/24")]);
    theirs["tenantId"] = json!("globex");
    let (status, theirs) = env.post_as(&env.globex_admin, "/api/compute/networks/create", theirs).await;
    assert_eq!(status, 200, "{theirs}");
    let error = env
        .expect_failure(
            &token,
            CREATE,
            instance("a", "nyc3", theirs["subnets"][0]["id"].as_str().unwrap()),
            404,
            "NOT_FOUND",
        )
        .await;
    assert_eq!(error["details"]["resource"], "subnet");
    let mut other_account = instance("a", "nyc3", &subnet);
    other_account["poolId"] = json!(OWN_DO_POOL);
    let error = env.expect_failure(&token, CREATE, other_account, 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["subnetId"]);
    let error = env.expect_failure(&token, CREATE, instance("a", "ams3", &subnet), 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["subnetId"]);
    // A network being deleted takes nothing new (the worker stopped, so it stays `deleting`).
    env.stop_worker().await;
    env.ok("/api/compute/networks/delete", json!({"tenantId": "acme", "networkId": ours["id"]})).await;
    env.expect_failure(&token, CREATE, instance("a", "nyc3", &subnet), 409, "INVALID_STATE").await;
    // The table's constraints.
    let mut bad = instance("Bad_Name", "nyc3", "snet_x");
    bad["size"] = json!("");
    let error = env.expect_failure(&token, CREATE, bad, 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["name", "size", "subnetId"]);
    env.expect_failure(&env.acme_viewer.clone(), CREATE, instance("a", "nyc3", ""), 403, "ACCESS_DENIED").await;
    assert_eq!(env.ok(LIST, json!({"tenantId": "acme", "includeDeleted": true})).await["instances"], json!([]));
}

async fn a_refused_machine_puts_the_instance_in_error(backend: Backend) {
    let env = super::start(backend).await;
    let message = "You specified an invalid size for Droplet creation.";
    env.cloud.fail_next("droplet", "create", "odd", Failure::Refuse { status: 422, message: message.into() });
    let created = env.ok(CREATE, instance("odd", "nyc3", "")).await;
    let id = created["id"].as_str().unwrap();
    let body = json!({"tenantId": "acme", "instanceId": id});
    let limit = std::time::Duration::from_secs(20);
    let failed = env
        .get_until(&env.acme_admin, "instances", body, limit, "in error with its problem", |i| {
            i["state"] == "error" && i["problem"].is_object()
        })
        .await;
    assert!(failed["message"].as_str().unwrap().contains(message), "{failed}");
    assert!(env.event_types(id).await.contains(&"instance.error".to_owned()));
    // The provider refused the request as such: retrying it soon is pointless, so the problem
    // says so and the next attempt is ten minutes away (a change would wake it sooner).
    let problem = &failed["problem"];
    assert_eq!(problem["class"], "invalid", "{failed}");
    assert!(problem["message"].as_str().unwrap().contains("change the resource"), "{problem}");
    let next = better_compute::domain::dates::rfc3339_seconds(problem["nextAttemptAt"].as_str().unwrap()).unwrap();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_secs() as i64;
    assert!(next - now >= 9 * 60, "the next attempt comes in {} s", next - now);
}

async fn another_tenants_instance_is_not_found_over_json_and_grpc(backend: Backend) {
    use better_compute::proto::compute::instances_client::InstancesClient;
    use better_compute::proto::compute::{CreateInstanceRequest, DeleteInstanceRequest, GetInstanceRequest};

    let env = super::setup(backend).start().await;
    let channel = |token: String| {
        let endpoint = env.server.endpoint.clone();
        async move {
            let channel = tonic::transport::Channel::from_shared(endpoint).unwrap().connect().await.unwrap();
            InstancesClient::new(tonic::service::interceptor::InterceptedService::new(
                channel,
                better_compute::cli::BearerToken::new(Some(&token)).unwrap(),
            ))
        }
    };
    let mut acme = channel(env.acme_admin.clone()).await;
    let created = acme
        .create(CreateInstanceRequest {
            tenant_id: "acme".into(),
            pool_id: DO_POOL.into(),
            name: "grpc-1".into(),
            region: "nyc3".into(),
            size: "s-1vcpu-1gb".into(),
            image: "ubuntu-24-04-x64".into(),
            idempotency_key: "grpc-1".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(created.state, "pending");
    let mut globex = channel(env.globex_admin.clone()).await;
    let get = GetInstanceRequest { tenant_id: "globex".into(), instance_id: created.id.clone() };
    assert_eq!(grpc_error(&globex.get(get).await.unwrap_err()).code.as_str(), "NOT_FOUND");
    let delete = DeleteInstanceRequest {
        tenant_id: "globex".into(),
        instance_id: created.id.clone(),
        validate_only: false,
        force: false,
    };
    assert_eq!(grpc_error(&globex.delete(delete).await.unwrap_err()).code.as_str(), "NOT_FOUND");
    let across = GetInstanceRequest { tenant_id: "acme".into(), instance_id: created.id.clone() };
    assert_eq!(grpc_error(&globex.get(across).await.unwrap_err()).code.as_str(), "ACCESS_DENIED");
    env.expect_failure(
        &env.globex_admin,
        GET,
        json!({"tenantId": "globex", "instanceId": created.id}),
        404,
        "NOT_FOUND",
    )
    .await;
    // Globex's own failed call left acme's instance as it was.
    let again = acme.get(GetInstanceRequest { tenant_id: "acme".into(), instance_id: created.id.clone() }).await;
    assert_eq!(again.unwrap().into_inner().state, "pending");
}

crate::on_both_backends!(
    an_instance_is_a_droplet_with_a_machine_until_deleted,
    an_instance_on_a_subnet_is_in_the_subnets_vpc,
    create_refuses_what_the_pool_region_offer_and_subnet_do_not_allow,
    a_refused_machine_puts_the_instance_in_error,
    another_tenants_instance_is_not_found_over_json_and_grpc,
);
