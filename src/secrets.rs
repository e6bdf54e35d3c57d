//! Secrets at rest: provider credentials, BMC passwords, certificates' private keys and join
//! tokens sealed with AES-256-GCM (`ring::aead`) under the configured 32-byte keys
//! (`--secret-key`, `--secret-key-file`). Each sealed value is bound to the row it belongs to
//! (the associated data is its id), so ciphertext copied onto another row does not open.
//!
//! Several keys rotate one another: the first seals, every one opens. A sealed value names the
//! key that sealed it (`<key id>:<base64>`, the id a hash of the key), so it is opened with that
//! key alone; a value sealed before keys had ids (bare base64) is opened by trying each key. A
//! key file is re-read when it changes ([`SecretKey::keep_reloading`]), and every clone of a
//! [`SecretKey`] sees the keys it read. docs/secret-keys.md is the operator's side.
//!
//! Neither a key nor an opened secret prints itself: their `Debug` is redacted, and a
//! [`Secret`] must be asked for its text by name ([`Secret::expose`]). A key id is no secret:
//! logs and metrics name keys by it.

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, RwLock, Weak};
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;
use ring::aead::{AES_256_GCM, Aad, LessSafeKey, NONCE_LEN, Nonce, UnboundKey};
use ring::rand::{SecureRandom, SystemRandom};
use tokio::sync::watch;

use crate::error::{Error, Result};

/// How often a key file is looked at for a change.
pub const KEY_FILE_POLL: Duration = Duration::from_secs(1);

/// Between a sealed value's key id and its base64; base64 never holds it, so a value without it
/// is one sealed before keys had ids.
const KEY_ID_SEPARATOR: char = ':';

/// What is hashed before a key to make its id, so that the id is no other hash of the key.
const KEY_ID_CONTEXT: &[u8] = b"better-compute secret key id\0";

/// How to make a key, for the errors that ask for one.
const MAKE_ONE: &str = "make one with `openssl rand -base64 32`";

/// The keys that seal and open secrets at rest: the first seals, every one opens. Clones share
/// the keys, so a reload of the key file reaches them all.
#[derive(Clone)]
pub struct SecretKey {
    shared: Arc<Shared>,
}

/// What the clones of a [`SecretKey`] share.
struct Shared {
    /// The keys, swapped whole on a reload.
    ring: RwLock<Arc<KeyRing>>,
    /// The key file they were read from, if any.
    file: Option<PathBuf>,
    /// Counts the reloads that changed the keys, for whoever acts on a change (the re-seal).
    changes: watch::Sender<u64>,
}

/// Keys, the sealing one first.
struct KeyRing {
    keys: Vec<Keyed>,
}

/// One AES-256-GCM key and its id.
struct Keyed {
    /// Eight hex digits of a hash of the key: what a sealed value is prefixed with.
    id: String,
    key: LessSafeKey,
}

impl fmt::Debug for SecretKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SecretKey(redacted)")
    }
}

impl SecretKey {
    /// One key from its base64 text (32 bytes once decoded).
    pub fn from_base64(text: &str) -> Result<SecretKey, String> {
        Ok(Self::with_ring(KeyRing { keys: vec![Keyed::from_base64(text)?] }, None))
    }

    /// One key from its 32 bytes.
    pub fn from_bytes(bytes: &[u8]) -> Result<SecretKey, String> {
        Ok(Self::with_ring(KeyRing { keys: vec![Keyed::from_bytes(bytes)?] }, None))
    }

    /// Keys from comma-separated base64 texts (`--secret-key`): the first seals.
    pub fn from_list(text: &str) -> Result<SecretKey, String> {
        Ok(Self::with_ring(KeyRing::parse(text.split(','))?, None))
    }

    /// Keys from a file of one base64 key a line (blank lines and `#` comments passed over): the
    /// first seals. [`SecretKey::keep_reloading`] re-reads it when it changes.
    pub fn from_file(path: &Path) -> Result<SecretKey, String> {
        let ring = KeyRing::read(path)?;
        Ok(Self::with_ring(ring, Some(path.to_owned())))
    }

