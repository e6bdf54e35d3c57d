//! Authorization: Cedar decisions of `permission @ resource` for a caller.
//!
//! The schema is generated from the API's descriptors ([`schema`]); the built-in policies ship in
//! `policies/builtin.cedar` and an operator adds files of their own. A decision is built from
//! what the store knows: the caller's role bindings become membership of the `admins`,
//! `editors` and `viewers` sets of the platform, tenant, project or resource they are bound
//! at; the resource's authorization row gives its owner and attributes.

pub mod schema;

use std::collections::{HashMap, HashSet};
use std::str::FromStr;
use std::sync::{Mutex, OnceLock, PoisonError, RwLock};

use cedar_policy::{
    Authorizer as CedarAuthorizer, Context, Decision as CedarDecision, Entities, Entity, EntityId, EntityTypeName,
    EntityUid, PolicyId, PolicySet, Request, RestrictedExpression, Schema, ValidationMode, Validator,
};
use serde_json::Value;

pub use schema::{ActionSpec, AttributeKind};

/// The built-in policies.
pub const BUILTIN_POLICIES: &str = include_str!("policies/builtin.cedar");

const NAMESPACE: &str = "BetterCompute";

/// A role a principal holds at a scope, as a decision needs it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Binding {
    /// `platform-admin`, `admin`, `editor` or `viewer`.
    pub role: String,
    /// `platform`, `tenant`, `project` or `resource`.
    pub scope_type: String,
    /// The platform (`platform`), tenant, project or resource id.
    pub scope_id: String,
}

/// Who asks.
#[derive(Clone, Debug)]
pub struct Subject<'a> {
    /// The principal's id.
    pub principal_id: &'a str,
    /// `operator`, `user` or `service-account`.
    pub kind: &'a str,
    /// The principal's tenant.
    pub tenant_id: Option<&'a str>,
    /// Its role bindings.
    pub bindings: &'a [Binding],
}

/// What is asked about.
#[derive(Clone, Debug, Default)]
pub struct Target {
    /// `compute-kubernetes-cluster`.
    pub resource_type: String,
    /// Its id; empty for one being created.
    pub id: String,
    /// Its tenant.
    pub tenant_id: Option<String>,
    /// Its project.
    pub project_id: Option<String>,
    /// Its owner.
    pub owner_id: Option<String>,
    /// Its attributes (JSON names).
    pub attributes: serde_json::Map<String, Value>,
}

/// The outcome of a decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    /// Whether the call may go on.
    pub allowed: bool,
    /// The `@id` of each policy that decided.
    pub policies: Vec<String>,
}

/// Decides with the schema and policies it was built with.
#[derive(Debug)]
pub struct Authorizer {
    /// Each action's entity with the entities of the groups it is in, taken from the generated
    /// schema once: a decision adds its action's, and checks no entity against the schema (the
    /// entities are built here, from the schema's own declarations), which cost more than the
    /// decision itself.
    actions: HashMap<EntityUid, Vec<Entity>>,
    /// The request attributes each resource entity type declares.
    declared: HashMap<String, HashSet<String>>,
    /// The generated schema's text, for operators writing policies.
    schema_text: String,
    /// Built-in and operator policies.
    policies: PolicySet,
    /// Each policy's name in decisions: its `@id`, else Cedar's id. Read once: looking an
    /// annotation up parses its key, which cost more than evaluating the policies.
    names: HashMap<PolicyId, String>,
    /// Whether a policy names a resource entity (`resource == BetterCompute::X::"id"`): only
    /// then can two resources whose targets hold the same fields be decided differently.
    names_resources: bool,
    /// The attributes some policy reads (`x.name`, `x has name`); `None` when a policy could
    /// read any (tags, or a policy that cannot be read back). An attribute no policy reads
    /// cannot change a decision, so decisions are remembered without it: a request's name or
    /// idempotency key would otherwise make every create a decision of its own.
    attributes_read: Option<HashSet<String>>,
    /// Decisions taken, by subject, permission and likeness of the target: a decision depends
    /// on nothing else (the policies are this authorizer's own), so a repeated one (every `get`
    /// of a tenant's resources by one caller) is a lookup.
    decided: Mutex<HashMap<String, Decision>>,
}

/// Decisions remembered at most; past it the memory starts over rather than tracking use.
const DECIDED_CAPACITY: usize = 20_000;

