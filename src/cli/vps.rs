//! `bc networks ...`, `bc instances ...` and `bc certificates ...`: the `vps` module's tenant
//! resources, with `--wait` that follows one until it is ready (or deleted). A certificate's
//! PEMs are read from files, so a private key never sits on a command line.

use super::follow::{answer, state_and_message};
use super::tracked::{DeleteCommand, GetCommand, ListCommand, show, tracked};
use super::{Cli, connect};
use crate::proto::compute::certificates_client::CertificatesClient;
use crate::proto::compute::instances_client::InstancesClient;
use crate::proto::compute::networks_client::NetworksClient;
use crate::proto::compute::{
    Certificate, CreateCertificateRequest, CreateInstanceRequest, CreateNetworkRequest, DeleteCertificateRequest,
    DeleteInstanceRequest, DeleteNetworkRequest, GetCertificateRequest, GetInstanceRequest, GetNetworkRequest,
    Instance, ListCertificatesRequest, ListCertificatesResponse, ListInstancesRequest, ListInstancesResponse,
    ListNetworksRequest, ListNetworksResponse, Network, SubnetSpec, UpdateNetworkRequest,
};

tracked! {
    Network in NetworksClient: "network", progress state_and_message;
    get(GetNetworkRequest), delete(DeleteNetworkRequest) { network_id };
    list(ListNetworksRequest) -> ListNetworksResponse { "networks" };
    help "NETWORK_ID" "The network", pool "Only networks of this pool",
        deleted "Also list deleted networks", wait "Follow the network until it is deleted";
}

/// The network commands.
#[derive(clap::Subcommand, Debug)]
pub enum NetworksCommand {
    /// Creates a network with its subnets; with `--wait`, follows it until it is ready.
    Create {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The provider pool whose account the network lives on.
        #[arg(long)]
        pool: String,
        /// The network's name.
        #[arg(long)]
        name: String,
        /// A subnet: `name=web,region=nyc3,range=10.10.0.0/24`; repeat for more.
        #[arg(long = "subnet", required = true)]
        subnets: Vec<String>,
        /// The project, if any.
        #[arg(long, default_value = "")]
        project: String,
        /// Free text.
        #[arg(long, default_value = "")]
        description: String,
        /// The idempotency key (defaults to the name: running the command again is a retry).
        #[arg(long)]
        idempotency_key: Option<String>,
        /// Follow the network until it is ready.
        #[arg(long)]
        wait: bool,
    },
    /// Lists the tenant's networks.
    List(ListCommand<Network>),
    /// Shows one network with its subnets.
    Get(GetCommand<Network>),
    /// Changes a network's description.
    Update {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The network.
        network_id: String,
        /// The new description.
        #[arg(long)]
        description: String,
    },
    /// Deletes a network with nothing on it; with `--wait`, follows it until it is deleted.
    Delete(DeleteCommand<Network>),
}

/// Parses `name=web,region=nyc3,range=10.10.0.0/24`.
pub fn parse_subnet(text: &str) -> Result<SubnetSpec, String> {
    let mut spec = SubnetSpec::default();
    for part in text.split(',').filter(|p| !p.is_empty()) {
        let (key, value) = part.split_once('=').ok_or_else(|| format!("{part:?} in {text:?} is not key=value"))?;
        match key {
            "name" => spec.name = value.to_owned(),
            "region" => spec.region = value.to_owned(),
            "range" | "ip-range" => spec.ip_range = value.to_owned(),
            other => return Err(format!("unknown subnet field {other:?} in {text:?}; use name, region, range")),
        }
    }
    Ok(spec)
}

