//! The states of the resources the worker converges (and of pool nodes), one enum per kind: the
//! store writes and reads them as their API spelling (`"pending"`), the services and reconcilers
//! name them as variants, so a misspelt state is a compile error rather than a row no query
//! finds.

use std::fmt;
use std::str::FromStr;

use sqlx::any::{Any, AnyValueRef};
use sqlx::encode::IsNull;
use sqlx::error::BoxDynError;
use sqlx::{Database, Decode, Encode, Type};

/// What the resource kit needs of every state enum: the states all kinds share, the spelling,
/// and which states the reconciler is still working in.
pub trait LifecycleState:
    Copy
    + Eq
    + Default
    + fmt::Debug
    + fmt::Display
    + FromStr<Err = UnknownState>
    + Type<Any>
    + for<'r> Decode<'r, Any>
    + for<'q> Encode<'q, Any>
    + Send
    + Sync
    + Unpin
    + 'static
{
    /// Recorded and not asked of the provider yet: where every resource starts.
    const PENDING: Self;
    /// Being deleted at the provider.
    const DELETING: Self;
    /// Gone; the row is kept.
    const DELETED: Self;
    /// The provider refused; the row's `message` says why.
    const ERROR: Self;

    /// The state as the API and the store spell it.
    fn as_str(self) -> &'static str;

    /// Whether the reconciler is still working on it (a deadline applies).
    fn is_transient(self) -> bool;
}

/// Declares a state enum with its spelling in the API and the store, the conversions every
/// state enum has, and its column type (a row reads and binds it as its text, JSON as its
/// spelling). The first state is its `Default`. A kind of the resource kit also names its
/// `transient` states, those the reconciler is still working in, and is a [`LifecycleState`].
macro_rules! states {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal,)+ } transient: $($transient:ident)|+) => {
        states!($(#[$doc])* $name { $($variant = $text,)+ });

        impl LifecycleState for $name {
            const PENDING: Self = $name::Pending;
            const DELETING: Self = $name::Deleting;
            const DELETED: Self = $name::Deleted;
            const ERROR: Self = $name::Error;

            fn as_str(self) -> &'static str {
                $name::as_str(self)
            }

            fn is_transient(self) -> bool {
                matches!(self, $($name::$transient)|+)
            }
        }
    };
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $(#[doc = $text] $variant,)+
        }

        impl $name {
            /// Every state, in the order of the lifecycle.
            pub const ALL: &'static [$name] = &[$($name::$variant,)+];

            /// The state as the API and the store spell it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)+
                }
            }
        }

        impl Default for $name {
            fn default() -> Self {
                $name::ALL[0]
            }
        }

        impl Type<Any> for $name {
            fn type_info() -> sqlx::any::AnyTypeInfo {
                <str as Type<Any>>::type_info()
            }
        }

        impl<'r> Decode<'r, Any> for $name {
            fn decode(value: AnyValueRef<'r>) -> Result<Self, BoxDynError> {
                Ok(<&str as Decode<'r, Any>>::decode(value)?.parse::<$name>()?)
            }
        }

        impl Encode<'_, Any> for $name {
            fn encode_by_ref(&self, buf: &mut <Any as Database>::ArgumentBuffer) -> Result<IsNull, BoxDynError> {
                <&str as Encode<'_, Any>>::encode(self.as_str(), buf)
            }
        }

        impl serde::Serialize for $name {
            fn serialize<Z: serde::Serializer>(&self, serializer: Z) -> Result<Z::Ok, Z::Error> {
                serializer.serialize_str(self.as_str())
            }
        }

        impl<'de> serde::Deserialize<'de> for $name {
            fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
                String::deserialize(deserializer)?.parse().map_err(serde::de::Error::custom)
            }
        }

        impl FromStr for $name {
            type Err = UnknownState;

            fn from_str(text: &str) -> Result<Self, UnknownState> {
                match text {
                    $($text => Ok($name::$variant),)+
                    _ => Err(UnknownState { kind: stringify!($name), text: text.to_owned() }),
                }
            }
        }

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str(self.as_str())
            }
        }

        impl From<$name> for String {
            fn from(state: $name) -> String {
                state.as_str().to_owned()
            }
        }
    };
}

