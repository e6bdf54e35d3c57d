//! The services: the only place business rules live, one file per resource. A service takes a
//! request that the API layer has decoded and validated against its descriptor, checks what no
//! annotation can express, and records the desired state in one store transaction. Changing a
//! provider is the reconcilers' work; a service calls a provider only for a read that must
//! answer now and changes nothing there: a cluster's credentials (its endpoint and CA) and the
//! Kubernetes versions a location offers (`kubernetes_clusters.rs`, through
//! `KubernetesModule`'s accounts).

mod accounts;
mod api_keys;
mod audit;
mod auth_cache;
mod authorize;
mod budgets;
mod certificate_pem;
mod certificates;
pub mod checks;
mod cluster_access;
mod create_once;
mod event_watches;
mod events;
mod findings;
mod instances;
mod join_tokens;
mod kubernetes;
mod kubernetes_clusters;
mod kubernetes_node_pools;
mod kubernetes_substrates;
mod load_balancer_checks;
mod load_balancers;
mod metal;
mod metal_boot;
mod networks;
mod nodes;
mod offers;
mod operations;
mod orphans;
mod page_tokens;
mod paging;
mod plans;
mod pools;
mod principals;
mod projects;
mod quotas;
mod reconcilers;
mod request_digest;
mod resource_calls;
mod role_bindings;
mod tenants;
pub mod update_mask;
mod volumes;
pub mod vps;

pub use crate::bearer::{Bearer, BearerKind};
pub use api_keys::{ApiKeyToken, BootstrapOutcome, Unconfirmed};
pub use authorize::audited;
pub use certificate_pem::{ParsedCertificate, parse_custom};
pub use join_tokens::IssuedJoinToken;
pub use kubernetes::{ClusterPlacement, KubernetesModule};
pub use kubernetes_clusters::{credential_account, legacy_request_digest};
pub use networks::check_subnets;
pub use nodes::{DEFAULT_HEARTBEAT_INTERVAL, DaemonCall, JOIN_TOKEN_CREDENTIAL, JoinedNode, NODE_CREDENTIAL};

use std::sync::{Arc, OnceLock};

use crate::authz::{Authorizer, Binding};
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
    /// The roles the principal holds, read when the call was authenticated.
    pub bindings: Vec<Binding>,
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
    /// What the schema stage found wrong with the request. Only a method whose service checks
    /// rules of its own is served with these (`api::context_with_rules`); it reports them with
    /// its own ([`Context::report`]), so that a request learns every violated field at once.
    pub schema: crate::error::Violations,
    /// The call is a rehearsal (`validateOnly`): decided and checked as it would be, answered as
    /// it would be answered, and nothing written (no audit either).
    pub rehearsal: bool,
}

impl Context {
    /// A context with a request the schema stage found nothing wrong with.
    pub fn new(caller: Caller, request_id: String) -> Self {
        Self { caller, request_id, schema: crate::error::Violations::new(), rehearsal: false }
    }

    /// `INVALID_INPUT` naming the schema stage's violations and `rules` (the service's own), or
    /// `Ok` when there are none.
    pub fn report(&self, rules: Vec<crate::error::FieldViolation>) -> crate::error::Result<()> {
        if self.schema.is_empty() && rules.is_empty() {
            return Ok(());
        }
        let mut all = self.schema.clone();
        for violation in rules {
            all.push(violation);
        }
        Err(all.into_error())
    }

    /// `error`, unless the schema stage found violations: then those. For a lookup that failed
    /// on a request whose fields were already wrong, the fields are the answer.
    pub fn schema_first(&self, error: crate::error::Error) -> crate::error::Error {
        if self.schema.is_empty() { error } else { self.schema.clone().into_error() }
    }
}

/// The services, sharing one store.
#[derive(Clone, Debug)]
pub struct Service {
    /// Where the desired state is recorded.
    store: Store,
    /// Decides every call and the secondary checks services make.
    authorizer: Arc<Authorizer>,
    /// The Kubernetes module's settings and seams.
    kubernetes: Arc<KubernetesModule>,
    /// Seals provider credentials; without it accounts cannot be written.
    secret_key: Option<SecretKey>,
    /// How often nodes are told to heartbeat.
    node_heartbeat_interval: std::time::Duration,
    /// Callers of recently used API keys, shared by every clone.
    auth_cache: Arc<auth_cache::AuthCache>,
}

impl Service {
    /// Services over `store`, deciding with the built-in policies.
    pub fn new(store: Store) -> Self {
        static BUILTIN: OnceLock<Arc<Authorizer>> = OnceLock::new();
        let authorizer = BUILTIN
            .get_or_init(|| {
                let actions = crate::methods::MethodTable::from_pool(crate::proto::descriptor_pool()).action_specs();
                Arc::new(Authorizer::new(&actions, &[]).expect("the built-in policies validate against the schema"))
            })
            .clone();
        Self {
            store,
            authorizer,
            secret_key: None,
            kubernetes: Arc::default(),
            node_heartbeat_interval: nodes::DEFAULT_HEARTBEAT_INTERVAL,
            auth_cache: Arc::default(),
        }
    }

    /// Services over `store`, deciding with the built-in policies and the operator's `policies`
    /// (file name, text); fails on a policy that does not parse or validate.
    pub fn with_policies(store: Store, policies: &[(String, String)]) -> Result<Self, String> {
        let actions = crate::methods::MethodTable::from_pool(crate::proto::descriptor_pool()).action_specs();
        Ok(Self {
            store,
            authorizer: Arc::new(Authorizer::new(&actions, policies)?),
            secret_key: None,
            kubernetes: Arc::default(),
            node_heartbeat_interval: nodes::DEFAULT_HEARTBEAT_INTERVAL,
            auth_cache: Arc::default(),
        })
    }

    /// The authorizer, for its schema.
    pub fn authorizer(&self) -> &Authorizer {
        &self.authorizer
    }

    /// The same services, sealing secrets (provider credentials) with `key`.
    pub fn with_secret_key(mut self, key: SecretKey) -> Self {
        self.secret_key = Some(key);
        self
    }

    /// The key page tokens are sealed with: the configured one, so that a token from one server
    /// opens on every other; without one (services built for a test), one made for the process.
    pub(crate) fn page_token_key(&self) -> SecretKey {
        static PROCESS_KEY: OnceLock<SecretKey> = OnceLock::new();
        self.secret_key.clone().unwrap_or_else(|| {
            PROCESS_KEY
                .get_or_init(|| {
                    SecretKey::from_base64(&SecretKey::generate_base64()).expect("a generated key is a key")
                })
                .clone()
        })
    }

    /// The same services, telling nodes to heartbeat every `interval`.
    pub fn with_node_heartbeat_interval(mut self, interval: std::time::Duration) -> Self {
        self.node_heartbeat_interval = interval;
        self
    }

    /// The same services over a rehearsal of the store ([`Store::rehearsal`]): a call made on
    /// them checks, decides and answers as it would, and writes nothing.
    pub fn rehearsal(&self) -> Service {
        Service { store: self.store.rehearsal(), ..self.clone() }
    }

    /// The services a call of `ctx` runs on: a rehearsal for a `validateOnly` call.
    pub fn for_call(&self, ctx: &Context) -> std::borrow::Cow<'_, Service> {
        if ctx.rehearsal { std::borrow::Cow::Owned(self.rehearsal()) } else { std::borrow::Cow::Borrowed(self) }
    }

    /// The store, for the processes that wire services and reconcilers together.
    pub fn store(&self) -> &Store {
        &self.store
    }
}