    fn with_ring(ring: KeyRing, file: Option<PathBuf>) -> SecretKey {
        let shared = Shared { ring: RwLock::new(Arc::new(ring)), file, changes: watch::Sender::new(0) };
        SecretKey { shared: Arc::new(shared) }
    }

    /// A new random key, as base64 (what `bcctl dev` keeps in its data directory).
    pub fn generate_base64() -> String {
        let mut bytes = [0u8; 32];
        SystemRandom::new().fill(&mut bytes).expect("the system's random source works");
        STANDARD.encode(bytes)
    }

    /// The keys as they are now (a reload swaps them whole).
    fn ring(&self) -> Arc<KeyRing> {
        self.shared.ring.read().expect("the key lock is never poisoned").clone()
    }

    /// The id of the key that seals.
    pub fn sealing_key_id(&self) -> String {
        self.ring().keys[0].id.clone()
    }

    /// The ids of every key, the sealing one first.
    pub fn key_ids(&self) -> Vec<String> {
        self.ring().keys.iter().map(|keyed| keyed.id.clone()).collect()
    }

    /// The id of the key that sealed `sealed`; `None` for a value sealed before keys had ids.
    pub fn sealed_key_id(sealed: &str) -> Option<&str> {
        sealed.split_once(KEY_ID_SEPARATOR).map(|(id, _)| id)
    }

    /// Seals `plaintext` for the row `bound_to` with the sealing key: its id, then base64 of
    /// nonce, ciphertext and tag.
    pub fn seal(&self, plaintext: &str, bound_to: &str) -> Result<String> {
        let ring = self.ring();
        let keyed = &ring.keys[0];
        let sealed = seal_with(keyed, plaintext.as_bytes(), bound_to.as_bytes())?;
        Ok(format!("{}{KEY_ID_SEPARATOR}{}", keyed.id, STANDARD.encode(sealed)))
    }

    /// `plaintext` sealed for `bound_to` as bytes without a key id (nonce, ciphertext, tag): for
    /// short-lived values handed to callers, such as page tokens, where every byte counts and
    /// [`SecretKey::open_bytes`] tries each key instead.
    pub fn seal_bytes(&self, plaintext: &[u8], bound_to: &[u8]) -> Result<Vec<u8>> {
        seal_with(&self.ring().keys[0], plaintext, bound_to)
    }

    /// What [`SecretKey::seal_bytes`] sealed for `bound_to`, if one of the keys sealed it and
    /// nothing in it changed.
    pub fn open_bytes(&self, sealed: &[u8], bound_to: &[u8]) -> Option<Vec<u8>> {
        open_sealed(self.ring().keys.iter(), sealed, bound_to)
    }

    /// Opens what [`SecretKey::seal`] sealed for `bound_to`, with the key that sealed it. A key
    /// no longer configured, another row or a changed byte is `INTERNAL` (the logs say which
    /// row and which key id; the secret is never in them).
    pub fn open(&self, sealed: &str, bound_to: &str) -> Result<Secret> {
        let ring = self.ring();
        let key_id = Self::sealed_key_id(sealed);
        let mut candidates = ring.keys.iter().filter(|keyed| key_id.is_none_or(|id| keyed.id == id)).peekable();
        if candidates.peek().is_none() {
            return Err(Error::internal(format!(
                "the secret of {bound_to} was sealed with the key {}, which is not among the configured keys \
                 (--secret-key, --secret-key-file)",
                key_id.unwrap_or_default()
            )));
        }
        open_with(candidates, sealed, bound_to)
            .ok_or_else(|| Error::internal(format!("the secret of {bound_to} does not open with the configured keys")))
    }

    /// Whether the sealing key sealed `sealed`. A value sealed before keys had ids is opened with
    /// the sealing key to tell: the one key of a process upgraded to keys with ids seals it, and
    /// it is left as it is until that key is rotated.
    pub fn is_sealed_with_sealing_key(&self, sealed: &str, bound_to: &str) -> bool {
        let ring = self.ring();
        let sealing = &ring.keys[0];
        match Self::sealed_key_id(sealed) {
            Some(id) => id == sealing.id,
            None => open_with(std::iter::once(sealing), sealed, bound_to).is_some(),
        }
    }

