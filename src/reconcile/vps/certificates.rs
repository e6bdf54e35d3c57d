//! Certificates at the provider: one DigitalOcean certificate `bc-c-<24 of the id>` each. A
//! custom one is uploaded with its private key, opened from the store for that one call and
//! never kept elsewhere; a Let's Encrypt one is ordered for its DNS names. The provider's id is
//! recorded at once; the certificate is `ready` once the provider reports it `verified`.
//! Deletion removes it at the provider, then finishes the row (which forgets the sealed key).

use std::sync::Arc;
use std::time::Duration;

use super::{ProviderResources, provider_name, rfc3339_micros};
use crate::provider::digitalocean::DigitalOcean;
use crate::provider::{Certificate, CertificateSpec, Certificates, ErrorKind};
use crate::reconcile::{Next, Outcome, Pass, Reconciler, Schedule};
use crate::store::{CERTIFICATE_KIND, CertificateObserved, CertificateRow, certificate_event, now_micros};

/// The certificates' reconciler.
#[derive(Debug, Clone)]
pub struct CertificateReconciler(pub(super) Arc<ProviderResources>);

#[tonic::async_trait]
impl Reconciler for CertificateReconciler {
    fn kind(&self) -> &'static str {
        CERTIFICATE_KIND
    }

    fn schedule(&self) -> Schedule {
        Schedule { backoff: self.0.backoff, ..Schedule::default() }
    }

    fn state_deadline(&self, state: &str) -> Option<Duration> {
        self.0.transient_state(state)
    }

    async fn reconcile(&self, pass: &Pass) -> Outcome {
        let certificate = match pass.store.certificate_fetch(&pass.item.object_id).await {
            Ok(Some(certificate)) if certificate.deleted_at.is_none() => certificate,
            Ok(_) => return Next::Remove.into(),
            Err(error) => return Outcome::transient(error.to_string()),
        };
        let adapter = match self.0.digitalocean.digitalocean(&certificate.account_id).await {
            Ok(adapter) => adapter,
            Err(error) => return Outcome::transient(error.to_string()),
        };
        let step = Step { pass, certificate: &certificate, adapter: &adapter, shared: &self.0 };
        if certificate.delete_requested_at.is_some() { step.delete().await } else { step.converge().await }
    }
}

/// One pass over one certificate.
struct Step<'a> {
    pass: &'a Pass,
    certificate: &'a CertificateRow,
    adapter: &'a DigitalOcean,
    shared: &'a ProviderResources,
}

