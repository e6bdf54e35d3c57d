//! Who gets a connection slot: a cap on open connections, a cap per peer address, and a reserve
//! that health probes and authenticated callers keep while anonymous connections fill the rest.
//!
//! A connection that arrives when the regular slots are taken is let into the reserve on
//! probation: it must prove itself on its first call (ask for health, or be authenticated), or
//! it is closed after that call. When the reserve is full too, the oldest connection on
//! probation that has begun no call is evicted to make room (while at most a reserve's worth of
//! evicted ones are still closing), so a flood of silent connections cannot keep a probe out.
//! When that many are still closing, the listener waits a moment for one of them to close (see
//! [`Admission::admit_after_evictions`]) rather than refuse a newcomer the flood would otherwise
//! shut out for as long as the server is short of CPU to close them.

use std::collections::{HashMap, VecDeque};
use std::net::IpAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

/// The connection limits the table holds to.
#[derive(Clone, Copy, Debug)]
pub struct ConnectionCaps {
    /// The most connections open at once.
    pub total: usize,
    /// The most connections open at once from one peer (an IPv4 address or an IPv6 /64).
    pub per_peer: usize,
}

impl ConnectionCaps {
    /// The slots kept for callers who prove themselves: a sixteenth of the total, at least one.
    pub fn reserve(&self) -> usize {
        (self.total / 16).max(1).min(self.total)
    }
}

/// Why a connection was not let in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    /// Its peer has as many connections open as one peer may.
    PeerFull,
    /// Every slot is taken by a regular connection or one that has begun a call.
    Full,
}

/// The open connections, by peer, and those on probation in the reserve (oldest first).
#[derive(Debug)]
pub struct Admission {
    caps: ConnectionCaps,
    table: Mutex<Table>,
    /// Told whenever a connection gives its slot back.
    freed: Notify,
}

#[derive(Debug, Default)]
struct Table {
    open: usize,
    by_peer: HashMap<PeerKey, usize>,
    probation: VecDeque<(u64, Arc<Notify>)>,
    next_id: u64,
}

/// The address a per-peer cap counts by: IPv6 peers by their /64, which one host usually has whole.
#[derive(Clone, Copy, Debug, Hash, PartialEq, Eq)]
enum PeerKey {
    V4([u8; 4]),
    V6([u8; 8]),
}

impl PeerKey {
    fn of(ip: IpAddr) -> Self {
        match ip {
            IpAddr::V4(v4) => PeerKey::V4(v4.octets()),
            IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
                Some(v4) => PeerKey::V4(v4.octets()),
                None => {
                    let octets = v6.octets();
                    PeerKey::V6(octets[..8].try_into().expect("eight of sixteen"))
                }
            },
        }
    }
}

/// A connection's slot, given back when dropped.
#[derive(Debug)]
pub struct Ticket {
    admission: Arc<Admission>,
    peer: PeerKey,
    id: u64,
    /// Set when the connection is on probation: notified when it is evicted.
    pub eviction: Option<Arc<Notify>>,
}

impl Admission {
    /// An empty table for `caps`.
    pub fn new(caps: ConnectionCaps) -> Arc<Self> {
        Arc::new(Admission { caps, table: Mutex::new(Table::default()), freed: Notify::new() })
    }

    /// The caps the table holds to.
    #[cfg(test)]
    pub fn caps(&self) -> ConnectionCaps {
        self.caps
    }

    /// Lets a connection from `peer` in, regularly or on probation, or says why not.
    pub fn admit(self: &Arc<Self>, peer: Option<IpAddr>) -> Result<Ticket, Refusal> {
        // A socket without a peer address (never seen on TCP) counts as one unnamed peer.
        let peer = PeerKey::of(peer.unwrap_or(IpAddr::V4(std::net::Ipv4Addr::UNSPECIFIED)));
        let mut table = self.table.lock().expect("never poisoned");
        let from_peer = table.by_peer.get(&peer).copied().unwrap_or(0);
        if from_peer >= self.caps.per_peer {
            return Err(Refusal::PeerFull);
        }
        let regular = self.caps.total - self.caps.reserve();
        let eviction = if table.open < regular {
            None
        } else if table.open < self.caps.total {
            Some(Arc::new(Notify::new()))
        } else if table.open < self.caps.total + self.caps.reserve()
            && let Some((_, evicted)) = table.probation.pop_front()
        {
            // The evicted connection gives its slot back as it closes, a moment from now; until
            // then the table holds at most a reserve's worth more than the cap, so a flood that
            // outruns the closing cannot pile up sockets.
            evicted.notify_one();
            Some(Arc::new(Notify::new()))
        } else {
            return Err(Refusal::Full);
        };
        table.next_id += 1;
        let id = table.next_id;
        if let Some(notify) = &eviction {
            table.probation.push_back((id, notify.clone()));
        }
        table.open += 1;
        *table.by_peer.entry(peer).or_default() += 1;
        Ok(Ticket { admission: self.clone(), peer, id, eviction })
    }

