//! Google service-account authentication: the OAuth 2.0 JWT-bearer grant (RFC 7523) against the
//! key's `token_uri`, signed RS256 with `ring` (the one crypto provider of the tree), and the
//! access token cached until shortly before it expires.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use serde::Deserialize;
use serde_json::json;
use tokio::sync::Mutex;

use super::error::{ErrorClass, ErrorKind, ProviderError, ProviderResult};
use super::pacing::{AccountPacer, AfterCall, Answered};

/// The scope the GKE API needs.
pub const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";

/// The JWT grant type of the token request.
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";

const PROVIDER: &str = "google-oauth";

/// A service-account JSON key as Google issues it. `Debug` shows the account, not the key.
#[derive(Clone, Deserialize)]
pub struct ServiceAccountKey {
    /// The account's e-mail: the JWT's issuer.
    pub client_email: String,
    /// The key's id: the JWT's `kid`.
    #[serde(default)]
    pub private_key_id: String,
    /// The PKCS#8 PEM of the RSA key.
    private_key: String,
    /// Where to exchange the JWT for an access token.
    pub token_uri: String,
    /// The project the account belongs to.
    #[serde(default)]
    pub project_id: String,
}

impl std::fmt::Debug for ServiceAccountKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServiceAccountKey")
            .field("client_email", &self.client_email)
            .field("token_uri", &self.token_uri)
            .finish_non_exhaustive()
    }
}

impl ServiceAccountKey {
    /// Parses a JSON key. The error never quotes the text, which holds the private key.
    pub fn from_json(text: &str) -> ProviderResult<Self> {
        let key: ServiceAccountKey = serde_json::from_str(text).map_err(|error| {
            ProviderError::new(
                ErrorKind::Permanent,
                PROVIDER,
                format!("the service-account key is not a JSON key (line {}, column {})", error.line(), error.column()),
            )
        })?;
        key.signer()?;
        Ok(key)
    }

    /// The RSA key pair, from the PKCS#8 PEM.
    fn signer(&self) -> ProviderResult<RsaKeyPair> {
        let der = pem_body(&self.private_key, "PRIVATE KEY")
            .ok_or_else(|| permanent("the service-account key's private_key is not a PKCS#8 PEM"))?;
        RsaKeyPair::from_pkcs8(&der).map_err(|_| permanent("the service-account key's private_key is not an RSA key"))
    }

    /// The signed assertion for the token request, valid one hour from `now`.
    pub fn assertion(&self, scope: &str, now: SystemTime) -> ProviderResult<String> {
        let iat = now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs();
        let header = json!({"alg": "RS256", "typ": "JWT", "kid": self.private_key_id});
        let claims =
            json!({"iss": self.client_email, "scope": scope, "aud": self.token_uri, "iat": iat, "exp": iat + 3600});
        let signing_input =
            format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(claims.to_string()));
        let signer = self.signer()?;
        let mut signature = vec![0; signer.public().modulus_len()];
        signer
            .sign(&RSA_PKCS1_SHA256, &ring::rand::SystemRandom::new(), signing_input.as_bytes(), &mut signature)
            .map_err(|_| permanent("cannot sign with the service-account key"))?;
        Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

/// The base64 body of the first PEM block labelled `label`.
fn pem_body(pem: &str, label: &str) -> Option<Vec<u8>> {
    let begin = format!("-----BEGIN {label}-----");
    let end = format!("-----END {label}-----");
    let start = pem.find(&begin)? + begin.len();
    let stop = start + pem[start..].find(&end)?;
    let body: String = pem[start..stop].chars().filter(|c| !c.is_whitespace()).collect();
    STANDARD.decode(body).ok()
}

fn permanent(message: &str) -> ProviderError {
    ProviderError::new(ErrorKind::Permanent, PROVIDER, message)
}

/// An access token and when to stop using it.
#[derive(Clone)]
struct CachedToken {
    token: String,
    refresh_at: SystemTime,
}

/// Access tokens of one service account, fetched when needed and cached.
#[derive(Clone)]
pub struct TokenSource {
    /// Shared by every clone, so a key rotated under way is used by all of them.
    key: Arc<std::sync::RwLock<Arc<ServiceAccountKey>>>,
    http: reqwest::Client,
    cached: Arc<Mutex<Option<CachedToken>>>,
}

impl std::fmt::Debug for TokenSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenSource").field("account", &self.key().client_email).finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct TokenResponse {
    access_token: String,
    #[serde(default)]
    expires_in: u64,
}

