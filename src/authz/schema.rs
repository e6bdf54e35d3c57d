//! The Cedar schema, generated from the method table: base entity types (platform, tenant,
//! project, principal), one entity type per resource type, and one action per permission in
//! the groups the built-in policies grant.

use std::collections::{BTreeMap, BTreeSet};

/// One permission as a method uses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ActionSpec {
    /// `compute:kubernetes:create`.
    pub permission: String,
    /// `compute-kubernetes-cluster`.
    pub resource_type: String,
    /// The attributes a request gives the resource (JSON names; all strings, integers or booleans).
    pub attributes: Vec<(String, AttributeKind)>,
}

/// The Cedar type of an attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum AttributeKind {
    /// `String`.
    String,
    /// `Long`.
    Long,
    /// `Bool`.
    Bool,
}

impl AttributeKind {
    fn cedar(self) -> &'static str {
        match self {
            AttributeKind::String => "String",
            AttributeKind::Long => "Long",
            AttributeKind::Bool => "Bool",
        }
    }
}

/// Attributes every resource entity has; request attributes of the same name are left out.
pub const RESERVED_ATTRIBUTES: &[&str] = &["tenant", "project", "owner", "admins", "editors", "viewers"];

/// Whether a request field is a secret (a provider credential, a private key, a token or
/// password): its value never becomes an attribute, so no policy, decision log or diagnostic
/// can carry it.
pub fn is_secret_attribute(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    ["credential", "privatekey", "secret", "password", "token"].iter().any(|secret| name.contains(secret))
}

/// The entity type of a resource type: `compute-kubernetes-cluster` is
/// `ComputeKubernetesCluster`; `platform` is the platform itself.
pub fn entity_type_of(resource_type: &str) -> String {
    if resource_type == "platform" {
        return "Platform".to_owned();
    }
    resource_type
        .split(['-', '_', ':'])
        .filter(|part| !part.is_empty())
        .map(|part| {
            let mut chars = part.chars();
            chars.next().map(|first| first.to_ascii_uppercase().to_string() + chars.as_str()).unwrap_or_default()
        })
        .collect()
}

/// The groups a permission belongs to, which the built-in policies grant to roles.
pub fn groups_of(permission: &str) -> Vec<&'static str> {
    let verb = permission.rsplit(':').next().unwrap_or_default();
    // A pool's join tokens let machines into it, and its metal machines hold BMC credentials and
    // are given join tokens when deployed: its tenant's admins decide, like keys.
    let identity = [
        "platform:principals:",
        "platform:api-keys:",
        "platform:role-bindings:",
        "compute:join-tokens:",
        "compute:metal:",
    ]
    .iter()
    .any(|prefix| permission.starts_with(prefix));
    // A forced delete leaves provider objects behind for someone to answer for: admins only.
    if identity || verb == "force-delete" {
        return vec!["administer"];
    }
    if !permission.starts_with("compute:") {
        // The operator's catalog: platform admins only.
        return Vec::new();
    }
    match verb {
        "read" => vec!["read", "own"],
        "create" => vec!["write"],
        _ => vec!["write", "own"],
    }
}

/// The schema in Cedar's schema syntax.
pub fn cedar_schema(actions: &[ActionSpec]) -> String {
    let mut attributes: BTreeMap<String, BTreeMap<String, AttributeKind>> = BTreeMap::new();
    let mut resources_of: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for action in actions {
        let entity = entity_type_of(&action.resource_type);
        let entry = attributes.entry(entity.clone()).or_default();
        for (name, kind) in &action.attributes {
            if !RESERVED_ATTRIBUTES.contains(&name.as_str()) && !is_secret_attribute(name) {
                entry.entry(name.clone()).or_insert(*kind);
            }
        }
        resources_of.entry(action.permission.clone()).or_default().insert(entity);
    }
    let roles = "admins: Set<Principal>, editors: Set<Principal>, viewers: Set<Principal>";
    let mut out = String::from("namespace BetterCompute {\n");
    out.push_str("  entity Platform = { admins: Set<Principal> };\n");
    out.push_str(&format!("  entity Tenant in [Platform] = {{ {roles} }};\n"));
    out.push_str(&format!("  entity Project in [Tenant] = {{ {roles} }};\n"));
    out.push_str("  entity Principal = { kind: String, tenant?: Tenant };\n");
    for (entity, attrs) in &attributes {
        if entity == "Platform" {
            continue;
        }
        let mut fields = vec![
            "tenant?: Tenant".to_owned(),
            "project?: Project".to_owned(),
            "owner?: Principal".to_owned(),
            roles.to_owned(),
        ];
        fields.extend(attrs.iter().map(|(name, kind)| format!("{name:?}?: {}", kind.cedar())));
        out.push_str(&format!("  entity {entity} in [Project, Tenant, Platform] = {{ {} }};\n", fields.join(", ")));
    }
    for group in ["read", "write", "administer", "own"] {
        out.push_str(&format!("  action {group:?};\n"));
    }
    for (permission, entities) in &resources_of {
        let groups: Vec<String> = groups_of(permission).iter().map(|g| format!("Action::{g:?}")).collect();
        let member_of = if groups.is_empty() { String::new() } else { format!(" in [{}]", groups.join(", ")) };
        let resources: Vec<&str> = entities.iter().map(String::as_str).collect();
        out.push_str(&format!(
            "  action {permission:?}{member_of} appliesTo {{ principal: [Principal], resource: [{}] }};\n",
            resources.join(", ")
        ));
    }
    out.push_str("}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_types_become_entity_types() {
        assert_eq!(entity_type_of("compute-kubernetes-cluster"), "ComputeKubernetesCluster");
        assert_eq!(entity_type_of("compute-provider-load-balancer"), "ComputeProviderLoadBalancer");
        assert_eq!(entity_type_of("platform"), "Platform");
    }

    #[test]
    fn secrets_are_no_attributes() {
        for secret in ["credentials", "privateKey", "apiToken", "password", "clientSecret"] {
            assert!(is_secret_attribute(secret), "{secret}");
        }
        for plain in ["name", "region", "leafCertificate", "providerAccountId", "idempotencyKey"] {
            assert!(!is_secret_attribute(plain), "{plain}");
        }
        let actions = [ActionSpec {
            permission: "platform:accounts:create".into(),
            resource_type: "platform-account".into(),
            attributes: vec![("credentials".into(), AttributeKind::String), ("name".into(), AttributeKind::String)],
        }];
        let schema = cedar_schema(&actions);
        assert!(schema.contains("\"name\"?: String") && !schema.contains("credentials"), "{schema}");
    }

    #[test]
    fn permissions_fall_in_the_groups_roles_grant() {
        assert_eq!(groups_of("compute:kubernetes:read"), ["read", "own"]);
        assert_eq!(groups_of("compute:kubernetes:create"), ["write"]);
        assert_eq!(groups_of("compute:kubernetes:connect"), ["write", "own"]);
        assert_eq!(groups_of("platform:api-keys:create"), ["administer"]);
        assert_eq!(groups_of("compute:join-tokens:read"), ["administer"], "an editor or viewer sees no token");
        assert_eq!(groups_of("compute:kubernetes:force-delete"), ["administer"], "an editor or owner may not force");
        assert!(groups_of("platform:tenants:create").is_empty());
    }
}
