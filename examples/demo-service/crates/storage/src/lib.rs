//! Synchronous storage helpers written before the service went async.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct User {
    pub id: u64,
    pub name: String,
}

/// Users stored one JSON file per id under `root`, with an in-memory cache.
pub struct UserStore {
    root: PathBuf,
    cache: Mutex<HashMap<u64, User>>,
}

impl UserStore {
    pub fn open(root: impl AsRef<Path>) -> UserStore {
        UserStore { root: root.as_ref().to_path_buf(), cache: Mutex::new(HashMap::new()) }
    }

    /// Reads a user from disk (blocking) unless it is cached.
    pub fn load(&self, id: u64) -> Option<User> {
        if let Some(u) = self.cache.lock().unwrap().get(&id) {
            return Some(u.clone());
        }
        let text = std::fs::read_to_string(self.path_of(id)).ok()?;
        let user: User = serde_json::from_str(&text).ok()?;
        self.cache.lock().unwrap().insert(id, user.clone());
        Some(user)
    }

    /// Writes a user to disk (blocking).
    pub fn save(&self, user: &User) -> std::io::Result<()> {
        let text = serde_json::to_string(user)?;
        std::fs::write(self.path_of(user.id), text)
    }

    fn path_of(&self, id: u64) -> PathBuf {
        self.root.join(format!("{id}.json"))
    }
}

/// A lookup that only touches memory: safe anywhere.
pub fn display_name(user: &User) -> String {
    format!("{} (#{})", user.name, user.id)
}
