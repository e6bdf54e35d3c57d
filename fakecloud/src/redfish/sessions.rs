//! The fake BMC's session service, as DMTF Redfish has it: `POST /redfish/v1/SessionService/
//! Sessions` with `UserName` and `Password` answers 201 with the session's `X-Auth-Token` and
//! `Location`; a request carrying the token is signed in as that user; `DELETE` of the session
//! logs it out; a session unused for its timeout expires. Like a real controller, the BMC keeps
//! only a few sessions open (four unless a test says) and refuses another past that with
//! `CreateLimitReachedForResource`, so a client that opens a session per machine or per call
//! is locked out.

use std::time::{Duration, Instant};

use axum::response::Response;
use http::{HeaderValue, Method};
use serde_json::{Value, json};

use super::{error, missing};
use crate::json_response;

const SESSIONS: &str = "/redfish/v1/SessionService/Sessions";

/// One open session.
struct Session {
    id: u64,
    token: String,
    username: String,
    password: String,
    last_used: Instant,
}

/// The sessions of the fake BMC, with its limits and what a test reads of them.
pub struct SessionService {
    open: Vec<Session>,
    /// The most sessions open at once (real controllers: 4 to 16).
    pub limit: usize,
    /// How long an unused session lives.
    pub timeout: Duration,
    /// Sessions made so far.
    pub made: u64,
    /// The most that were open at once.
    pub most_open: usize,
    /// Logins refused because every session was taken.
    pub refused: u64,
    /// Sessions logged out.
    pub logged_out: u64,
}

impl Default for SessionService {
    fn default() -> Self {
        Self {
            open: Vec::new(),
            limit: 4,
            timeout: Duration::from_secs(30 * 60),
            made: 0,
            most_open: 0,
            refused: 0,
            logged_out: 0,
        }
    }
}

impl SessionService {
    fn expire(&mut self, now: Instant) {
        let timeout = self.timeout;
        self.open.retain(|session| now.duration_since(session.last_used) < timeout);
    }

    /// The user and password of the live session whose token is `token`, its use noted.
    pub fn credentials(&mut self, token: &str, now: Instant) -> Option<(String, String)> {
        self.expire(now);
        let session = self.open.iter_mut().find(|session| session.token == token)?;
        session.last_used = now;
        Some((session.username.clone(), session.password.clone()))
    }

    /// What a test sees of them.
    pub fn inspect(&mut self, now: Instant) -> Value {
        self.expire(now);
        json!({"open": self.open.len(), "made": self.made, "mostOpen": self.most_open, "refused": self.refused,
            "loggedOut": self.logged_out, "limit": self.limit})
    }

    /// A request below `/redfish/v1/SessionService` (`rest` after it); `known`: whether the
    /// login's user and password are some system's.
    pub fn handle(
        &mut self,
        method: &Method,
        rest: &[&str],
        body: &Value,
        token: Option<&str>,
        known: bool,
        now: Instant,
    ) -> Response {
        self.expire(now);
        match (method.clone(), rest) {
            (Method::GET, []) => json_response(
                200,
                json!({"@odata.id": "/redfish/v1/SessionService", "Id": "SessionService", "ServiceEnabled": true,
                       "SessionTimeout": self.timeout.as_secs(), "Sessions": {"@odata.id": SESSIONS}}),
            ),
            (Method::POST, ["Sessions"]) => self.login(body, known, now),
            (Method::GET, ["Sessions"]) if self.signed_in(token, now) => {
                let members: Vec<Value> =
                    self.open.iter().map(|s| json!({"@odata.id": format!("{SESSIONS}/{}", s.id)})).collect();
                json_response(
                    200,
                    json!({"@odata.id": SESSIONS, "Members@odata.count": members.len(), "Members": members}),
                )
            }
            (Method::DELETE, ["Sessions", id]) if self.signed_in(token, now) => {
                let before = self.open.len();
                self.open.retain(|session| session.id.to_string() != *id);
                match self.open.len() < before {
                    true => {
                        self.logged_out += 1;
                        json_response(204, Value::Null)
                    }
                    false => missing(&format!("{SESSIONS}/{id}")),
                }
            }
            (Method::GET | Method::DELETE, ["Sessions", ..]) => {
                error(401, "NoValidSession", "There is no valid session established with the implementation.")
            }
            _ => error(405, "OperationNotAllowed", "The operation is not allowed on the session service."),
        }
    }

    fn signed_in(&mut self, token: Option<&str>, now: Instant) -> bool {
        token.is_some_and(|token| self.credentials(token, now).is_some())
    }

    fn login(&mut self, body: &Value, known: bool, now: Instant) -> Response {
        let (Some(username), Some(password)) = (body["UserName"].as_str(), body["Password"].as_str()) else {
            return error(400, "PropertyMissing", "The property UserName or Password is a required property.");
        };
        if !known {
            return error(401, "NoValidSession", "There is no valid session established with the implementation.");
        }
        if self.open.len() >= self.limit {
            self.refused += 1;
            return error(
                400,
                "CreateLimitReachedForResource",
                "The create operation failed because the resource has reached the limit of possible resources.",
            );
        }
        self.made += 1;
        let id = self.made;
        let token = format!("fake-session-{id}-{:016x}", rand_token(id, now));
        self.open.push(Session {
            id,
            token: token.clone(),
            username: username.to_owned(),
            password: password.to_owned(),
            last_used: now,
        });
        self.most_open = self.most_open.max(self.open.len());
        let location = format!("{SESSIONS}/{id}");
        let mut response = json_response(
            201,
            json!({"@odata.id": location, "Id": id.to_string(), "Name": "User Session", "UserName": username}),
        );
        let headers = response.headers_mut();
        headers.insert("x-auth-token", HeaderValue::from_str(&token).expect("a token is a header value"));
        headers.insert("location", HeaderValue::from_str(&location).expect("a path is a header value"));
        response
    }
}

/// A token no other session had: the fake BMC's tokens need not be secret, only distinct.
fn rand_token(id: u64, now: Instant) -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u64(id);
    hasher.write_u128(now.elapsed().as_nanos());
    hasher.finish()
}
