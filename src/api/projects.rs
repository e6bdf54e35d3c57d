//! `bettercompute.platform.v1.Projects`: Projects: groupings of a tenant's resources.

use tonic::{Request, Response, Status};

use super::{context, timestamp};
use crate::proto::platform::{
    CreateProjectRequest, DeleteProjectRequest, GetProjectRequest, ListProjectsRequest, ListProjectsResponse, Project,
    UpdateProjectRequest, projects_server,
};
use crate::service::Service;
use crate::store::ProjectRow;

/// The gRPC service of projects.
#[derive(Debug)]
pub struct ProjectsApi {
    service: Service,
}

impl ProjectsApi {
    /// The service over `service`.
    pub fn server(service: Service) -> projects_server::ProjectsServer<Self> {
        projects_server::ProjectsServer::new(Self { service })
    }
}

fn view(row: ProjectRow) -> Project {
    Project {
        id: row.id,
        tenant_id: row.tenant_id,
        name: row.name,
        description: row.description,
        state: row.state,
        version: row.version,
        created_at: Some(timestamp(row.created_at)),
        updated_at: Some(timestamp(row.updated_at)),
        deleted_at: row.deleted_at.map(timestamp),
    }
}

#[tonic::async_trait]
impl projects_server::Projects for ProjectsApi {
    async fn create(&self, request: Request<CreateProjectRequest>) -> Result<Response<Project>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.project_create(&ctx, request.into_inner()).await?)))
    }

    async fn get(&self, request: Request<GetProjectRequest>) -> Result<Response<Project>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.project_get(&ctx, request.into_inner()).await?)))
    }

    async fn list(&self, request: Request<ListProjectsRequest>) -> Result<Response<ListProjectsResponse>, Status> {
        let ctx = context(&request)?;
        let rows = self.service.project_list(&ctx, request.into_inner()).await?;
        Ok(Response::new(ListProjectsResponse { projects: rows.into_iter().map(view).collect() }))
    }

    async fn update(&self, request: Request<UpdateProjectRequest>) -> Result<Response<Project>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.project_update(&ctx, request.into_inner()).await?)))
    }

    async fn delete(&self, request: Request<DeleteProjectRequest>) -> Result<Response<Project>, Status> {
        let ctx = context(&request)?;
        Ok(Response::new(view(self.service.project_delete(&ctx, request.into_inner()).await?)))
    }
}
