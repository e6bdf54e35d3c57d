//! What `bcd` keeps between runs: the endpoint, the pinned CA, the node it is and its credential,
//! in `<state-dir>/node.json`, a file only its user can read in a directory only its user can open.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The node as `bcd join` left it for `bcd run`.
#[derive(Clone, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct NodeState {
    /// The API it joined through.
    pub endpoint: String,
    /// The CA it pinned (`--ca-sha256`), if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ca_sha256: Option<String>,
    /// The machine id it joined as (when given with `--machine-id`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// The node (`node_...`).
    pub node_id: String,
    /// The pool it joined.
    pub pool_id: String,
    /// The node credential `bcn_...`: never printed.
    pub credential: String,
}

impl std::fmt::Debug for NodeState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeState")
            .field("endpoint", &self.endpoint)
            .field("node_id", &self.node_id)
            .field("pool_id", &self.pool_id)
            .field("credential", &"<redacted>")
            .finish()
    }
}

impl NodeState {
    /// The file in `state_dir`.
    pub fn path(state_dir: &Path) -> PathBuf {
        state_dir.join("node.json")
    }

    /// Reads the node from `state_dir`; `None` when bcd has not joined from there.
    pub fn read(state_dir: &Path) -> Result<Option<NodeState>, String> {
        let path = Self::path(state_dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => serde_json::from_str(&text)
                .map(Some)
                .map_err(|error| format!("{} is not bcd's state ({error}); remove it and join again", path.display())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(error) => Err(format!("cannot read {}: {error}", path.display())),
        }
    }

    /// Reads the node, or says how to join.
    pub fn require(state_dir: &Path) -> Result<NodeState, String> {
        Self::read(state_dir)?.ok_or_else(|| {
            format!(
                "this machine has not joined a pool from {} (no node.json): run `bcd join --endpoint URL --token bcjt_...`",
                state_dir.display()
            )
        })
    }

    /// Writes the node whole: to a temporary file of mode 0600, then renamed over the old one.
    pub fn write(&self, state_dir: &Path) -> Result<(), String> {
        let io = |path: &Path, error: std::io::Error| format!("cannot write {}: {error}", path.display());
        create_private_dir(state_dir).map_err(|error| io(state_dir, error))?;
        let path = Self::path(state_dir);
        let temporary = state_dir.join("node.json.tmp");
        let _ = std::fs::remove_file(&temporary);
        let mut options = std::fs::OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
        let text = serde_json::to_string_pretty(self).expect("the state serializes");
        let mut file = options.open(&temporary).map_err(|error| io(&temporary, error))?;
        std::io::Write::write_all(&mut file, text.as_bytes()).map_err(|error| io(&temporary, error))?;
        file.sync_all().map_err(|error| io(&temporary, error))?;
        std::fs::rename(&temporary, &path).map_err(|error| io(&path, error))
    }

    /// Forgets the node (after it left).
    pub fn remove(state_dir: &Path) -> Result<(), String> {
        let path = Self::path(state_dir);
        match std::fs::remove_file(&path) {
            Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("cannot remove {}: {error}", path.display()))
            }
            _ => Ok(()),
        }
    }
}

/// Creates `dir` (and its parents) and makes it openable by its owner only.
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state() -> NodeState {
        NodeState {
            endpoint: "https://127.0.0.1:8443".into(),
            ca_sha256: None,
            machine_id: None,
            node_id: "node_x".into(),
            pool_id: "pool_y".into(),
            credential: "bcn_secret".into(),
        }
    }

    #[test]
    fn the_state_is_private_and_its_debug_hides_the_credential() {
        let dir = tempfile::tempdir().unwrap();
        let state_dir = dir.path().join("bcd");
        state().write(&state_dir).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |path: &Path| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode(&state_dir), 0o700);
            assert_eq!(mode(&NodeState::path(&state_dir)), 0o600);
        }
        let read = NodeState::require(&state_dir).unwrap();
        assert_eq!(read.credential, "bcn_secret");
        assert!(!format!("{read:?}").contains("bcn_secret"));
        NodeState::remove(&state_dir).unwrap();
        assert!(NodeState::require(&state_dir).unwrap_err().contains("bcd join"));
    }
}
