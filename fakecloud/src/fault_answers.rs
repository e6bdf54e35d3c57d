//! How each emulated API answers a call that fails with a [`FaultClass`]: the status, body and
//! headers the real provider sends (Google's `google.rpc.Status` with `ErrorInfo` details,
//! Compute Engine's `errors` list, DigitalOcean's `{id, message, request_id}`, a Redfish
//! `@Message.ExtendedInfo` from the DMTF Base registry, Google's OAuth error), or no answer.

use std::time::Duration;

use axum::response::Response;
use http::HeaderValue;
use serde_json::{Value, json};

use crate::calls::{Call, Family};
use crate::faults::FaultClass;
use crate::json_response;

/// Marks a response that must not be sent: the connection is closed instead (see
/// `tls::serve_connections`).
#[derive(Clone, Copy, Debug)]
pub struct HangUp;

/// The answer to `call` failing as `class`; `request_id` is the provider's id for it.
pub fn answer(call: &Call, class: &FaultClass, request_id: &str) -> Response {
    if *class == FaultClass::Unreachable {
        let mut response = json_response(502, Value::Null);
        response.extensions_mut().insert(HangUp);
        return response;
    }
    let mut response = match call.family {
        Family::Compute => compute(call, class),
        Family::DigitalOcean => digitalocean(call, class, request_id),
        Family::Redfish => redfish(call, class),
        Family::OAuth => oauth(class),
        Family::Gke | Family::Other => google(call, class),
    };
    if let FaultClass::Throttled { retry_after } = class {
        response.headers_mut().insert("retry-after", HeaderValue::from(seconds(*retry_after)));
    }
    response
}

/// Whole seconds, at least 1, as `Retry-After` gives them.
pub fn seconds(duration: Duration) -> u64 {
    duration.as_secs_f64().ceil().max(1.0) as u64
}

/// The IAM permission a GKE call needs (node pools are changed with the cluster's).
fn gke_permission(call: &Call) -> String {
    let (plural, verb) = match (call.kind.as_str(), call.verb.as_str()) {
        ("nodePool", "get" | "list") => ("clusters", "get"),
        ("nodePool", _) => ("clusters", "update"),
        ("operation", verb) => ("operations", verb),
        ("serverConfig", _) => ("clusters", "list"),
        (_, verb) => ("clusters", verb),
    };
    format!("container.{plural}.{verb}")
}

fn error_info(reason: &str, domain: &str, metadata: Value) -> Value {
    json!({"@type": "type.googleapis.com/google.rpc.ErrorInfo", "reason": reason, "domain": domain, "metadata": metadata})
}

/// The project number Google writes in messages: the fake's stand-in, from the project id.
fn project_number(call: &Call) -> String {
    let project = call.accounts.first().map(String::as_str).unwrap_or_default();
    let sum: u64 = project.bytes().fold(7, |sum, b| sum.wrapping_mul(31).wrapping_add(u64::from(b)));
    format!("{}", 100_000_000_000 + sum % 900_000_000_000)
}

