use std::sync::Arc;

use aws_sdk_s3::Client as S3Client;
use dashmap::DashMap;
use deadpool_postgres::{Config as PgConfig, Pool as PgPool, Runtime};
use lettre::{AsyncSmtpTransport, Tokio1Executor};
use moka::future::Cache;
use mongodb::Collection;
use parking_lot::RwLock;
use sqlx::postgres::PgPoolOptions;
use tokio_postgres::NoTls;
use uuid::Uuid;

use crate::clients::inventory::InventoryClient;
use crate::clients::payments::PaymentsClient;
use crate::metrics::Metrics;
use crate::routes::orders::{AuditEvent, Order};
use crate::settings::{FeatureFlags, Settings};

#[derive(Clone)]
pub struct AppState {
    pub settings: Arc<Settings>,
    pub db: sqlx::PgPool,
    pub reporting: PgPool,
    pub redis: redis::aio::MultiplexedConnection,
    pub redis_client: redis::Client,
    pub http: reqwest::Client,
    pub payments: PaymentsClient,
    pub inventory: InventoryClient,
    pub s3: S3Client,
    pub audit: Collection<AuditEvent>,
    pub mailer: AsyncSmtpTransport<Tokio1Executor>,
    pub order_cache: Cache<Uuid, Order>,
    pub sessions: Arc<DashMap<String, Uuid>>,
    pub flags: Arc<RwLock<FeatureFlags>>,
    pub metrics: Arc<Metrics>,
}

impl AppState {
    pub async fn connect(settings: Settings) -> anyhow::Result<Self> {
        let db = PgPoolOptions::new()
            .max_connections(20)
            .connect(&settings.database_url)
            .await?;

        let mut pg = PgConfig::new();
        pg.url = Some(settings.reporting_database_url.clone());
        let reporting = pg.create_pool(Some(Runtime::Tokio1), NoTls)?;

        let redis_client = redis::Client::open(settings.redis_url.as_str())?;
        let redis = redis_client.get_multiplexed_async_connection().await?;

        let http = reqwest::Client::builder()
            .timeout(std::time::Duration::from_secs(10))
            .user_agent("orders-service/0.1")
            .build()?;

        let aws = aws_config::load_defaults(aws_config::BehaviorVersion::latest()).await;
        let s3 = S3Client::new(&aws);

        let mongo = mongodb::Client::with_uri_str(&settings.mongo_url).await?;
        let audit = mongo.database("orders").collection::<AuditEvent>("audit");

        let mailer = AsyncSmtpTransport::<Tokio1Executor>::builder_dangerous(settings.smtp_host.as_str())
            .port(25)
            .build();

        let payments = PaymentsClient::new(http.clone(), settings.payments_url.clone());
        let inventory = InventoryClient::connect(settings.inventory_url.clone()).await?;
        let flags = crate::settings::read_flags("config/flags.toml").await.unwrap_or_default();

        Ok(Self {
            settings: Arc::new(settings),
            db,
            reporting,
            redis,
            redis_client,
            http,
            payments,
            inventory,
            s3,
            audit,
            mailer,
            order_cache: Cache::builder()
                .max_capacity(10_000)
                .time_to_live(std::time::Duration::from_secs(60))
                .build(),
            sessions: Arc::new(DashMap::new()),
            flags: Arc::new(RwLock::new(flags)),
            metrics: Arc::new(Metrics::default()),
        })
    }
}