/// Runs a network command.
pub async fn networks(cli: &Cli, command: &NetworksCommand) -> Result<(), String> {
    let mut client = NetworksClient::new(connect(cli).await?);
    let (network, tenant, until) = match command {
        NetworksCommand::List(list) => return list.run(cli, &mut client).await,
        NetworksCommand::Get(get) => return get.run(cli, &mut client).await,
        NetworksCommand::Delete(delete) => return delete.run(cli, &mut client).await,
        NetworksCommand::Create { tenant, pool, name, subnets, project, description, idempotency_key, wait } => {
            let request = CreateNetworkRequest {
                tenant_id: tenant.clone(),
                project_id: project.clone(),
                pool_id: pool.clone(),
                name: name.clone(),
                description: description.clone(),
                subnets: subnets.iter().map(|s| parse_subnet(s)).collect::<Result<_, _>>()?,
                idempotency_key: idempotency_key.clone().unwrap_or_else(|| name.clone()),
            };
            (answer(client.create(request).await)?, tenant, wait.then_some("ready"))
        }
        NetworksCommand::Update { tenant, network_id, description } => {
            let request = UpdateNetworkRequest {
                update_mask: None,
                tenant_id: tenant.clone(),
                network_id: network_id.clone(),
                description: Some(description.clone()),
            };
            (answer(client.update(request).await)?, tenant, None)
        }
    };
    show(cli, &client, tenant, network, until).await
}

tracked! {
    Instance in InstancesClient: "instance", progress state_and_message;
    get(GetInstanceRequest), delete(DeleteInstanceRequest) { instance_id };
    list(ListInstancesRequest) -> ListInstancesResponse { "instances" };
    help "INSTANCE_ID" "The instance", pool "Only instances of this pool",
        deleted "Also list deleted instances", wait "Follow the instance until it is deleted";
}

/// The instance commands.
#[derive(clap::Subcommand, Debug)]
pub enum InstancesCommand {
    /// Creates an instance; with `--wait`, follows it until it is ready.
    Create {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The provider pool.
        #[arg(long)]
        pool: String,
        /// The instance's name (its host name).
        #[arg(long)]
        name: String,
        /// A region of the pool's account.
        #[arg(long)]
        region: String,
        /// The size slug.
        #[arg(long, default_value = "s-1vcpu-1gb")]
        size: String,
        /// The image slug.
        #[arg(long, default_value = "ubuntu-24-04-x64")]
        image: String,
        /// A subnet of one of the tenant's networks, in the region.
        #[arg(long, default_value = "")]
        subnet: String,
        /// The project, if any.
        #[arg(long, default_value = "")]
        project: String,
        /// The idempotency key (defaults to the name).
        #[arg(long)]
        idempotency_key: Option<String>,
        /// Follow the instance until it is ready.
        #[arg(long)]
        wait: bool,
    },
    /// Lists the tenant's instances.
    List(ListCommand<Instance>),
    /// Shows one instance.
    Get(GetCommand<Instance>),
    /// Deletes an instance; with `--wait`, follows it until it is deleted.
    Delete(DeleteCommand<Instance>),
}

/// Runs an instance command.
pub async fn instances(cli: &Cli, command: &InstancesCommand) -> Result<(), String> {
    let mut client = InstancesClient::new(connect(cli).await?);
    let (instance, tenant, until) = match command {
        InstancesCommand::List(list) => return list.run(cli, &mut client).await,
        InstancesCommand::Get(get) => return get.run(cli, &mut client).await,
        InstancesCommand::Delete(delete) => return delete.run(cli, &mut client).await,
        InstancesCommand::Create {
            tenant,
            pool,
            name,
            region,
            size,
            image,
            subnet,
            project,
            idempotency_key,
            wait,
        } => {
            let request = CreateInstanceRequest {
                tenant_id: tenant.clone(),
                project_id: project.clone(),
                pool_id: pool.clone(),
                name: name.clone(),
                region: region.clone(),
                size: size.clone(),
                image: image.clone(),
                subnet_id: subnet.clone(),
                idempotency_key: idempotency_key.clone().unwrap_or_else(|| name.clone()),
            };
            (answer(client.create(request).await)?, tenant, wait.then_some("ready"))
        }
    };
    show(cli, &client, tenant, instance, until).await
}