impl Authorizer {
    /// An authorizer for `actions`, with the built-in policies and `extra` policy texts (name,
    /// text). Every policy must parse and validate against the schema.
    pub fn new(actions: &[ActionSpec], extra: &[(String, String)]) -> Result<Self, String> {
        let schema_text = schema::cedar_schema(actions);
        let (schema, _warnings) = Schema::from_cedarschema_str(&schema_text)
            .map_err(|error| format!("the generated Cedar schema: {error}"))?;
        let mut text = BUILTIN_POLICIES.to_owned();
        for (name, policy) in extra {
            PolicySet::from_str(policy).map_err(|error| format!("policy file {name}: {error}"))?;
            text.push('\n');
            text.push_str(policy);
        }
        let policies = PolicySet::from_str(&text).map_err(|error| format!("policies: {error}"))?;
        let validation = Validator::new(schema.clone()).validate(&policies, ValidationMode::Strict);
        if !validation.validation_passed() {
            let errors: Vec<String> = validation.validation_errors().map(|e| e.to_string()).collect();
            return Err(format!("policies do not validate against the schema: {}", errors.join("; ")));
        }
        let mut declared: HashMap<String, HashSet<String>> = HashMap::new();
        for action in actions {
            declared.entry(schema::entity_type_of(&action.resource_type)).or_default().extend(
                action.attributes.iter().map(|(name, _)| name.clone()).filter(|n| !schema::is_secret_attribute(n)),
            );
        }
        let names = policies
            .policies()
            .map(|policy| {
                let name = policy.annotation("id").map(str::to_owned).unwrap_or_else(|| policy.id().to_string());
                (policy.id().clone(), name)
            })
            .collect();
        let actions = action_entities(&schema)?;
        let names_resources = policies.policies().any(names_a_resource);
        let attributes_read = policies.policies().try_fold(HashSet::new(), |mut read, policy| {
            read.extend(attributes_read_by(policy)?);
            Some(read)
        });
        Ok(Self {
            actions,
            declared,
            schema_text,
            policies,
            names,
            names_resources,
            attributes_read,
            decided: Mutex::default(),
        })
    }

    /// The generated schema, in Cedar's schema syntax.
    pub fn schema_text(&self) -> &str {
        &self.schema_text
    }

    /// Decides whether `subject` may `permission` on `target`.
    pub fn decide(&self, subject: &Subject<'_>, permission: &str, target: &Target) -> Decision {
        self.decide_each(subject, permission, std::slice::from_ref(target)).pop().unwrap_or_else(refused)
    }

    /// Decides `permission` on each of `targets` (a list's items) for `subject`, in order.
    /// Targets alike in everything a decision can see ([`Authorizer::likeness`]) are decided
    /// once: a tenant's list is mostly a few such kinds. The entities are built once for all
    /// the kinds, which is what a decision mostly costs; targets of different tenants, or
    /// sharing an id, are decided one by one instead.
    pub fn decide_each(&self, subject: &Subject<'_>, permission: &str, targets: &[Target]) -> Vec<Decision> {
        let asker = asker_key(subject, permission);
        let mut kinds: HashMap<String, usize> = HashMap::new();
        let mut keys: Vec<String> = Vec::new();
        let mut kind_of = Vec::with_capacity(targets.len());
        let mut unknown: Vec<(usize, Target)> = Vec::new();
        let mut decisions: Vec<Option<Decision>> = Vec::new();
        {
            let decided = self.decided.lock().unwrap_or_else(PoisonError::into_inner);
            for target in targets {
                let key = format!("{asker}\u{0}{}", self.likeness(subject, target));
                let next = keys.len();
                let kind = *kinds.entry(key.clone()).or_insert(next);
                if kind == next {
                    let known = decided.get(&key).cloned();
                    if known.is_none() {
                        unknown.push((kind, target.clone()));
                    }
                    decisions.push(known);
                    keys.push(key);
                }
                kind_of.push(kind);
            }
        }
        if !unknown.is_empty() {
            let (kinds, fresh): (Vec<usize>, Vec<Target>) = unknown.into_iter().unzip();
            let taken = self.decide_apart(subject, permission, &fresh);
            let mut decided = self.decided.lock().unwrap_or_else(PoisonError::into_inner);
            if decided.len() + taken.len() > DECIDED_CAPACITY {
                decided.clear();
            }
            for (kind, decision) in kinds.into_iter().zip(taken) {
                // A decision that could not be built is not remembered: the next call tries again.
                if decision.policies != refused().policies {
                    decided.insert(keys[kind].clone(), decision.clone());
                }
                decisions[kind] = Some(decision);
            }
        }
        kind_of.into_iter().map(|kind| decisions[kind].clone().unwrap_or_else(refused)).collect()
    }

