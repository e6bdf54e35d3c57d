//! What load balancers rest on, made as the vps module's reconcilers would leave it: a VPC, a
//! droplet or a certificate at the fake cloud (through the real DigitalOcean adapter), and the
//! subnet, instance or certificate row that names it, in the vps module's own tables (through
//! its store). Each is its tenant's, with its authorization row.

use better_compute::domain::states::ProvisionState;
use better_compute::ids::{CertificateId, InstanceId, NetworkId, SubnetId};
use better_compute::provider::{CertificateSpec, Certificates, InstanceSpec, Instances, NetworkSpec, Networks};
use better_compute::store::{
    AuthzResourceRow, CertificateObserved, CertificateRow, InstanceRow, NetworkObserved, NetworkRow, NewCertificate,
    NewInstance, NewNetwork, ResourceMeta, SubnetObserved, SubnetRow, now_micros,
};

use super::{ACCOUNT, Env, OWN_ACCOUNT, OWN_POOL, POOL};
use crate::harness::eventually;

/// The account of one of the test pools.
fn account_of(pool: &str) -> &'static str {
    match pool {
        POOL => ACCOUNT,
        OWN_POOL => OWN_ACCOUNT,
        other => panic!("no DigitalOcean account for pool {other}"),
    }
}

fn authz(resource_type: &str, id: &str, tenant: &str) -> AuthzResourceRow {
    AuthzResourceRow {
        resource_type: resource_type.to_owned(),
        resource_id: id.to_owned(),
        tenant_id: Some(tenant.to_owned()),
        project_id: None,
        owner_id: None,
        attributes: Default::default(),
        created_at: now_micros(),
    }
}

/// An instance as a fixture made it.
#[derive(Clone, Debug)]
pub struct Machine {
    /// `inst_...`.
    pub id: String,
    /// Its droplet at the fake cloud.
    pub droplet: u64,
}

impl Env {
    /// A ready subnet of `tenant` in `region` on `pool`'s account: a VPC at the fake cloud.
    pub async fn subnet(&self, tenant: &str, pool: &str, region: &str, ip_range: &str) -> String {
        let account = account_of(pool);
        let adapter = self.digitalocean.digitalocean(account).await.unwrap();
        let network_id = NetworkId::random().to_string();
        let subnet_id = SubnetId::random().to_string();
        let name = format!("bc-n-{}", &subnet_id[5..29]);
        let spec = NetworkSpec {
            name: name.clone(),
            region: region.into(),
            ip_range: ip_range.into(),
            description: String::new(),
        };
        let vpc = adapter.network_create(&spec).await.unwrap();
        let now = now_micros();
        let row = NetworkRow {
            meta: ResourceMeta {
                id: network_id.clone(),
                tenant_id: tenant.into(),
                project_id: None,
                pool_id: pool.into(),
                account_id: account.into(),
                owner_id: "prn_fixture".into(),
                name: name.clone(),
                idempotency_key: name.clone(),
                request_digest: name.clone(),
                ..ResourceMeta::pending(now)
            },
            provider: "digitalocean".into(),
            description: String::new(),
            provider_id: String::new(),
            subnets: vec![SubnetRow {
                id: subnet_id.clone(),
                network_id: network_id.clone(),
                tenant_id: tenant.into(),
                name: "main".into(),
                region: region.into(),
                ip_range: ip_range.into(),
                state: ProvisionState::Pending,
                message: String::new(),
                provider_id: String::new(),
                created_at: now,
                updated_at: now,
                deleted_at: None,
            }],
        };
        let (created, _) = self
            .store
            .network_create(&NewNetwork { row, deadline: None }, &authz("compute-network", &network_id, tenant))
            .await
            .unwrap();
        let observed = NetworkObserved {
            version: created.version,
            state: ProvisionState::Ready,
            subnets: vec![SubnetObserved {
                id: subnet_id.clone(),
                state: ProvisionState::Ready,
                message: String::new(),
                provider_id: vpc.id,
            }],
            ..Default::default()
        };
        assert!(self.store.network_observe(&network_id, &observed, now_micros()).await.unwrap());
        subnet_id
    }

    /// An instance of `tenant` on `pool` in `region` (on `subnet`, if any) with no machine yet.
    pub async fn instance_row(&self, tenant: &str, pool: &str, region: &str, subnet: Option<&str>) -> String {
        let id = InstanceId::random().to_string();
        let now = now_micros();
        let network_id = match subnet {
            Some(subnet) => Some(self.store.subnet_fetch(subnet).await.unwrap().unwrap().network_id),
            None => None,
        };
        let name = format!("web-{}", &id[5..15]);
        let row = InstanceRow {
            meta: ResourceMeta {
                id: id.clone(),
                tenant_id: tenant.into(),
                project_id: None,
                pool_id: pool.into(),
                account_id: account_of(pool).into(),
                owner_id: "prn_fixture".into(),
                name: name.clone(),
                idempotency_key: name.clone(),
                request_digest: name,
                ..ResourceMeta::pending(now)
            },
            region: region.into(),
            size: "s-1vcpu-1gb".into(),
            image: "ubuntu-24-04-x64".into(),
            subnet_id: subnet.map(str::to_owned),
            network_id,
            machine_id: None,
            public_ipv4: String::new(),
            private_ipv4: String::new(),
        };
        self.store
            .instance_create(&NewInstance { row, deadline: None }, &authz("compute-instance", &id, tenant))
            .await
            .unwrap();
        id
    }

