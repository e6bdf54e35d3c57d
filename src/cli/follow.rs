//! What the resource commands share: the answer of a call (or its failure as `bcctl` prints it),
//! and `--wait`, which follows an asynchronous resource until it reaches a state, printing each
//! new state to stderr (the commands every such resource has are in `tracked`).

use std::future::Future;
use std::time::{Duration, Instant};

use prost::Message;
use serde_json::Value;

use super::{failure, output};

/// The message of a call's answer, or the call's failure as `bcctl` prints it.
pub fn answer<T>(reply: Result<tonic::Response<T>, tonic::Status>) -> Result<T, String> {
    reply.map(tonic::Response::into_inner).map_err(|status| failure::describe(&status))
}

/// An asynchronous resource, as `--wait` follows it.
pub struct Followed {
    /// What it is called in messages (`load balancer`).
    pub what: &'static str,
    /// The full name of its message, to print it.
    pub message: &'static str,
    /// The line printed whenever it changes, from its JSON.
    pub progress: fn(&Value) -> String,
}

/// A string field of a resource's JSON, empty when absent.
pub fn field<'a>(json: &'a Value, name: &str) -> &'a str {
    json[name].as_str().unwrap_or_default()
}

/// The progress line of most resources: the state and the message.
pub fn state_and_message(json: &Value) -> String {
    format!("{} {}", field(json, "state"), field(json, "message"))
}

/// The resource's `problem`, for its progress line: empty while its passes succeed.
pub fn problem_line(json: &Value) -> String {
    let problem = &json["problem"];
    if problem.is_null() {
        return String::new();
    }
    format!(
        " | problem {} (attempt {}, next {}): {}",
        field(problem, "class"),
        problem["attempts"].as_str().map_or_else(|| problem["attempts"].to_string(), str::to_owned),
        field(problem, "nextAttemptAt"),
        field(problem, "message")
    )
}

impl Followed {
    /// Polls `get` until the resource `id` is `until`, printing each new progress line to stderr;
    /// `error` ends the wait with the resource's message. Answers the resource's JSON.
    pub async fn wait_for<T, F, Fut>(&self, id: &str, until: &str, mut get: F) -> Result<Value, String>
    where
        T: Message,
        F: FnMut() -> Fut,
        Fut: Future<Output = Result<T, String>>,
    {
        let started = Instant::now();
        let mut last = String::new();
        loop {
            let json = output::to_json(&get().await?, self.message);
            let line = (self.progress)(&json) + &problem_line(&json);
            if line != last {
                eprintln!("{:>6.1}s  {line}", started.elapsed().as_secs_f64());
                last = line;
            }
            let state = field(&json, "state");
            if state == until {
                return Ok(json);
            }
            if state == "error" {
                return Err(format!("{} {id} is in error: {}", self.what, field(&json, "message")));
            }
            if state == "deleted" {
                return Err(format!("{} {id} is deleted: it will not be {until}", self.what));
            }
            tokio::time::sleep(Duration::from_millis(500)).await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_problem_is_shown_on_the_progress_line() {
        let json = serde_json::json!({"state": "provisioning", "problem": {
            "class": "unreachable", "message": "cannot reach the API", "attempts": "3",
            "nextAttemptAt": "2026-12-05T20:00:00Z"}});
        assert_eq!(
            problem_line(&json),
            " | problem unreachable (attempt 3, next 2026-12-05T20:00:00Z): cannot reach the API"
        );
        assert_eq!(problem_line(&serde_json::json!({"state": "ready"})), "");
    }
}