    /// What a decision can see of `target` for `subject`: its type, tenant, project, owner and
    /// the attributes a policy reads, and its id only when a policy names a resource or the
    /// subject holds a role bound at this one. Two targets with the same likeness get the same
    /// decision.
    fn likeness(&self, subject: &Subject<'_>, target: &Target) -> String {
        let bound_here = subject.bindings.iter().any(|b| b.scope_type == "resource" && b.scope_id == target.id);
        let id = if self.names_resources || bound_here || target.id.is_empty() { target.id.as_str() } else { "" };
        let read = |name: &String| self.attributes_read.as_ref().is_none_or(|read| read.contains(name));
        let mut attributes: Vec<(&String, &Value)> = target.attributes.iter().filter(|(name, _)| read(name)).collect();
        attributes.sort_by_key(|(name, _)| *name);
        serde_json::json!([target.resource_type, id, target.tenant_id, target.project_id, target.owner_id, attributes])
            .to_string()
    }

    /// [`Authorizer::decide_each`] without grouping alike targets.
    fn decide_apart(&self, subject: &Subject<'_>, permission: &str, targets: &[Target]) -> Vec<Decision> {
        let ids: HashSet<&str> = targets.iter().map(|t| t.id.as_str()).collect();
        let one_tenant = targets.windows(2).all(|pair| pair[0].tenant_id == pair[1].tenant_id);
        if targets.len() > 1 && (ids.len() < targets.len() || !one_tenant) {
            return targets.iter().map(|target| self.decide(subject, permission, target)).collect();
        }
        match self.try_decide_each(subject, permission, targets) {
            Ok(decisions) => decisions,
            Err(error) => {
                tracing::error!(%error, permission, "a decision could not be built");
                targets.iter().map(|_| refused()).collect()
            }
        }
    }

    fn try_decide_each(
        &self,
        subject: &Subject<'_>,
        permission: &str,
        targets: &[Target],
    ) -> Result<Vec<Decision>, String> {
        let principal = uid("Principal", subject.principal_id)?;
        let action = uid("Action", permission)?;
        let (entities, resources) = self.entities(subject, &principal, &action, targets)?;
        let authorizer = CedarAuthorizer::new();
        let mut decisions = Vec::with_capacity(targets.len());
        for resource in resources {
            let request = Request::new(principal.clone(), action.clone(), resource, Context::empty(), None)
                .map_err(|e| e.to_string())?;
            let response = authorizer.is_authorized(&request, &self.policies, &entities);
            let errors: Vec<String> = response.diagnostics().errors().map(|e| e.to_string()).collect();
            if !errors.is_empty() {
                tracing::warn!(?errors, permission, "policies failed to evaluate");
            }
            // Cedar gives the reasons as a set: sorted, a decision (and its audit) reads the same
            // every time.
            let mut policies: Vec<String> = response
                .diagnostics()
                .reason()
                .map(|id| self.names.get(id).cloned().unwrap_or_else(|| id.to_string()))
                .collect();
            policies.sort();
            decisions.push(Decision { allowed: response.decision() == CedarDecision::Allow, policies });
        }
        Ok(decisions)
    }

