//! The method table: every method of the API, read from the descriptors with its gRPC path,
//! its documented JSON path (`google.api.http`) and its authorization option. The API layer
//! routes and authorizes by it; the authorizer derives its Cedar schema from it.

use std::collections::HashMap;
use std::sync::Arc;

use prost_reflect::{DescriptorPool, Kind, MethodDescriptor, Value};

use crate::authz::{ActionSpec, AttributeKind};

use crate::proto::bettercompute::options::v1::Authorization;

/// The packages whose services form the API.
const API_PACKAGE_PREFIX: &str = "bettercompute.";

/// Permissions that services decide on top of a method's own (secondary decisions) and that
/// no method carries: (permission, resource type). Load balancers decide
/// `compute:instances:update` on each instance they name, though instances have no update.
pub const SECONDARY_PERMISSIONS: &[(&str, &str)] = &[("compute:instances:update", "compute-instance")];

/// The field of a delete request that ends the resource at once (leaving orphans).
pub const FORCE_FIELD: &str = "force";

/// The permission a delete with `force: true` decides besides the delete's own, on the same
/// resource: `compute:networks:delete` gives `compute:networks:force-delete`. Declared by the
/// descriptors alone: every method whose request has a boolean `force` field has one.
pub fn force_permission(delete_permission: &str) -> String {
    let kind = delete_permission.strip_suffix(":delete").unwrap_or(delete_permission);
    format!("{kind}:force-delete")
}

/// One method of the API.
#[derive(Clone, Debug)]
pub struct Method {
    /// `bettercompute.platform.v1.Tenants/Create`: the label of logs and metrics.
    pub name: String,
    /// `/bettercompute.platform.v1.Tenants/Create`.
    pub grpc_path: String,
    /// The JSON path, `/api/platform/tenants/create`.
    pub http_path: Option<String>,
    /// The method's descriptor: input and output types.
    pub descriptor: MethodDescriptor,
    /// How the method is authorized.
    pub authorization: Option<Authorization>,
}

/// Every method, by gRPC path and by JSON path.
#[derive(Debug, Default)]
pub struct MethodTable {
    by_grpc_path: HashMap<String, Arc<Method>>,
    by_http_path: HashMap<String, Arc<Method>>,
}

impl MethodTable {
    /// Reads every method of the API packages from `pool`.
    pub fn from_pool(pool: &DescriptorPool) -> Self {
        let http = pool.get_extension_by_name("google.api.http");
        let authorization = pool.get_extension_by_name("bettercompute.options.v1.authorization");
        let mut table = MethodTable::default();
        for service in pool.services().filter(|s| s.full_name().starts_with(API_PACKAGE_PREFIX)) {
            for descriptor in service.methods() {
                let options = descriptor.options();
                let http_path = http.as_ref().and_then(|ext| match options.get_extension(ext).as_ref() {
                    Value::Message(rule) => match rule.get_field_by_name("post").as_deref() {
                        Some(Value::String(path)) if !path.is_empty() => Some(path.clone()),
                        _ => None,
                    },
                    _ => None,
                });
                let authorization = authorization.as_ref().and_then(|ext| {
                    options
                        .has_extension(ext)
                        .then(|| match options.get_extension(ext).as_ref() {
                            Value::Message(message) => message.transcode_to::<Authorization>().ok(),
                            _ => None,
                        })
                        .flatten()
                });
                let method = Arc::new(Method {
                    name: format!("{}/{}", service.full_name(), descriptor.name()),
                    grpc_path: format!("/{}/{}", service.full_name(), descriptor.name()),
                    http_path,
                    descriptor,
                    authorization,
                });
                table.by_grpc_path.insert(method.grpc_path.clone(), method.clone());
                if let Some(path) = &method.http_path {
                    table.by_http_path.insert(path.clone(), method.clone());
                }
            }
        }
        table
    }

    /// The method served at a gRPC path.
    pub fn by_grpc_path(&self, path: &str) -> Option<&Arc<Method>> {
        self.by_grpc_path.get(path)
    }

    /// The method served at a JSON path.
    pub fn by_http_path(&self, path: &str) -> Option<&Arc<Method>> {
        self.by_http_path.get(path)
    }

    /// Every method, in no particular order.
    pub fn iter(&self) -> impl Iterator<Item = &Arc<Method>> {
        self.by_grpc_path.values()
    }

    /// What the authorizer's schema is made of: each method's permission on its resource type,
    /// with the scalar fields of its request as the resource's attributes.
    pub fn action_specs(&self) -> Vec<ActionSpec> {
        let mut specs: Vec<ActionSpec> = self
            .iter()
            .filter_map(|method| {
                let authorization = method.authorization.as_ref()?;
                let input = method.descriptor.input();
                let mut attributes: Vec<(String, AttributeKind)> = input
                    .fields()
                    .filter(|field| !field.is_list() && !field.is_map())
                    .filter_map(|field| {
                        let kind = match field.kind() {
                            Kind::String => AttributeKind::String,
                            Kind::Bool => AttributeKind::Bool,
                            Kind::Int32 | Kind::Int64 | Kind::Uint32 | Kind::Sint32 | Kind::Sint64 => {
                                AttributeKind::Long
                            }
                            _ => return None,
                        };
                        Some((field.json_name().to_owned(), kind))
                    })
                    .collect();
                if input.get_field_by_name("pool_id").is_some() {
                    // The decision resolves the pool's account (`Service::authorize`).
                    attributes.push(("providerAccountId".to_owned(), AttributeKind::String));
                }
                Some(ActionSpec {
                    permission: authorization.permission.clone(),
                    resource_type: authorization.resource.clone(),
                    attributes,
                })
            })
            .collect();
        specs.extend(SECONDARY_PERMISSIONS.iter().map(|(permission, resource_type)| ActionSpec {
            permission: (*permission).to_owned(),
            resource_type: (*resource_type).to_owned(),
            attributes: Vec::new(),
        }));
        specs.extend(self.iter().filter_map(|method| {
            let authorization = method.authorization.as_ref()?;
            let force = method.descriptor.input().get_field_by_name(FORCE_FIELD)?;
            (force.kind() == Kind::Bool).then(|| ActionSpec {
                permission: force_permission(&authorization.permission),
                resource_type: authorization.resource.clone(),
                attributes: Vec::new(),
            })
        }));
        specs.sort_by(|a, b| (&a.permission, &a.resource_type).cmp(&(&b.permission, &b.resource_type)));
        specs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::descriptor_pool;

    #[test]
    fn every_method_has_a_post_path_and_an_authorization() {
        let table = MethodTable::from_pool(descriptor_pool());
        assert!(table.iter().count() >= 5);
        for method in table.iter() {
            let path =
                method.http_path.as_deref().unwrap_or_else(|| panic!("{} has no google.api.http post", method.name));
            assert!(path.starts_with("/api/"), "{path}");
            let authorization =
                method.authorization.as_ref().unwrap_or_else(|| panic!("{} has no authorization", method.name));
            assert!(!authorization.permission.is_empty() && !authorization.resource.is_empty(), "{}", method.name);
        }
        let specs = table.action_specs();
        let force = specs.iter().find(|s| s.permission == "compute:networks:force-delete").expect("declared");
        assert_eq!(force.resource_type, "compute-network");
        let create = table.by_http_path("/api/platform/tenants/create").unwrap();
        assert_eq!(create.grpc_path, "/bettercompute.platform.v1.Tenants/Create");
        assert_eq!(create.authorization.as_ref().unwrap().permission, "platform:tenants:create");
    }
}
