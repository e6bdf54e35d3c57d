//! The fake DigitalOcean `/v2/volumes` and their actions, faithful to DigitalOcean's OpenAPI
//! (`resources/volumes`): a volume is made at once; an action (`attach`, `detach`, `resize`)
//! is `in-progress` and takes effect when it is `completed`, after the activation delay, and a
//! volume takes one action at a time. As DigitalOcean does, a volume is attached to one droplet
//! of its own region at a time, only grows, and cannot be deleted while it is attached; a
//! destroyed droplet leaves its volumes detached.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::response::Response;
use axum::routing::get;
use http::HeaderMap;
use serde_json::{Value, json};

use super::digitalocean::{DoState, Object, empty, enter, not_found, page, refuse, region, uuid};
use super::{Shared, clock, json_response};

/// The largest volume DigitalOcean makes, in GiB.
pub(super) const MAX_GIGABYTES: i64 = 16384;

/// An action on a volume: its JSON and what it does once completed.
pub struct VolumeAction {
    pub(super) value: Value,
    pub(super) created: Instant,
    pub(super) volume_id: String,
    pub(super) effect: Effect,
    /// Whether someone in DigitalOcean's control panel took it (a test's hook), not the API.
    pub(super) by_console: bool,
}

/// What an action changes when it completes.
#[derive(Clone, Copy)]
pub(super) enum Effect {
    Attach(u64),
    Detach(u64),
    Resize(i64),
}

pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/v2/volumes", get(volume_list).post(volume_create))
        .route("/v2/volumes/{id}", get(volume_get).delete(volume_delete))
        .route("/v2/volumes/{id}/actions", get(action_list).post(action_create))
}

/// Completes the actions that have run long enough, applying their effect.
pub fn advance(state: &mut DoState, now: Instant, delay: Duration) {
    let mut due = Vec::new();
    for action in &mut state.volume_actions {
        if action.value["status"] == "in-progress" && now.duration_since(action.created) >= delay {
            action.value["status"] = json!("completed");
            action.value["completed_at"] = json!(clock::now());
            due.push((action.volume_id.clone(), action.effect));
        }
    }
    for (volume_id, effect) in due {
        apply(state, &volume_id, effect);
    }
}

pub(super) fn apply(state: &mut DoState, volume_id: &str, effect: Effect) {
    let Some(volume) = state.volumes.get_mut(volume_id) else { return };
    match effect {
        Effect::Attach(droplet) => {
            volume.value["droplet_ids"] = json!([droplet]);
            if let Some(d) = state.droplets.get_mut(&droplet)
                && let Some(ids) = d.value["volume_ids"].as_array_mut()
            {
                ids.push(json!(volume_id));
            }
        }
        Effect::Detach(droplet) => {
            volume.value["droplet_ids"] = json!([]);
            if let Some(d) = state.droplets.get_mut(&droplet)
                && let Some(ids) = d.value["volume_ids"].as_array_mut()
            {
                ids.retain(|id| id != volume_id);
            }
        }
        Effect::Resize(size) => volume.value["size_gigabytes"] = json!(size),
    }
}

/// A destroyed droplet's volumes are detached, as DigitalOcean does.
pub fn forget_droplet(state: &mut DoState, droplet: u64) {
    for volume in state.volumes.values_mut() {
        if volume.value["droplet_ids"].as_array().is_some_and(|ids| ids.contains(&json!(droplet))) {
            volume.value["droplet_ids"] = json!([]);
        }
    }
}

/// What the inspection shows of volumes: each with the droplets it is attached to and the
/// actions taken on it, oldest first.
pub fn inspect(state: &DoState) -> Vec<Value> {
    state
        .volumes
        .values()
        .map(|o| {
            let v = &o.value;
            let actions: Vec<Value> =
                state.volume_actions.iter().filter(|a| v["id"] == a.volume_id.as_str()).map(inspect_action).collect();
            json!({
                "id": v["id"], "name": v["name"], "region": v["region"]["slug"], "sizeGigabytes": v["size_gigabytes"],
                "dropletIds": v["droplet_ids"], "filesystemType": v["filesystem_type"],
                "description": v["description"], "actions": actions,
            })
        })
        .collect()
}

