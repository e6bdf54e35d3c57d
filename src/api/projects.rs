//! `bettercompute.platform.v1.Projects`: Projects: groupings of a tenant's resources.

use super::handlers::thin_service;
use super::views::stamps;
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
        ..stamps(row.version, row.created_at, row.updated_at, row.deleted_at)
    }
}

thin_service! {
    impl projects_server::Projects: Project by project_view;
    create(CreateProjectRequest) project_create, get(GetProjectRequest) project_get,
    update(UpdateProjectRequest) project_update, delete(DeleteProjectRequest) project_delete;
    list(ListProjectsRequest) project_list -> ListProjectsResponse { projects };
}
