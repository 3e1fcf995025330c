use serde::Deserialize;
use std::net::SocketAddr;

#[derive(Debug, Clone, Deserialize)]
pub struct TelemetrySettings {
    pub service_name: String,
    pub json_logs: bool,
    pub filter: String,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Settings {
    pub listen: SocketAddr,
    pub database_url: String,
    pub redis_url: String,
    pub blob_root: String,
    pub payments_url: String,
    pub payments_key: String,
    pub jwt_secret: String,
    pub telemetry: TelemetrySettings,
}

impl Settings {
    /// Reads `.env`, the config file and `APP_*` environment variables (blocking file reads;
    /// called once from `main`).
    pub fn load(path: &str) -> anyhow::Result<Self> {
        let _ = dotenvy::dotenv();
        let cfg = config::Config::builder()
            .add_source(config::File::with_name(path).required(false))
            .add_source(config::Environment::with_prefix("APP").separator("__"))
            .build()?;
        Ok(cfg.try_deserialize()?)
    }
}
