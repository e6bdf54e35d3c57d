//! Opaque page tokens: the (created at, id) a page ends on, sealed (AES-256-GCM) with the
//! server's secret key and bound to the list and the filters it was read with, in URL-safe
//! base64. A token that was edited, cut short, or made by another list or other filters does not
//! open, so the list refuses it by name rather than resuming somewhere the caller did not mean.
//! Sealed, not only checked: the row a page ends on may be one the caller may not read, and the
//! token must not tell its id or when it was made.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::secrets::SecretKey;

/// Bytes of the creation time at the start of a token's position.
const AT_LEN: usize = 8;

/// What the scope hashes first, so that it is no other hash of the same parts.
const SCOPE_CONTEXT: &[u8] = b"better-compute page token v2\0";

/// The list and filters a token belongs to, and the key that seals it; a token opens only under
/// the scope that made it.
#[derive(Clone)]
pub struct TokenScope {
    digest: [u8; 32],
    key: SecretKey,
}

impl std::fmt::Debug for TokenScope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenScope").field("digest", &self.digest).finish_non_exhaustive()
    }
}

impl PartialEq for TokenScope {
    fn eq(&self, other: &Self) -> bool {
        self.digest == other.digest
    }
}

impl TokenScope {
    /// The scope of `parts` (the list's name, then every filter of the request, in a fixed
    /// order), sealed with `key`.
    pub fn of(key: &SecretKey, parts: &[&str]) -> TokenScope {
        let mut hasher = Sha256::new();
        hasher.update(SCOPE_CONTEXT);
        for part in parts {
            // Length-prefixed, so that ("ab", "c") and ("a", "bc") differ.
            hasher.update((part.len() as u64).to_be_bytes());
            hasher.update(part.as_bytes());
        }
        TokenScope { digest: hasher.finalize().into(), key: key.clone() }
    }

    /// The token of the position (`at`, `id`); empty if it could not be sealed (no random
    /// nonce), which ends the walk rather than failing the page.
    pub fn token(&self, at: i64, id: &str) -> String {
        let mut position = Vec::with_capacity(AT_LEN + id.len());
        position.extend_from_slice(&at.to_be_bytes());
        position.extend_from_slice(id.as_bytes());
        self.key.seal_bytes(&position, &self.digest).map(|sealed| URL_SAFE_NO_PAD.encode(sealed)).unwrap_or_default()
    }

    /// The position `token` names, if this scope made it and nothing in it changed.
    pub fn open(&self, token: &str) -> Option<(i64, String)> {
        let sealed = URL_SAFE_NO_PAD.decode(token).ok()?;
        let position = self.key.open_bytes(&sealed, &self.digest)?;
        if position.len() <= AT_LEN {
            return None;
        }
        let (at, id) = position.split_at(AT_LEN);
        let at = i64::from_be_bytes(at.try_into().ok()?);
        let id = String::from_utf8(id.to_vec()).ok()?;
        Some((at, id))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CLUSTER: &str = "kcl_0123456789abcdefghjkmnpqrstvwxyz0123456789abcdefgh";

    /// 32 bytes of 7, in base64.
    const STANDARD_KEY: &str = "BwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwcHBwc=";

    fn key() -> SecretKey {
        SecretKey::from_base64(STANDARD_KEY).unwrap()
    }

    #[test]
    fn a_token_opens_to_its_position_under_its_scope_only() {
        let scope = TokenScope::of(&key(), &["kubernetesClusters.list", "acme", "", "", "false"]);
        let token = scope.token(1_764_965_668_901_000, CLUSTER);
        assert_eq!(scope.open(&token), Some((1_764_965_668_901_000, CLUSTER.to_owned())));
        assert!(token.len() <= 128, "fits the field's bound: {}", token.len());
        let bytes = URL_SAFE_NO_PAD.decode(&token).unwrap();
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains("kcl_") && !text.contains("0123456789"), "sealed, not encoded: {text}");
        assert_ne!(scope.token(1_764_965_668_901_000, CLUSTER), token, "a fresh nonce each time");

        let other_key = SecretKey::from_bytes(&[8; 32]).unwrap();
        let elsewhere = TokenScope::of(&other_key, &["kubernetesClusters.list", "acme", "", "", "false"]);
        assert_eq!(elsewhere.open(&token), None, "another server's key does not open it");
        let rotated = SecretKey::from_list(&format!("{},{}", SecretKey::generate_base64(), STANDARD_KEY)).unwrap();
        let after_rotation = TokenScope::of(&rotated, &["kubernetesClusters.list", "acme", "", "", "false"]);
        assert_eq!(
            after_rotation.open(&token).map(|(at, _)| at),
            Some(1_764_965_668_901_000),
            "an older key still opens"
        );

        let other_tenant = TokenScope::of(&key(), &["kubernetesClusters.list", "globex", "", "", "false"]);
        let with_deleted = TokenScope::of(&key(), &["kubernetesClusters.list", "acme", "", "", "true"]);
        assert_eq!(other_tenant.open(&token), None);
        assert_eq!(with_deleted.open(&token), None);
        assert_ne!(TokenScope::of(&key(), &["ab", "c"]), TokenScope::of(&key(), &["a", "bc"]));
    }

    #[test]
    fn an_edited_or_cut_token_does_not_open() {
        let scope = TokenScope::of(&key(), &["kubernetesClusters.list", "acme"]);
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
