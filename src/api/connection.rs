//! What a call knows of the connection it came on: the request bytes that connection and the
//! whole server may hold unfinished, how long a body may stall, and whether a caller on the
//! connection has proven itself (the listener keeps room for those; see `server::admission`).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use crate::error::{Code, Error};

/// A number of request bytes that may be held in memory at once, and how many are held.
#[derive(Debug)]
pub struct ByteBudget {
    limit: usize,
    held: AtomicUsize,
    /// Every byte ever taken, for the allocator's trimmer (`server::memory`).
    taken_total: AtomicU64,
}

impl ByteBudget {
    /// A budget of `limit` bytes, none held.
    pub fn new(limit: usize) -> Self {
        ByteBudget { limit, held: AtomicUsize::new(0), taken_total: AtomicU64::new(0) }
    }

    /// The bytes held now.
    pub fn held(&self) -> usize {
        self.held.load(Ordering::Acquire)
    }

    /// Every byte taken since the budget was made.
    pub fn taken_total(&self) -> u64 {
        self.taken_total.load(Ordering::Acquire)
    }

    /// The most bytes it holds.
    pub fn limit(&self) -> usize {
        self.limit
    }

    /// Takes `bytes` if they fit under the limit.
    fn try_take(&self, bytes: usize) -> bool {
        let taken = self
            .held
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |held| {
                held.checked_add(bytes).filter(|total| *total <= self.limit)
            })
            .is_ok();
        if taken {
            self.taken_total.fetch_add(bytes as u64, Ordering::AcqRel);
        }
        taken
    }

    fn give_back(&self, bytes: usize) {
        self.held.fetch_sub(bytes, Ordering::AcqRel);
    }
}

/// One connection, as its calls see it (a request extension the listener sets).
#[derive(Clone, Debug)]
pub struct Connection(Arc<ConnectionState>);

#[derive(Debug)]
struct ConnectionState {
    own: ByteBudget,
    server: Arc<ByteBudget>,
    body_stall_timeout: Duration,
    proven: AtomicBool,
}

impl Connection {
    /// A connection that may hold `own_limit` bytes of unfinished bodies, within the server's
    /// `server` budget, and whose bodies may pause at most `body_stall_timeout` between bytes.
    pub fn new(own_limit: usize, server: Arc<ByteBudget>, body_stall_timeout: Duration) -> Self {
        Connection(Arc::new(ConnectionState {
            own: ByteBudget::new(own_limit),
            server,
            body_stall_timeout,
            proven: AtomicBool::new(false),
        }))
    }

    /// How long a request body may go without a byte arriving.
    pub fn body_stall_timeout(&self) -> Duration {
        self.0.body_stall_timeout
    }

    /// Records that a caller on this connection was authenticated (or asked for health).
    pub fn prove(&self) {
        self.0.proven.store(true, Ordering::Release);
    }

    /// Whether a caller on this connection has been authenticated (or asked for health).
    pub fn is_proven(&self) -> bool {
        self.0.proven.load(Ordering::Acquire)
    }

    /// The bytes this connection's unfinished bodies hold now.
    pub fn held(&self) -> usize {
        self.0.own.held()
    }

    /// A hold on request bytes, empty until [`BodyHold::take`] adds to it.
    pub fn hold(&self) -> BodyHold {
        BodyHold { connection: Some(self.clone()), bytes: 0 }
    }
}

/// Request bytes held in memory for one call, given back to the connection's and the server's
/// budgets when dropped.
#[derive(Debug, Default)]
pub struct BodyHold {
    connection: Option<Connection>,
    bytes: usize,
}

impl BodyHold {
    /// A hold that counts against no budget (a call that did not come through the listener).
    pub fn unbounded() -> Self {
        BodyHold::default()
    }

    /// Adds `bytes` to the hold, or refuses when the connection or the server holds too much.
    pub fn take(&mut self, bytes: usize) -> Result<(), Error> {
        let Some(connection) = &self.connection else {
            return Ok(());
        };
        let state = &connection.0;
        if !state.own.try_take(bytes) {
            return Err(Error::new(
                Code::QuotaExceeded,
                format!(
                    "this connection's unfinished request bodies hold {} of their {} bytes; \
                 finish the requests in flight or open another connection",
                    state.own.held(),
                    state.own.limit()
                ),
            ));
        }
        if !state.server.try_take(bytes) {
            state.own.give_back(bytes);
            return Err(Error::unavailable(
                "the server holds as many unfinished request bodies as it may; retry shortly",
            ));
        }
        self.bytes += bytes;
        Ok(())
    }

    /// How long the body may go without a byte arriving; `None` when the listener set no limit.
    pub fn stall_timeout(&self) -> Option<Duration> {
        self.connection.as_ref().map(Connection::body_stall_timeout)
    }
}

impl Drop for BodyHold {
    fn drop(&mut self) {
        if let Some(connection) = &self.connection
            && self.bytes > 0
        {
            connection.0.own.give_back(self.bytes);
            connection.0.server.give_back(self.bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hold_refuses_past_the_connection_or_the_server_and_gives_back_when_dropped() {
        let server = Arc::new(ByteBudget::new(100));
        let first = Connection::new(60, server.clone(), Duration::from_secs(1));
        let second = Connection::new(60, server.clone(), Duration::from_secs(1));
        let mut a = first.hold();
        a.take(50).unwrap();
        assert!(a.take(20).is_err(), "past the connection's 60");
        let mut b = second.hold();
        b.take(50).unwrap();
        let refused = b.take(10).unwrap_err();
        assert!(refused.message.contains("the server holds"), "{}", refused.message);
        assert_eq!((first.held(), second.held(), server.held()), (50, 50, 100));
        drop(a);
        assert_eq!((first.held(), server.held()), (0, 50));
        b.take(10).unwrap();
        drop(b);
        assert_eq!(server.held(), 0);
    }
}
