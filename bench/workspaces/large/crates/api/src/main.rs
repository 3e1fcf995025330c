//! The benchmark service: an axum HTTP API over the storage and clients crates.

mod auth;
mod handlers;
mod settings;
mod telemetry;

use axum::routing::{delete, get, post};
use axum::Router;
use clap::Parser;
use dashmap::DashMap;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tower::ServiceBuilder;
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

#[derive(Parser, Debug)]
#[command(name = "api", about = "benchmark service")]
struct Cli {
    #[arg(long, env = "API_CONFIG", default_value = "config/api.toml")]
    config: String,
    #[arg(long, env = "API_LISTEN")]
    listen: Option<SocketAddr>,
}

#[derive(Clone)]
pub struct AppState {
    pub storage: storage::Storage,
    pub payments: clients::payments::PaymentsClient,
    pub http: reqwest::Client,
    pub sessions: Arc<DashMap<String, auth::Session>>,
    pub settings: Arc<settings::Settings>,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    let settings = settings::Settings::load(&cli.config)?;
    let _guard = telemetry::init(&settings.telemetry)?;

    let storage = storage::Storage::connect(
        &settings.database_url,
        &settings.redis_url,
        &settings.blob_root,
    )
    .await?;
    let payments = clients::payments::PaymentsClient::new(&settings.payments_url, &settings.payments_key)?;
    let state = AppState {
        storage,
        payments,
        http: reqwest::Client::new(),
        sessions: Arc::new(DashMap::new()),
        settings: Arc::new(settings.clone()),
    };

    let app = Router::new()
        .route("/health", get(handlers::health))
        .route("/login", post(handlers::login))
        .route("/signup", post(handlers::signup))
        .route("/users/:id", get(handlers::get_user))
        .route("/users/:id/orders", get(handlers::list_orders).post(handlers::create_order))
        .route("/blobs", post(handlers::upload_blob))
        .route("/blobs/:id", get(handlers::get_blob))
        .route("/blobs/:id", delete(handlers::delete_blob))
        .route("/whereami", get(handlers::where_am_i))
        .layer(
            ServiceBuilder::new()
                .layer(TraceLayer::new_for_http())
                .layer(CompressionLayer::new())
                .layer(CorsLayer::permissive())
                .layer(TimeoutLayer::with_status_code(axum::http::StatusCode::REQUEST_TIMEOUT, Duration::from_secs(15))),
        )
        .with_state(state);

    let addr = cli.listen.unwrap_or(settings.listen);
    let listener = tokio::net::TcpListener::bind(addr).await?;
    tracing::info!(%addr, "listening");
    axum::serve(listener, app)
        .with_graceful_shutdown(shutdown_signal())
        .await?;
    telemetry::shutdown();
    Ok(())
}

async fn shutdown_signal() {
    let ctrl_c = async {
        tokio::signal::ctrl_c().await.expect("install Ctrl+C handler");
    };
    let terminate = async {
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .expect("install SIGTERM handler")
            .recv()
            .await;
    };
    tokio::select! {
        _ = ctrl_c => {},
        _ = terminate => {},
    }
}
