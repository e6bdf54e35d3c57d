//! The states of the asynchronous resources, one enum per kind: the store writes and reads them
//! as their API spelling (`"pending"`), the services and reconcilers name them as variants, so a
//! misspelt state is a compile error rather than a row no query finds.

use std::fmt;
use std::str::FromStr;

/// Declares a state enum with its spelling in the API and the store, and the conversions every
/// state enum has.
macro_rules! states {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $text:literal,)+ }) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
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

        impl PartialEq<str> for $name {
            fn eq(&self, other: &str) -> bool {
                self.as_str() == other
            }
        }

        impl PartialEq<&str> for $name {
            fn eq(&self, other: &&str) -> bool {
                self.as_str() == *other
            }
        }

        impl PartialEq<$name> for &str {
            fn eq(&self, other: &$name) -> bool {
                *self == other.as_str()
            }
        }

        impl PartialEq<$name> for String {
            fn eq(&self, other: &$name) -> bool {
                self.as_str() == other.as_str()
            }
        }

        impl From<$name> for String {
            fn from(state: $name) -> String {
                state.as_str().to_owned()
            }
        }
    };
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

// What each state means: `pending`, recorded and not asked of the provider yet; `provisioning`,
// the provider is making it; `ready`, converged; `updating`, a change is converging; `deleting`,
// being deleted at the provider; `deleted`, gone (the row is kept); `error`, the provider
// refused, and the row's `message` says why.

states!(
    /// A Kubernetes cluster's state.
    ClusterState { Pending = "pending", Provisioning = "provisioning", Ready = "ready", Updating = "updating",
        Deleting = "deleting", Deleted = "deleted", Error = "error", }
);

states!(
    /// A node pool's state: made with its cluster or by its own create, never `provisioning`.
    NodePoolState { Pending = "pending", Ready = "ready", Updating = "updating", Deleting = "deleting",
        Deleted = "deleted", Error = "error", }
);

states!(
    /// The state of a provider resource with no in-place updates: a network, an instance, a
    /// subnet, a certificate.
    ProvisionState { Pending = "pending", Provisioning = "provisioning", Ready = "ready", Deleting = "deleting",
        Deleted = "deleted", Error = "error", }
);

states!(
    /// A load balancer's state: `pending` until the provider has made it, never `provisioning`.
    LoadBalancerState { Pending = "pending", Ready = "ready", Updating = "updating", Deleting = "deleting",
        Deleted = "deleted", Error = "error", }
);

impl ClusterState {
    /// Whether the reconciler is still working on it (a deadline applies).
    pub fn is_transient(self) -> bool {
        matches!(self, Self::Pending | Self::Provisioning | Self::Updating | Self::Deleting)
    }
}

impl ProvisionState {
    /// Whether the reconciler is still working on it (a deadline applies).
    pub fn is_transient(self) -> bool {
        matches!(self, Self::Pending | Self::Provisioning | Self::Deleting)
    }
}

impl LoadBalancerState {
    /// Whether the reconciler is still working on it (a deadline applies).
    pub fn is_transient(self) -> bool {
        matches!(self, Self::Pending | Self::Updating | Self::Deleting)
    }
}

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
        assert!(ClusterState::Ready == "ready" && "deleting" == ClusterState::Deleting);
        assert!(!NodePoolState::ALL.iter().any(|s| s.as_str() == "provisioning"));
    }
}
