//! The decision of a call: `permission @ resource` for the caller, taken before anything else is
//! looked up or written, and the audit of every decision on a mutation.
//!
//! The ids and the tenant a decision names are checked for shape first: a malformed or oversized
//! one is `INVALID_INPUT` naming its field, neither decided nor audited, and the error repeats
//! at most [`ECHO_CHARS`] characters of it. So what a refused caller sends can neither grow the
//! trail nor come back whole; and a refusal of a tenant principal naming another tenant is filed
//! under the caller's own tenant, so that no caller writes into another tenant's trail.

use std::collections::HashMap;
use std::sync::OnceLock;

use super::{Caller, Context, Service, Unconfirmed};
use crate::authz::{Subject, Target};
use crate::error::{Code, Error, FieldViolation, Result};
use crate::methods::MethodTable;
use crate::store::{AuditRow, AuthzResourceRow, now_micros};

/// The most characters of a refused value an error repeats.
pub const ECHO_CHARS: usize = 64;

/// The longest tenant id (the tenants' own rule: `^[A-Za-z0-9._:-]{1,128}$`).
const TENANT_ID_MAX: usize = 128;

/// A shape a decided value must have, said as the validator says it (a length, then a pattern).
struct Shape {
    /// The most characters.
    max: usize,
    /// The pattern, for the error.
    pattern: &'static str,
}

/// A tenant id (the tenants' own rule).
const TENANT_ID: Shape = Shape { max: TENANT_ID_MAX, pattern: "^[A-Za-z0-9._:-]{1,128}$" };

/// A resource id (`crate::ids`; the API's patterns allow up to 52 characters after the prefix).
const RESOURCE_ID: Shape = Shape { max: 61, pattern: "^[a-z]{1,8}_[0-9a-hjkmnp-tv-z]{26,52}$" };

impl Shape {
    /// What is wrong with `value`, which does not have the shape.
    fn describe(&self, value: &str) -> String {
        let chars = value.chars().count();
        if chars > self.max {
            format!("must be at most {} characters long (it has {chars}; got {})", self.max, echo(value))
        } else {
            format!("must match {} (got {})", self.pattern, echo(value))
        }
    }
}

/// Whether `text` has the shape of a tenant id.
fn is_tenant_id(text: &str) -> bool {
    (1..=TENANT_ID_MAX).contains(&text.len())
        && text.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b':' | b'-'))
}

/// Whether `text` has the shape of a resource id: a prefix of at most 8 lowercase letters, `_`,
/// and 26 to 52 characters of the ids' base32 alphabet (the API's patterns allow up to 52).
fn is_resource_id(text: &str) -> bool {
    let Some((prefix, body)) = text.split_once('_') else { return false };
    (1..=8).contains(&prefix.len())
        && prefix.bytes().all(|b| b.is_ascii_lowercase())
        && (26..=52).contains(&body.len())
        && body
            .bytes()
            .all(|b| (b.is_ascii_digit() || b.is_ascii_lowercase()) && !matches!(b, b'i' | b'l' | b'o' | b'u'))
}

/// What an error repeats of a refused value: at most [`ECHO_CHARS`] characters, escaped, and the
/// value's length when it was cut.
pub fn echo(value: &str) -> String {
    let shown: String = value.chars().take(ECHO_CHARS).collect();
    if shown.len() == value.len() { format!("{shown:?}") } else { format!("{shown:?}… ({} bytes)", value.len()) }
}

/// The JSON names of the request fields a method's decision reads its id and tenant from.
#[derive(Debug)]
struct DecisionFields {
    /// The resource type the method decides on.
    resource_type: String,
    /// The id field (`clusterId`).
    id: String,
    /// The tenant field (`tenantId`).
    tenant: String,
}

