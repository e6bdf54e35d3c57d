//! Resource ids: `<prefix>_` and 26 lowercase Crockford base32 characters (130 bits), random or
//! derived from the request that created the resource so that a retry lands on the same row.

use rand::RngCore;
use sha2::{Digest, Sha256};

/// Crockford's base32 alphabet in lower case: no `i`, `l`, `o` or `u`.
const ALPHABET: &[u8; 32] = b"0123456789abcdefghjkmnpqrstvwxyz";

/// The number of characters after the prefix.
pub const ID_CHARS: usize = 26;

/// Encodes the first 130 bits of `bytes` (at least 17 bytes) as 26 base32 characters.
fn encode(bytes: &[u8]) -> String {
    debug_assert!(bytes.len() >= 17);
    let mut out = String::with_capacity(ID_CHARS);
    let mut buffer: u32 = 0;
    let mut bits = 0;
    let mut input = bytes.iter();
    while out.len() < ID_CHARS {
        if bits < 5 {
            buffer = (buffer << 8) | u32::from(*input.next().expect("17 bytes hold 130 bits"));
            bits += 8;
        }
        bits -= 5;
        out.push(ALPHABET[((buffer >> bits) & 31) as usize] as char);
    }
    out
}

/// A new random id with `prefix` (`"bck"` gives `bck_...`).
pub fn random(prefix: &str) -> String {
    let mut bytes = [0u8; 17];
    rand::rng().fill_bytes(&mut bytes);
    format!("{prefix}_{}", encode(&bytes))
}

/// The id of a resource created by `caller` in `tenant` with `idempotency_key`: the same
/// three inputs always give the same id.
pub fn derived(prefix: &str, tenant: &str, caller: &str, idempotency_key: &str) -> String {
    let mut hasher = Sha256::new();
    for part in [prefix, tenant, caller, idempotency_key] {
        // Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
        hasher.update((part.len() as u64).to_be_bytes());
        hasher.update(part.as_bytes());
    }
    format!("{prefix}_{}", encode(&hasher.finalize()))
}

/// Whether `id` is `prefix_` followed by 26 characters of the alphabet.
pub fn is_valid(prefix: &str, id: &str) -> bool {
    id.strip_prefix(prefix)
        .and_then(|rest| rest.strip_prefix('_'))
        .is_some_and(|body| body.len() == ID_CHARS && body.bytes().all(|b| ALPHABET.contains(&b)))
}

/// What every typed id can do, for code written once for several of them (bearer credentials).
pub trait TypedId: Sized {
    /// The prefix of every id of this type.
    const PREFIX: &'static str;

    /// A new random id.
    fn random() -> Self;

    /// Parses an id, refusing one of another type or shape.
    fn parse(id: &str) -> Option<Self>;

    /// The id as text.
    fn as_str(&self) -> &str;

    /// The id without its prefix and `_`.
    fn body(&self) -> &str {
        &self.as_str()[Self::PREFIX.len() + 1..]
    }
}