/// GKE's `google.rpc.Status`: code, message, status and details.
fn google(call: &Call, class: &FaultClass) -> Response {
    let service = json!({"service": "container.googleapis.com"});
    let number = project_number(call);
    let (code, status, message, details) = match class {
        FaultClass::Retryable => (503, "UNAVAILABLE", "The service is currently unavailable.".to_owned(), vec![]),
        FaultClass::Throttled { retry_after } => (
            429,
            "RESOURCE_EXHAUSTED",
            format!(
                "Quota exceeded for quota metric 'Requests' and limit 'Requests per minute' of service \
                 'container.googleapis.com' for consumer 'project_number:{number}'."
            ),
            vec![
                error_info(
                    "RATE_LIMIT_EXCEEDED",
                    "googleapis.com",
                    json!({"service": "container.googleapis.com", "consumer": format!("projects/{number}"),
                           "quota_metric": "container.googleapis.com/requests", "quota_limit": "RequestsPerMinutePerProject"}),
                ),
                json!({"@type": "type.googleapis.com/google.rpc.RetryInfo",
                       "retryDelay": format!("{}s", seconds(*retry_after))}),
            ],
        ),
        // What GKE answers a cluster or pool its region's CPUs cannot hold.
        FaultClass::Quota => (
            429,
            "RESOURCE_EXHAUSTED",
            "Insufficient regional quota to satisfy request: resource \"CPUS\": request requires '12.0' and is \
             short '4.0'. project has a quota of '24.0' with '8.0' available."
                .to_owned(),
            vec![error_info(
                "QUOTA_EXCEEDED",
                "container.googleapis.com",
                json!({"quota_metric": "compute.googleapis.com/cpus", "quota_limit": "CPUS-per-project-region"}),
            )],
        ),
        FaultClass::Permission => {
            let permission = gke_permission(call);
            (
                403,
                "PERMISSION_DENIED",
                format!("Required \"{permission}\" permission(s) for \"{}\".", call.resource),
                vec![error_info(
                    "IAM_PERMISSION_DENIED",
                    "iam.googleapis.com",
                    json!({"permission": permission, "resource": call.resource}),
                )],
            )
        }
        FaultClass::Unauthenticated => (
            401,
            "UNAUTHENTICATED",
            "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other \
             valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project."
                .to_owned(),
            vec![error_info("ACCOUNT_STATE_INVALID", "googleapis.com", service)],
        ),
        FaultClass::Invalid => (
            400,
            "INVALID_ARGUMENT",
            format!("Invalid argument for \"{}\": the request is not valid.", call.resource),
            vec![],
        ),
        FaultClass::Conflict => (409, "ALREADY_EXISTS", format!("Already exists: {}.", call.resource), vec![]),
        FaultClass::NotFound => (404, "NOT_FOUND", format!("Not found: {}.", call.resource), vec![]),
        // A project whose billing account was closed or unlinked: nothing works until someone
        // with billing rights links one again.
        FaultClass::NeedsHuman => (
            403,
            "PERMISSION_DENIED",
            format!(
                "This API method requires billing to be enabled. Please enable billing on project #{number} by \
                 visiting https://console.developers.google.com/billing/enable?project={number} then retry. If you \
                 enabled billing for this project recently, wait a few minutes for the action to propagate to our \
                 systems and retry."
            ),
            vec![error_info(
                "BILLING_DISABLED",
                "googleapis.com",
                json!({"service": "container.googleapis.com", "consumer": format!("projects/{number}")}),
            )],
        ),
        FaultClass::Unreachable => unreachable!("answered without a body"),
    };
    let mut error = json!({"code": code, "message": message, "status": status});
    if !details.is_empty() {
        error["details"] = Value::Array(details);
    }
    json_response(code, json!({ "error": error }))
}

/// Compute Engine's error: code, message, and `errors` with a reason (its older shape), plus
/// `details` where Google adds an `ErrorInfo`.
fn compute(call: &Call, class: &FaultClass) -> Response {
    let number = project_number(call);
    let verb = match call.verb.as_str() {
        "create" => "insert",
        verb => verb,
    };
    let (code, reason, message, info) = match class {
        FaultClass::Retryable => (503, "backendError", "Backend Error".to_owned(), None),
        FaultClass::Throttled { .. } => (
            429,
            "rateLimitExceeded",
            format!(
                "Quota exceeded for quota metric 'Queries' and limit 'Queries per minute' of service \
                 'compute.googleapis.com' for consumer 'project_number:{number}'."
            ),
            Some(error_info("RATE_LIMIT_EXCEEDED", "googleapis.com", json!({"service": "compute.googleapis.com"}))),
        ),
        FaultClass::Quota => (
            403,
            "quotaExceeded",
            "Quota 'NETWORKS' exceeded.  Limit: 5.0 globally.".to_owned(),
            Some(error_info("QUOTA_EXCEEDED", "compute.googleapis.com", json!({"quota_metric": "NETWORKS"}))),
        ),
        FaultClass::Permission => (
            403,
            "forbidden",
            format!("Required 'compute.{}s.{verb}' permission for '{}'", call.kind, call.resource),
            None,
        ),
        FaultClass::Unauthenticated => {
            (401, "authError", "Request had invalid authentication credentials.".to_owned(), None)
        }
        FaultClass::Invalid => {
            (400, "invalid", format!("Invalid value for field 'resource': '{}'.", call.resource), None)
        }
        FaultClass::Conflict => {
            (409, "alreadyExists", format!("The resource '{}' already exists", call.resource), None)
        }
        FaultClass::NotFound => (404, "notFound", format!("The resource '{}' was not found", call.resource), None),
        FaultClass::NeedsHuman => (
            403,
            "accessNotConfigured",
            format!(
                "This API method requires billing to be enabled. Please enable billing on project #{number} by \
                 visiting https://console.developers.google.com/billing/enable?project={number} then retry."
            ),
            Some(error_info("BILLING_DISABLED", "googleapis.com", json!({"service": "compute.googleapis.com"}))),
        ),
        FaultClass::Unreachable => unreachable!("answered without a body"),
    };
    let mut error = json!({"code": code, "message": message,
                           "errors": [{"domain": "global", "reason": reason, "message": message}]});
    if let Some(info) = info {
        error["details"] = json!([info]);
    }
    json_response(code, json!({ "error": error }))
}