/// The decision fields of `method` (`bettercompute.compute.v1.LoadBalancers/Create`), read from
/// the descriptors once.
fn decision_fields(method: &str) -> Option<&'static DecisionFields> {
    static FIELDS: OnceLock<HashMap<String, DecisionFields>> = OnceLock::new();
    FIELDS
        .get_or_init(|| {
            let table = MethodTable::from_pool(crate::proto::descriptor_pool());
            table
                .iter()
                .filter_map(|method| {
                    let authorization = method.authorization.as_ref()?;
                    let input = method.descriptor.input();
                    let json = |field: &str, or: &str| {
                        input.get_field_by_name(field).map_or_else(|| or.to_owned(), |f| f.json_name().to_owned())
                    };
                    let tenant_field = match authorization.tenant_field.as_str() {
                        "" => "tenant_id",
                        field => field,
                    };
                    let fields = DecisionFields {
                        resource_type: authorization.resource.clone(),
                        id: json(&authorization.id_field, "id"),
                        tenant: json(tenant_field, "tenantId"),
                    };
                    Some((method.name.clone(), fields))
                })
                .collect()
        })
        .get(method)
}

/// `INVALID_INPUT` naming each of the target's id, tenant and project that does not have its
/// shape: checked before the decision, so that a malformed value is never decided on, audited
/// or repeated whole.
fn check_target(method: &str, target: &Target) -> Result<()> {
    // A service's secondary decision (an instance a load balancer names) is on another type
    // than its method's; its ids come from the store, named here by their plain names.
    let fields = decision_fields(method).filter(|f| f.resource_type == target.resource_type);
    let id_field = fields.map_or("id", |f| f.id.as_str());
    let tenant_field = fields.map_or("tenantId", |f| f.tenant.as_str());
    let mut violations: Vec<FieldViolation> = Vec::new();
    let mut refuse = |field: &str, value: &str, shape: &Shape| {
        if !violations.iter().any(|v| v.field == field) {
            violations.push(FieldViolation::new(field, shape.describe(value)));
        }
    };
    if let Some(tenant) = target.tenant_id.as_deref().filter(|t| !is_tenant_id(t)) {
        refuse(tenant_field, tenant, &TENANT_ID);
    }
    if !target.id.is_empty() {
        // A tenant is decided on by its tenant id; everything else by a generated id.
        let tenant_shaped = target.resource_type.ends_with("-tenant");
        if tenant_shaped && !is_tenant_id(&target.id) {
            refuse(id_field, &target.id, &TENANT_ID);
        } else if !tenant_shaped && !is_resource_id(&target.id) {
            refuse(id_field, &target.id, &RESOURCE_ID);
        }
    }
    if let Some(project) = target.project_id.as_deref().filter(|p| !is_resource_id(p)) {
        refuse("projectId", project, &RESOURCE_ID);
    }
    if violations.is_empty() { Ok(()) } else { Err(Error::fields(violations)) }
}

/// The tenant an audit row is filed under and, when it is not the one the call named, the one
/// named: a tenant principal's refused call naming another tenant is filed under the caller's
/// own, so that no caller can write rows into another tenant's trail.
fn audit_tenants(caller: Option<&str>, named: Option<&str>, allowed: bool) -> (String, String) {
    match (caller, named) {
        (Some(own), Some(named)) if own != named && !allowed => (own.to_owned(), named.to_owned()),
        (_, named) => (named.unwrap_or_default().to_owned(), String::new()),
    }
}

/// The resource type of tenant-wide decisions.
const TENANT_RESOURCE: &str = "compute-tenant";

/// The resource type of decisions on a pool.
const POOL_RESOURCE: &str = "compute-pool";

/// The methods whose request without a tenant reads the caller's own tenant (an operator's:
/// every tenant's), as their pages say: the decision is on that tenant, as the service's read is.
const OWN_TENANT_BY_DEFAULT: [&str; 4] = [
    "bettercompute.compute.v1.Events/List",
    "bettercompute.compute.v1.Events/Watch",
    "bettercompute.compute.v1.Usage/List",
    "bettercompute.compute.v1.Orphans/List",
];

