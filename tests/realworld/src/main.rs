//! orders-service: a small order-management API.
//!
//! Startup is synchronous on purpose (configuration, logging, TLS material are loaded before the
//! runtime exists); everything after `Runtime::block_on` is async and runs on Tokio workers.

mod app;
mod auth;
mod clients;
mod error;
mod mail;
mod metrics;
mod routes;
mod settings;
mod state;
mod storage;
mod telemetry;
mod tls;
mod workers;

fn main() -> anyhow::Result<()> {
    // Startup, before any runtime exists: blocking here is fine.
    let _ = dotenvy::dotenv();
    let settings = settings::Settings::load()?;
    telemetry::init(&settings.log);

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(settings.http.workers)
        .enable_all()
        .thread_name("orders-worker")
        .build()?;
    runtime.block_on(app::serve(settings))
}
