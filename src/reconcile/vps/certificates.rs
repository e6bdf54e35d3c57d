//! Certificates at the provider: one DigitalOcean certificate `bc-c-<24 of the id>` each. A
//! custom one is uploaded with its private key, opened from the store for that one call and
//! never kept elsewhere; a Let's Encrypt one is ordered for its DNS names. The provider's id is
//! recorded at once; the certificate is `ready` once the provider reports it `verified`.
//! Deletion removes it at the provider, then finishes the row (which forgets the sealed key).

use std::sync::Arc;

use super::{ProviderResources, rfc3339_micros};
use crate::domain::lifecycle_events::LifecycleEvent;
use crate::domain::states::ProvisionState;
use crate::provider::digitalocean::DigitalOcean;
use crate::provider::{Certificate, CertificateSpec, Certificates, Found, ProviderError};
use crate::reconcile::{Context, KitReconciler, Outcome, Pass, PassError, Timings, refusal};
use crate::store::{CertificateObserved, CertificateRow, certificate_event, now_micros};

/// The certificates' reconciler.
#[derive(Debug, Clone)]
pub struct CertificateReconciler(pub(super) Arc<ProviderResources>);

#[tonic::async_trait]
impl KitReconciler for CertificateReconciler {
    type Row = CertificateRow;

    fn timings(&self) -> Timings {
        self.0.timings
    }

    async fn reconcile(&self, pass: &Pass, certificate: CertificateRow) -> Result<Outcome, PassError> {
        let adapter = self.0.digitalocean.digitalocean(&certificate.account_id).await?;
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
        crate::changes::vps::certificate_name(&self.certificate.id)
    }

    fn unchanged(&self) -> CertificateObserved {
        let c = self.certificate;
        CertificateObserved {
            version: c.version,
            state: c.state,
            message: c.message.clone(),
            provider_id: c.provider_id.clone(),
            dns_names: Vec::new(),
            not_after: None,
            events: Vec::new(),
        }
    }

    /// The certificate in `error` with `message`.
    fn failed(&self, message: String) -> CertificateObserved {
        CertificateObserved { state: ProvisionState::Error, message, ..self.unchanged() }
    }

    /// Writes the observation (with an `error` event when the certificate newly fails).
    async fn record(&self, mut observed: CertificateObserved, outcome: Outcome) -> Result<Outcome, PassError> {
        let now = now_micros();
        let c = self.certificate;
        observed.events.extend(c.failure_event(observed.state, &observed.message, now));
        let state = observed.state;
        self.pass.store.certificate_observe(&c.id, &observed, now).await.context("recording the certificate failed")?;
        Ok(outcome.in_state(state))
    }

    /// The certificate at the provider: by its recorded id, else by name (a crashed pass's).
    async fn find(&self) -> Result<Option<Certificate>, ProviderError> {
        if !self.certificate.provider_id.is_empty() {
            return self.adapter.certificate_get(&self.certificate.provider_id).await.found();
        }
        Ok(self.adapter.certificate_list().await?.into_iter().find(|c| c.name == self.name()))
    }

    async fn converge(&self) -> Result<Outcome, PassError> {
        let Some(found) = self.find().await? else { return self.create().await };
        let c = self.certificate;
        let mut observed =
            CertificateObserved { provider_id: found.id.clone(), message: String::new(), ..self.unchanged() };
        if c.kind == "letsEncrypt" {
            observed.dns_names = found.dns_names.clone();
            observed.not_after = rfc3339_micros(&found.not_after);
        }
        match found.state.as_str() {
            "verified" => {
                observed.state = ProvisionState::Ready;
                if c.state != ProvisionState::Ready {
                    let mut ready = c.clone();
                    ready.state = ProvisionState::Ready;
                    let not_after = observed.not_after.or(c.not_after);
                    let names = if observed.dns_names.is_empty() { &c.dns_names } else { &observed.dns_names };
                    observed.events.push(certificate_event(
                        LifecycleEvent::Ready,
                        &ready,
                        now_micros(),
                        serde_json::json!({"dnsNames": names, "notAfter": not_after}),
                    ));
                }
                self.record(observed, Outcome::settled()).await
            }
            "error" => {
                observed.state = ProvisionState::Error;
                observed.message = "the provider could not verify the certificate".into();
                self.record(observed, Outcome::permanent("the certificate is in error at the provider")).await
            }
            _ => {
                observed.state = ProvisionState::Pending;
                self.record(observed, Outcome::converging()).await
            }
        }
    }

    async fn create(&self) -> Result<Outcome, PassError> {
        let c = self.certificate;
        let spec = if c.kind == "custom" {
            // Whatever keeps the key from opening, retrying will not open it.
            let key = self
                .pass
                .store
                .certificate_private_key(&self.shared.secret_key, &c.id)
                .await
                .map_err(|error| PassError::invalid(error.message))?;
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
                    state: ProvisionState::Pending,
                    message: String::new(),
                    ..self.unchanged()
                };
                self.record(observed, Outcome::converging()).await
            }
            Err(error) => {
                let error = refusal(error)?;
                let message = format!("the provider refused the certificate: {}", error.message);
                self.record(self.failed(message), Outcome::permanent(error.to_string())).await
            }
        }
    }

    async fn delete(&self) -> Result<Outcome, PassError> {
        if let Some(found) = self.find().await?
            && let Err(error) = self.adapter.certificate_delete(&found.id).await.found()
        {
            let error = refusal(error)?;
            let message = format!("the provider refused to delete the certificate: {}", error.message);
            return self
                .record(self.failed(message), Outcome::retry(error.to_string(), self.shared.timings.delete_backoff))
                .await;
        }
        self.shared.objects().confirm_gone(self.certificate).await?;
        self.pass.store.certificate_finish_delete(&self.certificate.id, now_micros()).await?;
        Ok(Outcome::remove())
    }
}