/// The attribute naming the provider account a resource is on.
const ACCOUNT_ATTRIBUTE: &str = "providerAccountId";

/// Adds what a resource's authorization row records to a decision on it: its project (unless
/// the request named one), its owner and its attributes (unless the request gave them).
fn with_stored(target: &mut Target, row: AuthzResourceRow) {
    target.project_id = target.project_id.take().or(row.project_id);
    target.owner_id = row.owner_id;
    for (name, value) in row.attributes {
        target.attributes.entry(name).or_insert(value);
    }
}

/// The caller as the authorizer sees it.
fn subject_of(caller: &Caller) -> Subject<'_> {
    Subject {
        principal_id: &caller.principal_id,
        kind: caller.kind.as_str(),
        tenant_id: caller.tenant_id.as_deref(),
        bindings: &caller.bindings,
    }
}

/// Whether decisions on `permission` are audited: every permission but reads.
pub fn audited(permission: &str) -> bool {
    !permission.ends_with(":read")
}

impl Service {
    /// Decides `permission` on `target` for the caller of `method`; a refusal is `ACCESS_DENIED`.
    /// The resource's authorization row, when it is under the tenant the request names, adds its
    /// project, owner and attributes; a row under another tenant says nothing of this request
    /// (the service will answer `NOT_FOUND`). A malformed id, tenant or project is refused
    /// first (`INVALID_INPUT`, not audited). A read that defaults to the caller's own tenant
    /// ([`OWN_TENANT_BY_DEFAULT`]) and names none is decided on that tenant.
    pub async fn authorize(&self, ctx: &Context, method: &str, permission: &str, target: Target) -> Result<()> {
        check_target(method, &target)?;
        let stored = match target.id.is_empty() {
            true => None,
            false => self.store.authz_resource_fetch(&target.resource_type, &target.id).await?,
        };
        self.decide_on(ctx, method, permission, target, stored).await
    }

    /// Decides a call as [`Service::authorize`] does, for a caller that may still have to be
    /// confirmed: the authentication generation is read in the same statement as the
    /// authorization row (or alone, when the decision names no resource), and a caller read at
    /// another generation is authenticated again before the decision (`ctx.caller` is then the
    /// new one). A malformed target is refused only after the caller is confirmed.
    pub async fn authorize_call(
        &self,
        ctx: &mut Context,
        unconfirmed: Option<&Unconfirmed>,
        method: &str,
        permission: &str,
        target: Target,
    ) -> Result<()> {
        let shape = check_target(method, &target);
        let (generation, stored) = match shape.is_ok() && !target.id.is_empty() {
            true => {
                let (generation, row) =
                    self.store.authz_resource_fetch_at_generation(&target.resource_type, &target.id).await?;
                (Some(generation), row)
            }
            false => (None, None),
        };
        if let Some(unconfirmed) = unconfirmed {
            let caller = ctx.caller.clone();
            ctx.caller = match generation {
                Some(generation) => self.confirm_caller(caller, unconfirmed, generation).await?,
                None => self.confirm_caller_alone(caller, unconfirmed).await?,
            };
        }
        shape?;
        self.decide_on(ctx, method, permission, target, stored).await
    }

