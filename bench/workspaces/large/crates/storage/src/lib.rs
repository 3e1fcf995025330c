//! Storage layer of the benchmark service: Postgres (sqlx), Redis, a local blob store and an
//! in-process cache.

pub mod blobs;
pub mod cache;
pub mod db;
pub mod memo;

use thiserror::Error;

#[derive(Debug, Error)]
pub enum StorageError {
    #[error("database error: {0}")]
    Db(#[from] sqlx::Error),
    #[error("redis error: {0}")]
    Redis(#[from] redis::RedisError),
    #[error("io error: {0}")]
    Io(#[from] std::io::Error),
    #[error("serialization error: {0}")]
    Json(#[from] serde_json::Error),
    #[error("not found: {0}")]
    NotFound(String),
}

pub type Result<T> = std::result::Result<T, StorageError>;

/// Everything a request handler needs to reach persistent state.
#[derive(Clone)]
pub struct Storage {
    pub db: db::Db,
    pub cache: cache::Cache,
    pub blobs: blobs::BlobStore,
    pub memo: memo::Memo,
}

impl Storage {
    pub async fn connect(database_url: &str, redis_url: &str, blob_root: &str) -> anyhow::Result<Self> {
        let db = db::Db::connect(database_url).await?;
        let cache = cache::Cache::connect(redis_url).await?;
        let blobs = blobs::BlobStore::new(blob_root);
        blobs.ensure_root().await?;
        Ok(Self { db, cache, blobs, memo: memo::Memo::new(10_000) })
    }
}
