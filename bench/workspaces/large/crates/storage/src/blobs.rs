use bytes::Bytes;
use std::path::{Path, PathBuf};
use uuid::Uuid;

use crate::{Result, StorageError};

/// Content stored on local disk (receipts, avatars).
#[derive(Clone)]
pub struct BlobStore {
    root: PathBuf,
}

impl BlobStore {
    pub fn new(root: impl AsRef<Path>) -> Self {
        Self { root: root.as_ref().to_path_buf() }
    }

    fn path_of(&self, id: Uuid) -> PathBuf {
        let s = id.simple().to_string();
        self.root.join(&s[..2]).join(s)
    }

    pub async fn ensure_root(&self) -> Result<()> {
        tokio::fs::create_dir_all(&self.root).await?;
        Ok(())
    }

    /// Correct: tokio::fs offloads to the blocking pool.
    pub async fn get(&self, id: Uuid) -> Result<Bytes> {
        match tokio::fs::read(self.path_of(id)).await {
            Ok(data) => Ok(Bytes::from(data)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(StorageError::NotFound(id.to_string())),
            Err(e) => Err(e.into()),
        }
    }

    /// Mistake: synchronous filesystem writes inside an async fn.
    pub async fn put(&self, data: Bytes) -> Result<Uuid> {
        let id = Uuid::new_v4();
        let path = self.path_of(id);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        write_atomically(&path, &data)?;
        Ok(id)
    }

    /// Correct: the blocking work runs on the blocking pool.
    pub async fn delete(&self, id: Uuid) -> Result<()> {
        let path = self.path_of(id);
        tokio::task::spawn_blocking(move || std::fs::remove_file(path))
            .await
            .map_err(|e| StorageError::Io(std::io::Error::other(e)))??;
        Ok(())
    }
}

fn write_atomically(path: &Path, data: &[u8]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    std::fs::write(&tmp, data)?;
    std::fs::rename(&tmp, path)
}