    /// The entities of a decision: the action with its groups, the platform, the caller, the
    /// tenants and projects in play, and one resource entity per target (whose uids are returned
    /// in order).
    fn entities(
        &self,
        subject: &Subject<'_>,
        principal: &EntityUid,
        action: &EntityUid,
        targets: &[Target],
    ) -> Result<(Entities, Vec<EntityUid>), String> {
        let in_role = |role: &str, scope_type: &str, scope_id: &str| {
            subject.bindings.iter().any(|b| b.role == role && b.scope_type == scope_type && b.scope_id == scope_id)
        };
        let members = |role: &str, scope_type: &str, scope_id: &str| {
            let members: Vec<RestrictedExpression> = if in_role(role, scope_type, scope_id) {
                vec![RestrictedExpression::new_entity_uid(principal.clone())]
            } else {
                Vec::new()
            };
            RestrictedExpression::new_set(members)
        };
        let roles_of = |scope_type: &str, scope_id: &str| -> HashMap<String, RestrictedExpression> {
            HashMap::from([
                ("admins".to_owned(), members("admin", scope_type, scope_id)),
                ("editors".to_owned(), members("editor", scope_type, scope_id)),
                ("viewers".to_owned(), members("viewer", scope_type, scope_id)),
            ])
        };

        let platform = uid("Platform", "platform")?;
        let mut entities = vec![entity(
            platform.clone(),
            HashMap::from([("admins".to_owned(), members("platform-admin", "platform", "platform"))]),
            HashSet::new(),
        )?];

        let mut principal_attrs =
            HashMap::from([("kind".to_owned(), RestrictedExpression::new_string(subject.kind.to_owned()))]);
        let mut tenants = HashSet::new();
        if let Some(tenant) = subject.tenant_id {
            principal_attrs.insert("tenant".to_owned(), RestrictedExpression::new_entity_uid(uid("Tenant", tenant)?));
            tenants.insert(tenant.to_owned());
        }
        entities.push(entity(principal.clone(), principal_attrs, HashSet::new())?);

        let mut projects: HashMap<&str, Option<&str>> = HashMap::new();
        let mut resources = Vec::with_capacity(targets.len());
        for target in targets {
            let resource_entity_type = schema::entity_type_of(&target.resource_type);
            let resource = uid(&resource_entity_type, if target.id.is_empty() { "new" } else { &target.id })?;
            let mut attrs: HashMap<String, RestrictedExpression> = HashMap::new();
            let mut parents = HashSet::from([platform.clone()]);
            if let Some(tenant) = &target.tenant_id {
                let tenant_uid = uid("Tenant", tenant)?;
                attrs.insert("tenant".to_owned(), RestrictedExpression::new_entity_uid(tenant_uid.clone()));
                parents.insert(tenant_uid);
                tenants.insert(tenant.clone());
            }
            if let Some(project) = &target.project_id {
                let project_uid = uid("Project", project)?;
                attrs.insert("project".to_owned(), RestrictedExpression::new_entity_uid(project_uid.clone()));
                parents.insert(project_uid);
                projects.insert(project, target.tenant_id.as_deref());
            }
            if resource_entity_type != "Platform" {
                if let Some(owner) = &target.owner_id {
                    attrs.insert("owner".to_owned(), RestrictedExpression::new_entity_uid(uid("Principal", owner)?));
                }
                attrs.extend(roles_of("resource", &target.id));
                let declared = self.declared.get(&resource_entity_type);
                for (name, value) in &target.attributes {
                    if schema::RESERVED_ATTRIBUTES.contains(&name.as_str())
                        || schema::is_secret_attribute(name)
                        || !declared.is_some_and(|d| d.contains(name))
                    {
                        continue;
                    }
                    let expression = match value {
                        Value::String(s) => RestrictedExpression::new_string(s.clone()),
                        Value::Bool(b) => RestrictedExpression::new_bool(*b),
                        Value::Number(n) if n.is_i64() => {
                            RestrictedExpression::new_long(n.as_i64().unwrap_or_default())
                        }
                        _ => continue,
                    };
                    attrs.insert(name.clone(), expression);
                }
                entities.push(entity(resource.clone(), attrs, parents)?);
            }
            resources.push(resource);
        }
        for tenant in &tenants {
            entities.push(entity(
                uid("Tenant", tenant)?,
                roles_of("tenant", tenant),
                HashSet::from([platform.clone()]),
            )?);
        }
        for (project, tenant) in projects {
            let parents = match tenant {
                Some(tenant) => HashSet::from([uid("Tenant", tenant)?]),
                None => HashSet::new(),
            };
            entities.push(entity(uid("Project", project)?, roles_of("project", project), parents)?);
        }
        // The action's groups are what the policies grant; an action the schema lacks is in none.
        entities.extend(self.actions.get(action).into_iter().flatten().cloned());
        let entities = Entities::from_entities(entities, None).map_err(|e| e.to_string())?;
        Ok((entities, resources))
    }
}

/// Each action of `schema` with the entities of every group it is in (itself first).
fn action_entities(schema: &Schema) -> Result<HashMap<EntityUid, Vec<Entity>>, String> {
    let all = schema.action_entities().map_err(|error| format!("the generated schema's actions: {error}"))?;
    let mut actions = HashMap::new();
    for action in all.iter() {
        let mut with_groups = vec![action.clone()];
        for group in all.ancestors(&action.uid()).into_iter().flatten() {
            with_groups.extend(all.get(group).cloned());
        }
        actions.insert(action.uid(), with_groups);
    }
    Ok(actions)
}

/// What a decision can see of who asks for what: the principal, its kind, tenant and roles, and
/// the permission.
fn asker_key(subject: &Subject<'_>, permission: &str) -> String {
    let mut bindings: Vec<(&str, &str, &str)> =
        subject.bindings.iter().map(|b| (b.role.as_str(), b.scope_type.as_str(), b.scope_id.as_str())).collect();
    bindings.sort_unstable();
    serde_json::json!([subject.principal_id, subject.kind, subject.tenant_id, bindings, permission]).to_string()
}

