//! Projects in the store.

use sqlx::Row;
use sqlx::any::AnyRow;

use super::catalog::{authz_row, catalog_event, tenant_require_active_in};
use super::record::{Announced, Record};
use super::{NewEvent, Store, conflict_on_unique};
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

impl Record for ProjectRow {
    const SELECT: &'static str =
        "SELECT id, tenant_id, name, description, state, version, created_at, updated_at, deleted_at FROM projects";
    const NOUN: &'static str = "project";

    fn from_row(row: &AnyRow) -> Result<ProjectRow> {
        Ok(read_columns!(
            row,
            ProjectRow { id, tenant_id, name, description, state, version, created_at, updated_at, deleted_at }
        ))
    }
}

impl Announced for ProjectRow {
    const TABLE: &'static str = "projects";

    fn deleted_at(&self) -> Option<i64> {
        self.deleted_at
    }

    fn event(&self, change: &str) -> NewEvent {
        let data = serde_json::json!({"id": self.id, "tenantId": self.tenant_id, "name": self.name,
            "state": self.state, "version": self.version});
        catalog_event("project", change, &self.id, Some(&self.tenant_id), self.updated_at, data)
    }
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
            let insert = sqlx::query(
                "INSERT INTO projects (id, tenant_id, name, description, state, version, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, 'active', 1, $5, $5)",
            );
            let inserted = insert.bind(&new.id).bind(&new.tenant_id).bind(&new.name).bind(&new.description);
            conflict_on_unique(inserted.bind(new.now).execute(&mut *txn).await, || {
                name_taken(&new.tenant_id, &new.name)
            })?;
            let authz = authz_row("platform-project", &new.id, Some(&new.tenant_id), Default::default(), new.now);
            self.authz_resource_insert_in(&mut txn, &authz).await?;
            let project = self.record_changed_in(&mut txn, &new.id, "created").await?;
            self.commit_and_signal(txn).await?;
            Ok(project)
        })
        .await
    }

    /// The project with `id`, deleted or not.
    pub async fn project_fetch(&self, id: &str) -> Result<ProjectRow> {
        crate::measured::store("project_fetch", self.record_fetch(id)).await
    }

    /// Projects, oldest first, of one tenant (or all when `tenant` is empty).
    pub async fn project_list(&self, tenant: &str, include_deleted: bool) -> Result<Vec<ProjectRow>> {
        let condition = "($1 = '' OR tenant_id = $1) AND ($2 OR deleted_at IS NULL)";
        let listed = self.record_list(condition, "created_at, id", |q| q.bind(tenant).bind(include_deleted));
        crate::measured::store("project_list", listed).await
    }

    /// Applies `change` to a live project and bumps its version.
    pub async fn project_update(&self, id: &str, change: &ProjectChange, now: i64) -> Result<ProjectRow> {
        crate::measured::store("project_update", async {
            let mut txn = self.begin_write().await?;
            let current: ProjectRow = self.record_live_in(&mut txn, id).await?;
            let name = change.name.as_ref().unwrap_or(&current.name);
            let update = sqlx::query(
                "UPDATE projects SET name = $2, description = $3, version = version + 1, updated_at = $4 WHERE id = $1",
            );
            let updated = update.bind(id).bind(name).bind(change.description.as_ref().unwrap_or(&current.description));
            conflict_on_unique(updated.bind(now).execute(&mut *txn).await, || name_taken(&current.tenant_id, name))?;
            let project = self.record_changed_in(&mut txn, id, "updated").await?;
            self.commit_and_signal(txn).await?;
            Ok(project)
        })
        .await
    }

    /// Marks a project deleted; a deleted one is returned unchanged.
    pub async fn project_delete(&self, id: &str, now: i64) -> Result<ProjectRow> {
        crate::measured::store("project_delete", async { self.record_delete(self.begin_write().await?, id, now).await })
            .await
    }
}