    /// The decision and its audit, given the resource's authorization row as read.
    async fn decide_on(
        &self,
        ctx: &Context,
        method: &str,
        permission: &str,
        mut target: Target,
        stored: Option<AuthzResourceRow>,
    ) -> Result<()> {
        if target.tenant_id.is_none() && OWN_TENANT_BY_DEFAULT.contains(&method) {
            target.tenant_id.clone_from(&ctx.caller.tenant_id);
        }
        if let Some(row) = stored
            && row.tenant_id == target.tenant_id
        {
            with_stored(&mut target, row);
        }
        let platform_pool = self.resolve_pool_tenant(&mut target).await?;
        self.resolve_account(&mut target).await?;
        let caller = &ctx.caller;
        let subject = subject_of(caller);
        let decision = self.authorizer.decide(&subject, permission, &target);
        if audited(permission) && !ctx.rehearsal {
            let (tenant_id, requested_tenant_id) =
                audit_tenants(caller.tenant_id.as_deref(), target.tenant_id.as_deref(), decision.allowed);
            self.store
                .audit_append(&AuditRow {
                    seq: 0,
                    time: now_micros(),
                    principal_id: caller.principal_id.clone(),
                    method: method.to_owned(),
                    permission: permission.to_owned(),
                    resource_type: target.resource_type.clone(),
                    resource_id: target.id.clone(),
                    tenant_id,
                    requested_tenant_id,
                    decision: if decision.allowed { "allow" } else { "deny" }.to_owned(),
                    policies: decision.policies.clone(),
                    request_id: ctx.request_id.clone(),
                    outcome: String::new(),
                    principal_name: String::new(),
                })
                .await?;
        }
        if decision.allowed {
            return Ok(());
        }
        let what = if target.resource_type == TENANT_RESOURCE {
            // A tenant-wide decision (`list`, `versions`) is on the tenant itself.
            format!("tenant {}", target.tenant_id.as_deref().unwrap_or(&target.id))
        } else if target.id.is_empty() {
            format!("a new {}", target.resource_type)
        } else {
            format!("{} {}", target.resource_type, target.id)
        };
        let target_is_tenant = target.resource_type == TENANT_RESOURCE;
        let under = target
            .tenant_id
            .as_deref()
            .filter(|_| !target_is_tenant)
            .map(|t| format!(" of tenant {t}"))
            .unwrap_or_default();
        // A tenant's key refused on a platform pool would be refused whatever its roles: say whose
        // key is needed.
        let hint = if platform_pool && caller.tenant_id.is_some() {
            "; the pool is the platform's (on an operator's account), so only an operator's key may"
        } else {
            ""
        };
        Err(Error::access_denied(format!("{} may not {permission} on {what}{under}{hint}", caller.principal_id))
            .with_detail("permission", permission)
            .with_detail("resource", target.resource_type.as_str()))
    }

    /// The tenant of a pool a decision names by id alone (a join token's methods name no
    /// tenant): the tenant whose account the pool is on, so that its admins decide; a platform
    /// pool has none, so that only operators do, whoever it is offered to. An unknown pool adds
    /// nothing (the service answers `NOT_FOUND` to whoever may ask). `true` for a platform pool.
    async fn resolve_pool_tenant(&self, target: &mut Target) -> Result<bool> {
        if target.resource_type != POOL_RESOURCE || target.tenant_id.is_some() || !is_resource_id(&target.id) {
            return Ok(false);
        }
        match self.store.pool_fetch(&target.id).await {
            Ok(pool) => {
                target.tenant_id = pool.tenant_id;
                Ok(target.tenant_id.is_none())
            }
            Err(error) if error.code == Code::NotFound => Ok(false),
            Err(error) => Err(error),
        }
    }

