//! Projects: groupings of a tenant's resources.

use super::update_mask::Named;
use super::{Context, Service};
use crate::error::Result;
use crate::ids::ProjectId;
use crate::proto::platform::{
    CreateProjectRequest, DeleteProjectRequest, GetProjectRequest, ListProjectsRequest, UpdateProjectRequest,
};
use crate::store::{NewProject, ProjectChange, ProjectRow, now_micros};

impl Service {
    /// Records a project under a live tenant.
    pub async fn project_create(&self, ctx: &Context, request: CreateProjectRequest) -> Result<ProjectRow> {
        let project = self
            .store
            .project_create(&NewProject {
                id: ProjectId::random().to_string(),
                tenant_id: request.tenant_id,
                name: request.name,
                description: request.description,
                now: now_micros(),
            })
            .await?;
        tracing::info!(project = %project.id, tenant = %project.tenant_id, by = %ctx.caller.principal_id, "project created");
        Ok(project)
    }

    /// One project, deleted or not.
    pub async fn project_get(&self, _ctx: &Context, request: GetProjectRequest) -> Result<ProjectRow> {
        self.store.project_fetch(&request.project_id).await
    }

    /// Projects, oldest first.
    pub async fn project_list(&self, _ctx: &Context, request: ListProjectsRequest) -> Result<Vec<ProjectRow>> {
        self.store.project_list(&request.tenant_id, request.include_deleted).await
    }

    /// Changes the name or the description; at least one must be named.
    pub async fn project_update(&self, ctx: &Context, request: UpdateProjectRequest) -> Result<ProjectRow> {
        let named = Named::of(&request.update_mask);
        named.require_some(&["name", "description"])?;
        let change = ProjectChange {
            name: named.required("name", "name", request.name)?,
            description: named.clearable("description", request.description),
        };
        let project = self.store.project_update(&request.project_id, &change, now_micros()).await?;
        tracing::info!(project = %project.id, version = project.version, by = %ctx.caller.principal_id, "project updated");
        Ok(project)
    }

    /// Marks a project deleted.
    pub async fn project_delete(&self, ctx: &Context, request: DeleteProjectRequest) -> Result<ProjectRow> {
        let project = self.store.project_delete(&request.project_id, now_micros()).await?;
        tracing::info!(project = %project.id, by = %ctx.caller.principal_id, "project deleted");
        Ok(project)
    }
}