/// DigitalOcean's `{id, message, request_id}`; a throttled answer says no request is left.
fn digitalocean(call: &Call, class: &FaultClass, request_id: &str) -> Response {
    let kind = match call.kind.as_str() {
        "loadBalancer" => "load balancer",
        "vpc" => "VPC",
        kind => kind,
    };
    let (status, message) = match class {
        FaultClass::Retryable => (500, "Server was unable to give you a response.".to_owned()),
        FaultClass::Throttled { .. } => (429, "API Rate limit exceeded.".to_owned()),
        FaultClass::Quota => match call.kind.as_str() {
            "droplet" => (422, "creating this/these droplet(s) will exceed your droplet limit".to_owned()),
            _ => (422, format!("creating this {kind} will exceed your {kind} limit")),
        },
        // A token made without the scope the call needs.
        FaultClass::Permission => (403, "You are not authorized to perform this operation".to_owned()),
        FaultClass::Unauthenticated => (401, "Unable to authenticate you".to_owned()),
        FaultClass::Invalid => (422, format!("The {kind} request is not valid: request payload validation failed")),
        FaultClass::Conflict => (409, format!("The {kind} is busy: another action is in progress on it.")),
        FaultClass::NotFound => (404, "The resource you were accessing could not be found.".to_owned()),
        // An account DigitalOcean locked (a payment past due, an abuse report): its status is
        // `locked` and only its owner, with support, can unlock it.
        FaultClass::NeedsHuman => (
            403,
            "This account has been locked. Please contact support (https://cloudsupport.digitalocean.com) to \
             unlock it."
                .to_owned(),
        ),
        FaultClass::Unreachable => unreachable!("answered without a body"),
    };
    let mut response = crate::digitalocean::error(status, &message, request_id);
    if let FaultClass::Throttled { retry_after } = class {
        let reset = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default()
            + Duration::from_secs(seconds(*retry_after));
        let headers = response.headers_mut();
        headers.insert("ratelimit-limit", HeaderValue::from(5000));
        headers.insert("ratelimit-remaining", HeaderValue::from(0));
        headers.insert("ratelimit-reset", HeaderValue::from(reset.as_secs()));
    }
    response
}