    /// Makes the droplet of an instance row at the fake cloud (in its subnet's VPC, or the
    /// region's default) and returns its id, without recording it.
    pub async fn droplet_for(&self, instance: &str) -> u64 {
        let row = self.store.instance_fetch(instance).await.unwrap().unwrap();
        let vpc_uuid = match &row.subnet_id {
            Some(subnet) => self.store.subnet_fetch(subnet).await.unwrap().unwrap().provider_id,
            None => String::new(),
        };
        let adapter = self.digitalocean.digitalocean(&row.account_id).await.unwrap();
        let spec = InstanceSpec {
            name: row.name.clone(),
            region: row.region.clone(),
            size: row.size.clone(),
            image: row.image.clone(),
            vpc_uuid,
            ..Default::default()
        };
        adapter.instance_create(&spec).await.unwrap().id
    }

    /// An instance of `tenant` with its droplet, as the instance reconciler leaves it once the
    /// provider assigned the machine.
    pub async fn instance(&self, tenant: &str, pool: &str, region: &str, subnet: Option<&str>) -> Machine {
        let id = self.instance_row(tenant, pool, region, subnet).await;
        let droplet = self.droplet_for(&id).await;
        self.store.instance_set_machine(&id, &droplet.to_string(), now_micros()).await.unwrap();
        Machine { id, droplet }
    }

    /// A Let's Encrypt certificate of `tenant` on `pool`'s account, uploaded to the fake cloud
    /// and, when `ready`, verified and recorded ready.
    pub async fn certificate(&self, tenant: &str, pool: &str, ready: bool) -> String {
        let account = account_of(pool);
        let id = CertificateId::random().to_string();
        let now = now_micros();
        let name = format!("bc-c-{}", &id[6..30]);
        let row = CertificateRow {
            meta: ResourceMeta {
                id: id.clone(),
                tenant_id: tenant.into(),
                project_id: None,
                pool_id: pool.into(),
                account_id: account.into(),
                owner_id: "prn_fixture".into(),
                name: name.clone(),
                idempotency_key: name.clone(),
                request_digest: name.clone(),
                ..ResourceMeta::pending(now)
            },
            kind: "letsEncrypt".into(),
            dns_names: vec!["www.example.com".into()],
            not_after: None,
            sha256_fingerprint: String::new(),
            leaf_certificate: String::new(),
            certificate_chain: String::new(),
            provider_id: String::new(),
        };
        let new = NewCertificate { row, sealed_private_key: String::new(), deadline: None };
        self.store.certificate_create(&new, &authz("compute-certificate", &id, tenant)).await.unwrap();
        if ready {
            self.certificate_ready(&id).await;
        }
        id
    }

    /// Uploads a pending certificate row's certificate, waits until the fake cloud verified it
    /// and records it `ready` with its provider id.
    pub async fn certificate_ready(&self, id: &str) {
        let row = self.store.certificate_fetch(id).await.unwrap().unwrap();
        let adapter = self.digitalocean.digitalocean(&row.account_id).await.unwrap();
        let spec = CertificateSpec::LetsEncrypt { name: row.name.clone(), dns_names: row.dns_names.clone() };
        let uploaded = adapter.certificate_create(&spec).await.unwrap();
        eventually(std::time::Duration::from_secs(20), "the fake cloud to verify the certificate", || async {
            (adapter.certificate_get(&uploaded.id).await.unwrap().state == "verified").then_some(())
        })
        .await;
        let observed = CertificateObserved {
            version: row.version,
            state: ProvisionState::Ready,
            provider_id: uploaded.id,
            ..Default::default()
        };
        assert!(self.store.certificate_observe(id, &observed, now_micros()).await.unwrap());
    }

    /// The droplet ids a load balancer reaches at the fake cloud, sorted.
    pub fn fake_droplets(fake: &serde_json::Value) -> Vec<u64> {
        let mut ids: Vec<u64> = fake["dropletIds"].as_array().unwrap().iter().map(|id| id.as_u64().unwrap()).collect();
        ids.sort();
        ids
    }
}

/// The droplet ids of `machines`, sorted.
pub fn droplets(machines: &[&Machine]) -> Vec<u64> {
    let mut ids: Vec<u64> = machines.iter().map(|m| m.droplet).collect();
    ids.sort();
    ids
}