    /// Like [`Admission::admit`], but when the table is full only because evicted connections
    /// are still closing (more are open than the cap), waits up to `patience` for them to close
    /// instead of refusing: a newcomer that would evict in turn should not be refused because the
    /// server has not yet had the CPU to close the ones it evicted.
    pub async fn admit_after_evictions(
        self: &Arc<Self>,
        peer: Option<IpAddr>,
        patience: Duration,
    ) -> Result<Ticket, Refusal> {
        let deadline = tokio::time::Instant::now() + patience;
        loop {
            let freed = self.freed.notified();
            let mut freed = std::pin::pin!(freed);
            // Registered before the table is read, so a slot freed in between is not missed.
            freed.as_mut().enable();
            match self.admit(peer) {
                Err(Refusal::Full) if self.closing_evicted() => {
                    if tokio::time::timeout_at(deadline, freed).await.is_err() {
                        return Err(Refusal::Full);
                    }
                }
                answer => return answer,
            }
        }
    }

    /// Whether connections evicted from the reserve are still closing.
    fn closing_evicted(&self) -> bool {
        self.table.lock().expect("never poisoned").open > self.caps.total
    }

    /// The connections open now.
    #[cfg(test)]
    pub fn open(&self) -> usize {
        self.table.lock().expect("never poisoned").open
    }

    fn leave_probation(&self, id: u64) {
        self.table.lock().expect("never poisoned").probation.retain(|(on, _)| *on != id);
    }
}

impl Ticket {
    /// The connection began a call: it is no longer evicted for a newcomer (the call decides
    /// whether it stays, see the module documentation).
    pub fn began_call(&self) {
        if self.eviction.is_some() {
            self.admission.leave_probation(self.id);
        }
    }
}

