//! Opaque page tokens: the (created at, id) a page ends on, with a check bound to the list and
//! the filters it was read with, in URL-safe base64. A token that was edited, cut short, or
//! made by another list or other filters does not open, so the list refuses it by name rather
//! than resuming somewhere the caller did not mean.
//!
//! The check is a hash, not a keyed MAC: it catches mistakes and edits, not a forger who reads
//! this file. Nothing depends on more: a token only says where, inside the caller's own list,
//! the next page starts, and every row it reaches is still filtered and decided as usual.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

/// Bytes of the check at the end of a token.
const CHECK_LEN: usize = 9;

/// Bytes of the creation time at the start of a token.
const AT_LEN: usize = 8;

/// What the check hashes first, so that it is no other hash of the same bytes.
const CHECK_CONTEXT: &[u8] = b"better-compute page token v1\0";

/// The list and filters a token belongs to; a token opens only under the scope that made it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenScope {
    digest: [u8; 32],
}

impl TokenScope {
    /// The scope of `parts`: the list's name, then every filter of the request, in a fixed order.
    pub fn of(parts: &[&str]) -> TokenScope {
        let mut hasher = Sha256::new();
        for part in parts {
            // Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        TokenScope { digest: hasher.finalize().into() }
    }

    /// The token of the position (`at`, `id`).
    pub fn token(&self, at: i64, id: &str) -> String {
        let mut bytes = Vec::with_capacity(AT_LEN + id.len() + CHECK_LEN);
        bytes.extend_from_slice(&at.to_be_bytes());
        bytes.extend_from_slice(id.as_bytes());
        let check = self.check(&bytes);
        bytes.extend_from_slice(&check);
        URL_SAFE_NO_PAD.encode(bytes)
    }

    /// The position `token` names, if this scope made it and nothing in it changed.
    pub fn open(&self, token: &str) -> Option<(i64, String)> {
        let bytes = URL_SAFE_NO_PAD.decode(token).ok()?;
        if bytes.len() <= AT_LEN + CHECK_LEN {
            return None;
        }
        let (position, check) = bytes.split_at(bytes.len() - CHECK_LEN);
        if self.check(position) != check {
            return None;
        }
        let (at, id) = position.split_at(AT_LEN);
        let at = i64::from_be_bytes(at.try_into().ok()?);
        let id = std::str::from_utf8(id).ok()?;
        Some((at, id.to_owned()))
    }

    fn check(&self, position: &[u8]) -> [u8; CHECK_LEN] {
        let mut hasher = Sha256::new();
        hasher.update(CHECK_CONTEXT);
        hasher.update(self.digest);
        hasher.update(position);
        let digest = hasher.finalize();
        let mut check = [0u8; CHECK_LEN];
        check.copy_from_slice(&digest[..CHECK_LEN]);
        check
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLUSTER: &str = "kcl_0123456789abcdefghjkmnpqrstvwxyz0123456789abcdefgh";

    #[test]
    fn a_token_opens_to_its_position_under_its_scope_only() {
        let scope = TokenScope::of(&["kubernetesClusters.list", "acme", "", "", "false"]);
        let token = scope.token(1_764_965_668_901_000, CLUSTER);
        assert_eq!(scope.open(&token), Some((1_764_965_668_901_000, CLUSTER.to_owned())));
        assert!(token.len() <= 128, "fits the field's bound: {}", token.len());
        assert!(!token.contains(CLUSTER), "opaque: {token}");

        let other_tenant = TokenScope::of(&["kubernetesClusters.list", "globex", "", "", "false"]);
        let with_deleted = TokenScope::of(&["kubernetesClusters.list", "acme", "", "", "true"]);
        assert_eq!(other_tenant.open(&token), None);
        assert_eq!(with_deleted.open(&token), None);
        assert_ne!(TokenScope::of(&["ab", "c"]), TokenScope::of(&["a", "bc"]));
    }

    #[test]
    fn an_edited_or_cut_token_does_not_open() {
        let scope = TokenScope::of(&["kubernetesClusters.list", "acme"]);
        let token = scope.token(17, CLUSTER);
        for i in 0..token.len() {
            let mut edited = token.clone().into_bytes();
            edited[i] = if edited[i] == b'A' { b'B' } else { b'A' };
            let edited = String::from_utf8(edited).unwrap();
            assert_eq!(scope.open(&edited), None, "edited at {i}: {edited}");
        }
        for cut in [0, 1, 12, 17, token.len() - 1] {
            assert_eq!(scope.open(&token[..cut]), None, "cut to {cut}");
        }
        for foreign in ["17.kcl_x", "!!!", "AAAAAAAAAAAAAAAAAAAAAAAAAAAA"] {
            assert_eq!(scope.open(foreign), None, "{foreign}");
        }
    }
}
