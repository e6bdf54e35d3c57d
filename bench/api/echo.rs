//! The transport's baseline: a trivial server on the same machine, built on the same stack as
//! `bc-server` (axum on hyper, tonic's gRPC server), that answers every method with a recorded
//! copy of what the real server answered to it, doing no other work. The load generator calls
//! it exactly as it calls the real server (same clients, same requests, same answer bytes), so
//! the ratio of the two is what the control plane costs over the bytes on the wire.
//!
//! It runs as its own process (this program started again with `echo-server <dir> <port>`), as
//! `bc-server` does.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use axum::extract::{Request, State};
use axum::response::{IntoResponse, Response};
use axum::serve::ListenerExt;
use bytes::Bytes;
use http::StatusCode;
use serde_json::{Value, json};
use tonic::server::UnaryService;

use crate::common::grpc::RawCodec;
use crate::common::procs::{Process, free_port};

/// Recorded answers by protocol and path.
#[derive(Default)]
pub struct Recorded {
    /// gRPC answers (encoded messages) by `/pkg.Service/Method`.
    grpc: HashMap<String, Bytes>,
    /// JSON answers by `/api/...`.
    json: HashMap<String, Bytes>,
    /// What is written to the directory: (protocol, path, file).
    index: Vec<Value>,
}

impl Recorded {
    /// Records `answer` for `path` over `protocol` (`grpc` or `json`).
    pub fn add(&mut self, protocol: &str, path: &str, answer: Bytes) {
        let file = format!("{}.bin", self.index.len());
        self.index.push(json!({"protocol": protocol, "path": path, "file": file, "bytes": answer.len()}));
        match protocol {
            "grpc" => self.grpc.insert(path.to_owned(), answer),
            _ => self.json.insert(path.to_owned(), answer),
        };
    }

    /// Writes the answers to `dir`, for the echo process.
    pub fn write(&self, dir: &Path) -> Result<(), String> {
        std::fs::create_dir_all(dir).map_err(|e| e.to_string())?;
        for entry in &self.index {
            let path = entry["path"].as_str().unwrap_or_default();
            let answer = match entry["protocol"].as_str() {
                Some("grpc") => &self.grpc[path],
                _ => &self.json[path],
            };
            std::fs::write(dir.join(entry["file"].as_str().unwrap_or_default()), answer).map_err(|e| e.to_string())?;
        }
        std::fs::write(dir.join("index.json"), Value::Array(self.index.clone()).to_string()).map_err(|e| e.to_string())
    }

    /// Reads what [`Recorded::write`] wrote.
    fn read(dir: &Path) -> Result<Recorded, String> {
        let index: Vec<Value> = serde_json::from_str(
            &std::fs::read_to_string(dir.join("index.json")).map_err(|e| format!("{}: {e}", dir.display()))?,
        )
        .map_err(|e| e.to_string())?;
        let mut recorded = Recorded::default();
        for entry in index {
            let answer =
                std::fs::read(dir.join(entry["file"].as_str().unwrap_or_default())).map_err(|e| e.to_string())?;
            recorded.add(
                entry["protocol"].as_str().unwrap_or_default(),
                entry["path"].as_str().unwrap_or_default(),
                answer.into(),
            );
        }
        Ok(recorded)
    }

    /// The recorded answers: (protocol, path, bytes).
    pub fn sizes(&self) -> Vec<(String, String, u64)> {
        self.index
            .iter()
            .map(|e| {
                let text = |k: &str| e[k].as_str().unwrap_or_default().to_owned();
                (text("protocol"), text("path"), e["bytes"].as_u64().unwrap_or_default())
            })
            .collect()
    }
}

/// Starts the echo process on a free port with the answers in `dir`; returns it and its endpoint.
pub async fn start(dir: &Path, logs: &Path) -> Result<(Process, String), String> {
    let port = free_port();
    let mut command = Command::new(std::env::current_exe().map_err(|e| e.to_string())?);
    command.arg("echo-server").arg(dir).arg(port.to_string());
    let process = Process::spawn("echo", command, logs.join("echo.log"))?;
    let endpoint = format!("http://127.0.0.1:{port}");
    crate::common::wait_for(
        "the echo server",
        std::time::Duration::from_secs(20),
        std::time::Duration::from_millis(20),
        || async { tokio::net::TcpStream::connect(("127.0.0.1", port)).await.ok().map(drop) },
    )
    .await?;
    Ok((process, endpoint))
}

/// The echo process's `main`: serves the answers in `dir` on `port` until killed.
pub fn serve_main(dir: &str, port: &str) {
    let recorded = match Recorded::read(Path::new(dir)) {
        Ok(recorded) => Arc::new(recorded),
        Err(error) => {
            eprintln!("echo-server: {error}");
            std::process::exit(2);
        }
    };
    let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
    runtime.block_on(async move {
        // TCP_NODELAY: the transport at its best (without it a gRPC answer's frames wait for
        // the client's delayed ACK, some 40 ms).
        let listener = tokio::net::TcpListener::bind(format!("127.0.0.1:{port}"))
            .await
            .expect("the echo port is free")
            .tap_io(|tcp| drop(tcp.set_nodelay(true)));
        let router = axum::Router::new().fallback(answer).with_state(recorded);
        axum::serve(listener, router).await.expect("the echo server runs");
    });
}

/// Answers a call with its recorded answer.
async fn answer(State(recorded): State<Arc<Recorded>>, request: Request) -> Response {
    let path = request.uri().path().to_owned();
    let grpc = request
        .headers()
        .get(http::header::CONTENT_TYPE)
        .is_some_and(|v| v.as_bytes().starts_with(b"application/grpc"));
    if grpc {
        let Some(answer) = recorded.grpc.get(&path).cloned() else {
            return StatusCode::NOT_FOUND.into_response();
        };
        let mut server = tonic::server::Grpc::new(RawCodec);
        return server.unary(Replay(answer), request).await.map(axum::body::Body::new);
    }
    let Some(answer) = recorded.json.get(&path).cloned() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    // Read the whole request, as the real server does before answering.
    if axum::body::to_bytes(request.into_body(), 16 << 20).await.is_err() {
        return StatusCode::BAD_REQUEST.into_response();
    }
    ([(http::header::CONTENT_TYPE, "application/json")], answer).into_response()
}

/// A gRPC method that answers with fixed bytes.
struct Replay(Bytes);

impl UnaryService<Bytes> for Replay {
    type Response = Bytes;
    type Future = std::future::Ready<Result<tonic::Response<Bytes>, tonic::Status>>;

    fn call(&mut self, _request: tonic::Request<Bytes>) -> Self::Future {
        std::future::ready(Ok(tonic::Response::new(self.0.clone())))
    }
}
