//! The `updateMask` of the catalog's updates: what a JSON body names (an empty list or `null`
//! included) is what changes; a gRPC caller names it or leaves it to the fields it gave; a field
//! that cannot be emptied, or a mask naming what an update cannot change, is refused by name.

use better_compute::error::Code;
use better_compute::proto::platform::offers_client::OffersClient;
use better_compute::proto::platform::{GetOfferRequest, UpdateOfferRequest};
use better_compute::store::Backend;
use serde_json::json;

use crate::harness::{Client, Platform, System, grpc_error, violated_fields};

crate::on_both_backends!(
    an_empty_list_or_null_named_in_json_empties_the_field,
    a_field_that_cannot_be_emptied_is_refused_by_name,
    a_mask_naming_what_an_update_cannot_change_is_refused,
    over_grpc_the_mask_says_what_an_empty_list_means,
);

const OFFERS_UPDATE: &str = "/api/platform/offers/update";

async fn an_empty_list_or_null_named_in_json_empties_the_field(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let offer = json!({"poolId": platform.gke_pool, "tenantId": "globex", "excludedRegions": ["europe-west1"]});
    client.ok("/api/platform/offers/create", offer).await;

    // `[]` alone empties the list (it used to be "name at least one field").
    let key = json!({"poolId": platform.gke_pool, "tenantId": "globex"});
    let mut body = key.clone();
    body["excludedRegions"] = json!([]);
    let cleared = client.ok(OFFERS_UPDATE, body).await;
    assert_eq!(cleared["excludedRegions"], json!([]), "{cleared}");

    // `[]` beside another field empties it too (it used to be left as it was).
    let mut body = key.clone();
    body["excludedRegions"] = json!(["europe-west1"]);
    client.ok(OFFERS_UPDATE, body).await;
    let mut body = key.clone();
    body["excludedRegions"] = json!([]);
    body["state"] = json!("suspended");
    let both = client.ok(OFFERS_UPDATE, body).await;
    assert_eq!((both["excludedRegions"].clone(), both["state"].as_str()), (json!([]), Some("suspended")), "{both}");

    // `null` empties a field that can be empty.
    client.ok("/api/platform/tenants/update", json!({"tenantId": "globex", "description": "the rival"})).await;
    let tenant = client.ok("/api/platform/tenants/update", json!({"tenantId": "globex", "description": null})).await;
    assert_eq!(tenant["description"], "", "{tenant}");

    // A pool's prices named as `{}` are emptied; not named, they stay.
    let pool = json!({"poolId": platform.do_pool, "prices": {"vps.instance.hours": 7}});
    client.ok("/api/platform/pools/update", pool).await;
    let renamed = client.ok("/api/platform/pools/update", json!({"poolId": platform.do_pool, "name": "renamed"})).await;
    assert_eq!(renamed["prices"], json!({"vps.instance.hours": 7}), "{renamed}");
    let emptied = client.ok("/api/platform/pools/update", json!({"poolId": platform.do_pool, "prices": {}})).await;
    assert_eq!(emptied["prices"], json!({}), "{emptied}");

    // Nothing named is still refused, listing what can be.
    let error = client.fails(OFFERS_UPDATE, key, 400, "INVALID_INPUT").await;
    assert!(error["message"].as_str().unwrap().contains("name at least one field"), "{error}");
    assert_eq!(error["details"]["accepted"], json!(["state", "excludedRegions"]));
}

