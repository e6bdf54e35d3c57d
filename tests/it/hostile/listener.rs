//! The listener: slow, half-sent and idle connections, and the connection cap; who may read
//! `/metrics`; and the modes of the files `bcctl dev` keeps.

use std::io::{ErrorKind, Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use crate::harness::poll;
use crate::harness::{ServerProcess, System, curl};
use better_compute::store::Backend;

/// Connects to the server behind `endpoint` and sends `bytes`, leaving the connection open.
fn connect_and_send(endpoint: &str, bytes: &[u8]) -> TcpStream {
    let address = endpoint.trim_start_matches("http://").trim_start_matches("https://");
    let mut stream = TcpStream::connect(address).unwrap();
    stream.write_all(bytes).unwrap();
    stream
}

/// Reads until the server closes the connection or `within` passes: what it sent, and whether
/// it closed.
pub(super) fn read_until_closed(stream: &mut TcpStream, within: Duration) -> (String, bool) {
    let deadline = Instant::now() + within;
    let mut received = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return (String::from_utf8_lossy(&received).into_owned(), false);
        }
        stream.set_read_timeout(Some(left)).unwrap();
        match stream.read(&mut buffer) {
            Ok(0) => return (String::from_utf8_lossy(&received).into_owned(), true),
            Ok(n) => received.extend_from_slice(&buffer[..n]),
            Err(error) if matches!(error.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                return (String::from_utf8_lossy(&received).into_owned(), false);
            }
            Err(error) if error.kind() == ErrorKind::Interrupted => {}
            Err(_) => return (String::from_utf8_lossy(&received).into_owned(), true),
        }
    }
}

