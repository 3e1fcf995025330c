use moka::future::Cache;
use std::sync::Arc;
use std::time::Duration;

/// Small in-process cache for rendered responses.
#[derive(Clone)]
pub struct Memo {
    inner: Cache<String, Arc<String>>,
}

impl Memo {
    pub fn new(capacity: u64) -> Self {
        let inner = Cache::builder()
            .max_capacity(capacity)
            .time_to_live(Duration::from_secs(30))
            .build();
        Self { inner }
    }

    pub async fn get_or_insert_with<F, Fut>(&self, key: String, make: F) -> Arc<String>
    where
        F: FnOnce() -> Fut,
        Fut: std::future::Future<Output = String>,
    {
        self.inner.get_with(key, async move { Arc::new(make().await) }).await
    }

    pub async fn evict(&self, key: &str) {
        self.inner.invalidate(key).await;
    }
}
