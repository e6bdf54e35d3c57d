//! The services: the only place business rules live, one file per resource. A service takes a
//! request that the API layer has decoded and validated against its descriptor, checks what no
//! annotation can express, and records the desired state in one store transaction. It never
//! calls a provider: reconcilers do that.

mod accounts;
mod api_keys;
mod budgets;
pub mod checks;
mod events;
mod offers;
mod pools;
mod projects;
mod quotas;
mod tenants;

pub use api_keys::{ApiKeyToken, BootstrapOutcome};

use crate::secrets::SecretKey;
use crate::store::Store;

/// Who is calling: the principal an API key acts as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Caller {
    /// The principal's id.
    pub principal_id: String,
    /// The kind of principal.
    pub kind: PrincipalKind,
    /// The tenant of a tenant principal.
    pub tenant_id: Option<String>,
}

/// The kinds of principal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrincipalKind {
    /// An operator of the platform.
    Operator,
    /// A person of a tenant.
    User,
    /// A program of a tenant.
    ServiceAccount,
}

impl PrincipalKind {
    /// The stored spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            PrincipalKind::Operator => "operator",
            PrincipalKind::User => "user",
            PrincipalKind::ServiceAccount => "service-account",
        }
    }

    /// Parses the stored spelling.
    pub fn parse(text: &str) -> Option<PrincipalKind> {
        match text {
            "operator" => Some(PrincipalKind::Operator),
            "user" => Some(PrincipalKind::User),
            "service-account" => Some(PrincipalKind::ServiceAccount),
            _ => None,
        }
    }
}

/// What a service knows of the call it serves.
#[derive(Clone, Debug)]
pub struct Context {
    /// The authenticated caller.
    pub caller: Caller,
    /// The request id, for logs and audit.
    pub request_id: String,
}

/// The services, sharing one store.
#[derive(Clone, Debug)]
pub struct Service {
    /// Where the desired state is recorded.
    store: Store,
    /// Seals provider credentials; without it accounts cannot be written.
    secret_key: Option<SecretKey>,
}

impl Service {
    /// Services over `store`.
    pub fn new(store: Store) -> Self {
        Self { store, secret_key: None }
    }

    /// The same services, sealing secrets (provider credentials) with `key`.
    pub fn with_secret_key(mut self, key: SecretKey) -> Self {
        self.secret_key = Some(key);
        self
    }

    /// The store, for the processes that wire services and reconcilers together.
    pub fn store(&self) -> &Store {
        &self.store
    }
}