    /// `sealed` sealed again with the sealing key, or `None` when the sealing key sealed it
    /// already: what the re-seal writes back.
    pub fn reseal(&self, sealed: &str, bound_to: &str) -> Result<Option<String>> {
        if self.is_sealed_with_sealing_key(sealed, bound_to) {
            return Ok(None);
        }
        let secret = self.open(sealed, bound_to)?;
        self.seal(secret.expose(), bound_to).map(Some)
    }

    /// A receiver that sees every reload that changed the keys.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.shared.changes.subscribe()
    }

    /// Reads the key file again: `Ok(true)` when its keys differ from the ones in use, which it
    /// then swaps in for every clone. A file that does not read or parse keeps the keys in use.
    /// Keys not read from a file stay as they are.
    pub fn reload(&self) -> Result<bool, String> {
        let Some(path) = &self.shared.file else { return Ok(false) };
        let ring = KeyRing::read(path)?;
        let mut current = self.shared.ring.write().expect("the key lock is never poisoned");
        if current.same_keys(&ring) {
            return Ok(false);
        }
        *current = Arc::new(ring);
        drop(current);
        self.shared.changes.send_modify(|count| *count += 1);
        Ok(true)
    }

    /// Logs which keys are in use and shows them in the metrics (`bc_secret_key_sealing`,
    /// `bc_secret_keys`): what a process does with the keys it was configured with, and again
    /// on each reload.
    pub fn announce(&self, what: &str) {
        let ids = self.key_ids();
        let sealing = &ids[0];
        let source = self.shared.file.as_ref().map(|path| path.display().to_string()).unwrap_or_default();
        tracing::info!(sealing_key_id = %sealing, opening_key_ids = %ids[1..].join(","), key_file = %source, "{what}");
        let metrics = &*METRICS;
        metrics.sealing_key.clear();
        metrics.sealing_key.get_or_create(&KeyLabels { key_id: sealing.clone() }).set(1);
        metrics.keys.set(ids.len() as i64);
    }

    /// With a key file, spawns the task that re-reads it every [`KEY_FILE_POLL`] and, when its
    /// keys changed, swaps them in for every clone and announces them. The task ends when the
    /// last clone is dropped. Keys not read from a file spawn nothing.
    pub fn keep_reloading(&self) -> Option<tokio::task::JoinHandle<()>> {
        let path = self.shared.file.clone()?;
        let shared: Weak<Shared> = Arc::downgrade(&self.shared);
        Some(tokio::spawn(async move {
            // A file that stays broken is reported once, not every poll.
            let mut reported = false;
            loop {
                tokio::time::sleep(KEY_FILE_POLL).await;
                let Some(shared) = shared.upgrade() else { return };
                let key = SecretKey { shared };
                match key.reload() {
                    Ok(true) => {
                        reported = false;
                        key.announce("secret keys reloaded");
                    }
                    Ok(false) => reported = false,
                    Err(error) if !reported => {
                        reported = true;
                        tracing::error!(key_file = %path.display(), %error, "the key file does not read; the keys in use stay");
                    }
                    Err(_) => {}
                }
            }
        }))
    }
}

/// What the first of `keys` that opens `sealed` (with or without its key id) for `bound_to`
/// opens.
/// `plaintext` sealed for `bound_to` with `keyed`: a random nonce, the ciphertext and the tag.
fn seal_with(keyed: &Keyed, plaintext: &[u8], bound_to: &[u8]) -> Result<Vec<u8>> {
    let mut nonce = [0u8; NONCE_LEN];
    SystemRandom::new().fill(&mut nonce).map_err(|_| Error::internal("no random nonce"))?;
    let mut buffer = plaintext.to_vec();
    keyed
        .key
        .seal_in_place_append_tag(Nonce::assume_unique_for_key(nonce), Aad::from(bound_to), &mut buffer)
        .map_err(|_| Error::internal("sealing a secret failed"))?;
    let mut sealed = nonce.to_vec();
    sealed.extend_from_slice(&buffer);
    Ok(sealed)
}

