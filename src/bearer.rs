//! Bearer credentials `<prefix>_<id body>.<secret>`, written once for every kind: API keys
//! (`bck_`), join tokens (`bcjt_`) and node credentials (`bcn_`). Only the SHA-256 of a secret
//! is stored; the bearer form is shown once, and neither `Debug` nor an error ever prints it.

use sha2::{Digest, Sha256};

use crate::ids::{ApiKeyId, JoinTokenId, NodeId, TypedId};

/// A kind of bearer credential: the id it names and the prefix of its bearer form.
pub trait BearerKind: TypedId {
    /// The prefix of the bearer form (`bcjt`): it tells what kind of credential a caller sent.
    const BEARER_PREFIX: &'static str;
}

impl BearerKind for ApiKeyId {
    const BEARER_PREFIX: &'static str = "bck";
}

impl BearerKind for JoinTokenId {
    const BEARER_PREFIX: &'static str = "bcjt";
}

impl BearerKind for NodeId {
    const BEARER_PREFIX: &'static str = "bcn";
}

/// A bearer credential: the id of what it names and its secret.
#[derive(Clone, PartialEq, Eq)]
pub struct Bearer<I> {
    /// The id of the key, token or node it names.
    pub id: I,
    /// The secret; only its SHA-256 is stored.
    secret: String,
}

impl<I: BearerKind + std::fmt::Debug> std::fmt::Debug for Bearer<I> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Bearer").field("id", &self.id).field("secret", &"<redacted>").finish()
    }
}

impl<I: BearerKind> Bearer<I> {
    /// A new credential with a random id and a 256-bit secret.
    pub fn generate() -> Self {
        Self::for_id(I::random())
    }

    /// A new credential for `id` with a 256-bit secret.
    pub fn for_id(id: I) -> Self {
        use rand::RngCore;
        let mut secret = [0u8; 32];
        rand::rng().fill_bytes(&mut secret);
        Self { id, secret: hex(&secret) }
    }

    /// Parses `<prefix>_<id body>.<secret>`; `None` for another kind or a malformed one.
    pub fn parse(token: &str) -> Option<Self> {
        let (head, secret) = token.split_once('.')?;
        let body = head.strip_prefix(I::BEARER_PREFIX)?.strip_prefix('_')?;
        let id = I::parse(&format!("{}_{body}", I::PREFIX))?;
        (secret.len() >= 16 && secret.bytes().all(|b| b.is_ascii_alphanumeric()))
            .then(|| Self { id, secret: secret.to_owned() })
    }

    /// The bearer form, shown once.
    pub fn reveal(&self) -> String {
        format!("{}_{}.{}", I::BEARER_PREFIX, self.id.body(), self.secret)
    }

    /// The SHA-256 of the secret, hex: what the store keeps.
    pub fn secret_sha256(&self) -> String {
        hex(&Sha256::digest(self.secret.as_bytes()))
    }

    /// Whether this credential's secret is the one whose SHA-256 is `stored`, compared in
    /// constant time.
    pub fn matches(&self, stored: &str) -> bool {
        let ours = self.secret_sha256();
        ours.len() == stored.len() && ours.bytes().zip(stored.bytes()).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_kind_reads_only_its_own_bearer_form() {
        let key = Bearer::<ApiKeyId>::generate();
        assert!(key.reveal().starts_with("bck_") && !key.reveal().starts_with("bck_bck_"));
        assert_eq!(Bearer::<ApiKeyId>::parse(&key.reveal()).unwrap().id, key.id);
        let token = Bearer::<JoinTokenId>::generate();
        let bearer = token.reveal();
        assert!(bearer.starts_with("bcjt_"), "{bearer}");
        let parsed = Bearer::<JoinTokenId>::parse(&bearer).unwrap();
        assert!(parsed.id.as_str().starts_with("jt_") && parsed.matches(&token.secret_sha256()));
        assert!(Bearer::<ApiKeyId>::parse(&bearer).is_none(), "a join token is not an API key");
        assert!(Bearer::<NodeId>::parse(&bearer).is_none());
        assert!(Bearer::<JoinTokenId>::parse("bcjt_short.secretsecretsecret").is_none());
        assert!(!Bearer::<JoinTokenId>::generate().matches(&token.secret_sha256()));
    }

    #[test]
    fn debug_never_prints_the_secret() {
        let token = Bearer::<JoinTokenId>::generate();
        let secret = token.reveal().split_once('.').unwrap().1.to_owned();
        assert!(!format!("{token:?}").contains(&secret));
    }
}