/// A Redfish error: `Base.1.8.GeneralError` with the DMTF Base message that says why in
/// `@Message.ExtendedInfo`, as BMCs answer.
fn redfish(call: &Call, class: &FaultClass) -> Response {
    let uri = &call.resource;
    let (status, id, message, severity, resolution, args): (u16, &str, String, &str, &str, Vec<String>) = match class {
        FaultClass::Retryable => (
            500,
            "InternalError",
            "The request failed due to an internal service error.  The service is still operational.".into(),
            "Critical",
            "Resubmit the request.  If the problem persists, consider resetting the service.",
            vec![],
        ),
        FaultClass::Throttled { retry_after } => {
            let after = seconds(*retry_after).to_string();
            (
                503,
                "ServiceTemporarilyUnavailable",
                format!("The service is temporarily unavailable.  Retry in {after} seconds."),
                "Critical",
                "Wait for the indicated retry duration and retry the operation.",
                vec![after],
            )
        }
        // A BMC's sessions (or jobs) are all taken.
        FaultClass::Quota => (
            400,
            "CreateLimitReachedForResource",
            "The create operation failed because the resource has reached the limit of possible resources.".into(),
            "Critical",
            "Either delete resources and resubmit the request if the operation failed or do not resubmit the request.",
            vec![],
        ),
        FaultClass::Permission => (
            403,
            "InsufficientPrivilege",
            "There are insufficient privileges for the account or credentials associated with the current session \
             to perform the requested operation."
                .into(),
            "Critical",
            "Either abandon the operation or change the associated access rights and resubmit the request if the \
             operation failed.",
            vec![],
        ),
        FaultClass::Unauthenticated => (
            401,
            "NoValidSession",
            "There is no valid session established with the implementation.".into(),
            "Critical",
            "Establish a session before attempting any operations.",
            vec![],
        ),
        FaultClass::Invalid => (
            400,
            "PropertyValueFormatError",
            format!("The value in the request body at {uri} is of a different format than the property can accept."),
            "Warning",
            "Correct the value for the property in the request body and resubmit the request if the operation failed.",
            vec![uri.clone()],
        ),
        FaultClass::Conflict => (
            409,
            "ResourceInUse",
            "The change to the requested resource failed because the resource is in use or in transition.".into(),
            "Warning",
            "Remove the condition and resubmit the request if the operation failed.",
            vec![],
        ),
        FaultClass::NotFound => (
            404,
            "ResourceMissingAtURI",
            format!("The resource at the URI {uri} was not found."),
            "Critical",
            "Place a valid resource at the URI or correct the URI and resubmit the request.",
            vec![uri.clone()],
        ),
        // A BMC still on its factory password: it lets nobody in until a person sets a new one.
        FaultClass::NeedsHuman => {
            let account = "/redfish/v1/AccountService/Accounts/2".to_owned();
            (
                403,
                "PasswordChangeRequired",
                format!(
                    "The password provided for this account must be changed before access is granted.  PATCH the \
                     Password property for this account located at the target URI {account} to complete this process."
                ),
                "Critical",
                "Change the password for this account using a PATCH to the Password property at the URI provided.",
                vec![account],
            )
        }
        FaultClass::Unreachable => unreachable!("answered without a body"),
    };
    let extended = json!({
        "@odata.type": "#Message.v1_1_1.Message",
        "MessageId": format!("Base.1.8.{id}"),
        "Message": message,
        "MessageArgs": args,
        "Severity": severity,
        "MessageSeverity": severity,
        "Resolution": resolution,
    });
    json_response(
        status,
        json!({"error": {
            "code": "Base.1.8.GeneralError",
            "message": "A general error has occurred. See Resolution for information on how to resolve the error, \
                        or @Message.ExtendedInfo if Resolution is not provided.",
            "@Message.ExtendedInfo": [extended],
        }}),
    )
}

/// Google's token endpoint: a deleted key or disabled account is `invalid_grant`; other
/// classes are what any Google front end answers.
fn oauth(class: &FaultClass) -> Response {
    let (status, error, description) = match class {
        FaultClass::Unauthenticated | FaultClass::Permission | FaultClass::NeedsHuman => {
            (400, "invalid_grant", "Invalid JWT Signature.")
        }
        FaultClass::Throttled { .. } => (429, "rate_limit_exceeded", "Rate limit exceeded."),
        FaultClass::Invalid | FaultClass::Quota | FaultClass::Conflict | FaultClass::NotFound => {
            (400, "invalid_request", "The request is not valid.")
        }
        FaultClass::Retryable | FaultClass::Unreachable => (503, "temporarily_unavailable", "Backend Error"),
    };
    json_response(status, json!({"error": error, "error_description": description}))
}

#[cfg(test)]
mod tests;