impl Drop for Ticket {
    fn drop(&mut self) {
        let mut table = self.admission.table.lock().expect("never poisoned");
        table.open -= 1;
        if let Some(count) = table.by_peer.get_mut(&self.peer) {
            *count -= 1;
            if *count == 0 {
                table.by_peer.remove(&self.peer);
            }
        }
        if self.eviction.is_some() {
            table.probation.retain(|(on, _)| *on != self.id);
        }
        drop(table);
        self.admission.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    #[test]
    fn one_peer_is_held_to_its_cap_and_others_still_get_in() {
        let admission = Admission::new(ConnectionCaps { total: 64, per_peer: 3 });
        let held: Vec<_> = (0..3).map(|_| admission.admit(ip("10.0.0.1")).unwrap()).collect();
        assert_eq!(admission.admit(ip("10.0.0.1")).unwrap_err(), Refusal::PeerFull);
        assert_eq!(
            admission.admit(ip("::ffff:10.0.0.1")).unwrap_err(),
            Refusal::PeerFull,
            "a mapped address is its IPv4 peer"
        );
        let other = admission.admit(ip("10.0.0.2")).unwrap();
        let six: Vec<_> = (0..3).map(|_| admission.admit(ip("2001:db8::1")).unwrap()).collect();
        assert_eq!(admission.admit(ip("2001:db8::2")).unwrap_err(), Refusal::PeerFull, "one /64 is one peer");
        assert_eq!(admission.open(), 7);
        drop(held);
        let again = admission.admit(ip("10.0.0.1")).unwrap();
        assert_eq!(admission.open(), 5, "dropped tickets give their slots back");
        drop((other, six, again));
        assert_eq!(admission.open(), 0);
    }

    #[test]
    fn past_the_regular_slots_connections_are_on_probation_and_the_oldest_unproven_is_evicted() {
        let admission = Admission::new(ConnectionCaps { total: 32, per_peer: 1000 });
        assert_eq!(admission.caps().reserve(), 2);
        let regular: Vec<_> = (0..30).map(|_| admission.admit(ip("10.0.0.1")).unwrap()).collect();
        assert!(regular.iter().all(|t| t.eviction.is_none()));
        let first = admission.admit(ip("10.0.0.1")).unwrap();
        let second = admission.admit(ip("10.0.0.1")).unwrap();
        second.began_call();
        let third = admission.admit(ip("10.0.0.3")).unwrap();
        assert!(third.eviction.is_some(), "the newcomer is on probation too");
        let evicted = first.eviction.clone().unwrap();
        assert!(futures_now(evicted.notified()), "the oldest connection on probation was told to go");
        drop(first);
        // One that began a call is not evicted; with no one left on probation but the newcomer,
        // the next one evicts the newcomer.
        let fourth = admission.admit(ip("10.0.0.4")).unwrap();
        assert!(futures_now(third.eviction.clone().unwrap().notified()));
        // Two evicted and not yet closed: the table is a reserve over its cap and refuses.
        let fifth = admission.admit(ip("10.0.0.5"));
        assert!(fifth.is_ok(), "one over the cap: the newcomer evicts the fourth");
        assert_eq!(admission.admit(ip("10.0.0.6")).unwrap_err(), Refusal::Full, "a reserve over the cap");
        drop((third, fourth, fifth));
        assert_eq!(admission.open(), 31);
    }

    #[test]
    fn a_table_whose_connections_all_began_calls_refuses() {
        let admission = Admission::new(ConnectionCaps { total: 2, per_peer: 10 });
        let a = admission.admit(ip("10.0.0.1")).unwrap();
        let b = admission.admit(ip("10.0.0.1")).unwrap();
        b.began_call();
        assert_eq!(admission.admit(ip("10.0.0.1")).unwrap_err(), Refusal::Full);
        drop((a, b));
    }

    #[tokio::test(start_paused = true)]
    async fn a_newcomer_waits_for_evicted_connections_to_close_rather_than_be_refused() {
        let admission = Admission::new(ConnectionCaps { total: 32, per_peer: 1000 });
        let mut held: Vec<_> = (0..34).map(|_| admission.admit(ip("10.0.0.1")).unwrap()).collect();
        assert_eq!(admission.open(), 34, "two evicted and still closing");
        let patience = Duration::from_secs(1);
        let refused = admission.admit_after_evictions(ip("10.0.0.2"), patience).await;
        assert_eq!(refused.unwrap_err(), Refusal::Full, "nothing closed within its patience");
        let waiting = tokio::spawn({
            let admission = admission.clone();
            async move { admission.admit_after_evictions(ip("10.0.0.2"), patience).await }
        });
        tokio::task::yield_now().await;
        assert!(!waiting.is_finished(), "it waits while the evicted ones close");
        let evicted = held.remove(30);
        drop(evicted);
        let admitted = waiting.await.unwrap().expect("admitted once an evicted connection closed");
        assert!(admitted.eviction.is_some(), "on probation, like any newcomer past the regular slots");
        // A table full of connections that began calls has nothing closing: refused at once.
        let busy = Admission::new(ConnectionCaps { total: 2, per_peer: 10 });
        let calls: Vec<_> = (0..2).map(|_| busy.admit(ip("10.0.0.1")).unwrap()).collect();
        calls[1].began_call();
        let started = tokio::time::Instant::now();
        assert_eq!(busy.admit_after_evictions(ip("10.0.0.1"), patience).await.unwrap_err(), Refusal::Full);
        assert_eq!(started.elapsed(), Duration::ZERO);
        drop((held, admitted, calls));
    }

    /// Whether a `Notify`'s stored permit is there now.
    fn futures_now(notified: tokio::sync::futures::Notified<'_>) -> bool {
        let mut notified = std::pin::pin!(notified);
        let waker = std::task::Waker::noop();
        notified.as_mut().poll(&mut std::task::Context::from_waker(waker)).is_ready()
    }

    use std::future::Future;
}
