//! A TCP proxy in front of Postgres that counts the statements its clients execute, by reading
//! the frontend half of the wire protocol: `Parse` names a statement's SQL, `Bind` ties a portal
//! to it, each `Execute` runs it once, and each simple `Query` is one statement. A process whose
//! database URL points here (with `sslmode=disable`, so the stream is readable) is measured
//! without any change to it. Nothing is altered on the way.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;

/// Executions per statement (its SQL with whitespace collapsed).
pub type Counts = BTreeMap<String, u64>;

/// A running proxy; dropping it stops accepting (open connections end with their clients).
pub struct CountingProxy {
    /// The port it listens on, on 127.0.0.1.
    pub port: u16,
    /// What was executed so far.
    counts: Arc<Mutex<Counts>>,
    /// The accepting task.
    task: JoinHandle<()>,
}

impl Drop for CountingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl CountingProxy {
    /// Listens on a free port and relays every connection to `upstream` (`127.0.0.1:5432`).
    pub async fn start(upstream: &str) -> Result<CountingProxy, String> {
        let listener = TcpListener::bind("127.0.0.1:0").await.map_err(|e| e.to_string())?;
        let port = listener.local_addr().map_err(|e| e.to_string())?.port();
        let counts = Arc::new(Mutex::new(Counts::new()));
        let upstream = upstream.to_owned();
        let shared = counts.clone();
        let task = tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let _ = client.set_nodelay(true);
                tokio::spawn(relay(client, upstream.clone(), shared.clone()));
            }
        });
        Ok(CountingProxy { port, counts, task })
    }

    /// The counts so far.
    pub fn snapshot(&self) -> Counts {
        self.counts.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Forgets the counts so far.
    pub fn reset(&self) {
        self.counts.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}

/// Statements executed in total.
pub fn total(counts: &Counts) -> u64 {
    counts.values().sum()
}

/// Executions of statements whose SQL contains `needle`.
pub fn matching(counts: &Counts, needle: &str) -> u64 {
    counts.iter().filter(|(sql, _)| sql.contains(needle)).map(|(_, n)| n).sum()
}

/// `after - before`.
pub fn delta(before: &Counts, after: &Counts) -> Counts {
    after
        .iter()
        .map(|(sql, n)| (sql.clone(), n - before.get(sql).copied().unwrap_or_default()))
        .filter(|(_, n)| *n > 0)
        .collect()
}

async fn relay(client: TcpStream, upstream: String, counts: Arc<Mutex<Counts>>) {
    let Ok(server) = TcpStream::connect(&upstream).await else { return };
    let _ = server.set_nodelay(true);
    let (mut from_client, mut to_client) = client.into_split();
    let (mut from_server, mut to_server) = server.into_split();
    let up = async {
        let mut reader = Frontend::default();
        let mut buffer = vec![0u8; 64 * 1024];
        loop {
            let n = match from_client.read(&mut buffer).await {
                Ok(0) | Err(_) => return,
                Ok(n) => n,
            };
            if to_server.write_all(&buffer[..n]).await.is_err() {
                return;
            }
            let executed = reader.feed(&buffer[..n]);
            if !executed.is_empty() {
                let mut counts = counts.lock().unwrap_or_else(|p| p.into_inner());
                for sql in executed {
                    *counts.entry(sql).or_default() += 1;
                }
            }
        }
    };
    let down = tokio::io::copy(&mut from_server, &mut to_client);
    // Either side closing ends the connection (a restarted Postgres cuts it; the client then sees
    // its socket close, as it would without the proxy).
    tokio::select! {
        () = up => {}
        _ = down => {}
    }
}

/// The frontend stream of one connection, read message by message.
#[derive(Default)]
struct Frontend {
    /// Bytes of a message not complete yet.
    pending: Vec<u8>,
    /// The startup message was read (messages after it carry a type byte).
    started: bool,
    /// The stream turned to TLS or something else unreadable: stop reading it.
    opaque: bool,
    /// Prepared statements by name (`""` is the unnamed one).
    statements: HashMap<String, String>,
    /// Portals by name, with the SQL of their statement.
    portals: HashMap<String, String>,
}

/// The startup codes of requests that come before (or instead of) the startup message.
const SSL_REQUEST: u32 = 80_877_103;
const GSSENC_REQUEST: u32 = 80_877_104;

impl Frontend {
    /// Reads what arrived; returns the SQL of each statement it executes.
    fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        let mut executed = Vec::new();
        if self.opaque {
            return executed;
        }
        self.pending.extend_from_slice(bytes);
        let mut at = 0;
        loop {
            let rest = &self.pending[at..];
            if !self.started {
                if rest.len() < 8 {
                    break;
                }
                let len = u32::from_be_bytes([rest[0], rest[1], rest[2], rest[3]]) as usize;
                let code = u32::from_be_bytes([rest[4], rest[5], rest[6], rest[7]]);
                if code == SSL_REQUEST || code == GSSENC_REQUEST {
                    // Encryption may follow: nothing after it can be read.
                    self.opaque = true;
                    self.pending.clear();
                    return executed;
                }
                if rest.len() < len {
                    break;
                }
                self.started = true;
                at += len.max(8);
                continue;
            }
            if rest.len() < 5 {
                break;
            }
            let kind = rest[0];
            let len = u32::from_be_bytes([rest[1], rest[2], rest[3], rest[4]]) as usize;
            if len < 4 {
                self.opaque = true;
                return executed;
            }
            if rest.len() < 1 + len {
                break;
            }
            let body = &rest[5..1 + len];
            match kind {
                b'P' => {
                    let mut fields = cstrings(body);
                    let name = fields.next().unwrap_or_default();
                    let sql = normalize(&fields.next().unwrap_or_default());
                    self.statements.insert(name, sql);
                }
                b'B' => {
                    let mut fields = cstrings(body);
                    let portal = fields.next().unwrap_or_default();
                    let statement = fields.next().unwrap_or_default();
                    let sql = self.statements.get(&statement).cloned().unwrap_or_else(|| "<unknown>".to_owned());
                    self.portals.insert(portal, sql);
                }
                b'E' => {
                    let portal = cstrings(body).next().unwrap_or_default();
                    executed.push(self.portals.get(&portal).cloned().unwrap_or_else(|| "<unknown>".to_owned()));
                }
                b'Q' => executed.push(normalize(&cstrings(body).next().unwrap_or_default())),
                _ => {}
            }
            at += 1 + len;
        }
        self.pending.drain(..at);
        executed
    }
}

/// The NUL-terminated strings at the start of a message body.
fn cstrings(body: &[u8]) -> impl Iterator<Item = String> + '_ {
    body.split(|b| *b == 0).map(|s| String::from_utf8_lossy(s).into_owned())
}

/// SQL with its whitespace collapsed, so one statement is one key however it is laid out.
fn normalize(sql: &str) -> String {
    sql.split_whitespace().collect::<Vec<_>>().join(" ")
}
