//! Which kubeconfigs a change of identity ends. A kubeconfig is a Kubernetes service account
//! on the cluster (`bc-u-<hash>-<role>`), which outlives the API key it was asked with: when
//! its principal is deleted, or loses what the role needed (a removed binding), the account is
//! revoked in the same transaction and the cluster reconciler removes it from the cluster.

use super::Service;
use super::kubernetes_clusters::credential_account;
use crate::authz::{Binding, Subject, Target};
use crate::error::Result;
use crate::store::{AccessRevocation, CLUSTER_RESOURCE, PrincipalRow, RoleBindingRow};

/// Each kubeconfig role and the permissions on the cluster its `credentials` call needed.
const ROLES: [(&str, &[&str]); 3] = [
    ("view", &["compute:kubernetes:connect"]),
    ("edit", &["compute:kubernetes:connect", "compute:kubernetes:update"]),
    ("admin", &["compute:kubernetes:connect", "compute:kubernetes:delete"]),
];

impl Service {
    /// The accounts to revoke for `principal`: every role on every cluster of `tenant` and every
    /// cluster it holds a grant on when `remaining` is `None` (the principal is deleted); with
    /// the bindings it keeps, each role it may no longer be given there.
    pub(super) async fn access_revocations(
        &self,
        principal: &PrincipalRow,
        tenant: Option<&str>,
        remaining: Option<&[RoleBindingRow]>,
    ) -> Result<Vec<AccessRevocation>> {
        let bindings: Vec<Binding> = remaining
            .unwrap_or_default()
            .iter()
            .map(|b| Binding { role: b.role.clone(), scope_type: b.scope_type.clone(), scope_id: b.scope_id.clone() })
            .collect();
        let subject = Subject {
            principal_id: &principal.id,
            kind: &principal.kind,
            tenant_id: principal.tenant_id.as_deref(),
            bindings: &bindings,
        };
        let mut revocations = Vec::new();
        for cluster_id in self.store.cluster_access_candidates(tenant, &principal.id).await? {
            let Some(row) = self.store.authz_resource_fetch(CLUSTER_RESOURCE, &cluster_id).await? else {
                continue;
            };
            let target = Target {
                resource_type: CLUSTER_RESOURCE.to_owned(),
                id: cluster_id.clone(),
                tenant_id: row.tenant_id.clone(),
                project_id: row.project_id.clone(),
                owner_id: row.owner_id.clone(),
                attributes: row.attributes.clone(),
            };
            for (role, permissions) in ROLES {
                let still_allowed = remaining.is_some()
                    && permissions
                        .iter()
                        .all(|permission| self.authorizer.decide(&subject, permission, &target).allowed);
                if !still_allowed {
                    revocations.push(AccessRevocation {
                        cluster_id: cluster_id.clone(),
                        account: credential_account(&principal.id, role),
                        principal_id: principal.id.clone(),
                        tenant_id: row.tenant_id.clone().unwrap_or_default(),
                        role: role.to_owned(),
                    });
                }
            }
        }
        Ok(revocations)
    }
}
