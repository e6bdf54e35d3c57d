//! Google's OAuth 2.0 token endpoint, for the service-account JWT-bearer grant: it checks the
//! assertion's signature, issuer, audience and expiry, and grants access tokens the fake GKE
//! API (and the fake clusters' API servers) accept.

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::extract::{Form, State};
use axum::response::Response;
use axum::routing::post;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{KeyPair, RSA_PKCS1_2048_8192_SHA256, RsaKeyPair, UnparsedPublicKey};
use rustls::pki_types::PrivatePkcs8KeyDer;
use rustls::pki_types::pem::PemObject;
use serde::Deserialize;
use serde_json::{Value, json};

use super::{Shared, json_response};

/// The fixed RSA key of every fake service account: a test key, never a real one.
const FAKE_KEY_PEM: &str = include_str!("fake_service_account_key.pem");

/// The grant type of a service account's token request (RFC 7523).
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

/// Registered accounts and the tokens granted to them.
#[derive(Default)]
pub struct OAuthState {
    accounts: HashSet<String>,
    /// Access token -> the account it was granted to.
    tokens: HashMap<String, String>,
}

impl OAuthState {
    /// Lets `email` use the grant.
    pub fn register(&mut self, email: &str) {
        self.accounts.insert(email.to_owned());
    }

    /// Grants a new access token to `email`.
    pub fn grant(&mut self, email: &str) -> String {
        let token = format!("ya29.fake-{:032x}", rand::random::<u128>());
        self.tokens.insert(token.clone(), email.to_owned());
        token
    }

    /// The account an access token was granted to.
    pub fn account_of(&self, token: &str) -> Option<&str> {
        self.tokens.get(token).map(String::as_str)
    }
}

/// A service-account JSON key, as Google's console downloads it.
pub fn key_json(project: &str, email: &str, token_uri: &str) -> String {
    json!({
        "type": "service_account",
        "project_id": project,
        "private_key_id": "fake-key-1",
        "private_key": FAKE_KEY_PEM,
        "client_email": email,
        "client_id": "100000000000000000001",
        "auth_uri": "https://accounts.google.com/o/oauth2/auth",
        "token_uri": token_uri,
    })
    .to_string()
}

pub fn routes() -> Router<Arc<Shared>> {
    Router::new().route("/token", post(token))
}

#[derive(Deserialize)]
struct Grant {
    #[serde(default)]
    grant_type: String,
    #[serde(default)]
    assertion: String,
}

fn refuse(error: &str, description: &str) -> Response {
    json_response(400, json!({"error": error, "error_description": description}))
}

async fn token(State(shared): State<Arc<Shared>>, Form(grant): Form<Grant>) -> Response {
    if grant.grant_type != JWT_BEARER_GRANT {
        return refuse("unsupported_grant_type", "Invalid grant_type.");
    }
    let claims = match verify(&grant.assertion) {
        Ok(claims) => claims,
        Err(description) => return refuse("invalid_grant", description),
    };
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
    if claims["aud"] != format!("{}/token", shared.base_url) {
        return refuse(
            "invalid_grant",
            "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.",
        );
    }
    if claims["exp"].as_u64().is_none_or(|exp| exp < now) {
        return refuse(
            "invalid_grant",
            "Invalid JWT: Token must be a short-lived token and in a reasonable timeframe.",
        );
    }
    let email = claims["iss"].as_str().unwrap_or_default();
    let mut world = shared.world();
    if !world.oauth.accounts.contains(email) {
        return refuse("invalid_grant", "Invalid JWT Signature.");
    }
    let access_token = world.oauth.grant(email);
    json_response(200, json!({"access_token": access_token, "expires_in": 3599, "token_type": "Bearer"}))
}

/// The claims of an RS256 assertion signed by the fake key.
fn verify(assertion: &str) -> Result<Value, &'static str> {
    let mut parts = assertion.split('.');
    let (Some(header), Some(claims), Some(signature), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("Invalid JWT: not three parts.");
    };
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| "Invalid JWT: not base64url.");
    let header: Value = serde_json::from_slice(&decode(header)?).map_err(|_| "Invalid JWT header.")?;
    if header["alg"] != "RS256" {
        return Err("Invalid JWT: alg must be RS256.");
    }
    let der = PrivatePkcs8KeyDer::from_pem_slice(FAKE_KEY_PEM.as_bytes()).map_err(|_| "the fake key is not PEM")?;
    let pair = RsaKeyPair::from_pkcs8(der.secret_pkcs8_der()).map_err(|_| "the fake key is not RSA")?;
    let public = UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, pair.public_key().as_ref().to_vec());
    let signed = &assertion[..assertion.rfind('.').unwrap_or(0)];
    public.verify(signed.as_bytes(), &decode(signature)?).map_err(|_| "Invalid JWT Signature.")?;
    serde_json::from_slice(&decode(claims)?).map_err(|_| "Invalid JWT claims.")
}
