use redis::aio::ConnectionManager;
use redis::AsyncCommands;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::Result;

#[derive(Clone)]
pub struct Cache {
    conn: ConnectionManager,
    prefix: String,
}

impl Cache {
    pub async fn connect(url: &str) -> Result<Self> {
        let client = redis::Client::open(url)?;
        let conn = ConnectionManager::new(client).await?;
        Ok(Self { conn, prefix: "svc:".to_owned() })
    }

    fn key(&self, key: &str) -> String {
        format!("{}{}", self.prefix, key)
    }

    pub async fn get_json<T: DeserializeOwned>(&self, key: &str) -> Result<Option<T>> {
        let mut conn = self.conn.clone();
        let raw: Option<String> = conn.get(self.key(key)).await?;
        match raw {
            Some(raw) => Ok(Some(serde_json::from_str(&raw)?)),
            None => Ok(None),
        }
    }

    pub async fn put_json<T: Serialize>(&self, key: &str, value: &T, ttl_secs: u64) -> Result<()> {
        let mut conn = self.conn.clone();
        let raw = serde_json::to_string(value)?;
        let _: () = conn.set_ex(self.key(key), raw, ttl_secs).await?;
        Ok(())
    }

    pub async fn invalidate(&self, key: &str) -> Result<()> {
        let mut conn = self.conn.clone();
        let _: () = conn.del(self.key(key)).await?;
        Ok(())
    }

    /// Fixed-window rate limiter: returns the number of hits in the current window.
    pub async fn hit(&self, bucket: &str, window_secs: i64) -> Result<i64> {
        let mut conn = self.conn.clone();
        let key = self.key(&format!("rl:{bucket}"));
        let (count,): (i64,) = redis::pipe()
            .atomic()
            .incr(&key, 1)
            .expire(&key, window_secs)
            .ignore()
            .query_async(&mut conn)
            .await?;
        Ok(count)
    }
}