fn open_with<'a>(keys: impl Iterator<Item = &'a Keyed>, sealed: &str, bound_to: &str) -> Option<Secret> {
    let body = sealed.split_once(KEY_ID_SEPARATOR).map_or(sealed, |(_, body)| body);
    let bytes = STANDARD.decode(body).ok()?;
    let plaintext = open_sealed(keys, &bytes, bound_to.as_bytes())?;
    String::from_utf8(plaintext).ok().map(Secret)
}

/// The plaintext of `sealed` (nonce, ciphertext, tag) for `bound_to`, opened with the first of
/// `keys` that sealed it.
fn open_sealed<'a>(mut keys: impl Iterator<Item = &'a Keyed>, sealed: &[u8], bound_to: &[u8]) -> Option<Vec<u8>> {
    if sealed.len() < NONCE_LEN {
        return None;
    }
    let (nonce, ciphertext) = sealed.split_at(NONCE_LEN);
    keys.find_map(|keyed| {
        let nonce = Nonce::try_assume_unique_for_key(nonce).ok()?;
        let mut buffer = ciphertext.to_vec();
        keyed.key.open_in_place(nonce, Aad::from(bound_to), &mut buffer).ok().map(|plaintext| plaintext.to_vec())
    })
}

impl KeyRing {
    /// Keys from base64 texts, blank ones passed over, duplicates kept once: the first seals.
    fn parse<'a>(texts: impl Iterator<Item = &'a str>) -> Result<KeyRing, String> {
        let mut keys: Vec<Keyed> = Vec::new();
        for (n, text) in texts.map(str::trim).filter(|text| !text.is_empty()).enumerate() {
            let keyed = Keyed::from_base64(text).map_err(|error| format!("key {} of the list: {error}", n + 1))?;
            if !keys.iter().any(|known| known.id == keyed.id) {
                keys.push(keyed);
            }
        }
        if keys.is_empty() {
            return Err(format!("no key is given; {MAKE_ONE}"));
        }
        Ok(KeyRing { keys })
    }

    /// The keys of a key file: one a line, `#` comments passed over.
    fn read(path: &Path) -> Result<KeyRing, String> {
        let text = std::fs::read_to_string(path).map_err(|error| format!("cannot read {}: {error}", path.display()))?;
        let lines = text.lines().filter(|line| !line.trim_start().starts_with('#'));
        Self::parse(lines).map_err(|error| format!("{}: {error}", path.display()))
    }

    /// Whether `other` has the same keys in the same order.
    fn same_keys(&self, other: &KeyRing) -> bool {
        self.keys.iter().map(|k| &k.id).eq(other.keys.iter().map(|k| &k.id))
    }
}

impl Keyed {
    fn from_base64(text: &str) -> Result<Keyed, String> {
        let bytes = STANDARD.decode(text.trim()).map_err(|_| format!("the secret key must be base64 ({MAKE_ONE})"))?;
        Self::from_bytes(&bytes)
    }

    fn from_bytes(bytes: &[u8]) -> Result<Keyed, String> {
        if bytes.len() != 32 {
            return Err(format!("the secret key must be 32 bytes, it has {} ({MAKE_ONE})", bytes.len()));
        }
        let unbound = UnboundKey::new(&AES_256_GCM, bytes).map_err(|_| "the secret key is not usable".to_owned())?;
        let mut context = ring::digest::Context::new(&ring::digest::SHA256);
        context.update(KEY_ID_CONTEXT);
        context.update(bytes);
        let digest = context.finish();
        let id = digest.as_ref()[..4].iter().map(|byte| format!("{byte:02x}")).collect();
        Ok(Keyed { id, key: LessSafeKey::new(unbound) })
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

/// Labels of a key.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct KeyLabels {
    key_id: String,
}

/// Labels of a sealed column.
#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct ColumnLabels {
    /// `table.column`.
    column: String,
}

/// The process's figures of its keys and of the re-seal, process-wide like the store's.
struct SealingMetrics {
    sealing_key: Family<KeyLabels, Gauge>,
    keys: Gauge,
    stale: Family<ColumnLabels, Gauge>,
    unopenable: Family<ColumnLabels, Gauge>,
    resealed: Family<ColumnLabels, Counter>,
}