tracked! {
    Certificate in CertificatesClient: "certificate", progress state_and_message;
    get(GetCertificateRequest), delete(DeleteCertificateRequest) { certificate_id };
    list(ListCertificatesRequest) -> ListCertificatesResponse { "certificates" };
    help "CERTIFICATE_ID" "The certificate", pool "Only certificates of this pool",
        deleted "Also list deleted certificates", wait "Follow the certificate until it is deleted";
}

/// The certificate commands.
#[derive(clap::Subcommand, Debug)]
pub enum CertificatesCommand {
    /// Creates a certificate: custom from PEM files, or Let's Encrypt for DNS names; with
    /// `--wait`, follows it until the provider verified it.
    Create {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// The provider pool whose account holds it.
        #[arg(long)]
        pool: String,
        /// The certificate's name.
        #[arg(long)]
        name: String,
        /// `custom` or `letsEncrypt`.
        #[arg(long = "type", default_value = "custom")]
        kind: String,
        /// Custom: the private key's PEM file.
        #[arg(long)]
        private_key_file: Option<std::path::PathBuf>,
        /// Custom: the leaf certificate's PEM file.
        #[arg(long)]
        leaf_certificate_file: Option<std::path::PathBuf>,
        /// Custom: the intermediates' PEM file.
        #[arg(long)]
        certificate_chain_file: Option<std::path::PathBuf>,
        /// Let's Encrypt: a name to cover; repeat for more.
        #[arg(long = "dns-name")]
        dns_names: Vec<String>,
        /// The project, if any.
        #[arg(long, default_value = "")]
        project: String,
        /// The idempotency key (defaults to the name).
        #[arg(long)]
        idempotency_key: Option<String>,
        /// Follow the certificate until it is ready.
        #[arg(long)]
        wait: bool,
    },
    /// Lists the tenant's certificates.
    List(ListCommand<Certificate>),
    /// Shows one certificate (never its private key).
    Get(GetCommand<Certificate>),
    /// Deletes a certificate; with `--wait`, follows it until it is deleted.
    Delete(DeleteCommand<Certificate>),
}

fn read_pem(path: &Option<std::path::PathBuf>) -> Result<String, String> {
    match path {
        Some(path) => std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display())),
        None => Ok(String::new()),
    }
}

/// Runs a certificate command.
pub async fn certificates(cli: &Cli, command: &CertificatesCommand) -> Result<(), String> {
    let mut client = CertificatesClient::new(connect(cli).await?);
    let (certificate, tenant, until) = match command {
        CertificatesCommand::List(list) => return list.run(cli, &mut client).await,
        CertificatesCommand::Get(get) => return get.run(cli, &mut client).await,
        CertificatesCommand::Delete(delete) => return delete.run(cli, &mut client).await,
        CertificatesCommand::Create {
            tenant,
            pool,
            name,
            kind,
            private_key_file,
            leaf_certificate_file,
            certificate_chain_file,
            dns_names,
            project,
            idempotency_key,
            wait,
        } => {
            let request = CreateCertificateRequest {
                tenant_id: tenant.clone(),
                project_id: project.clone(),
                pool_id: pool.clone(),
                name: name.clone(),
                r#type: kind.clone(),
                private_key: read_pem(private_key_file)?,
                leaf_certificate: read_pem(leaf_certificate_file)?,
                certificate_chain: read_pem(certificate_chain_file)?,
                dns_names: dns_names.clone(),
                idempotency_key: idempotency_key.clone().unwrap_or_else(|| name.clone()),
            };
            (answer(client.create(request).await)?, tenant, wait.then_some("ready"))
        }
    };
    show(cli, &client, tenant, certificate, until).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subnets_parse_from_one_argument() {
        let spec = parse_subnet("name=web,region=nyc3,range=10.10.0.0/24").unwrap();
        assert_eq!((spec.name.as_str(), spec.region.as_str(), spec.ip_range.as_str()), ("web", "nyc3", "10.10.0.0/24"));
        assert!(parse_subnet("name=web,colour=blue").is_err());
        assert!(parse_subnet("web").is_err());
    }
}
