//! HTTP/2 as a hostile client uses it: unfinished bodies on many streams of a few connections,
//! a body that stops arriving, and connections that send only the preface, from one address and
//! from many.

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::listener::read_until_closed;
use crate::harness::sample_every;
use crate::harness::{ServerProcess, System, curl, eventually};
use better_compute::store::Backend;

/// What a client writes first on an HTTP/2 connection: the preface and an empty SETTINGS frame.
const PREFACE: &[u8] = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00";

/// A method every key may call, whose body the server reads once the caller is known.
const TENANTS_LIST: &str = "/bettercompute.platform.v1.Tenants/List";

fn address(server: &ServerProcess) -> String {
    server.endpoint.trim_start_matches("http://").to_owned()
}

/// An HTTP/2 connection to the server.
async fn h2_connect(server: &ServerProcess) -> h2::client::SendRequest<Bytes> {
    let tcp = tokio::net::TcpStream::connect(address(server)).await.unwrap();
    let (client, connection) = h2::client::handshake(tcp).await.unwrap();
    tokio::spawn(async move {
        let _ = connection.await;
    });
    client
}

/// A gRPC call to `path` on `endpoint` with `token`, whose body declares a message of `declared`
/// bytes; `body` is sent after the frame's prefix and the stream is left open.
fn unfinished_call(
    client: &mut h2::client::SendRequest<Bytes>,
    (endpoint, token): (&str, &str),
    path: &str,
    declared: u32,
    body: Bytes,
) -> (h2::client::ResponseFuture, h2::SendStream<Bytes>) {
    let request = http::Request::post(format!("{endpoint}{path}"))
        .header("content-type", "application/grpc")
        .header("te", "trailers")
        .header("authorization", format!("Bearer {token}"))
        .body(())
        .unwrap();
    let (response, mut stream) = client.send_request(request, false).unwrap();
    let mut prefix = vec![0u8];
    prefix.extend_from_slice(&declared.to_be_bytes());
    stream.send_data(Bytes::from(prefix), false).unwrap();
    stream.send_data(body, false).unwrap();
    (response, stream)
}

/// The gRPC status of an answer (in its headers when trailers-only, else in its trailers), or
/// how the stream ended without one.
async fn grpc_status(response: h2::client::ResponseFuture) -> Result<(String, String), String> {
    let response = response.await.map_err(|error| format!("no answer: {error}"))?;
    let from = |headers: &http::HeaderMap| {
        let code = headers.get("grpc-status")?.to_str().ok()?.to_owned();
        let message =
            headers.get("grpc-message").and_then(|m| m.to_str().ok()).map(percent_decoded).unwrap_or_default();
        Some((code, message))
    };
    if let Some(status) = from(response.headers()) {
        return Ok(status);
    }
    let http_status = response.status();
    let mut body = response.into_body();
    while body.data().await.is_some() {}
    let trailers = body.trailers().await.map_err(|error| format!("{http_status}, trailers: {error}"))?;
    trailers.as_ref().and_then(from).ok_or_else(|| format!("{http_status} without a gRPC status"))
}

/// A `grpc-message` as text (gRPC percent-encodes what is not printable ASCII).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match (
            bytes[i],
            bytes.get(i + 1..i + 3).and_then(|hex| u8::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()),
        ) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Samples the server's resident memory until told to stop; the highest figure, in MiB.
fn sample_rss(server: &ServerProcess) -> (Arc<AtomicBool>, Arc<AtomicU64>, std::thread::JoinHandle<()>) {
    let (stop, peak) = (Arc::new(AtomicBool::new(false)), Arc::new(AtomicU64::new(0)));
    let pid = server.pid();
    let (stop_, peak_) = (stop.clone(), peak.clone());
    let sampler = std::thread::spawn(move || {
        sample_every(Duration::from_millis(50), &stop_, || {
            peak_.fetch_max(rss_mib_of(pid), Ordering::AcqRel);
        });
    });
    (stop, peak, sampler)
}

fn rss_mib_of(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kib| kib / 1024)
}