#[derive(Deserialize)]
struct OAuthError {
    #[serde(default)]
    error: String,
    #[serde(default)]
    error_description: String,
}

impl TokenSource {
    /// A token source for `key`, over `http`.
    pub fn new(key: ServiceAccountKey, http: reqwest::Client) -> Self {
        Self { key: Arc::new(std::sync::RwLock::new(Arc::new(key))), http, cached: Arc::new(Mutex::new(None)) }
    }

    fn key(&self) -> Arc<ServiceAccountKey> {
        self.key.read().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }

    /// The account's e-mail.
    pub fn account(&self) -> String {
        self.key().client_email.clone()
    }

    /// Uses `key` from now on (the account's credentials were rotated), forgetting the token
    /// the old key was granted.
    pub async fn replace_key(&self, key: ServiceAccountKey) {
        *self.key.write().unwrap_or_else(|poisoned| poisoned.into_inner()) = Arc::new(key);
        self.invalidate().await;
    }

    /// A valid access token: the cached one, or a new one from the token endpoint.
    pub async fn access_token(&self) -> ProviderResult<String> {
        let mut cached = self.cached.lock().await;
        if let Some(token) = cached.as_ref().filter(|t| SystemTime::now() < t.refresh_at) {
            return Ok(token.token.clone());
        }
        let fresh = self.fetch().await?;
        let token = fresh.token.clone();
        *cached = Some(fresh);
        Ok(token)
    }

    /// Forgets the cached token (after the API refused it).
    pub async fn invalidate(&self) {
        *self.cached.lock().await = None;
    }

    async fn fetch(&self) -> ProviderResult<CachedToken> {
        crate::measured::provider(PROVIDER, "token", async {
            let key = self.key();
            let assertion = key.assertion(CLOUD_PLATFORM_SCOPE, SystemTime::now())?;
            let response = self
                .http
                .post(&key.token_uri)
                .form(&[("grant_type", JWT_BEARER_GRANT), ("assertion", assertion.as_str())])
                .send()
                .await
                .map_err(|error| ProviderError::transport(PROVIDER, error))?;
            let status = response.status().as_u16();
            let body = response.bytes().await.map_err(|error| ProviderError::transport(PROVIDER, error))?;
            if status != 200 {
                let refused: OAuthError = serde_json::from_slice(&body)
                    .unwrap_or(OAuthError { error: String::new(), error_description: String::new() });
                let mut error = ProviderError::new(
                    ProviderError::kind_of_status(status),
                    PROVIDER,
                    format!("the token endpoint refused the grant: {}", refused.error_description),
                );
                error.status = Some(status);
                // A key that was deleted or disabled: the credentials are refused.
                if refused.error == "invalid_grant" || status == 401 {
                    error.class_hint = Some(ErrorClass::Permission);
                }
                error.reason = refused.error;
                return Err(error);
            }
            let granted: TokenResponse = serde_json::from_slice(&body)
                .map_err(|error| ProviderError::decode(PROVIDER, "the token response", error))?;
            // Refresh a minute early so a token never expires between fetch and use.
            let lifetime = Duration::from_secs(granted.expires_in.max(60) - 60);
            Ok(CachedToken { token: granted.access_token, refresh_at: SystemTime::now() + lifetime })
        })
        .await
    }
}

/// Where and how one call to a Google API goes.
pub struct GoogleCall<'a> {
    /// The API's name in errors and metrics (`gke`, `gce`).
    pub provider: &'static str,
    /// The method.
    pub method: reqwest::Method,
    /// The full URL.
    pub url: String,
    /// What is called, for a body that cannot be decoded (the path).
    pub what: &'a str,
    /// The JSON body, if any.
    pub body: Option<serde_json::Value>,
}