/// An action as the inspection shows it: DigitalOcean's type and status, what it changes, and
/// who took it.
fn inspect_action(action: &VolumeAction) -> Value {
    let (droplet, size) = match action.effect {
        Effect::Attach(droplet) | Effect::Detach(droplet) => (Some(droplet), None),
        Effect::Resize(size) => (None, Some(size)),
    };
    json!({
        "id": action.value["id"], "type": action.value["type"], "status": action.value["status"],
        "dropletId": droplet, "sizeGigabytes": size,
        "initiatedBy": if action.by_console { "console" } else { "api" },
    })
}

/// An action's JSON as DigitalOcean answers it, `in-progress`.
pub(super) fn action_json(action_id: u64, action_type: &str, region_slug: &str) -> Value {
    json!({
        "id": action_id,
        "status": "in-progress",
        "type": action_type,
        "started_at": clock::now(),
        "completed_at": null,
        "resource_id": null,
        "resource_type": "volume",
        "region": region(region_slug),
        "region_slug": region_slug,
    })
}

fn invalid(message: impl AsRef<str>) -> Response {
    refuse(422, message.as_ref())
}

async fn volume_create(State(shared): State<Arc<Shared>>, headers: HeaderMap, body: Bytes) -> Response {
    let name = serde_json::from_slice::<Value>(&body).ok().and_then(|b| b["name"].as_str().map(str::to_owned));
    let (mut world, body) = match enter(&shared, &headers, &body, ("volume", "create", name.as_deref().unwrap_or(""))) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let name = body["name"].as_str().unwrap_or_default();
    let valid_name = name.len() <= 64
        && name.starts_with(|c: char| c.is_ascii_lowercase())
        && name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-');
    if !valid_name {
        return invalid("name must be lowercase letters, numbers and '-', begin with a letter, up to 64 characters");
    }
    let Some(region_slug) = body["region"].as_str().filter(|r| !r.is_empty()) else {
        return invalid("region is required");
    };
    let size = body["size_gigabytes"].as_i64().unwrap_or(0);
    if !(1..=MAX_GIGABYTES).contains(&size) {
        return invalid(format!("size_gigabytes must be 1 to {MAX_GIGABYTES}"));
    }
    let filesystem = body["filesystem_type"].as_str().unwrap_or_default();
    if !["", "ext4", "xfs"].contains(&filesystem) {
        return invalid("filesystem_type must be ext4 or xfs");
    }
    let taken = world
        .digitalocean
        .volumes
        .values()
        .any(|v| v.value["name"] == name && v.value["region"]["slug"] == region_slug);
    if taken {
        return refuse(409, "a volume with that name already exists in the region");
    }
    let id = uuid();
    let value = json!({
        "id": id,
        "droplet_ids": [],
        "name": name,
        "description": body["description"].as_str().unwrap_or_default(),
        "size_gigabytes": size,
        "created_at": clock::now(),
        "tags": body["tags"].as_array().cloned().unwrap_or_default(),
        "region": region(region_slug),
        "filesystem_type": filesystem,
        "filesystem_label": "",
    });
    world.digitalocean.volumes.insert(id, Object { value: value.clone(), created: Instant::now() });
    json_response(201, json!({"volume": value}))
}

async fn volume_get(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("volume", "get", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    match world.digitalocean.volumes.get(&id) {
        Some(volume) => json_response(200, json!({"volume": volume.value})),
        None => not_found(),
    }
}

async fn volume_list(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("volume", "list", "*")) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let matches =
        |value: &Value, field: &str, key: &str| query.get(key).is_none_or(|wanted| value[field] == wanted.as_str());
    let items = world
        .digitalocean
        .volumes
        .values()
        .filter(|o| matches(&o.value, "name", "name") && matches(&o.value["region"], "slug", "region"))
        .map(|o| o.value.clone())
        .collect();
    page(&shared, "volumes", "volumes", items, &query)
}

