//! Projects in the store.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalog::{catalog_event, mark_deleted_in, tenant_require_active_in};
use super::{Store, conflict_on_unique};
use crate::error::{Error, Result};

/// A project as stored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ProjectRow {
    /// `prj_...`.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Unique among the tenant's live projects.
    pub name: String,
    /// Free text.
    pub description: String,
    /// `active` or `deleted`.
    pub state: String,
    /// Bumped by every change.
    pub version: i64,
    /// Creation time (µs).
    pub created_at: i64,
    /// Last change (µs).
    pub updated_at: i64,
    /// Deletion time, once deleted.
    pub deleted_at: Option<i64>,
}

/// A project to create.
#[derive(Clone, Debug)]
pub struct NewProject {
    /// Its id.
    pub id: String,
    /// Its tenant.
    pub tenant_id: String,
    /// Its name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// The creation time.
    pub now: i64,
}

/// The fields of a project to change; `None` leaves one as it is.
#[derive(Clone, Debug, Default)]
pub struct ProjectChange {
    /// A new name.
    pub name: Option<String>,
    /// A new description.
    pub description: Option<String>,
}

const COLUMNS: &str = "id, tenant_id, name, description, state, version, created_at, updated_at, deleted_at";

fn project_from_row(row: &AnyRow) -> Result<ProjectRow> {
    Ok(ProjectRow {
        id: row.try_get("id")?,
        tenant_id: row.try_get("tenant_id")?,
        name: row.try_get("name")?,
        description: row.try_get("description")?,
        state: row.try_get("state")?,
        version: row.try_get("version")?,
        created_at: row.try_get("created_at")?,
        updated_at: row.try_get("updated_at")?,
        deleted_at: row.try_get("deleted_at")?,
    })
}

fn name_taken(tenant: &str, name: &str) -> Error {
    Error::conflict(format!("tenant {tenant:?} already has a project named {name:?}")).with_detail("name", name)
}

impl Store {
    /// Creates a project under a live tenant; `CONFLICT` if the tenant has one of that name.
    pub async fn project_create(&self, new: &NewProject) -> Result<ProjectRow> {
        crate::measured::store("project_create", async {
            let mut txn = self.begin_write().await?;
            tenant_require_active_in(&mut txn, &new.tenant_id).await?;
            let row = conflict_on_unique(
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "INSERT INTO projects (id, tenant_id, name, description, state, version, created_at, updated_at) \
                     VALUES ($1, $2, $3, $4, 'active', 1, $5, $5) RETURNING {COLUMNS}"
                )))
                .bind(&new.id)
                .bind(&new.tenant_id)
                .bind(&new.name)
                .bind(&new.description)
                .bind(new.now)
                .fetch_one(&mut *txn)
                .await,
                || name_taken(&new.tenant_id, &new.name),
            )?;
            let project = project_from_row(&row)?;
            let authz = super::catalog::authz_row(
                "platform-project",
                &project.id,
                Some(&project.tenant_id),
                Default::default(),
                new.now,
            );
            self.authz_resource_insert_in(&mut txn, &authz).await?;
            self.event_append_in(&mut txn, &project_event("created", &project)).await?;
            self.commit_and_signal(txn).await?;
            Ok(project)
        })
        .await
    }

    /// The project with `id`, deleted or not.
    pub async fn project_fetch(&self, id: &str) -> Result<ProjectRow> {
        crate::measured::store("project_fetch", async {
            let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM projects WHERE id = $1")))
                .bind(id)
                .fetch_optional(&self.pool)
                .await?;
            row.as_ref().map(project_from_row).transpose()?.ok_or_else(|| Error::not_found("project", id))
        })
        .await
    }

    /// Projects, oldest first, of one tenant (or all when `tenant` is empty).
    pub async fn project_list(&self, tenant: &str, include_deleted: bool) -> Result<Vec<ProjectRow>> {
        crate::measured::store("project_list", async {
            let rows = sqlx::query(sqlx::AssertSqlSafe(format!(
                "SELECT {COLUMNS} FROM projects WHERE ($1 = '' OR tenant_id = $1) AND ($2 OR deleted_at IS NULL) \
                 ORDER BY created_at, id"
            )))
            .bind(tenant)
            .bind(include_deleted)
            .fetch_all(&self.pool)
            .await?;
            rows.iter().map(project_from_row).collect()
        })
        .await
    }

    /// Applies `change` to a live project and bumps its version.
    pub async fn project_update(&self, id: &str, change: &ProjectChange, now: i64) -> Result<ProjectRow> {
        crate::measured::store("project_update", async {
            let mut txn = self.begin_write().await?;
            let current = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM projects WHERE id = $1")))
                .bind(id)
                .fetch_optional(&mut *txn)
                .await?;
            let current =
                current.as_ref().map(project_from_row).transpose()?.ok_or_else(|| Error::not_found("project", id))?;
            if current.deleted_at.is_some() {
                return Err(Error::invalid_state(format!("project {id:?} is deleted and cannot change")));
            }
            let name = change.name.as_ref().unwrap_or(&current.name);
            let row = conflict_on_unique(
                sqlx::query(sqlx::AssertSqlSafe(format!(
                    "UPDATE projects SET name = $2, description = $3, version = version + 1, updated_at = $4 \
                     WHERE id = $1 RETURNING {COLUMNS}"
                )))
                .bind(id)
                .bind(name)
                .bind(change.description.as_ref().unwrap_or(&current.description))
                .bind(now)
                .fetch_one(&mut *txn)
                .await,
                || name_taken(&current.tenant_id, name),
            )?;
            let project = project_from_row(&row)?;
            self.event_append_in(&mut txn, &project_event("updated", &project)).await?;
            self.commit_and_signal(txn).await?;
            Ok(project)
        })
        .await
    }

    /// Marks a project deleted; a deleted one is returned unchanged.
    pub async fn project_delete(&self, id: &str, now: i64) -> Result<ProjectRow> {
        crate::measured::store("project_delete", async {
            let mut txn = self.begin_write().await?;
            let updated = mark_deleted_in(&mut txn, "projects", id, now).await?;
            let row = sqlx::query(sqlx::AssertSqlSafe(format!("SELECT {COLUMNS} FROM projects WHERE id = $1")))
                .bind(id)
                .fetch_optional(&mut *txn)
                .await?;
            let project =
                row.as_ref().map(project_from_row).transpose()?.ok_or_else(|| Error::not_found("project", id))?;
            if updated {
                self.event_append_in(&mut txn, &project_event("deleted", &project)).await?;
                self.commit_and_signal(txn).await?;
            }
            Ok(project)
        })
        .await
    }
}

fn project_event(change: &str, project: &ProjectRow) -> super::NewEvent {
    catalog_event(
        "project",
        change,
        &project.id,
        Some(&project.tenant_id),
        project.updated_at,
        serde_json::json!({"id": project.id, "tenantId": project.tenant_id, "name": project.name,
            "state": project.state, "version": project.version}),
    )
}