/// A state column where the empty text means none (a machine's state before its first move).
pub fn state_or_none<S: FromStr<Err = UnknownState>>(text: &str) -> Result<Option<S>, UnknownState> {
    if text.is_empty() { Ok(None) } else { text.parse().map(Some) }
}

/// The state a caller asked for in `field`, one of `accepted`; else `INVALID_INPUT` naming the
/// field and the states it accepts (a caller may not ask for every state: `deleted` is the
/// delete's).
pub fn requested_state<S: Copy + fmt::Display>(field: &str, text: &str, accepted: &[S]) -> crate::error::Result<S> {
    if let Some(state) = accepted.iter().copied().find(|state| state.to_string() == text) {
        return Ok(state);
    }
    let spelled: Vec<String> = accepted.iter().map(ToString::to_string).collect();
    Err(crate::error::Error::fields(vec![crate::error::FieldViolation::new(
        field,
        format!("{text:?} is not a state it may be given; use one of {}", spelled.join(", ")),
    )]))
}

/// A stored state no enum of its kind spells: a row written by a newer release, or damage.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownState {
    /// The enum: `ClusterState`.
    pub kind: &'static str,
    /// What was stored.
    pub text: String,
}

impl fmt::Display for UnknownState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?} is not a {}", self.text, self.kind)
    }
}

impl std::error::Error for UnknownState {}

/// A stored state the code does not know is damage, or a row of a newer release: internal.
impl From<UnknownState> for crate::error::Error {
    fn from(unknown: UnknownState) -> Self {
        crate::error::Error::internal(unknown.to_string())
    }
}

// What each state means: `pending`, recorded and not asked of the provider yet; `provisioning`,
// the provider is making it; `ready`, converged; `updating`, a change is converging; `deleting`,
// being deleted at the provider; `deleted`, gone (the row is kept); `error`, the provider
// refused, and the row's `message` says why.

states!(
    /// A Kubernetes cluster's state.
    ClusterState { Pending = "pending", Provisioning = "provisioning", Ready = "ready", Updating = "updating",
        Deleting = "deleting", Deleted = "deleted", Error = "error", }
    transient: Pending | Provisioning | Updating | Deleting
);

states!(
    /// A node pool's state: made with its cluster or by its own create, never `provisioning`.
    NodePoolState { Pending = "pending", Ready = "ready", Updating = "updating", Deleting = "deleting",
        Deleted = "deleted", Error = "error", }
    transient: Pending | Updating | Deleting
);

states!(
    /// The state of a provider resource with no in-place updates: a network, an instance, a
    /// subnet, a certificate.
    ProvisionState { Pending = "pending", Provisioning = "provisioning", Ready = "ready", Deleting = "deleting",
        Deleted = "deleted", Error = "error", }
    transient: Pending | Provisioning | Deleting
);

states!(
    /// A pool substrate's state, and each of its flavors': `provisioning` until it was first
    /// ready, `updating` after.
    SubstrateState { Pending = "pending", Provisioning = "provisioning", Ready = "ready", Updating = "updating",
        Deleting = "deleting", Deleted = "deleted", Error = "error", }
    transient: Pending | Provisioning | Updating | Deleting
);

states!(
    /// A pool node's state: `enrolled` for a bare-metal machine's node before its deploy joins
    /// it, `notReady` once its heartbeats stop, `left` once its daemon left.
    PoolNodeState { Enrolled = "enrolled", Ready = "ready", NotReady = "notReady", Left = "left", Deleted = "deleted", }
);

states!(
    /// A pool's state: an `archived` pool keeps its resources and takes no new ones.
    PoolState { Active = "active", Archived = "archived", Deleted = "deleted", }
);

