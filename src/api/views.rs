//! What the views of stored rows have alike, turned into message fields once: the version and
//! times of a row that can be deleted ([`stamps`]), and the common fields of an asynchronous
//! resource ([`meta_view`], from its [`ResourceMeta`]). A view names its own fields and takes
//! the rest from these with `..`:
//!
//! ```text
//! Network { description: row.description, subnets, ..meta_view(row.meta) }
//! ```
//!
//! A message gets them by its line in the `impl` lists at the bottom.

use super::timestamp;
use crate::domain::drift::Drift;
use crate::domain::problem::Problem;
use crate::domain::states::LifecycleState;
use crate::proto::compute;
use crate::proto::compute::{
    Certificate, Instance, KubernetesCluster, KubernetesNodePool, KubernetesSubstrate, LoadBalancer, Network, Volume,
};
use crate::proto::platform::{Account, Pool, Project, Tenant};
use crate::provider::ErrorClass;
use crate::store::ResourceMeta;

/// A message that shows a row's version, creation, last change and deletion.
pub(super) trait Stamped: Default {
    /// The message with those four fields set and the rest empty.
    fn stamped(version: i64, created_at: i64, updated_at: i64, deleted_at: Option<i64>) -> Self;
}

/// A message of an asynchronous resource: it shows every field of [`ResourceMeta`] but those
/// the store keeps to itself (the owner, the account, the idempotency key and digest, the
/// deletion request).
pub(super) trait ResourceView: Stamped {
    /// The message with the common fields set and the rest empty.
    fn from_meta<S: LifecycleState>(meta: ResourceMeta<S>) -> Self;
}

/// The version and times of a row, for the rest of its view (`..stamps(..)`).
pub(super) fn stamps<M: Stamped>(version: i64, created_at: i64, updated_at: i64, deleted_at: Option<i64>) -> M {
    M::stamped(version, created_at, updated_at, deleted_at)
}

/// The common fields of an asynchronous resource, for the rest of its view (`..meta_view(..)`).
pub(super) fn meta_view<M: ResourceView, S: LifecycleState>(meta: ResourceMeta<S>) -> M {
    M::from_meta(meta)
}

/// Why a resource's passes keep failing, as its view's `problem` shows it: the last failure's
/// words and, for a class a person must act on, what to do.
pub(super) fn problem_view(problem: Option<Problem>) -> Option<compute::Problem> {
    let problem = problem?;
    let advice = ErrorClass::parse(&problem.class).and_then(ErrorClass::advice);
    let message = match advice {
        Some(advice) => format!("{}; {advice}", problem.message),
        None => problem.message,
    };
    Some(compute::Problem {
        class: problem.class,
        message,
        since: Some(timestamp(problem.since)),
        attempts: problem.attempts,
        next_attempt_at: Some(timestamp(problem.next_attempt_at)),
    })
}

/// The drift a resource's last pass found, as its view's `drift[]` shows it (values as JSON
/// text).
pub(super) fn drift_view(drift: Vec<Drift>) -> Vec<compute::Drift> {
    drift
        .into_iter()
        .map(|d| compute::Drift {
            field: d.field,
            applied: d.applied.to_string(),
            found: d.found.to_string(),
            since: Some(timestamp(d.since)),
            action: d.action.as_str().to_owned(),
        })
        .collect()
}

/// Implements [`Stamped`] for messages whose four fields have the same names.
macro_rules! stamped {
    ($($message:ty),*) => {$(
        impl Stamped for $message {
            fn stamped(version: i64, created_at: i64, updated_at: i64, deleted_at: Option<i64>) -> Self {
                Self {
                    version,
                    created_at: Some(timestamp(created_at)),
                    updated_at: Some(timestamp(updated_at)),
                    deleted_at: deleted_at.map(timestamp),
                    ..Self::default()
                }
            }
        }
    )*};
}

/// Implements [`ResourceView`] (and [`Stamped`]) for messages whose common fields have the
/// names of [`ResourceMeta`]'s.
macro_rules! resource_view {
    ($($message:ty),*) => {
        stamped!($($message),*);
        $(
            impl ResourceView for $message {
                fn from_meta<S: LifecycleState>(meta: ResourceMeta<S>) -> Self {
                    Self {
                        id: meta.id,
                        tenant_id: meta.tenant_id,
                        project_id: meta.project_id.unwrap_or_default(),
                        pool_id: meta.pool_id,
                        name: meta.name,
                        state: meta.state.as_str().to_owned(),
                        message: meta.message,
                        drift: drift_view(meta.drift),
                        problem: problem_view(meta.problem),
                        ..stamps(meta.version, meta.created_at, meta.updated_at, meta.deleted_at)
                    }
                }
            }
        )*
    };
}

stamped!(Tenant, Project, Account, Pool, KubernetesNodePool, KubernetesSubstrate);
resource_view!(Network, Instance, Certificate, Volume, LoadBalancer, KubernetesCluster);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::states::ProvisionState;

    #[test]
    fn a_resource_view_shows_the_common_fields_and_leaves_its_own_empty() {
        let meta = ResourceMeta {
            id: "net_1".into(),
            tenant_id: "acme".into(),
            pool_id: "pool_1".into(),
            owner_id: "usr_1".into(),
            name: "web".into(),
            deleted_at: Some(3_000_001),
            ..ResourceMeta::<ProvisionState>::pending(1_500_000)
        };
        let network: Network = meta_view(meta);
        assert_eq!(
            (network.id.as_str(), network.project_id.as_str(), network.state.as_str()),
            ("net_1", "", "pending")
        );
        assert_eq!(
            (network.version, network.created_at, network.updated_at),
            (1, Some(timestamp(1_500_000)), Some(timestamp(1_500_000)))
        );
        assert_eq!(network.deleted_at, Some(prost_types::Timestamp { seconds: 3, nanos: 1_000 }));
        assert!(network.description.is_empty() && network.subnets.is_empty());
    }
}
