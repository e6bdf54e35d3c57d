//! `bettercompute.platform.v1.Projects`: Projects: groupings of a tenant's resources.

use super::handlers::thin_service;
use super::timestamp;
use crate::proto::platform::{
    CreateProjectRequest, DeleteProjectRequest, GetProjectRequest, ListProjectsRequest, ListProjectsResponse, Project,
    UpdateProjectRequest, projects_server,
};
use crate::store::ProjectRow;

fn project_view(row: ProjectRow) -> Project {
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

thin_service! {
    impl projects_server::Projects: Project by project_view;
    create(CreateProjectRequest) project_create, get(GetProjectRequest) project_get,
    update(UpdateProjectRequest) project_update, delete(DeleteProjectRequest) project_delete;
    list(ListProjectsRequest) project_list -> ListProjectsResponse { projects };
}