/// Whether `policy` names an entity other than the platform, a tenant, a project, a principal
/// or an action, in its scope or its conditions: a resource, which a decision must then tell
/// from others of its kind by id.
fn names_a_resource(policy: &cedar_policy::Policy) -> bool {
    const SHARED: [&str; 5] = ["Platform", "Tenant", "Project", "Principal", "Action"];
    fn walk(value: &Value) -> bool {
        match value {
            Value::Object(object) => {
                let literal = object.get("type").and_then(Value::as_str).filter(|_| object.contains_key("id"));
                if let Some(entity_type) = literal {
                    let bare = entity_type.rsplit("::").next().unwrap_or(entity_type);
                    if !SHARED.contains(&bare) {
                        return true;
                    }
                }
                object.values().any(walk)
            }
            Value::Array(items) => items.iter().any(walk),
            _ => false,
        }
    }
    // A policy that cannot be read back is taken as naming one: its items are decided apart.
    policy.to_json().map(|json| walk(&json)).unwrap_or(true)
}

/// The attribute names `policy` reads anywhere (`.name`, `has name`, of any entity or record);
/// `None` when it could read any: tags, whose keys are values, or a policy that cannot be read
/// back.
fn attributes_read_by(policy: &cedar_policy::Policy) -> Option<HashSet<String>> {
    fn walk(value: &Value, read: &mut HashSet<String>) -> Option<()> {
        match value {
            Value::Object(object) => {
                if object.contains_key("getTag") || object.contains_key("hasTag") {
                    return None;
                }
                for access in [".", "has"] {
                    if let Some(attribute) = object.get(access).and_then(|a| a.get("attr")).and_then(Value::as_str) {
                        read.insert(attribute.to_owned());
                    }
                }
                object.values().try_for_each(|inner| walk(inner, read))
            }
            Value::Array(items) => items.iter().try_for_each(|inner| walk(inner, read)),
            _ => Some(()),
        }
    }
    let mut read = HashSet::new();
    walk(&policy.to_json().ok()?, &mut read)?;
    Some(read)
}

/// The decision when none could be built: refused.
fn refused() -> Decision {
    Decision { allowed: false, policies: vec!["error".to_owned()] }
}

fn uid(entity_type: &str, id: &str) -> Result<EntityUid, String> {
    Ok(EntityUid::from_type_name_and_id(type_name(entity_type)?, EntityId::new(id)))
}

/// The entity type's parsed name, parsed once per process: parsing runs Cedar's parser, which
/// cost more than the decision itself (the types are the schema's, a bounded set).
fn type_name(entity_type: &str) -> Result<EntityTypeName, String> {
    static NAMES: OnceLock<RwLock<HashMap<String, EntityTypeName>>> = OnceLock::new();
    let names = NAMES.get_or_init(Default::default);
    if let Some(name) = names.read().unwrap_or_else(PoisonError::into_inner).get(entity_type) {
        return Ok(name.clone());
    }
    let name = EntityTypeName::from_str(&format!("{NAMESPACE}::{entity_type}")).map_err(|e| e.to_string())?;
    names.write().unwrap_or_else(PoisonError::into_inner).insert(entity_type.to_owned(), name.clone());
    Ok(name)
}