/// The descriptors the process has open.
fn open_descriptors(server: &ServerProcess) -> usize {
    std::fs::read_dir(format!("/proc/{}/fd", server.pid())).unwrap().count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_that_sends_half_a_header_line_is_closed_within_the_header_timeout() {
    let server = System::on(Backend::Postgres).process(&["--header-read-timeout-secs", "1"]).await;
    let mut slow = connect_and_send(&server.endpoint, b"GET /healthz HTT");
    let (_, closed) = read_until_closed(&mut slow, Duration::from_secs(10));
    assert!(closed, "a half-sent request line is still held after 10 s");
    server.assert_up();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_short_body_under_a_long_content_length_is_answered_within_the_request_timeout() {
    let server = System::on(Backend::Postgres).process(&["--request-timeout-secs", "2"]).await;
    let head = format!(
        "POST /api/platform/tenants/list HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\
         content-type: application/json\r\ncontent-length: 100000\r\n\r\n{{",
        server.admin_token
    );
    let mut short = connect_and_send(&server.endpoint, head.as_bytes());
    let (answer, closed) = read_until_closed(&mut short, Duration::from_secs(15));
    assert!(answer.starts_with("HTTP/1.1 503"), "the call is answered UNAVAILABLE at its deadline: {answer:?}");
    assert!(answer.contains("request timeout"), "the answer says which limit: {answer}");
    assert!(closed, "the connection with the unread body is closed");

    // Over gRPC-web, the same, as a status in the headers.
    let head = format!(
        "POST /bettercompute.platform.v1.Tenants/List HTTP/1.1\r\nhost: x\r\nauthorization: Bearer {}\r\n\
         content-type: application/grpc-web+proto\r\ncontent-length: 100000\r\n\r\n\0",
        server.admin_token
    );
    let mut short = connect_and_send(&server.endpoint, head.as_bytes());
    let (answer, _) = read_until_closed(&mut short, Duration::from_secs(15));
    assert!(answer.contains("grpc-status: 14"), "UNAVAILABLE over gRPC-web: {answer:?}");
    server.assert_up();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn idle_connections_are_closed() {
    let server =
        System::on(Backend::Postgres).process(&["--header-read-timeout-secs", "2", "--idle-timeout-secs", "2"]).await;
    // A keep-alive connection after its call.
    let mut kept = connect_and_send(&server.endpoint, b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n");
    let (answer, closed) = read_until_closed(&mut kept, Duration::from_secs(10));
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer:?}");
    assert!(closed, "an idle keep-alive connection is still open after 10 s");
    // A connection that never sends a byte (no protocol chosen yet), and one that has sent the
    // HTTP/2 preface and nothing since.
    let mut silent = connect_and_send(&server.endpoint, b"");
    let mut http2 = connect_and_send(&server.endpoint, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\0\0\0\x04\0\0\0\0\0");
    assert!(read_until_closed(&mut silent, Duration::from_secs(12)).1, "a silent connection is still open");
    assert!(read_until_closed(&mut http2, Duration::from_secs(12)).1, "an idle HTTP/2 connection is still open");
    server.assert_up();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_thousand_half_sent_connections_leave_the_server_answering() {
    let cap = 20;
    let server = System::on(Backend::Postgres)
        .process(&["--max-connections", &cap.to_string(), "--header-read-timeout-secs", "2"])
        .await;
    let before = open_descriptors(&server);
    let mut held = Vec::new();
    for _ in 0..3_000 {
        if let Ok(mut stream) = TcpStream::connect(server.endpoint.trim_start_matches("http://")) {
            let _ = stream.write_all(b"GET /healthz HTTP/1.1\r\nhost");
            held.push(stream);
        }
    }
    assert!(held.len() > 2_000, "the test could open only {} connections", held.len());
    let during = open_descriptors(&server);
    assert!(during <= before + cap + 10, "the server holds {during} descriptors, {before} before the flood, cap {cap}");
    // The half-sent ones time out and free their places: a real call gets one, while the
    // flood's sockets are all still open on this side.
    let health = format!("{}/healthz", server.endpoint);
    poll(Duration::from_secs(20), "the server to answer /healthz after the flood", || async {
        match curl(&["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", &health]).as_str() {
            "200" => Ok(()),
            code => Err(format!("{code}: {}", server.log_text())),
        }
    })
    .await;
    assert!(open_descriptors(&server) <= before + cap + 10);
    drop(held);
    server.assert_up();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_watch_stream_outlives_the_request_and_idle_timeouts() {
    let server =
        System::on(Backend::Postgres).process(&["--request-timeout-secs", "1", "--idle-timeout-secs", "1"]).await;
    let url = format!("{}/api/compute/events/watch", server.endpoint);
    let auth = format!("Authorization: Bearer {}", server.admin_token);
    // curl gives up after 5 s (exit 28, "timed out"): the stream was still open then.
    let output = std::process::Command::new("curl")
        .args(["-s", "-N", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", &url, "-H", &auth])
        .args(["-H", "content-type: application/json", "-d", "{}"])
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&output.stdout), "200");
    assert_eq!(output.status.code(), Some(28), "the watch ended before 5 s: {output:?}");
    server.assert_up();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn metrics_are_served_only_with_their_token_or_on_their_own_listener() {
    let metrics_status = |url: &str, token: Option<&str>| {
        let auth = format!("Authorization: Bearer {}", token.unwrap_or_default());
        let mut args = vec!["-s", "-o", "/dev/null", "-w", "%{http_code}", url];
        if token.is_some() {
            args.extend(["-H", auth.as_str()]);
        }
        curl(&args)
    };
    // By default, not on the API listener: a scrape queries the store and counts every tenant.
    let plain = System::on(Backend::Postgres).process(&[]).await;
    let url = format!("{}/metrics", plain.endpoint);
    assert_eq!(metrics_status(&url, None), "404");
    assert_eq!(metrics_status(&url, Some(&plain.admin_token)), "404");
    drop(plain);

    let guarded = System::on(Backend::Postgres).process(&["--metrics-token", "scrape-me"]).await;
    let url = format!("{}/metrics", guarded.endpoint);
    assert_eq!(metrics_status(&url, None), "401");
    assert_eq!(metrics_status(&url, Some("wrong")), "401");
    assert_eq!(metrics_status(&url, Some("scrape-me")), "200");
    drop(guarded);

    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let listen = format!("127.0.0.1:{port}");
    let apart = System::on(Backend::Postgres).process(&["--metrics-listen", &listen]).await;
    assert_eq!(metrics_status(&format!("http://{listen}/metrics"), None), "200");
    assert_eq!(metrics_status(&format!("{}/metrics", apart.endpoint), None), "404");
}

#[test]
fn bc_dev_keeps_its_store_and_tokens_readable_by_their_owner_only() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let (dev, _) = System::on(Backend::Sqlite).dev(dir.path());
    for name in ["bc.sqlite", "bc.sqlite-wal", "bc.sqlite-shm", "dev.json", "secret.key"] {
        let Ok(metadata) = std::fs::metadata(dir.path().join(name)) else {
            assert!(name.contains('-'), "bcctl dev made no {name}");
            continue;
        };
        let mode = metadata.permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "{name} has mode {mode:o}");
    }
    drop(dev);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_tls_a_silent_plain_or_garbled_handshake_is_closed_and_the_server_serves_on() {
    let server = System::on(Backend::Postgres).tls().process(&["--header-read-timeout-secs", "1"]).await;
    let mut silent = connect_and_send(&server.endpoint, b"");
    let (_, closed) = read_until_closed(&mut silent, Duration::from_secs(10));
    assert!(closed, "a connection that never begins its handshake is still held after 10 s");

    let mut plain = connect_and_send(&server.endpoint, b"GET /healthz HTTP/1.1\r\nhost: x\r\n\r\n");
    let (answer, closed) = read_until_closed(&mut plain, Duration::from_secs(10));
    assert!(closed && !answer.contains("200 OK"), "plain HTTP on the TLS port is served nothing: {answer:?}");

    // A handshake record that claims 64 KiB and sends a few bytes, and one of noise.
    let mut half = connect_and_send(&server.endpoint, &[0x16, 0x03, 0x01, 0xff, 0xff, 0x01, 0x00]);
    let (_, closed) = read_until_closed(&mut half, Duration::from_secs(10));
    assert!(closed, "a half-sent ClientHello is still held after 10 s");
    let noise: Vec<u8> = (0..4096u32).map(|i| (i.wrapping_mul(2654435761) >> 13) as u8).collect();
    let mut garbled = connect_and_send(&server.endpoint, &noise);
    let (_, closed) = read_until_closed(&mut garbled, Duration::from_secs(10));
    assert!(closed, "noise on the TLS port is still held after 10 s");

    server.assert_up();
    assert!(!server.log_text().contains("panicked"), "{}", server.log_text());
}
