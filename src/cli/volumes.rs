//! `bcctl volumes ...`: block-storage volumes, with `--wait` that follows one until it is ready
//! (after a create, an update, an attach or a detach) or deleted.

use super::follow::{answer, state_and_message};
use super::plan::{self, Change, DryRun};
use super::tracked::{CreateCommand, DeleteCommand, GetCommand, ListCommand, show, tracked};
use super::{Cli, connect};
use crate::proto::compute::volumes_client::VolumesClient;
use crate::proto::compute::{
    AttachVolumeRequest, CreateVolumeRequest, DeleteVolumeRequest, DetachVolumeRequest, GetVolumeRequest,
    ListVolumesRequest, ListVolumesResponse, UpdateVolumeRequest, Volume,
};

tracked! {
    Volume in VolumesClient: "volume", progress state_and_message;
    get(GetVolumeRequest), delete(DeleteVolumeRequest) { volume_id };
    list(ListVolumesRequest) -> ListVolumesResponse { "volumes" };
    create(CreateVolumeRequest) pool "The provider pool whose account holds it", name "The volume's name",
        key "The idempotency key (defaults to the name: running the command again is a retry)";
    help "VOLUME_ID" "The volume", pool "Only volumes of this pool",
        deleted "Also list deleted volumes", follow "the volume";
}

/// A volume's own `create` flags.
#[derive(clap::Args, Debug)]
pub struct VolumeSpec {
    /// A region of the pool's account.
    #[arg(long)]
    region: String,
    /// Its size in GiB (1 to 16384).
    #[arg(long = "size")]
    size_gigabytes: i32,
    /// `ext4` or `xfs` to have it formatted; unformatted when not given.
    #[arg(long = "filesystem", default_value = "")]
    filesystem_type: String,
    /// Free text.
    #[arg(long, default_value = "")]
    description: String,
    /// The project, if any.
    #[arg(long, default_value = "")]
    project: String,
}

/// The volume the change commands name, and whether to follow it until it is ready.
#[derive(clap::Args, Debug)]
pub struct VolumeTarget {
    /// The tenant.
    #[arg(long)]
    tenant: String,
    /// The volume.
    volume_id: String,
    /// Follow the volume until the provider has made the change (it is `ready`).
    #[arg(long)]
    wait: bool,
}

/// The volume commands.
#[derive(clap::Subcommand, Debug)]
pub enum VolumesCommand {
    /// Creates a volume; with `--wait`, follows it until it is ready.
    Create(CreateCommand<Volume, VolumeSpec>),
    /// Lists the tenant's volumes.
    List(ListCommand<Volume>),
    /// Shows one volume.
    Get(GetCommand<Volume>),
    /// Grows a volume (it never shrinks) or changes its description.
    Update {
        #[command(flatten)]
        target: VolumeTarget,
        /// The new size in GiB, no smaller than the volume's.
        #[arg(long = "size")]
        size_gigabytes: Option<i32>,
        /// The new description.
        #[arg(long)]
        description: Option<String>,
        #[command(flatten)]
        dry_run: DryRun,
    },
    /// Attaches a volume to an instance in its region.
    Attach {
        #[command(flatten)]
        target: VolumeTarget,
        /// The instance.
        #[arg(long)]
        instance: String,
    },
    /// Detaches a volume from its instance.
    Detach {
        #[command(flatten)]
        target: VolumeTarget,
    },
    /// Deletes a volume (detaching it first); with `--wait`, follows it until it is deleted.
    Delete(DeleteCommand<Volume>),
}

/// Runs a volume command.
pub async fn run(cli: &Cli, command: &VolumesCommand) -> Result<(), String> {
    let mut client = VolumesClient::new(connect(cli).await?);
    let (target, volume) = match command {
        VolumesCommand::List(list) => return list.run(cli, &mut client).await,
        VolumesCommand::Get(get) => return get.run(cli, &mut client).await,
        VolumesCommand::Delete(delete) => return delete.run(cli, &mut client).await,
        VolumesCommand::Create(create) => {
            let spec = &create.spec;
            let request = CreateVolumeRequest {
                tenant_id: create.tenant.clone(),
                project_id: spec.project.clone(),
                pool_id: create.pool.clone(),
                name: create.name.clone(),
                description: spec.description.clone(),
                region: spec.region.clone(),
                size_gigabytes: spec.size_gigabytes,
                filesystem_type: spec.filesystem_type.clone(),
                idempotency_key: create.idempotency_key(),
            };
            return create.run(cli, &mut client, request).await;
        }
        VolumesCommand::Update { target, size_gigabytes, description, dry_run } => {
            let request = UpdateVolumeRequest {
                tenant_id: target.tenant.clone(),
                volume_id: target.volume_id.clone(),
                size_gigabytes: *size_gigabytes,
                description: description.clone(),
                update_mask: None,
                validate_only: false,
            };
            if dry_run.dry_run {
                return plan::show(cli, &answer(client.plan(request.planned()).await)?);
            }
            (target, answer(client.update(request).await)?)
        }
        VolumesCommand::Attach { target, instance } => {
            let request = AttachVolumeRequest {
                tenant_id: target.tenant.clone(),
                volume_id: target.volume_id.clone(),
                instance_id: instance.clone(),
            };
            (target, answer(client.attach(request).await)?)
        }
        VolumesCommand::Detach { target } => {
            let request = DetachVolumeRequest { tenant_id: target.tenant.clone(), volume_id: target.volume_id.clone() };
            (target, answer(client.detach(request).await)?)
        }
    };
    show(cli, &client, &target.tenant, volume, target.wait.then_some("ready")).await
}