/// Declares a typed id: a string newtype that can only hold an id with its prefix.
macro_rules! typed_id {
    ($(#[$doc:meta])* $name:ident, $prefix:literal) => {
        $(#[$doc])*
        #[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub struct $name(String);

        impl $name {
            /// The prefix of every id of this type.
            pub const PREFIX: &'static str = $prefix;

            /// A new random id.
            pub fn random() -> Self {
                Self(random($prefix))
            }

            /// The id derived from the tenant, the caller and the idempotency key.
            pub fn derived(tenant: &str, caller: &str, idempotency_key: &str) -> Self {
                Self(derived($prefix, tenant, caller, idempotency_key))
            }

            /// Parses an id, refusing one of another type or shape.
            pub fn parse(id: &str) -> Option<Self> {
                is_valid($prefix, id).then(|| Self(id.to_owned()))
            }

            /// The id as text.
            pub fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl TypedId for $name {
            const PREFIX: &'static str = $prefix;

            fn random() -> Self {
                Self::random()
            }

            fn parse(id: &str) -> Option<Self> {
                Self::parse(id)
            }

            fn as_str(&self) -> &str {
                &self.0
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&self.0)
            }
        }
    };
}

typed_id!(
    /// An API key's id: the `bck_...` part of `bck_<id>.<secret>`.
    ApiKeyId,
    "bck"
);
typed_id!(
    /// A principal's id (`prn_...`): an operator, a user or a service account.
    PrincipalId,
    "prn"
);

typed_id!(
    /// A project's id (`prj_...`).
    ProjectId,
    "prj"
);
typed_id!(
    /// A provider account's id (`acct_...`).
    AccountId,
    "acct"
);
typed_id!(
    /// A pool's id (`pool_...`).
    PoolId,
    "pool"
);
typed_id!(
    /// A budget's id (`bud_...`).
    BudgetId,
    "bud"
);
typed_id!(
    /// A role binding's id (`rb_...`).
    RoleBindingId,
    "rb"
);

typed_id!(
    /// A Kubernetes cluster's id (`kcl_...`), derived from the tenant, the caller and the
    /// idempotency key.
    KubernetesClusterId,
    "kcl"
);

typed_id!(
    /// A Kubernetes node pool's id (`knp_...`): made with its cluster, random; added later,
    /// derived from the tenant, the caller and the idempotency key.
    KubernetesNodePoolId,
    "knp"
);

typed_id!(
    /// A tenant network's id (`net_...`), derived from the tenant, the caller and the
    /// idempotency key.
    NetworkId,
    "net"
);

typed_id!(
    /// A subnet's id (`snet_...`).
    SubnetId,
    "snet"
);

typed_id!(
    /// An instance's id (`inst_...`), derived from the tenant, the caller and the idempotency key.
    InstanceId,
    "inst"
);

typed_id!(
    /// A certificate's id (`pcert_...`), derived from the tenant, the caller and the idempotency
    /// key.
    CertificateId,
    "pcert"
);

typed_id!(
    /// A volume's id (`pvol_...`), derived from the tenant, the caller and the idempotency key.
    VolumeId,
    "pvol"
);

typed_id!(
    /// A load balancer's id (`plb_...`), derived from the tenant, the caller and the idempotency
    /// key.
    LoadBalancerId,
    "plb"
);

typed_id!(
    /// A join token's id (`jt_...`), derived from the pool, the caller and the idempotency key:
    /// the `jt_...` part of `bcjt_<id>.<secret>`.
    JoinTokenId,
    "jt"
);

typed_id!(
    /// A node's id (`node_...`): a machine that joined a pool with a join token.
    NodeId,
    "node"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn random_ids_match_the_documented_pattern() {
        let pattern = regex::Regex::new("^kcl_[0-9a-hjkmnp-tv-z]{26}$").unwrap();
        for _ in 0..1000 {
            let id = random("kcl");
            assert!(pattern.is_match(&id), "{id}");
        }
    }

    #[test]
    fn derived_ids_are_stable_and_depend_on_every_input() {
        let id = derived("kcl", "acme", "prn_1", "key-1");
        assert_eq!(id, derived("kcl", "acme", "prn_1", "key-1"));
        assert_ne!(id, derived("kcl", "acme", "prn_1", "key-2"));
        assert_ne!(id, derived("kcl", "acme", "prn_2", "key-1"));
        assert_ne!(id, derived("kcl", "globex", "prn_1", "key-1"));
        assert_ne!(derived("kcl", "ab", "c", "k"), derived("kcl", "a", "bc", "k"));
        assert!(is_valid("kcl", &id));
    }

    #[test]
    fn encoding_uses_all_130_bits() {
        assert_eq!(encode(&[0u8; 17]), "0".repeat(26));
        assert_eq!(encode(&[0xff; 17]), "z".repeat(26));
        let mut one = [0u8; 17];
        one[16] = 0b0100_0000; // the 130th bit
        assert_eq!(encode(&one), format!("{}1", "0".repeat(25)));
    }

    #[test]
    fn typed_ids_refuse_other_prefixes_and_characters() {
        let key = ApiKeyId::random();
        assert!(ApiKeyId::parse(key.as_str()).is_some());
        assert!(ApiKeyId::parse(&key.as_str().replace("bck_", "prn_")).is_none());
        assert!(ApiKeyId::parse("bck_iiiiiiiiiiiiiiiiiiiiiiiiii").is_none());
        assert!(ApiKeyId::parse("bck_0000").is_none());
    }
}