static METRICS: LazyLock<SealingMetrics> = LazyLock::new(|| SealingMetrics {
    sealing_key: Family::default(),
    keys: Gauge::default(),
    stale: Family::default(),
    unopenable: Family::default(),
    resealed: Family::default(),
});

/// Adds the keys' and the re-seal's figures to `registry`.
pub fn register_metrics(registry: &mut Registry) {
    let m = &*METRICS;
    registry.register("secret_key_sealing", "1 for the id of the key this process seals with", m.sealing_key.clone());
    registry.register("secret_keys", "Keys this process opens sealed values with", m.keys.clone());
    registry.register(
        "sealed_values_stale",
        "Sealed values not sealed with the sealing key, by column, after the last re-seal sweep",
        m.stale.clone(),
    );
    registry.register(
        "sealed_values_unopenable",
        "Sealed values that no configured key opens, by column, after the last re-seal sweep",
        m.unopenable.clone(),
    );
    registry.register(
        "sealed_values_resealed",
        "Values the re-seal sealed again with the sealing key",
        m.resealed.clone(),
    );
}

/// Records what a re-seal sweep of `column` left and did.
pub fn record_sweep(column: &str, stale: i64, unopenable: i64, resealed: u64) {
    let labels = ColumnLabels { column: column.to_owned() };
    METRICS.stale.get_or_create(&labels).set(stale);
    METRICS.unopenable.get_or_create(&labels).set(unopenable);
    METRICS.resealed.get_or_create(&labels).inc_by(resealed);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> SecretKey {
        SecretKey::from_base64(&SecretKey::generate_base64()).unwrap()
    }

    /// The value `key` sealed, as it was sealed before keys had ids.
    fn without_key_id(sealed: &str) -> &str {
        sealed.split_once(':').unwrap().1
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

    #[test]
    fn a_sealed_value_names_its_key_by_an_id_derived_from_the_key() {
        let key = SecretKey::from_bytes(&[7u8; 32]).unwrap();
        let id = key.sealing_key_id();
        // Stored values name their key by it: the derivation never changes (docs/secret-keys.md
        // computes it with openssl).
        assert_eq!(id, "c0a2000d");
        assert_eq!(SecretKey::from_bytes(&[7u8; 32]).unwrap().sealing_key_id(), id, "the same key, the same id");
        assert_ne!(SecretKey::from_bytes(&[8u8; 32]).unwrap().sealing_key_id(), id);
        let sealed = key.seal("hunter2", "acct_1").unwrap();
        assert_eq!(SecretKey::sealed_key_id(&sealed), Some(id.as_str()));
        assert_eq!(SecretKey::sealed_key_id(without_key_id(&sealed)), None);
    }

    #[test]
    fn the_new_key_seals_and_both_keys_open() {
        let (old, new) = (SecretKey::generate_base64(), SecretKey::generate_base64());
        let before = SecretKey::from_list(&old).unwrap();
        let sealed_old = before.seal("hunter2", "acct_1").unwrap();
        let rotated = SecretKey::from_list(&format!("{new},{old}")).unwrap();
        let sealed_new = rotated.seal("hunter3", "acct_1").unwrap();
        assert_eq!(SecretKey::sealed_key_id(&sealed_new), Some(rotated.sealing_key_id().as_str()));
        assert_ne!(rotated.sealing_key_id(), before.sealing_key_id());
        assert_eq!(rotated.open(&sealed_old, "acct_1").unwrap().expose(), "hunter2");
        assert_eq!(rotated.open(&sealed_new, "acct_1").unwrap().expose(), "hunter3");
        let unknown = before.open(&sealed_new, "acct_1").unwrap_err().internal.unwrap();
        assert!(unknown.contains("not among the configured keys") && unknown.contains("acct_1"), "{unknown}");
        let only_new = SecretKey::from_list(&new).unwrap();
        assert!(only_new.open(&sealed_old, "acct_1").is_err(), "a removed key's values no longer open");

        let resealed = rotated.reseal(&sealed_old, "acct_1").unwrap().expect("sealed again with the new key");
        assert_eq!(only_new.open(&resealed, "acct_1").unwrap().expose(), "hunter2");
        assert_eq!(rotated.reseal(&resealed, "acct_1").unwrap(), None, "already sealed with the sealing key");
        assert!(only_new.reseal(&sealed_old, "acct_1").is_err(), "what no key opens is not resealed");
    }

    #[test]
    fn values_sealed_before_keys_had_ids_open_with_any_configured_key() {
        let (old, new) = (SecretKey::generate_base64(), SecretKey::generate_base64());
        let legacy = SecretKey::from_base64(&old).unwrap().seal("hunter2", "acct_1").unwrap();
        let legacy = without_key_id(&legacy);
        let upgraded = SecretKey::from_list(&old).unwrap();
        assert_eq!(upgraded.open(legacy, "acct_1").unwrap().expose(), "hunter2");
        assert!(upgraded.is_sealed_with_sealing_key(legacy, "acct_1"));
        assert_eq!(upgraded.reseal(legacy, "acct_1").unwrap(), None, "left as it is until the key rotates");
        let rotated = SecretKey::from_list(&format!("{new},{old}")).unwrap();
        assert_eq!(rotated.open(legacy, "acct_1").unwrap().expose(), "hunter2", "the second key is tried too");
        assert!(rotated.open(legacy, "acct_2").is_err());
        let resealed = rotated.reseal(legacy, "acct_1").unwrap().expect("a legacy value is resealed");
        assert_eq!(SecretKey::sealed_key_id(&resealed), Some(rotated.sealing_key_id().as_str()));
    }

    #[test]
    fn the_key_list_parses_and_says_which_key_is_wrong() {
        let (a, b) = (SecretKey::generate_base64(), SecretKey::generate_base64());
        let keys = SecretKey::from_list(&format!(" {a} , {b},{a},")).unwrap();
        let ids = keys.key_ids();
        assert_eq!(ids.len(), 2, "blanks and duplicates are passed over: {ids:?}");
        assert_eq!(ids[0], SecretKey::from_base64(&a).unwrap().sealing_key_id(), "the first seals");
        let error = SecretKey::from_list(&format!("{a},c2hvcnQ=")).unwrap_err();
        assert!(error.contains("key 2 of the list") && error.contains("32 bytes"), "{error}");
        assert!(!error.contains(&a) && !error.contains("c2hvcnQ="), "no key text in the error: {error}");
        assert!(SecretKey::from_list(" , ").unwrap_err().contains("no key"));
    }

    #[tokio::test]
    async fn a_reloaded_key_file_is_seen_by_every_clone() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("keys");
        let (old, new) = (SecretKey::generate_base64(), SecretKey::generate_base64());
        std::fs::write(&path, format!("# the first key seals\n{old}\n")).unwrap();
        let key = SecretKey::from_file(&path).unwrap();
        let clone = key.clone();
        let changes = clone.changes();
        let sealed_old = key.seal("hunter2", "acct_1").unwrap();
        assert!(!key.reload().unwrap(), "the same keys are no change");

        std::fs::write(&path, format!("{new}\n\n{old}\n")).unwrap();
        assert!(key.reload().unwrap());
        assert!(changes.has_changed().unwrap(), "a change is announced");
        assert_eq!(clone.sealing_key_id(), SecretKey::from_base64(&new).unwrap().sealing_key_id());
        assert_eq!(clone.open(&sealed_old, "acct_1").unwrap().expose(), "hunter2");

        std::fs::write(&path, "not a key\n").unwrap();
        assert!(key.reload().unwrap_err().contains("base64"), "a broken file is refused");
        assert_eq!(clone.key_ids().len(), 2, "and the keys in use stay");

        std::fs::write(&path, format!("{new}\n")).unwrap();
        let reloading = clone.keep_reloading().expect("keys from a file reload");
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while key.key_ids().len() != 1 {
            assert!(std::time::Instant::now() < deadline, "the reload task swapped the keys in");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(key.open(&sealed_old, "acct_1").is_err(), "the removed key no longer opens");
        reloading.abort();
    }

    #[test]
    fn keys_not_from_a_file_do_not_reload() {
        let key = key();
        assert!(!key.reload().unwrap());
    }
}