async fn volume_delete(State(shared): State<Arc<Shared>>, headers: HeaderMap, Path(id): Path<String>) -> Response {
    let (mut world, _) = match enter(&shared, &headers, &Bytes::new(), ("volume", "delete", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let Some(volume) = world.digitalocean.volumes.get(&id) else { return not_found() };
    if volume.value["droplet_ids"].as_array().is_some_and(|ids| !ids.is_empty()) {
        return refuse(409, "The volume is attached to a Droplet; detach it before deleting it.");
    }
    world.digitalocean.volumes.remove(&id);
    world.digitalocean.volume_actions.retain(|action| action.volume_id != id);
    empty()
}

async fn action_create(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    let kind = serde_json::from_slice::<Value>(&body).ok().and_then(|b| b["type"].as_str().map(str::to_owned));
    let (mut world, body) = match enter(&shared, &headers, &body, ("volume", kind.as_deref().unwrap_or(""), &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    let Some(volume) = world.digitalocean.volumes.get(&id) else { return not_found() };
    let volume = volume.value.clone();
    let volume_region = volume["region"]["slug"].as_str().unwrap_or_default().to_owned();
    if let Some(asked) = body["region"].as_str()
        && asked != volume_region
    {
        return invalid(format!("the volume is in region {volume_region}, not {asked}"));
    }
    if world.digitalocean.volume_actions.iter().any(|a| a.volume_id == id && a.value["status"] == "in-progress") {
        return invalid("another action on the volume is in progress; wait until it completes");
    }
    let attached: Vec<u64> = volume["droplet_ids"].as_array().into_iter().flatten().filter_map(Value::as_u64).collect();
    let (effect, action_type) = match body["type"].as_str().unwrap_or_default() {
        kind @ ("attach" | "detach") => {
            let Some(droplet_id) = body["droplet_id"].as_u64() else { return invalid("droplet_id is required") };
            let Some(droplet) = world.digitalocean.droplets.get(&droplet_id) else {
                return refuse(404, &format!("Droplet {droplet_id} was not found."));
            };
            if kind == "attach" {
                if droplet.value["region"]["slug"] != volume_region.as_str() {
                    return invalid("the volume and the Droplet must be in the same region");
                }
                if !attached.is_empty() {
                    return invalid(
                        "the volume is already attached to a Droplet; a volume is attached to one at a time",
                    );
                }
                (Effect::Attach(droplet_id), "attach_volume")
            } else {
                if !attached.contains(&droplet_id) {
                    return invalid(format!("the volume is not attached to Droplet {droplet_id}"));
                }
                (Effect::Detach(droplet_id), "detach_volume")
            }
        }
        "resize" => {
            let size = body["size_gigabytes"].as_i64().unwrap_or(0);
            let current = volume["size_gigabytes"].as_i64().unwrap_or(0);
            if size <= current || size > MAX_GIGABYTES {
                return invalid(format!(
                    "volumes may only be resized upwards: from {current} to at most {MAX_GIGABYTES} GiB"
                ));
            }
            (Effect::Resize(size), "resize_volume")
        }
        other => return refuse(400, &format!("type {other:?} is not attach, detach or resize")),
    };
    let value = action_json(200_000_000 + world.next(), action_type, &volume_region);
    let action =
        VolumeAction { value: value.clone(), created: Instant::now(), volume_id: id, effect, by_console: false };
    world.digitalocean.volume_actions.push(action);
    json_response(202, json!({"action": value}))
}

async fn action_list(
    State(shared): State<Arc<Shared>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    Query(query): Query<BTreeMap<String, String>>,
) -> Response {
    let (world, _) = match enter(&shared, &headers, &Bytes::new(), ("volume", "actions", &id)) {
        Ok(entered) => entered,
        Err(refusal) => return refusal,
    };
    if !world.digitalocean.volumes.contains_key(&id) {
        return not_found();
    }
    let items =
        world.digitalocean.volume_actions.iter().filter(|a| a.volume_id == id).map(|a| a.value.clone()).collect();
    page(&shared, &format!("volumes/{id}/actions"), "actions", items, &query)
}
