//! Certificates: the rules of create, list, get and delete. A custom certificate's PEMs are read
//! here (names, expiry, the key matching the leaf) and its private key is sealed with the
//! server's secret key before anything is written; it is never returned, logged or put in an
//! event. A Let's Encrypt certificate names the DNS names the provider obtains it for.

use super::certificate_pem::parse_custom;
use super::checks::CERTIFICATES;
use super::resource_calls::{CreateRequest, ListRequest, resource_requests};
use super::vps::{LIST_LIMIT, deadline, legacy_digest};
use super::{Context, Service};
use crate::error::{Error, FieldViolation, Result};
use crate::proto::compute::{
    CreateCertificateRequest, DeleteCertificateRequest, GetCertificateRequest, ListCertificatesRequest,
};
use crate::store::{CERTIFICATE_RESOURCE, CertificateRow, NewCertificate, now_micros};

/// The digest earlier releases kept of a create request (its fields listed by hand, the private
/// key by its SHA-256 mixed with the rest), with which the certificates they made are still
/// recognised on a retry. This release's digest, of the whole request, mixes the key in too: it
/// is never stored alone, even hashed.
fn legacy_request_digest(request: &CreateCertificateRequest) -> String {
    legacy_digest(&serde_json::json!({
        "projectId": request.project_id, "poolId": request.pool_id, "name": request.name, "type": request.r#type,
        "privateKey": legacy_digest(&serde_json::json!(request.private_key)),
        "leafCertificate": request.leaf_certificate, "certificateChain": request.certificate_chain,
        "dnsNames": request.dns_names,
    }))
}

/// The checks of a create's fields by type: PEMs for `custom`, names for `letsEncrypt`.
fn check_type_fields(request: &CreateCertificateRequest) -> Vec<FieldViolation> {
    let mut violations = Vec::new();
    match request.r#type.as_str() {
        "custom" => {
            if !request.dns_names.is_empty() {
                violations.push(FieldViolation::new(
                    "dnsNames",
                    "a custom certificate takes no dnsNames: they are read from its leaf certificate",
                ));
            }
        }
        _ => {
            for (field, value) in [
                ("privateKey", &request.private_key),
                ("leafCertificate", &request.leaf_certificate),
                ("certificateChain", &request.certificate_chain),
            ] {
                if !value.is_empty() {
                    violations.push(FieldViolation::new(
                        field,
                        "a letsEncrypt certificate takes no PEMs: the provider obtains it for dnsNames",
                    ));
                }
            }
            if request.dns_names.is_empty() {
                violations.push(FieldViolation::new("dnsNames", "a letsEncrypt certificate needs 1 to 100 DNS names"));
            }
            for (i, name) in request.dns_names.iter().enumerate() {
                if request.dns_names[..i].contains(name) {
                    violations.push(FieldViolation::new(format!("dnsNames[{i}]"), format!("{name:?} is named twice")));
                }
            }
        }
    }
    violations
}

resource_requests!(create: CreateCertificateRequest, list: ListCertificatesRequest);

impl Service {
    /// A certificate of `tenant`, deleted or not; `NOT_FOUND` for one of another tenant.
    pub async fn certificate_of_tenant(&self, tenant: &str, id: &str) -> Result<CertificateRow> {
        super::checks::of_tenant(tenant, "certificate", id, self.store.certificate_fetch(id).await?, |row| {
            &row.tenant_id
        })
    }

    /// Reads, seals and records a certificate and returns it `pending`.
    pub async fn certificate_create(&self, ctx: &Context, request: CreateCertificateRequest) -> Result<CertificateRow> {
        self.create_resource(ctx, request, legacy_request_digest, |request, id, digest| async move {
            self.certificate_create_new(ctx, request, &id, &digest).await
        })
        .await
    }

    /// The checks and the insert of a certificate no earlier call with its key made.
    async fn certificate_create_new(
        &self,
        ctx: &Context,
        request: CreateCertificateRequest,
        id: &str,
        digest: &str,
    ) -> Result<(CertificateRow, bool)> {
        let tenant = request.tenant_id.clone();
        self.check_project(&tenant, &request.project_id).await?;
        let pool = self.vps_pool(&tenant, &request.pool_id, CERTIFICATES).await?;
        let violations = check_type_fields(&request);
        if !violations.is_empty() {
            return Err(Error::fields(violations));
        }
        let now = now_micros();
        let custom = request.r#type == "custom";
        let parsed = if custom {
            Some(
                parse_custom(&request.private_key, &request.leaf_certificate, &request.certificate_chain, now)
                    .map_err(Error::fields)?,
            )
        } else {
            None
        };
        let sealed_private_key = if custom {
            let key = self
                .secret_key
                .as_ref()
                .ok_or_else(|| Error::unavailable("the server has no secret key, so it cannot keep a private key"))?;
            key.seal(&request.private_key, id)?
        } else {
            String::new()
        };
        let row = CertificateRow {
            meta: request.meta(ctx, id, &pool.pool.account_id, digest, now),
            kind: request.r#type.clone(),
            dns_names: parsed.as_ref().map_or_else(|| request.dns_names.clone(), |p| p.dns_names.clone()),
            not_after: parsed.as_ref().map(|p| p.not_after),
            sha256_fingerprint: parsed.as_ref().map(|p| p.sha256_fingerprint.clone()).unwrap_or_default(),
            leaf_certificate: request.leaf_certificate.clone(),
            certificate_chain: request.certificate_chain.clone(),
            provider_id: String::new(),
        };
        let mut attributes = request.authz_attributes(&pool.pool.account_id);
        attributes.insert("type".into(), request.r#type.clone().into());
        let authz = row.meta.authz(CERTIFICATE_RESOURCE, attributes);
        let new = NewCertificate { row, sealed_private_key, deadline: deadline(now) };
        self.store.certificate_create(&new, &authz).await
    }

    /// The tenant's certificates (those the caller may read), oldest first.
    pub async fn certificate_list(
        &self,
        ctx: &Context,
        request: ListCertificatesRequest,
    ) -> Result<Vec<CertificateRow>> {
        let certificates = self.store.certificate_list(&request.filter(LIST_LIMIT)).await?;
        self.readable_resources(
            ctx,
            "compute:certificates:read",
            CERTIFICATE_RESOURCE,
            &request.tenant_id,
            certificates,
        )
        .await
    }

    /// One certificate.
    pub async fn certificate_get(&self, _ctx: &Context, request: GetCertificateRequest) -> Result<CertificateRow> {
        self.certificate_of_tenant(&request.tenant_id, &request.certificate_id).await
    }

    /// Marks a certificate for deletion; one being deleted is returned as it is.
    pub async fn certificate_delete(&self, ctx: &Context, request: DeleteCertificateRequest) -> Result<CertificateRow> {
        let certificate = self.certificate_of_tenant(&request.tenant_id, &request.certificate_id).await?;
        let delete = |id: String, now| async move { self.store.certificate_delete(&id, now, deadline(now)).await };
        self.delete_resource(ctx, "certificate", certificate, request.force, delete).await
    }
}