fn entity(
    uid: EntityUid,
    attrs: HashMap<String, RestrictedExpression>,
    parents: HashSet<EntityUid>,
) -> Result<Entity, String> {
    Entity::new(uid, attrs, parents).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::methods::MethodTable;
    use crate::proto::descriptor_pool;

    fn authorizer() -> Authorizer {
        Authorizer::new(&MethodTable::from_pool(descriptor_pool()).action_specs(), &[]).unwrap()
    }

    fn binding(role: &str, scope_type: &str, scope_id: &str) -> Binding {
        Binding { role: role.into(), scope_type: scope_type.into(), scope_id: scope_id.into() }
    }

    fn target(resource_type: &str, id: &str, tenant: Option<&str>) -> Target {
        Target {
            resource_type: resource_type.into(),
            id: id.into(),
            tenant_id: tenant.map(Into::into),
            ..Default::default()
        }
    }

    #[test]
    fn the_built_in_policies_validate_against_the_generated_schema() {
        let authorizer = authorizer();
        assert!(authorizer.schema_text().contains("entity PlatformTenant"), "{}", authorizer.schema_text());
        assert!(authorizer.schema_text().contains("action \"platform:tenants:create\""));
    }

    #[test]
    fn roles_grant_what_their_scope_covers_and_nothing_else() {
        let authorizer = authorizer();
        let admin_bindings = [binding("platform-admin", "platform", "platform")];
        let operator = Subject { principal_id: "prn_op", kind: "operator", tenant_id: None, bindings: &admin_bindings };
        let decision =
            authorizer.decide(&operator, "platform:tenants:create", &target("platform-tenant", "acme", Some("acme")));
        assert_eq!(decision, Decision { allowed: true, policies: vec!["platform-admin".into()] });

        let acme_admin = [binding("admin", "tenant", "acme")];
        let admin = Subject { principal_id: "prn_a", kind: "user", tenant_id: Some("acme"), bindings: &acme_admin };
        assert!(
            authorizer
                .decide(&admin, "platform:principals:create", &target("platform-principal", "", Some("acme")))
                .allowed
        );
        assert!(
            !authorizer
                .decide(&admin, "platform:principals:create", &target("platform-principal", "", Some("globex")))
                .allowed
        );
        assert!(
            !authorizer.decide(&admin, "platform:tenants:create", &target("platform-tenant", "x", Some("x"))).allowed
        );
        assert!(authorizer.decide(&admin, "compute:events:read", &target("compute-tenant", "", Some("acme"))).allowed);

        let acme_viewer = [binding("viewer", "tenant", "acme")];
        let viewer = Subject { principal_id: "prn_v", kind: "user", tenant_id: Some("acme"), bindings: &acme_viewer };
        assert!(authorizer.decide(&viewer, "compute:events:read", &target("compute-tenant", "", Some("acme"))).allowed);
        assert!(
            !authorizer.decide(&viewer, "compute:events:read", &target("compute-tenant", "", Some("globex"))).allowed
        );
        assert!(
            !authorizer
                .decide(&viewer, "platform:principals:create", &target("platform-principal", "", Some("acme")))
                .allowed
        );

        let nobody = Subject { principal_id: "prn_n", kind: "user", tenant_id: Some("acme"), bindings: &[] };
        let decision = authorizer.decide(&nobody, "compute:events:read", &target("compute-tenant", "", Some("acme")));
        assert_eq!(decision, Decision { allowed: false, policies: vec![] });
    }

    #[test]
    fn project_and_resource_roles_grant_nothing_under_another_tenant() {
        let authorizer = authorizer();
        let project_editor = [binding("editor", "project", "prj_globex"), binding("editor", "resource", "kcl_x")];
        let subject =
            Subject { principal_id: "prn_g", kind: "user", tenant_id: Some("globex"), bindings: &project_editor };
        let mut own = target("compute-kubernetes-cluster", "", Some("globex"));
        own.project_id = Some("prj_globex".into());
        assert!(authorizer.decide(&subject, "compute:kubernetes:create", &own).allowed, "its own project");
        let mut foreign = target("compute-kubernetes-cluster", "", Some("acme"));
        foreign.project_id = Some("prj_globex".into());
        assert!(!authorizer.decide(&subject, "compute:kubernetes:create", &foreign).allowed, "named under acme");
        let foreign_resource = target("compute-kubernetes-cluster", "kcl_x", Some("acme"));
        assert!(!authorizer.decide(&subject, "compute:kubernetes:delete", &foreign_resource).allowed);
        let own_resource = target("compute-kubernetes-cluster", "kcl_x", Some("globex"));
        assert!(authorizer.decide(&subject, "compute:kubernetes:delete", &own_resource).allowed);
    }

    #[test]
    fn deciding_a_lists_items_together_decides_each_as_alone() {
        let authorizer = authorizer();
        let bindings = [binding("viewer", "project", "prj_a"), binding("editor", "resource", "kcl_c")];
        let subject = Subject { principal_id: "prn_u", kind: "user", tenant_id: Some("acme"), bindings: &bindings };
        let mut in_project = target("compute-kubernetes-cluster", "kcl_a", Some("acme"));
        in_project.project_id = Some("prj_a".into());
        let mut other_project = target("compute-kubernetes-cluster", "kcl_b", Some("acme"));
        other_project.project_id = Some("prj_b".into());
        let bound = target("compute-kubernetes-cluster", "kcl_c", Some("acme"));
        let unbound = target("compute-kubernetes-cluster", "kcl_d", Some("acme"));
        let targets = [in_project, other_project, bound, unbound];
        let together = authorizer.decide_each(&subject, "compute:kubernetes:read", &targets);
        let alone: Vec<Decision> =
            targets.iter().map(|t| authorizer.decide(&subject, "compute:kubernetes:read", t)).collect();
        assert_eq!(together, alone);
        assert_eq!(together.iter().map(|d| d.allowed).collect::<Vec<_>>(), [true, false, true, false]);

        let mut foreign = targets.to_vec();
        foreign[3].tenant_id = Some("globex".into());
        foreign[2].id = "kcl_a".into();
        let mixed = authorizer.decide_each(&subject, "compute:kubernetes:read", &foreign);
        let alone: Vec<Decision> =
            foreign.iter().map(|t| authorizer.decide(&subject, "compute:kubernetes:read", t)).collect();
        assert_eq!(mixed, alone, "other tenants and shared ids are decided one by one");
    }

    /// A small deterministic generator, so that a failing case can be run again.
    struct Draw(u64);

    impl Draw {
        fn below(&mut self, n: usize) -> usize {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % n as u64) as usize
        }

        fn pick<'a>(&mut self, from: &[&'a str]) -> &'a str {
            from[self.below(from.len())]
        }
    }

    /// Policies an operator could add, over what a list's items differ in: attributes, project,
    /// owner, and one naming a resource by id.
    const EXTRA_POLICIES: [&str; 7] = [
        "permit (principal, action in BetterCompute::Action::\"read\", resource is BetterCompute::ComputeKubernetesCluster) \
         when { resource has poolId && resource.poolId == \"pool_b\" };",
        "forbid (principal, action, resource is BetterCompute::ComputeKubernetesCluster) \
         when { resource has providerAccountId && resource.providerAccountId == \"acct_2\" && principal.kind == \"user\" };",
        "forbid (principal, action, resource in BetterCompute::Project::\"prj_b\");",
        "permit (principal, action, resource) when { resource has owner && resource.owner == principal };",
        "forbid (principal, action, resource == BetterCompute::ComputeKubernetesCluster::\"kcl_3\");",
        "permit (principal, action in BetterCompute::Action::\"read\", resource) \
         when { resource has project && resource.project == BetterCompute::Project::\"prj_a\" };",
        "forbid (principal, action in BetterCompute::Action::\"read\", resource is BetterCompute::ComputeKubernetesCluster) \
         when { resource has name && resource.name like \"prod-*\" };",
    ];

    #[test]
    fn alike_items_decided_once_get_what_each_gets_alone_over_random_policies_and_rows() {
        let actions = MethodTable::from_pool(descriptor_pool()).action_specs();
        let mut draw = Draw(0x5eed_1234_abcd_0001);
        let (mut grouped_cases, mut apart_cases) = (0, 0);
        for case in 0..60 {
            let extra: Vec<(String, String)> = EXTRA_POLICIES
                .iter()
                .enumerate()
                .filter(|_| draw.below(2) == 0)
                .map(|(i, text)| (format!("extra-{i}.cedar"), (*text).to_owned()))
                .collect();
            let authorizer = Authorizer::new(&actions, &extra).unwrap();
            let roles = ["viewer", "editor", "admin"];
            let bindings: Vec<Binding> = (0..draw.below(3))
                .map(|_| match draw.below(3) {
                    0 => binding(draw.pick(&roles), "tenant", draw.pick(&["acme", "globex"])),
                    1 => binding(draw.pick(&roles), "project", draw.pick(&["prj_a", "prj_b"])),
                    _ => binding(draw.pick(&roles), "resource", draw.pick(&["kcl_1", "kcl_3", "kcl_5"])),
                })
                .collect();
            let principal = draw.pick(&["prn_u", "prn_w"]);
            let subject =
                Subject { principal_id: principal, kind: "user", tenant_id: Some("acme"), bindings: &bindings };
            let targets: Vec<Target> = (0..12)
                .map(|i| {
                    let mut target = target("compute-kubernetes-cluster", &format!("kcl_{i}"), Some("acme"));
                    target.project_id =
                        [None, Some("prj_a".to_owned()), Some("prj_b".to_owned())][draw.below(3)].clone();
                    target.owner_id = Some(draw.pick(&["prn_u", "prn_w"]).to_owned());
                    target.attributes.insert("poolId".into(), draw.pick(&["pool_a", "pool_b"]).into());
                    target.attributes.insert("providerAccountId".into(), draw.pick(&["acct_1", "acct_2"]).into());
                    target.attributes.insert("name".into(), draw.pick(&["web", "prod-api"]).into());
                    // Read by no policy: left out of what is remembered.
                    target.attributes.insert("idempotencyKey".into(), format!("key-{case}-{i}").into());
                    target
                })
                .collect();
            let permission = ["compute:kubernetes:read", "compute:kubernetes:delete"][case % 2];
            let together = authorizer.decide_each(&subject, permission, &targets);
            let alone: Vec<Decision> = targets
                .iter()
                .map(|t| authorizer.decide_apart(&subject, permission, std::slice::from_ref(t)).remove(0))
                .collect();
            assert_eq!(together, alone, "case {case}: policies {extra:?}, bindings {bindings:?}");
            let remembered: Vec<Decision> =
                targets.iter().map(|t| authorizer.decide(&subject, permission, t)).collect();
            assert_eq!(remembered, alone, "case {case}, decided again from memory");
            if authorizer.names_resources { apart_cases += 1 } else { grouped_cases += 1 }
        }
        assert!(grouped_cases > 12 && apart_cases > 12, "both paths ran: {grouped_cases} grouped, {apart_cases} apart");
    }

    #[test]
    fn decisions_are_remembered_without_the_attributes_no_policy_reads() {
        let authorizer = authorizer();
        let bindings = [binding("editor", "tenant", "acme")];
        let editor = Subject { principal_id: "prn_e", kind: "user", tenant_id: Some("acme"), bindings: &bindings };
        for n in 0..50 {
            let mut create = target("compute-kubernetes-cluster", "", Some("acme"));
            create.attributes.insert("name".into(), format!("web-{n}").into());
            create.attributes.insert("idempotencyKey".into(), format!("key-{n}").into());
            assert!(authorizer.decide(&editor, "compute:kubernetes:create", &create).allowed);
        }
        let remembered = authorizer.decided.lock().unwrap().len();
        assert_eq!(remembered, 1, "fifty creates with their own names and keys are one decision");

        let actions = MethodTable::from_pool(descriptor_pool()).action_specs();
        let by_name = ("names.cedar".to_owned(), EXTRA_POLICIES[6].to_owned());
        let reading = Authorizer::new(&actions, &[by_name]).unwrap();
        assert!(reading.attributes_read.as_ref().unwrap().contains("name"));
        assert!(!reading.attributes_read.as_ref().unwrap().contains("idempotencyKey"));
    }

    #[test]
    fn a_policy_naming_a_resource_keeps_ids_apart() {
        let actions = MethodTable::from_pool(descriptor_pool()).action_specs();
        assert!(!authorizer().names_resources, "the built-in policies name no resource");
        let naming = ("one.cedar".to_owned(), EXTRA_POLICIES[4].to_owned());
        assert!(Authorizer::new(&actions, &[naming]).unwrap().names_resources);
        let project = ("project.cedar".to_owned(), EXTRA_POLICIES[2].to_owned());
        assert!(!Authorizer::new(&actions, &[project]).unwrap().names_resources, "a project is shared");
    }

    #[test]
    fn sealed_credentials_and_private_keys_never_become_attributes() {
        let authorizer = authorizer();
        let bindings = [binding("platform-admin", "platform", "platform")];
        let operator = Subject { principal_id: "prn_op", kind: "operator", tenant_id: None, bindings: &bindings };
        let principal = uid("Principal", operator.principal_id).unwrap();
        let action = uid("Action", "platform:accounts:create").unwrap();
        let mut account = target("platform-account", "", None);
        account.attributes.insert("credentials".into(), "dop_v1_hunter2".into());
        account.attributes.insert("name".into(), "main".into());
        let mut certificate = target("compute-certificate", "", Some("acme"));
        certificate.attributes.insert("privateKey".into(), "-----BEGIN PRIVATE KEY-----sekrit".into());
        certificate.attributes.insert("name".into(), "web".into());
        for target in [account, certificate] {
            let (entities, _) =
                authorizer.entities(&operator, &principal, &action, std::slice::from_ref(&target)).unwrap();
            let json = entities.to_json_value().unwrap().to_string();
            assert!(!json.contains("hunter2") && !json.contains("sekrit"), "{json}");
            assert!(!json.contains("credentials") && !json.contains("privateKey"), "{json}");
            assert!(json.contains("\"name\""), "plain attributes stay: {json}");
        }
        assert!(!authorizer.schema_text().contains("credentials"), "{}", authorizer.schema_text());
        assert!(!authorizer.schema_text().contains("privateKey"), "{}", authorizer.schema_text());
    }

    #[test]
    fn operator_policies_must_validate() {
        let actions = MethodTable::from_pool(descriptor_pool()).action_specs();
        let bad =
            ("mine.cedar".to_owned(), "permit (principal, action, resource) when { resource.nonsense };".to_owned());
        assert!(Authorizer::new(&actions, &[bad]).unwrap_err().contains("validate"));
        let broken = ("mine.cedar".to_owned(), "permit (".to_owned());
        assert!(Authorizer::new(&actions, &[broken]).unwrap_err().contains("mine.cedar"));
        let forbid = (
            "freeze.cedar".to_owned(),
            "@id(\"freeze\") forbid (principal, action == BetterCompute::Action::\"platform:tenants:delete\", resource);".to_owned(),
        );
        let authorizer = Authorizer::new(&actions, &[forbid]).unwrap();
        let bindings = [binding("platform-admin", "platform", "platform")];
        let operator = Subject { principal_id: "prn_op", kind: "operator", tenant_id: None, bindings: &bindings };
        let decision =
            authorizer.decide(&operator, "platform:tenants:delete", &target("platform-tenant", "acme", Some("acme")));
        assert_eq!(decision, Decision { allowed: false, policies: vec!["freeze".into()] });
    }
}
