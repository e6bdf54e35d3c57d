//! Authenticated callers remembered per API key, trusted only while the store's authentication
//! generation is the one they were read at.
//!
//! Every write to keys, principals or role bindings bumps the generation (a trigger on each of
//! those tables, so no writer can forget), and so does a tenant's deletion (in its transaction),
//! and every call reads it: a call through the API layer reads it in the same statement as its
//! decision's authorization row (so a `get` confirms its caller without a round trip of its
//! own), any other call on its own. A key revoked, a binding removed, a principal deleted or a
//! tenant deleted through any server is refused on the very next call to every server, because
//! the generation that call reads is already the new one, and it is read before anything of the
//! call is looked up, decided or answered.

use std::collections::HashMap;
use std::sync::Mutex;

use super::Caller;

/// Entries kept at most; past it the cache starts over rather than tracking use.
const CAPACITY: usize = 10_000;

/// What authentication found for one key.
#[derive(Clone, Debug)]
pub struct Authenticated {
    /// The key's stored secret digest: the presented secret must still match it.
    pub secret_sha256: String,
    /// When the key expires (µs), if it does.
    pub expires_at: Option<i64>,
    /// The caller the key acts as.
    pub caller: Caller,
}

/// The callers of recently used keys, by key id.
#[derive(Debug, Default)]
pub struct AuthCache {
    entries: Mutex<HashMap<String, (i64, Authenticated)>>,
}

impl AuthCache {
    /// What was found for `key_id` at `generation`; nothing if it was read at another one.
    pub fn get(&self, key_id: &str, generation: i64) -> Option<Authenticated> {
        let entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        entries.get(key_id).filter(|(read_at, _)| *read_at == generation).map(|(_, found)| found.clone())
    }

    /// What was last found for `key_id` and the generation it was read at, to be confirmed
    /// against the generation the call reads next.
    pub fn latest(&self, key_id: &str) -> Option<(i64, Authenticated)> {
        let entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        entries.get(key_id).cloned()
    }

    /// Remembers what was found for `key_id`, read at `generation` (read before the key was).
    pub fn put(&self, key_id: &str, generation: i64, found: Authenticated) {
        let mut entries = self.entries.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if entries.len() >= CAPACITY && !entries.contains_key(key_id) {
            entries.clear();
        }
        entries.insert(key_id.to_owned(), (generation, found));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::service::PrincipalKind;

    fn found(principal: &str) -> Authenticated {
        Authenticated {
            secret_sha256: "digest".to_owned(),
            expires_at: None,
            caller: Caller {
                principal_id: principal.to_owned(),
                kind: PrincipalKind::User,
                tenant_id: None,
                bindings: Vec::new(),
            },
        }
    }

    #[test]
    fn an_entry_serves_only_the_generation_it_was_read_at() {
        let cache = AuthCache::default();
        cache.put("bck_1", 7, found("prn_1"));
        assert_eq!(cache.get("bck_1", 7).unwrap().caller.principal_id, "prn_1");
        assert!(cache.get("bck_1", 8).is_none(), "a later generation reads the store again");
        assert!(cache.get("bck_2", 7).is_none());
        assert_eq!(cache.latest("bck_1").map(|(generation, _)| generation), Some(7), "kept to be confirmed");
    }

    #[test]
    fn a_full_cache_starts_over() {
        let cache = AuthCache::default();
        for n in 0..CAPACITY {
            cache.put(&format!("bck_{n}"), 1, found("prn"));
        }
        cache.put("bck_new", 1, found("prn"));
        assert!(cache.get("bck_new", 1).is_some());
        assert!(cache.get("bck_0", 1).is_none());
    }
}