impl Step<'_> {
    fn name(&self) -> String {
        provider_name("bc-c", &self.certificate.id)
    }

    fn unchanged(&self) -> CertificateObserved {
        let c = self.certificate;
        CertificateObserved {
            version: c.version,
            state: c.state.clone(),
            message: c.message.clone(),
            provider_id: c.provider_id.clone(),
            dns_names: Vec::new(),
            not_after: None,
            events: Vec::new(),
        }
    }

    /// Writes the observation (with an `error` event when the certificate newly fails).
    async fn record(&self, mut observed: CertificateObserved, outcome: Outcome) -> Outcome {
        let now = now_micros();
        let c = self.certificate;
        if observed.state == "error" && (c.state != "error" || c.message != observed.message) {
            let mut failed = c.clone();
            failed.state = "error".into();
            observed.events.push(certificate_event(
                "error",
                &failed,
                now,
                serde_json::json!({"message": observed.message}),
            ));
        }
        let state = observed.state.clone();
        match self.pass.store.certificate_observe(&c.id, &observed, now).await {
            Ok(_) => outcome.in_state(state),
            Err(error) => Outcome::transient(format!("recording the certificate failed: {error}")),
        }
    }

    /// The certificate at the provider: by its recorded id, else by name (a crashed pass's).
    async fn find(&self) -> Result<Option<Certificate>, Outcome> {
        if !self.certificate.provider_id.is_empty() {
            return match self.adapter.certificate_get(&self.certificate.provider_id).await {
                Ok(found) => Ok(Some(found)),
                Err(error) if error.is_not_found() => Ok(None),
                Err(error) => Err(Outcome::transient(error.to_string())),
            };
        }
        match self.adapter.certificate_list().await {
            Ok(all) => Ok(all.into_iter().find(|c| c.name == self.name())),
            Err(error) => Err(Outcome::transient(error.to_string())),
        }
    }

    async fn converge(&self) -> Outcome {
        let found = match self.find().await {
            Ok(found) => found,
            Err(outcome) => return outcome,
        };
        let Some(found) = found else { return self.create().await };
        let c = self.certificate;
        let mut observed =
            CertificateObserved { provider_id: found.id.clone(), message: String::new(), ..self.unchanged() };
        if c.kind == "letsEncrypt" {
            observed.dns_names = found.dns_names.clone();
            observed.not_after = rfc3339_micros(&found.not_after);
        }
        match found.state.as_str() {
            "verified" => {
                observed.state = "ready".into();
                if c.state != "ready" {
                    let mut ready = c.clone();
                    ready.state = "ready".into();
                    let not_after = observed.not_after.or(c.not_after);
                    let names = if observed.dns_names.is_empty() { &c.dns_names } else { &observed.dns_names };
                    observed.events.push(certificate_event(
                        "ready",
                        &ready,
                        now_micros(),
                        serde_json::json!({"dnsNames": names, "notAfter": not_after}),
                    ));
                }
                self.record(observed, Outcome::settled()).await
            }
            "error" => {
                observed.state = "error".into();
                observed.message = "the provider could not verify the certificate".into();
                self.record(observed, Outcome::permanent("the certificate is in error at the provider")).await
            }
            _ => {
                observed.state = "pending".into();
                self.record(observed, Outcome::converging()).await
            }
        }
    }

    async fn create(&self) -> Outcome {
        let c = self.certificate;
        let spec = if c.kind == "custom" {
            let key = match self.pass.store.certificate_private_key(&self.shared.secret_key, &c.id).await {
                Ok(key) => key,
                Err(error) => return Outcome::permanent(error.message),
            };
            CertificateSpec::Custom {
                name: self.name(),
                private_key: key.expose().to_owned(),
                leaf_certificate: c.leaf_certificate.clone(),
                certificate_chain: c.certificate_chain.clone(),
            }
        } else {
            CertificateSpec::LetsEncrypt { name: self.name(), dns_names: c.dns_names.clone() }
        };
        match self.adapter.certificate_create(&spec).await {
            Ok(created) => {
                let observed = CertificateObserved {
                    provider_id: created.id,
                    state: "pending".into(),
                    message: String::new(),
                    ..self.unchanged()
                };
                self.record(observed, Outcome::converging()).await
            }
            Err(error) => match error.kind {
                ErrorKind::Transient | ErrorKind::ConflictInProgress => Outcome::transient(error.to_string()),
                _ => {
                    let observed = CertificateObserved {
                        state: "error".into(),
                        message: format!("the provider refused the certificate: {}", error.message),
                        ..self.unchanged()
                    };
                    self.record(observed, Outcome::permanent(error.to_string())).await
                }
            },
        }
    }

    async fn delete(&self) -> Outcome {
        let found = match self.find().await {
            Ok(found) => found,
            Err(outcome) => return outcome,
        };
        if let Some(found) = found {
            match self.adapter.certificate_delete(&found.id).await {
                Ok(()) => {}
                Err(error) if error.is_not_found() => {}
                Err(error) if matches!(error.kind, ErrorKind::Transient | ErrorKind::ConflictInProgress) => {
                    return Outcome::transient(error.to_string());
                }
                Err(error) => {
                    let observed = CertificateObserved {
                        state: "error".into(),
                        message: format!("the provider refused to delete the certificate: {}", error.message),
                        ..self.unchanged()
                    };
                    let retry = Next::Retry { error: error.to_string(), backoff: self.shared.delete_backoff };
                    return self.record(observed, retry.into()).await;
                }
            }
        }
        match self.pass.store.certificate_finish_delete(&self.certificate.id, now_micros()).await {
            Ok(()) => Next::Remove.into(),
            Err(error) => Outcome::transient(error.to_string()),
        }
    }
}
