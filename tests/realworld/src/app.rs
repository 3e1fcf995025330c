use std::net::SocketAddr;
use std::time::Duration;

use axum::routing::{get, post};
use axum::Router;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tower::ServiceBuilder;
use tower_http::compression::CompressionLayer;
use tower_http::cors::CorsLayer;
use tower_http::services::ServeDir;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

use crate::routes::{admin, files, orders, reports, users};
use crate::settings::Settings;
use crate::state::AppState;

pub fn router(state: AppState) -> Router {
    let metrics = state.metrics.clone();
    Router::new()
        .route("/orders", post(orders::create_order).get(orders::list_orders))
        .route("/orders/{id}", get(orders::get_order))
        .route("/orders/export", get(orders::export_orders))
        .route("/users", post(users::register))
        .route("/login", post(users::login))
        .route("/me", get(users::me))
        .route("/search", get(users::search))
        .route("/files", post(files::upload))
        .route("/files/{key}", get(files::download))
        .route("/invoices/{id}", get(files::invoice))
        .route("/receipts/{id}", get(files::receipt))
        .route("/archive", post(files::archive))
        .route("/admin/reload", post(admin::reload_config))
        .route("/admin/backup", post(admin::backup))
        .route("/admin/version", get(admin::version))
        .route("/health", get(admin::health))
        .route("/health/deps", get(admin::dependencies))
        .route("/admin/receipts/{id}/resend", post(admin::resend_receipt))
        .route("/reports/monthly/{month}", get(reports::monthly))
        .route("/reports/yearly/{year}", get(reports::yearly))
        .route("/orders/{id}/audit", get(reports::audit_trail))
        .route("/reports/link/{key}", get(reports::download_link))
        .route("/admin/reload-safe", post(admin::reload_config_offloaded))
        .nest_service("/static", ServeDir::new("static"))
        .layer(
            ServiceBuilder::new()
                .layer(TraceLayer::new_for_http())
                .layer(TimeoutLayer::with_status_code(
                    axum::http::StatusCode::REQUEST_TIMEOUT,
                    Duration::from_secs(15),
                ))
                .layer(CompressionLayer::new())
                .layer(CorsLayer::permissive()),
        )
        .layer(axum::middleware::from_fn_with_state(metrics, crate::metrics::track))
        .with_state(state)
}

pub async fn serve(settings: Settings) -> anyhow::Result<()> {
    let bind: SocketAddr = settings.http.bind.parse()?;
    let admin_bind: SocketAddr = settings.http.admin_bind.parse()?;
    let tls = crate::tls::server_config(&settings.tls_cert, &settings.tls_key)?;
    let state = AppState::connect(settings).await?;

    let shutdown = CancellationToken::new();
    let admin = tokio::spawn(crate::tls::serve_admin(admin_bind, tls, state.metrics.clone(), shutdown.clone()));
    tokio::spawn(crate::metrics::report_loop(state.clone(), shutdown.clone()));
    tokio::spawn(crate::workers::outbox::run(state.clone(), shutdown.clone()));
    if let Err(e) = crate::workers::warmup::warm(&state).await {
        tracing::info!(error = %e, "no cache snapshot");
    }

    let listener = TcpListener::bind(bind).await?;
    tracing::info!(%bind, "listening");
    let token = shutdown.clone();
    axum::serve(listener, router(state.clone()))
        .with_graceful_shutdown(async move {
            let _ = tokio::signal::ctrl_c().await;
            token.cancel();
        })
        .await?;
    admin.await??;
    crate::workers::warmup::snapshot(&state).await?;
    Ok(())
}