states!(
    /// The state of a platform pool's offer to a tenant: a `suspended` offer takes nothing new.
    OfferState { Active = "active", Suspended = "suspended", }
);

states!(
    /// A bare-metal machine's provision state ([`crate::domain::metal_states`] has the table of
    /// its moves).
    MachineState { Enrolling = "enrolling", EnrollFailed = "enrollFailed", Manageable = "manageable",
        Inspecting = "inspecting", InspectFailed = "inspectFailed", Commissioning = "commissioning",
        CommissionFailed = "commissionFailed", Ready = "ready", Deploying = "deploying", Deployed = "deployed",
        DeployFailed = "deployFailed", Rescuing = "rescuing", Rescue = "rescue", RescueFailed = "rescueFailed",
        ExitingRescue = "exitingRescue", Releasing = "releasing", ReleaseFailed = "releaseFailed",
        Retiring = "retiring", Retired = "retired", Deleting = "deleting", }
);

states!(
    /// A load balancer's state: `pending` until the provider has made it, never `provisioning`.
    LoadBalancerState { Pending = "pending", Ready = "ready", Updating = "updating", Deleting = "deleting",
        Deleted = "deleted", Error = "error", }
    transient: Pending | Updating | Deleting
);

states!(
    /// A block-storage volume's state: `updating` while the provider grows, attaches or detaches
    /// it, never `provisioning`.
    VolumeState { Pending = "pending", Ready = "ready", Updating = "updating", Deleting = "deleting",
        Deleted = "deleted", Error = "error", }
    transient: Pending | Updating | Deleting
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_state_reads_back_as_itself_and_an_unknown_one_is_named() {
        for state in ClusterState::ALL {
            assert_eq!(state.as_str().parse::<ClusterState>(), Ok(*state));
        }
        for state in LoadBalancerState::ALL {
            assert_eq!(state.to_string().parse::<LoadBalancerState>(), Ok(*state));
        }
        let unknown = "paused".parse::<ProvisionState>().unwrap_err();
        assert_eq!(unknown.to_string(), "\"paused\" is not a ProvisionState");
        assert_eq!((ClusterState::Ready.as_str(), ClusterState::Deleting.as_str()), ("ready", "deleting"));
        assert!(!NodePoolState::ALL.iter().any(|s| s.as_str() == "provisioning"));
    }

    #[test]
    fn a_state_in_json_is_its_spelling_and_an_unknown_one_is_refused() {
        let json = serde_json::to_string(&[SubstrateState::Provisioning, SubstrateState::Ready]).unwrap();
        assert_eq!(json, r#"["provisioning","ready"]"#);
        assert_eq!(serde_json::from_str::<SubstrateState>(r#""updating""#).unwrap(), SubstrateState::Updating);
        let refused = serde_json::from_str::<SubstrateState>(r#""paused""#).unwrap_err();
        assert!(refused.to_string().contains("\"paused\" is not a SubstrateState"), "{refused}");
    }

    #[test]
    fn every_kind_starts_pending_and_knows_where_its_deadline_applies() {
        assert_eq!(ClusterState::default(), ClusterState::PENDING);
        assert!(ClusterState::Provisioning.is_transient() && !ClusterState::Ready.is_transient());
        assert!(!ProvisionState::Error.is_transient() && ProvisionState::Deleting.is_transient());
        assert!(LoadBalancerState::Updating.is_transient() && !LoadBalancerState::Deleted.is_transient());
        assert_eq!(NodePoolState::ERROR.as_str(), "error");
    }

    #[test]
    fn a_caller_may_ask_only_for_the_states_it_is_given() {
        let accepted = [PoolState::Active, PoolState::Archived];
        assert_eq!(requested_state("state", "archived", &accepted).unwrap(), PoolState::Archived);
        let refused = requested_state("state", "deleted", &accepted).unwrap_err();
        let text = format!("{refused:?}");
        assert!(text.contains("\"state\"") && text.contains("active, archived"), "{text}");
    }
}
