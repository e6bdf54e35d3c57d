//! `bcctl networks ...`, `bcctl instances ...` and `bcctl certificates ...`: the `vps` module's tenant
//! resources, with `--wait` that follows one until it is ready (or deleted). A certificate's
//! PEMs are read from files, so a private key never sits on a command line.

use super::follow::{answer, state_and_message};
use super::plan::{self, Change, DryRun};
use super::tracked::{CreateCommand, DeleteCommand, GetCommand, ListCommand, show, tracked};
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
    create(CreateNetworkRequest) pool "The provider pool whose account the network lives on",
        name "The network's name",
        key "The idempotency key (defaults to the name: running the command again is a retry)";
    help "NETWORK_ID" "The network", pool "Only networks of this pool",
        deleted "Also list deleted networks", follow "the network";
}

/// A network's own `create` flags.
#[derive(clap::Args, Debug)]
pub struct NetworkSpec {
    /// A subnet: `name=web,region=nyc3,range=10.10.0.0/24`; repeat for more.
    #[arg(long = "subnet", required = true)]
    subnets: Vec<String>,
    /// The project, if any.
    #[arg(long, default_value = "")]
    project: String,
    /// Free text.
    #[arg(long, default_value = "")]
    description: String,
}

/// The network commands.
#[derive(clap::Subcommand, Debug)]
pub enum NetworksCommand {
    /// Creates a network with its subnets; with `--wait`, follows it until it is ready.
    Create(CreateCommand<Network, NetworkSpec>),
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
        #[command(flatten)]
        dry_run: DryRun,
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
    match command {
        NetworksCommand::List(list) => list.run(cli, &mut client).await,
        NetworksCommand::Get(get) => get.run(cli, &mut client).await,
        NetworksCommand::Delete(delete) => delete.run(cli, &mut client).await,
        NetworksCommand::Create(create) => {
            let NetworkSpec { subnets, project, description } = &create.spec;
            let request = CreateNetworkRequest {
                tenant_id: create.tenant.clone(),
                project_id: project.clone(),
                pool_id: create.pool.clone(),
                name: create.name.clone(),
                description: description.clone(),
                subnets: subnets.iter().map(|s| parse_subnet(s)).collect::<Result<_, _>>()?,
                idempotency_key: create.idempotency_key(),
            };
            create.run(cli, &mut client, request).await
        }
        NetworksCommand::Update { tenant, network_id, description, dry_run } => {
            let request = UpdateNetworkRequest {
                update_mask: None,
                tenant_id: tenant.clone(),
                network_id: network_id.clone(),
                description: Some(description.clone()),
                validate_only: false,
            };
            if dry_run.dry_run {
                return plan::show(cli, &answer(client.plan(request.planned()).await)?);
            }
            let network = answer(client.update(request).await)?;
            show(cli, &client, tenant, network, None).await
        }
    }
}

tracked! {
    Instance in InstancesClient: "instance", progress state_and_message;
    get(GetInstanceRequest), delete(DeleteInstanceRequest) { instance_id };
    list(ListInstancesRequest) -> ListInstancesResponse { "instances" };
    create(CreateInstanceRequest) pool "The provider pool", name "The instance's name (its host name)",
        key "The idempotency key (defaults to the name)";
    help "INSTANCE_ID" "The instance", pool "Only instances of this pool",
        deleted "Also list deleted instances", follow "the instance";
}

/// An instance's own `create` flags.
#[derive(clap::Args, Debug)]
pub struct InstanceSpec {
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
}

/// The instance commands.
#[derive(clap::Subcommand, Debug)]
pub enum InstancesCommand {
    /// Creates an instance; with `--wait`, follows it until it is ready.
    Create(CreateCommand<Instance, InstanceSpec>),
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
    match command {
        InstancesCommand::List(list) => list.run(cli, &mut client).await,
        InstancesCommand::Get(get) => get.run(cli, &mut client).await,
        InstancesCommand::Delete(delete) => delete.run(cli, &mut client).await,
        InstancesCommand::Create(create) => {
            let InstanceSpec { region, size, image, subnet, project } = &create.spec;
            let request = CreateInstanceRequest {
                tenant_id: create.tenant.clone(),
                project_id: project.clone(),
                pool_id: create.pool.clone(),
                name: create.name.clone(),
                region: region.clone(),
                size: size.clone(),
                image: image.clone(),
                subnet_id: subnet.clone(),
                idempotency_key: create.idempotency_key(),
            };
            create.run(cli, &mut client, request).await
        }
    }
}

tracked! {
    Certificate in CertificatesClient: "certificate", progress state_and_message;
    get(GetCertificateRequest), delete(DeleteCertificateRequest) { certificate_id };
    list(ListCertificatesRequest) -> ListCertificatesResponse { "certificates" };
    create(CreateCertificateRequest) pool "The provider pool whose account holds it",
        name "The certificate's name", key "The idempotency key (defaults to the name)";
    help "CERTIFICATE_ID" "The certificate", pool "Only certificates of this pool",
        deleted "Also list deleted certificates", follow "the certificate";
}

/// A certificate's own `create` flags.
#[derive(clap::Args, Debug)]
pub struct CertificateSpec {
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
}

/// The certificate commands.
#[derive(clap::Subcommand, Debug)]
pub enum CertificatesCommand {
    /// Creates a certificate: custom from PEM files, or Let's Encrypt for DNS names; with
    /// `--wait`, follows it until the provider verified it.
    Create(CreateCommand<Certificate, CertificateSpec>),
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
    match command {
        CertificatesCommand::List(list) => list.run(cli, &mut client).await,
        CertificatesCommand::Get(get) => get.run(cli, &mut client).await,
        CertificatesCommand::Delete(delete) => delete.run(cli, &mut client).await,
        CertificatesCommand::Create(create) => {
            let spec = &create.spec;
            let request = CreateCertificateRequest {
                tenant_id: create.tenant.clone(),
                project_id: spec.project.clone(),
                pool_id: create.pool.clone(),
                name: create.name.clone(),
                r#type: spec.kind.clone(),
                private_key: read_pem(&spec.private_key_file)?,
                leaf_certificate: read_pem(&spec.leaf_certificate_file)?,
                certificate_chain: read_pem(&spec.certificate_chain_file)?,
                dns_names: spec.dns_names.clone(),
                idempotency_key: create.idempotency_key(),
            };
            create.run(cli, &mut client, request).await
        }
    }
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