impl GoogleCall<'_> {
    /// Sends the call as the service account of `tokens` in its account's turn (`pacer`), once
    /// more with a fresh token if the API says the token is no longer good, and once more with
    /// new credentials when they changed while it was refused; the answer is told to the pacer.
    pub async fn send(
        self,
        http: &reqwest::Client,
        tokens: &TokenSource,
        pacer: Option<&AccountPacer>,
        classify: fn(u16, &[u8]) -> ProviderError,
    ) -> ProviderResult<serde_json::Value> {
        let Some(pacer) = pacer else { return self.send_once(http, tokens, classify).await };
        let mut rotated = false;
        loop {
            let ticket = pacer.admit(self.provider).await?;
            if let Some(credentials) = &ticket.credentials {
                tokens.replace_key(ServiceAccountKey::from_json(credentials.expose())?).await;
            }
            let answer = self.send_once(http, tokens, classify).await;
            let told = match &answer {
                Ok(_) => Answered::Ok { pace_until: None },
                Err(error) => Answered::Failed(error),
            };
            if pacer.answered(&ticket, told).await == AfterCall::Again && !rotated {
                rotated = true;
                continue;
            }
            return answer;
        }
    }

    /// Sends the call as [`GoogleCall::send`] does, without pacing.
    async fn send_once(
        &self,
        http: &reqwest::Client,
        tokens: &TokenSource,
        classify: fn(u16, &[u8]) -> ProviderError,
    ) -> ProviderResult<serde_json::Value> {
        let provider = self.provider;
        let transport = |error| ProviderError::transport(provider, error);
        for attempt in 0..2 {
            let token = tokens.access_token().await?;
            let mut request = http.request(self.method.clone(), &self.url).bearer_auth(token);
            if let Some(body) = &self.body {
                request = request.json(body);
            }
            let response = request.send().await.map_err(transport)?;
            let status = response.status().as_u16();
            if status == 401 && attempt == 0 {
                tokens.invalidate().await;
                continue;
            }
            let header = |name: &str| response.headers().get(name).and_then(|v| v.to_str().ok()).map(str::to_owned);
            let request_id = header("x-request-id").or_else(|| header("x-goog-request-id"));
            let retry_after = header("retry-after").and_then(|s| s.parse().ok()).map(Duration::from_secs);
            let bytes = response.bytes().await.map_err(transport)?;
            if (200..300).contains(&status) {
                return serde_json::from_slice(&bytes)
                    .map_err(|error| ProviderError::decode(provider, self.what, error));
            }
            return Err(ProviderError { request_id, retry_after, ..classify(status, &bytes) });
        }
        unreachable!("the loop returns on its second attempt")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> ServiceAccountKey {
        let pem = include_str!("../../fakecloud/src/fake_service_account_key.pem");
        let json =
            json!({"client_email": "a@p.iam.gserviceaccount.com", "private_key": pem, "token_uri": "http://t/token"});
        ServiceAccountKey::from_json(&json.to_string()).unwrap()
    }

    #[test]
    fn the_assertion_is_an_rs256_jwt_for_the_token_uri() {
        let assertion = key().assertion(CLOUD_PLATFORM_SCOPE, UNIX_EPOCH + Duration::from_secs(1000)).unwrap();
        let parts: Vec<&str> = assertion.split('.').collect();
        assert_eq!(parts.len(), 3);
        let claims: serde_json::Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).unwrap()).unwrap();
        assert_eq!(claims["aud"], "http://t/token");
        assert_eq!((claims["iat"].as_u64(), claims["exp"].as_u64()), (Some(1000), Some(4600)));
        assert_eq!(URL_SAFE_NO_PAD.decode(parts[2]).unwrap().len(), 256);
    }

    #[test]
    fn neither_debug_nor_a_parse_error_shows_the_key() {
        assert!(!format!("{:?}", key()).contains("PRIVATE KEY"));
        let broken =
            r#"{"client_email": "a", "private_key": "-----BEGIN PRIVATE KEY-----\nsecretbits", "token_uri": 7}"#;
        let error = ServiceAccountKey::from_json(broken).unwrap_err();
        assert!(!error.to_string().contains("secretbits"), "{error}");
    }
}
