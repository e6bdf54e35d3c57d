//! Secrets at rest: provider credentials sealed with AES-256-GCM (`ring::aead`) under the
//! server's 32-byte key (`--secret-key`). Each sealed value is bound to the row it belongs to
//! (the associated data is its id), so ciphertext copied onto another row does not open.
//!
//! Neither the key nor an opened secret prints itself: their `Debug` is redacted, and a
//! [`Secret`] must be asked for its text by name ([`Secret::expose`]).

use std::fmt;
use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};

use crate::error::{Error, Result};

/// The key that seals secrets at rest.
#[derive(Clone)]
pub struct SecretKey {
    /// The AES-256-GCM key.
    key: Arc<LessSafeKey>,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(redacted)")
    }
}

impl SecretKey {
    /// The key from its base64 text (32 bytes once decoded).
    pub fn from_base64(text: &str) -> Result<SecretKey, String> {
        let bytes = STANDARD
            .decode(text.trim())
            .map_err(|_| "the secret key must be base64 (make one with `openssl rand -base64 32`)".to_owned())?;
        Self::from_bytes(&bytes)
    }

    /// The key from its 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<SecretKey, String> {
        if bytes.len() != 32 {
            return Err(format!(
                "the secret key must be 32 bytes, it has {} (make one with `openssl rand -base64 32`)",
                bytes.len()
            ));
        }
        let unbound = UnboundKey::new(&AES_256_GCM, bytes).map_err(|_| "the secret key is not usable".to_owned())?;
        Ok(SecretKey { key: Arc::new(LessSafeKey::new(unbound)) })
    }

    /// A new random key, as base64 (what `bc dev` keeps in its data directory).
    pub fn generate_base64() -> String {
        let mut bytes = [0u8; 32];
        SystemRandom::new().fill(&mut bytes).expect("the system's random source works");
        STANDARD.encode(bytes)
    }

    /// Seals `plaintext` for the row `bound_to`: base64 of nonce, ciphertext and tag.
    pub fn seal(&self, plaintext: &str, bound_to: &str) -> Result<String> {
        let mut nonce = [0u8; NONCE_LEN];
        SystemRandom::new().fill(&mut nonce).map_err(|_| Error::internal("no random nonce"))?;
        let mut buffer = plaintext.as_bytes().to_vec();
        self.key
            .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(bound_to.as_bytes()), &mut buffer)
            .map_err(|_| Error::internal("sealing a secret failed"))?;
        let mut sealed = nonce.to_vec();
        sealed.extend_from_slice(&buffer);
        Ok(STANDARD.encode(sealed))
    }

    /// Opens what [`SecretKey::seal`] sealed for `bound_to`. Another key, another row or a
    /// changed byte is `INTERNAL` (the logs say which row; the secret is never in them).
    pub fn open(&self, sealed: &str, bound_to: &str) -> Result<Secret> {
        let failed = || Error::internal(format!("the secret of {bound_to} does not open with the configured key"));
        let bytes = STANDARD.decode(sealed).map_err(|_| failed())?;
        if bytes.len() < NONCE_LEN {
            return Err(failed());
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_LEN);
        let nonce = Nonce::try_assume_unique_for_key(nonce).map_err(|_| failed())?;
        let mut buffer = ciphertext.to_vec();
        let plaintext =
            self.key.open_in_place(nonce, Aad::from(bound_to.as_bytes()), &mut buffer).map_err(|_| failed())?;
        String::from_utf8(plaintext.to_vec()).map(Secret).map_err(|_| failed())
    }
}

/// An opened secret: a credential for a provider adapter.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    /// A secret received in plain text (a BMC password in a request), kept redacted from here on.
    pub fn new(text: impl Into<String>) -> Secret {
        Secret(text.into())
    }

    /// The secret's text, for the one place that sends it to its provider.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Secret(redacted)")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SecretKey {
        SecretKey::from_base64(&SecretKey::generate_base64()).unwrap()
    }

    #[test]
    fn a_sealed_secret_opens_only_with_its_key_and_row() {
        let key = key();
        let sealed = key.seal("dop_v1_hunter2", "acct_1").unwrap();
        assert!(!sealed.contains("hunter2"));
        assert_eq!(key.open(&sealed, "acct_1").unwrap().expose(), "dop_v1_hunter2");
        assert!(key.open(&sealed, "acct_2").is_err(), "bound to its row");
        assert!(self::key().open(&sealed, "acct_1").is_err(), "another key does not open it");
        assert_ne!(key.seal("dop_v1_hunter2", "acct_1").unwrap(), sealed, "a fresh nonce every time");
    }

    #[test]
    fn keys_and_secrets_do_not_print_themselves() {
        let key = key();
        let secret = key.open(&key.seal("hunter2", "x").unwrap(), "x").unwrap();
        assert_eq!(format!("{key:?} {secret:?}"), "SecretKey(redacted) Secret(redacted)");
    }

    #[test]
    fn a_key_must_be_32_bytes_of_base64() {
        assert!(SecretKey::from_base64("not base64!").unwrap_err().contains("base64"));
        assert!(SecretKey::from_base64(&STANDARD.encode([0u8; 16])).unwrap_err().contains("32 bytes"));
    }
}
