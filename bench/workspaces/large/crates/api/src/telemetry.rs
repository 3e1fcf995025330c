use opentelemetry::trace::TracerProvider as _;
use opentelemetry::KeyValue;
use opentelemetry_sdk::trace::TracerProvider;
use opentelemetry_sdk::Resource;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{fmt, EnvFilter};

use crate::settings::TelemetrySettings;

pub struct Guard {
    _provider: TracerProvider,
}

pub fn init(settings: &TelemetrySettings) -> anyhow::Result<Guard> {
    let provider = TracerProvider::builder()
        .with_resource(Resource::new([KeyValue::new("service.name", settings.service_name.clone())]))
        .build();
    let tracer = provider.tracer("api");
    opentelemetry::global::set_tracer_provider(provider.clone());

    let filter = EnvFilter::try_new(&settings.filter).unwrap_or_else(|_| EnvFilter::new("info"));
    let otel = tracing_opentelemetry::layer().with_tracer(tracer);
    let registry = tracing_subscriber::registry().with(filter).with(otel);
    if settings.json_logs {
        registry.with(fmt::layer().json()).try_init()?;
    } else {
        registry.with(fmt::layer()).try_init()?;
    }
    Ok(Guard { _provider: provider })
}

pub fn shutdown() {
    opentelemetry::global::shutdown_tracer_provider();
}
