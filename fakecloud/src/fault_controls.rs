//! The test controls that fail calls with a [`FaultClass`] until cleared (by call or by
//! account), on the handle and over HTTP, and the listener whose certificate no one trusts.

use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Path, State};
use axum::response::Response;
use axum::routing::{delete, get};
use axum::{Json, Router};
use serde_json::{Value, json};

use crate::{Failure, FakeCloud, FaultClass, FaultScope, ScriptedFailure, Shared, json_response};

impl FakeCloud {
    /// Fails every call of `kind` with `verb` on `name` as `class` says, until
    /// [`FakeCloud::clear_fault`]; each may be `*`. Returns the rule's id.
    ///
    /// Kinds: GKE `cluster`, `nodePool`, `operation`, `serverConfig`; Compute Engine `network`,
    /// `subnetwork`, `operation`; DigitalOcean `droplet`, `loadBalancer`, `vpc`, `certificate`,
    /// `volume`; Redfish `system` (the system and everything below it: processors, NICs,
    /// drives, its actions), `manager` (its virtual media), `session`, `serviceRoot`; Google's
    /// token endpoint `token` (named by the service account's email). Verbs: `create`, `get`,
    /// `list`, `update` (a node pool's custom verbs such as `:setSize` too), `delete`; a
    /// DigitalOcean volume action's `type` and `actions` for their list; Redfish `reset`,
    /// `erase`, `insertMedia`, `ejectMedia`. `name` is the object's name or id (a create's, from
    /// its body), or its parent's: a node pool's cluster, a Redfish sub-resource's `system-N`.
    pub fn fail_calls(&self, kind: &str, verb: &str, name: &str, class: FaultClass) -> u64 {
        let scope = FaultScope::Calls { kind: kind.into(), verb: verb.into(), name: name.into() };
        self.shared.world().faults.add_rule(scope, class)
    }

    /// Fails every call made on `account` as `class` says, until [`FakeCloud::clear_fault`];
    /// returns the rule's id. An account is a Google project id or service-account email
    /// (whose token requests fail too when `class` is `Unauthenticated`, `Unreachable` or
    /// `Retryable`), a DigitalOcean API token, or a Redfish system id (`system-N`).
    pub fn fail_account(&self, account: &str, class: FaultClass) -> u64 {
        self.shared.world().faults.add_rule(FaultScope::Account(account.into()), class)
    }

    /// The provider revokes `account`'s credentials: every call on it is refused 401 (and a
    /// service account's token requests `invalid_grant`) until [`FakeCloud::clear_fault`] of
    /// the id returned.
    pub fn revoke_credentials(&self, account: &str) -> u64 {
        self.fail_account(account, FaultClass::Unauthenticated)
    }

    /// Ends the rule `id`; false if there is none.
    pub fn clear_fault(&self, id: u64) -> bool {
        self.shared.world().faults.remove_rule(id)
    }

    /// Ends every rule and drops every scripted failure not yet used.
    pub fn clear_faults(&self) {
        self.shared.world().faults.clear();
    }

    /// How many calls the rule `id` failed so far, so that a test can wait until a call was
    /// failed; `None` if there is no such rule.
    pub fn fault_hits(&self, id: u64) -> Option<u64> {
        self.shared.world().faults.rules.iter().find(|rule| rule.id == id).map(|rule| rule.hits)
    }

    /// `https://127.0.0.1:PORT`: the same API as [`FakeCloud::https_url`], behind a certificate
    /// of a CA no client is given ([`FakeCloud::untrusted_ca_pem`] is given to no one but a
    /// test that wants to), so a client trusting [`FakeCloud::ca_pem`] or the system's roots
    /// refuses it as of an unknown issuer.
    pub fn untrusted_https_url(&self) -> &str {
        &self.untrusted_url
    }

    /// The PEM of the CA behind [`FakeCloud::untrusted_https_url`].
    pub fn untrusted_ca_pem(&self) -> &str {
        &self.untrusted_ca_pem
    }

    /// The BMC address of system `id` (`system-N`) behind a certificate no one trusts:
    /// `https://127.0.0.1:PORT/redfish/v1/Systems/<id>`. `None` if there is no such system.
    pub fn bmc_untrusted_url(&self, id: &str) -> Option<String> {
        let exists = self.shared.world().redfish.machine_mut(id).is_some();
        exists.then(|| format!("{}/redfish/v1/Systems/{id}", self.untrusted_url))
    }
}

