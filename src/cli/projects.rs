//! `bcctl projects ...`.

use super::follow::answer;
use super::{Cli, connect, output};
use crate::proto::platform::{
    CreateProjectRequest, DeleteProjectRequest, GetProjectRequest, ListProjectsRequest, UpdateProjectRequest,
    projects_client::ProjectsClient,
};

/// The project commands.
#[derive(clap::Subcommand, Debug)]
pub enum ProjectsCommand {
    /// Creates a project under a tenant.
    Create {
        /// The tenant.
        #[arg(long)]
        tenant: String,
        /// 1 to 63 characters: lower-case letters, digits and `-`.
        #[arg(long)]
        name: String,
        /// Free text.
        #[arg(long, default_value = "")]
        description: String,
    },
    /// Shows one project.
    Get {
        /// The project's id (`prj_...`).
        project_id: String,
    },
    /// Lists projects, oldest first.
    List {
        /// Only this tenant's.
        #[arg(long, default_value = "")]
        tenant: String,
        /// Also list deleted projects.
        #[arg(long)]
        include_deleted: bool,
    },
    /// Changes a project's name or description.
    Update {
        /// The project's id.
        project_id: String,
        /// The new name.
        #[arg(long)]
        name: Option<String>,
        /// The new description.
        #[arg(long)]
        description: Option<String>,
    },
    /// Deletes a project.
    Delete {
        /// The project's id.
        project_id: String,
    },
}

/// Runs a project command.
pub async fn run(cli: &Cli, command: &ProjectsCommand) -> Result<(), String> {
    let mut client = ProjectsClient::new(connect(cli).await?);
    let project = match command {
        ProjectsCommand::Create { tenant, name, description } => {
            client
                .create(CreateProjectRequest {
                    tenant_id: tenant.clone(),
                    name: name.clone(),
                    description: description.clone(),
                })
                .await
        }
        ProjectsCommand::Get { project_id } => client.get(GetProjectRequest { project_id: project_id.clone() }).await,
        ProjectsCommand::Update { project_id, name, description } => {
            client
                .update(UpdateProjectRequest {
                    update_mask: None,
                    project_id: project_id.clone(),
                    name: name.clone(),
                    description: description.clone(),
                })
                .await
        }
        ProjectsCommand::Delete { project_id } => {
            client.delete(DeleteProjectRequest { project_id: project_id.clone() }).await
        }
        ProjectsCommand::List { tenant, include_deleted } => {
            let request = ListProjectsRequest { tenant_id: tenant.clone(), include_deleted: *include_deleted };
            let list = answer(client.list(request).await)?;
            return output::print_list(cli.output, &list, "bettercompute.platform.v1.ListProjectsResponse", "projects");
        }
    };
    output::print_one(cli.output, &answer(project)?, "bettercompute.platform.v1.Project")
}
