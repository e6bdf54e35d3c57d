//! Redfish sessions, shared: one session per BMC and user, reused by every call of every machine
//! behind that BMC, made again when the BMC says it expired, and logged out when the worker
//! stops. A BMC keeps only a few sessions open (four on many controllers) and refuses past that,
//! so a session per machine or per call would lock a rack's machines out of their own BMC.
//!
//! A session is keyed by the BMC's origin, the user and a digest of the password: machines that
//! share a BMC and its credentials share the session; a new password makes a new one. Making a
//! session is serialised per key, so machines that start together wait for the one login. A BMC
//! without a session service (it answers the login 404 or 405, or without a token) is spoken to
//! with basic auth.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

use crate::secrets::Secret;

/// Every session a worker holds, by BMC and user.
#[derive(Clone, Debug, Default)]
pub struct Sessions {
    by_key: Arc<Mutex<HashMap<String, Arc<Slot>>>>,
}

/// One BMC user's session, behind the lock that serialises its login.
#[derive(Debug, Default)]
pub struct Slot {
    pub(super) state: tokio::sync::Mutex<SlotState>,
}

/// What is known of one BMC user's session.
#[derive(Debug, Default)]
pub(super) enum SlotState {
    /// No session yet, or the last one expired.
    #[default]
    None,
    /// An open session.
    Open(Session),
    /// The BMC has no session service: basic auth on every request.
    Basic,
}

/// An open session.
#[derive(Clone)]
pub(super) struct Session {
    /// `X-Auth-Token`.
    pub(super) token: Secret,
    /// The session's resource, deleted to log out.
    pub(super) location: String,
    /// The client that made it (its TLS trust and pinned addresses), to log out with.
    pub(super) http: reqwest::Client,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("location", &self.location).finish_non_exhaustive()
    }
}

impl Sessions {
    /// The slot of `username` with `password` at the BMC at `origin`.
    pub(super) fn slot(&self, origin: &str, username: &str, password: &Secret) -> Arc<Slot> {
        let digest = Sha256::digest(format!("{origin}\n{username}\n{}", password.expose()).as_bytes());
        let key = digest.iter().map(|b| format!("{b:02x}")).collect::<String>();
        let mut by_key = self.by_key.lock().expect("the sessions' lock is never poisoned");
        by_key.entry(key).or_default().clone()
    }

    /// How many sessions are open.
    pub async fn open(&self) -> usize {
        let slots: Vec<Arc<Slot>> = self.by_key.lock().expect("never poisoned").values().cloned().collect();
        let mut open = 0;
        for slot in slots {
            open += usize::from(matches!(*slot.state.lock().await, SlotState::Open(_)));
        }
        open
    }

    /// Logs every open session out (the worker is stopping); a BMC that does not answer keeps
    /// its session until it expires there.
    pub async fn logout_all(&self) {
        let slots: Vec<Arc<Slot>> = self.by_key.lock().expect("never poisoned").drain().map(|(_, slot)| slot).collect();
        for slot in slots {
            let session = match std::mem::take(&mut *slot.state.lock().await) {
                SlotState::Open(session) => session,
                _ => continue,
            };
            let request = session.http.delete(&session.location).header("x-auth-token", session.token.expose());
            match request.send().await {
                Ok(answer) => tracing::info!(status = answer.status().as_u16(), "BMC session logged out"),
                Err(error) => tracing::warn!(error = %error.without_url(), "a BMC session could not be logged out"),
            }
        }
    }
}