    /// The account of the pool a decision names (`poolId`), as `providerAccountId`: the pages
    /// list it among a create's attributes, and a request names only the pool. An unknown pool
    /// adds nothing (the service answers `NOT_FOUND` for it).
    async fn resolve_account(&self, target: &mut Target) -> Result<()> {
        if target.attributes.contains_key(ACCOUNT_ATTRIBUTE) {
            return Ok(());
        }
        let Some(pool_id) = target.attributes.get("poolId").and_then(|v| v.as_str()).filter(|p| is_resource_id(p))
        else {
            return Ok(());
        };
        match self.store.pool_fetch(pool_id).await {
            Ok(pool) => {
                target.attributes.insert(ACCOUNT_ATTRIBUTE.to_owned(), pool.account_id.into());
                Ok(())
            }
            Err(error) if error.code == Code::NotFound => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// Keeps the items of `tenant` the caller may read, each decided as `get` decides it: on its
    /// id and tenant, with the project, owner and attributes its authorization row records. The
    /// per-item half of a "+ items" list, whose list itself was decided on the tenant.
    pub async fn authorize_stored_items<T>(
        &self,
        ctx: &Context,
        permission: &str,
        resource_type: &str,
        tenant: &str,
        items: Vec<T>,
        id_of: impl Fn(&T) -> &str,
    ) -> Result<Vec<T>> {
        let ids: Vec<&str> = items.iter().map(&id_of).collect();
        let stored: HashMap<String, AuthzResourceRow> = self
            .store
            .authz_resource_list(resource_type, tenant, &ids)
            .await?
            .into_iter()
            .map(|row| (row.resource_id.clone(), row))
            .collect();
        Ok(self.authorize_items(ctx, permission, items, |item| {
            let id = id_of(item);
            let mut target = Target {
                resource_type: resource_type.to_owned(),
                id: id.to_owned(),
                tenant_id: Some(tenant.to_owned()),
                attributes: serde_json::Map::from_iter([("tenantId".to_owned(), tenant.into())]),
                ..Default::default()
            };
            if let Some(row) = stored.get(id) {
                with_stored(&mut target, row.clone());
            }
            target
        }))
    }

    /// Keeps the items the caller may read: the per-item half of a "+ items" list, whose list
    /// itself was decided on the tenant.
    pub fn authorize_items<T>(
        &self,
        ctx: &Context,
        permission: &str,
        items: Vec<T>,
        target_of: impl Fn(&T) -> Target,
    ) -> Vec<T> {
        let subject = subject_of(&ctx.caller);
        let targets: Vec<Target> = items.iter().map(target_of).collect();
        let decisions = self.authorizer.decide_each(&subject, permission, &targets);
        items.into_iter().zip(decisions).filter(|(_, decision)| decision.allowed).map(|(item, _)| item).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LB_GET: &str = "bettercompute.compute.v1.LoadBalancers/Get";

    fn target(resource_type: &str, id: &str, tenant: &str) -> Target {
        Target {
            resource_type: resource_type.into(),
            id: id.into(),
            tenant_id: Some(tenant.into()),
            ..Default::default()
        }
    }

    #[test]
    fn ids_and_tenants_are_checked_by_shape_and_named_by_field() {
        let good = target("compute-provider-load-balancer", "plb_0000000000000000000000000a", "acme");
        check_target(LB_GET, &good).unwrap();
        let huge = "a".repeat(4_000_000);
        let error = check_target(LB_GET, &target(&good.resource_type, &good.id, &huge)).unwrap_err();
        assert!(error.message.starts_with("invalid input: tenantId: "), "{}", error.message);
        assert!(error.message.len() < 400, "a bounded echo: {}", error.message.len());
        assert!(error.message.contains("(4000000 bytes)"), "{}", error.message);
        let error = check_target(LB_GET, &target(&good.resource_type, "plb_\0", "acme")).unwrap_err();
        assert!(error.message.contains("loadBalancerId") && !error.message.contains('\0'), "{}", error.message);
        for bad in ["plb_0000000000000000000000000I", "PLB_0000000000000000000000000a", "plb_short", "nope"] {
            assert!(check_target(LB_GET, &target(&good.resource_type, bad, "acme")).is_err(), "{bad}");
        }
        let tenant = target("platform-tenant", "acme.eu:1-x", "acme.eu:1-x");
        check_target("bettercompute.platform.v1.Tenants/Update", &tenant).unwrap();
    }

    #[test]
    fn a_refusal_naming_another_tenant_is_filed_under_the_callers() {
        assert_eq!(audit_tenants(Some("globex"), Some("acme"), false), ("globex".into(), "acme".into()));
        assert_eq!(audit_tenants(Some("acme"), Some("acme"), false), ("acme".into(), String::new()));
        assert_eq!(audit_tenants(None, Some("acme"), false), ("acme".into(), String::new()), "an operator's");
        assert_eq!(audit_tenants(Some("globex"), None, false), (String::new(), String::new()));
    }
}
