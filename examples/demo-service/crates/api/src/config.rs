//! Service configuration from the environment and an optional `.env` file.

pub struct Settings {
    pub listen: String,
    pub data_dir: String,
}

/// Reads `.env` (dotenvy reads the file with std::fs, synchronously) and the environment.
pub fn load() -> Settings {
    dotenvy::dotenv().ok();
    Settings {
        listen: std::env::var("LISTEN").unwrap_or_else(|_| "127.0.0.1:8080".into()),
        data_dir: std::env::var("DATA_DIR").unwrap_or_else(|_| "./data".into()),
    }
}

/// The same settings, read without blocking a runtime worker.
pub async fn load_offloaded() -> Settings {
    tokio::task::spawn_blocking(load).await.unwrap()
}
