use config::{Config, Environment, File};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
pub struct HttpSettings {
    pub bind: String,
    pub admin_bind: String,
    pub workers: usize,
}

#[derive(Debug, Clone, Deserialize)]
pub struct Settings {
    pub http: HttpSettings,
    pub database_url: String,
    pub reporting_database_url: String,
    pub redis_url: String,
    pub mongo_url: String,
    pub payments_url: String,
    pub inventory_url: String,
    pub fx_url: String,
    pub webhook_url: String,
    pub smtp_host: String,
    pub bucket: String,
    pub jwt_secret: String,
    pub tls_cert: String,
    pub tls_key: String,
    pub templates_dir: String,
    pub log: String,
}

impl Settings {
    /// Reads `config/default.toml`, `config/{APP_ENV}.toml` and `APP__*` variables.
    pub fn load() -> Result<Self, config::ConfigError> {
        let env = std::env::var("APP_ENV").unwrap_or_else(|_| "development".into());
        Config::builder()
            .add_source(File::with_name("config/default"))
            .add_source(File::with_name(&format!("config/{env}")).required(false))
            .add_source(Environment::with_prefix("APP").separator("__"))
            .build()?
            .try_deserialize()
    }
}

/// Feature flags live in a small TOML file that operators edit at run time.
#[derive(Debug, Clone, Default, Deserialize)]
pub struct FeatureFlags {
    #[serde(default)]
    pub fx_conversion: bool,
    #[serde(default)]
    pub send_receipts: bool,
    #[serde(default)]
    pub legacy_rates: bool,
}

pub async fn read_flags(path: &str) -> anyhow::Result<FeatureFlags> {
    // Correct: tokio::fs offloads the read; the file is a handful of lines.
    let text = tokio::fs::read_to_string(path).await?;
    Ok(toml::from_str(&text)?)
}