async fn a_field_that_cannot_be_emptied_is_refused_by_name(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let project = client.ok("/api/platform/projects/create", json!({"tenantId": "acme", "name": "web"})).await;
    let error = client
        .fails("/api/platform/projects/update", json!({"projectId": project["id"], "name": null}), 400, "INVALID_INPUT")
        .await;
    assert_eq!(violated_fields(&error["details"]), ["name"], "{error}");
    assert!(error["details"]["fields"][0]["description"].as_str().unwrap().contains("cannot be emptied"), "{error}");

    // A GKE account's zones named empty would leave it nowhere to make clusters.
    let error = client
        .fails(
            "/api/platform/accounts/update",
            json!({"accountId": platform.gke_account, "zones": []}),
            400,
            "INVALID_INPUT",
        )
        .await;
    assert_eq!(violated_fields(&error["details"]), ["zones"], "{error}");

    // Offers' `forwarding`-like lists with `min_items` hold a named empty list to it: the
    // validator sees the mask. `excludedRegions` has none, so it is the state that is checked.
    let body = json!({"poolId": platform.gke_pool, "tenantId": "acme", "state": null});
    let error = client.fails(OFFERS_UPDATE, body, 400, "INVALID_INPUT").await;
    assert_eq!(violated_fields(&error["details"]), ["state"], "{error}");
}

async fn a_mask_naming_what_an_update_cannot_change_is_refused(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    for (mask, why) in [
        ("tenantId", "identifies the object"),
        ("colour", "names no field"),
        ("excludedRegions.first", "a part of a field"),
    ] {
        let body = json!({"poolId": platform.gke_pool, "tenantId": "acme", "updateMask": mask, "state": "active"});
        let error = client.fails(OFFERS_UPDATE, body, 400, "INVALID_INPUT").await;
        assert_eq!(violated_fields(&error["details"]), ["updateMask"], "{mask}: {error}");
        let description = error["details"]["fields"][0]["description"].as_str().unwrap();
        assert!(description.contains(why) && description.contains("excluded_regions"), "{mask}: {description}");
    }
    // A mask given in the body is the mask: the state beside it does not change.
    let body = json!({"poolId": platform.gke_pool, "tenantId": "acme", "updateMask": "excludedRegions",
        "excludedRegions": ["europe-west1"], "state": "suspended"});
    let offer = client.ok(OFFERS_UPDATE, body).await;
    assert_eq!((offer["state"].as_str(), offer["excludedRegions"].clone()), (Some("active"), json!(["europe-west1"])));
}

async fn over_grpc_the_mask_says_what_an_empty_list_means(backend: Backend) {
    let server = System::on(backend).server().await;
    let client = Client::new(&server);
    let platform = Platform::create(&client).await;
    let mut offers = OffersClient::new(server.channel(Some(&server.admin_token)).await);
    let update = |regions: Vec<&str>, mask: Option<Vec<&str>>| UpdateOfferRequest {
        pool_id: platform.gke_pool.clone(),
        tenant_id: "acme".into(),
        excluded_regions: regions.into_iter().map(str::to_owned).collect(),
        update_mask: mask.map(|paths| prost_types::FieldMask { paths: paths.into_iter().map(str::to_owned).collect() }),
        ..Default::default()
    };
    // Without a mask the regions given are the mask.
    let offer = offers.update(update(vec!["europe-west1"], None)).await.unwrap().into_inner();
    assert_eq!(offer.excluded_regions, ["europe-west1"]);
    // Without a mask an empty list names nothing.
    let status = offers.update(update(vec![], None)).await.unwrap_err();
    let error = grpc_error(&status);
    assert_eq!(error.code, Code::InvalidInput);
    assert!(error.message.contains("name at least one field"), "{}", error.message);
    // With a mask naming it, the empty list empties it.
    let offer = offers.update(update(vec![], Some(vec!["excluded_regions"]))).await.unwrap().into_inner();
    assert!(offer.excluded_regions.is_empty(), "{offer:?}");
    let read = offers
        .get(GetOfferRequest { pool_id: platform.gke_pool.clone(), tenant_id: "acme".into() })
        .await
        .unwrap()
        .into_inner();
    assert!(read.excluded_regions.is_empty(), "{read:?}");
    // A mask naming a field that identifies the offer is refused, by field.
    let status = offers.update(update(vec![], Some(vec!["pool_id"]))).await.unwrap_err();
    let error = grpc_error(&status);
    assert_eq!(error.code, Code::InvalidInput);
    assert!(error.message.contains("updateMask"), "{}", error.message);
}