/// The fault controls over HTTP, for a `bcctl fakecloud` in another process (as under `bcctl dev`):
/// `POST /_fake/faults` with `class` (`retryable`, `throttled` with `retryAfterSeconds`,
/// `quota`, `permission`, `unauthenticated`, `invalid`, `conflict`, `notFound`, `unreachable`,
/// `needsHuman`) and either `account` or `kind`, `verb`, `name` (each defaulting to `*`; with
/// `once: true`, only the next matching call fails) answers `{"id": N}` (no id for `once`);
/// `GET /_fake/faults` lists the rules in force with their `hits`; `DELETE /_fake/faults/{id}`
/// ends one, `DELETE /_fake/faults` every one and every scripted failure.
pub fn routes() -> Router<Arc<Shared>> {
    Router::new()
        .route("/_fake/faults", get(list).post(create).delete(clear_all))
        .route("/_fake/faults/{id}", delete(clear_one))
}

/// A class by its name in the control plane's words.
pub fn class_named(name: &str, retry_after_seconds: u64) -> Option<FaultClass> {
    Some(match name {
        "retryable" => FaultClass::Retryable,
        "throttled" => FaultClass::Throttled { retry_after: Duration::from_secs(retry_after_seconds.max(1)) },
        "quota" => FaultClass::Quota,
        "permission" => FaultClass::Permission,
        "unauthenticated" => FaultClass::Unauthenticated,
        "invalid" => FaultClass::Invalid,
        "conflict" => FaultClass::Conflict,
        "notFound" => FaultClass::NotFound,
        "unreachable" => FaultClass::Unreachable,
        "needsHuman" => FaultClass::NeedsHuman,
        _ => return None,
    })
}

pub fn class_json(class: &FaultClass) -> Value {
    match class {
        FaultClass::Throttled { retry_after } => {
            json!({"class": "throttled", "retryAfterSeconds": retry_after.as_secs()})
        }
        other => {
            let name = format!("{other:?}");
            json!({"class": format!("{}{}", name[..1].to_lowercase(), &name[1..])})
        }
    }
}

async fn create(State(shared): State<Arc<Shared>>, Json(body): Json<Value>) -> Response {
    let name = body["class"].as_str().unwrap_or_default();
    let Some(class) = class_named(name, body["retryAfterSeconds"].as_u64().unwrap_or(30)) else {
        return json_response(
            400,
            json!({"error": format!("class {name:?} is not one of retryable, throttled, quota, permission, \
                                     unauthenticated, invalid, conflict, notFound, unreachable, needsHuman")}),
        );
    };
    let field = |field: &str| body[field].as_str().unwrap_or("*").to_owned();
    let mut world = shared.world();
    if let Some(account) = body["account"].as_str() {
        let id = world.faults.add_rule(FaultScope::Account(account.to_owned()), class);
        return json_response(200, json!({ "id": id }));
    }
    let (kind, verb, name) = (field("kind"), field("verb"), field("name"));
    if body["once"].as_bool() == Some(true) {
        world.faults.scripted.push(ScriptedFailure { kind, verb, name, failure: Failure::Class(class) });
        return json_response(200, json!({}));
    }
    let id = world.faults.add_rule(FaultScope::Calls { kind, verb, name }, class);
    json_response(200, json!({ "id": id }))
}

async fn list(State(shared): State<Arc<Shared>>) -> Response {
    let world = shared.world();
    let rules: Vec<Value> = world
        .faults
        .rules
        .iter()
        .map(|rule| {
            let mut value = class_json(&rule.class);
            value["id"] = json!(rule.id);
            value["hits"] = json!(rule.hits);
            match &rule.scope {
                FaultScope::Account(account) => value["account"] = json!(account),
                FaultScope::Calls { kind, verb, name } => {
                    value["kind"] = json!(kind);
                    value["verb"] = json!(verb);
                    value["name"] = json!(name);
                }
            }
            value
        })
        .collect();
    json_response(200, json!({ "faults": rules }))
}

async fn clear_one(State(shared): State<Arc<Shared>>, Path(id): Path<u64>) -> Response {
    match shared.world().faults.remove_rule(id) {
        true => json_response(200, json!({})),
        false => json_response(404, json!({"error": format!("no fault rule {id}")})),
    }
}

async fn clear_all(State(shared): State<Arc<Shared>>) -> Response {
    shared.world().faults.clear();
    json_response(200, json!({}))
}