/// The server's bound under the attack below, in MiB of resident memory.
const ATTACK_BOUND_MIB: u64 = 256;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_hundred_unfinished_bodies_on_each_of_four_connections_keep_the_server_under_256_mib() {
    // A body that stops arriving is refused after the header deadline (2 s here), so the
    // attack's streams end in seconds and let the next ones open.
    let server = System::on(Backend::Postgres).process(&["--header-read-timeout-secs", "2"]).await;
    let baseline = server.rss_mib();
    // One 4 MiB buffer, shared by every stream (h2 sends from it as the server's windows allow):
    // the test's own memory stays small while each stream offers the server a whole body.
    let almost_four_mib = Bytes::from(vec![0u8; 4 * 1024 * 1024 - 1]);
    let (stop, peak, sampler) = sample_rss(&server);
    let mut attacks = Vec::new();
    for _ in 0..4 {
        let mut client = h2_connect(&server).await;
        let body = almost_four_mib.clone();
        let (endpoint, token) = (server.endpoint.clone(), server.admin_token.clone());
        attacks.push(tokio::spawn(async move {
            let mut answers = Vec::new();
            let mut streams = Vec::new();
            for _ in 0..200 {
                client = client.ready().await.unwrap();
                let declared = 4 * 1024 * 1024;
                let (response, stream) =
                    unfinished_call(&mut client, (&endpoint, &token), TENANTS_LIST, declared, body.clone());
                streams.push(stream);
                answers.push(tokio::spawn(grpc_status(response)));
            }
            let mut codes = Vec::new();
            for answer in answers {
                codes.push(answer.await.unwrap());
            }
            (client, streams, codes)
        }));
    }
    let mut held = Vec::new();
    let mut codes = Vec::new();
    for attack in attacks {
        let (client, streams, answered) = attack.await.unwrap();
        codes.extend(answered);
        held.push((client, streams));
    }
    let during = peak.load(Ordering::Acquire);
    // Every stream was answered, none with the body it never finished: the ones past a budget
    // at once (QUOTA_EXCEEDED on the connection's, UNAVAILABLE on the server's), the others
    // when their bodies stopped arriving.
    assert_eq!(codes.len(), 800);
    let refused_for_budget = codes.iter().flatten().filter(|(code, _)| code == "8").count();
    let stalled = codes.iter().flatten().filter(|(_, message)| message.contains("stopped arriving")).count();
    println!("{refused_for_budget} streams refused for a budget, {stalled} for stalling");
    assert!(refused_for_budget > 0, "no stream was refused for a budget: {:?}", &codes[..5]);
    assert!(stalled > 0, "no stream was refused for stalling: {:?}", &codes[..5]);
    // Streams opened past the server's 100 before the client heard its settings are refused
    // by HTTP/2 itself (REFUSED_STREAM), which a client retries.
    let refused = |c: &Result<(String, String), String>| match c {
        Ok((code, _)) => code == "8" || code == "14",
        Err(error) => error.contains("refused stream"),
    };
    assert!(
        codes.iter().all(refused),
        "every stream is refused: {:?}",
        codes.iter().filter(|c| !refused(c)).take(3).collect::<Vec<_>>()
    );
    assert!(
        during < ATTACK_BOUND_MIB,
        "the server grew from {baseline} MiB to {during} MiB under the attack (bound {ATTACK_BOUND_MIB} MiB)"
    );
    server.assert_up();

    // The connections go; the server gives the memory back within a minute.
    drop(held);
    let idle_bound = baseline + 24;
    let settled = eventually(Duration::from_secs(60), "resident memory to return near idle", || async {
        let now = server.rss_mib();
        (now <= idle_bound).then_some(now)
    })
    .await;
    stop.store(true, Ordering::Release);
    sampler.join().unwrap();
    println!("resident memory: {baseline} MiB idle, {during} MiB at the attack's peak, {settled} MiB after");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_that_stops_arriving_on_http2_is_refused_after_the_header_deadline_not_the_request_timeout() {
    let server = System::on(Backend::Postgres)
        .process(&["--header-read-timeout-secs", "2", "--request-timeout-secs", "60"])
        .await;
    let mut client = h2_connect(&server).await;
    let started = Instant::now();
    let caller = (server.endpoint.as_str(), server.admin_token.as_str());
    let (response, _stream) = unfinished_call(&mut client, caller, TENANTS_LIST, 64, Bytes::from_static(b"\x0a\x02"));
    let (code, message) = tokio::time::timeout(Duration::from_secs(20), grpc_status(response))
        .await
        .expect("the stalled call is answered well before the request timeout")
        .expect("a gRPC status");
    assert_eq!(code, "14", "UNAVAILABLE: {message}");
    assert!(message.contains("stopped arriving"), "{message}");
    assert!(started.elapsed() < Duration::from_secs(20));
    server.assert_up();
}

/// Opens a connection to `server` from `source` (127.0.0.2 is loopback as well, another peer)
/// and sends the HTTP/2 preface alone.
async fn preface_only(server: &ServerProcess, source: &str) -> TcpStream {
    let mut stream = connect_from(server, source).await;
    stream.write_all(PREFACE).unwrap();
    stream
}

/// A blocking TCP connection to `server`, bound to `source` first.
async fn connect_from(server: &ServerProcess, source: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    let stream = socket.connect(address(server).parse().unwrap()).await.unwrap().into_std().unwrap();
    stream.set_nonblocking(false).unwrap();
    stream
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_connection_that_sends_only_the_preface_is_closed_within_the_header_deadline() {
    let server =
        System::on(Backend::Postgres).process(&["--header-read-timeout-secs", "1", "--idle-timeout-secs", "120"]).await;
    let mut silent = preface_only(&server, "127.0.0.1").await;
    let (_, closed) = read_until_closed(&mut silent, Duration::from_secs(10));
    assert!(closed, "a connection that sent only the HTTP/2 preface is still held after 10 s");
    server.assert_up();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_address_past_its_connection_cap_is_refused_while_another_address_is_served() {
    let server = System::on(Backend::Postgres).process(&[]).await;
    let mut held = Vec::new();
    for _ in 0..1030 {
        held.push(preface_only(&server, "127.0.0.1").await);
    }
    // The 257th connection and after are answered 503 and closed at once.
    let mut refused = 0;
    for stream in held.iter_mut().skip(256) {
        let (text, closed) = read_until_closed(stream, Duration::from_secs(5));
        if closed && text.contains("503") && text.contains("this address has too many open connections") {
            refused += 1;
        }
    }
    assert_eq!(refused, 1030 - 256, "connections past the per-peer cap of 256 are refused");
    let health = format!("{}/healthz", server.endpoint);
    let from_elsewhere =
        curl(&["-s", "-m", "5", "--interface", "127.0.0.2", "-o", "/dev/null", "-w", "%{http_code}", &health]);
    assert_eq!(from_elsewhere, "200", "another address is served while one holds its cap");
    let from_the_flood = curl(&["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", &health]);
    assert_eq!(from_the_flood, "503", "the flooding address is held to its cap");
    drop(held);
    server.assert_up();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn while_silent_connections_fill_the_server_health_probes_and_authenticated_callers_are_served() {
    let server = System::on(Backend::Postgres)
        .process(&[
            "--max-connections",
            "32",
            "--max-connections-per-peer",
            "10000",
            "--header-read-timeout-secs",
            "30",
        ])
        .await;
    let mut held = Vec::new();
    for _ in 0..100 {
        held.push(preface_only(&server, "127.0.0.1").await);
    }
    // The flood holds every regular slot and cycles through the reserve, yet a probe and a
    // caller with a key get in, each at its first try, long before the silent ones time out.
    for _ in 0..3 {
        let health =
            curl(&["-s", "-m", "5", "-o", "/dev/null", "-w", "%{http_code}", &format!("{}/healthz", server.endpoint)]);
        assert_eq!(health, "200", "/healthz is answered while anonymous connections fill the server");
        let listed = curl(&[
            "-s",
            "-m",
            "5",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            &format!("{}/api/platform/tenants/list", server.endpoint),
            "-H",
            &format!("Authorization: Bearer {}", server.admin_token),
            "-d",
            "{}",
        ]);
        assert_eq!(listed, "200", "an authenticated call is served while anonymous connections fill the server");
        held.push(preface_only(&server, "127.0.0.1").await);
    }
    // A newcomer that proves nothing on probation is closed after its call.
    let mut anonymous = connect_from(&server, "127.0.0.1").await;
    anonymous.write_all(b"GET /openapi.json HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let (text, closed) = read_until_closed(&mut anonymous, Duration::from_secs(15));
    assert!(text.starts_with("HTTP/1.1 200"), "{}", &text[..text.len().min(200)]);
    assert!(closed, "an unproven connection in the reserve is closed after its call");
    drop(held);
    server.assert_up();
}
