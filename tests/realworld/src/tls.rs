use std::convert::Infallible;
use std::fs::File;
use std::io::BufReader;
use std::net::SocketAddr;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use tokio_util::sync::CancellationToken;

use crate::metrics::Metrics;

/// Loads the admin listener's certificate chain and key.
pub fn server_config(cert_path: &str, key_path: &str) -> anyhow::Result<Arc<ServerConfig>> {
    let certs: Vec<CertificateDer<'static>> =
        rustls_pemfile::certs(&mut BufReader::new(File::open(cert_path)?)).collect::<Result<_, _>>()?;
    let key: PrivateKeyDer<'static> = rustls_pemfile::private_key(&mut BufReader::new(File::open(key_path)?))?
        .ok_or_else(|| anyhow::anyhow!("no private key in {key_path}"))?;
    let config = ServerConfig::builder()
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    Ok(Arc::new(config))
}

/// The internal admin port: metrics over TLS, served with hyper directly.
pub async fn serve_admin(
    addr: SocketAddr,
    tls: Arc<ServerConfig>,
    metrics: Arc<Metrics>,
    shutdown: CancellationToken,
) -> anyhow::Result<()> {
    let acceptor = TlsAcceptor::from(tls);
    let listener = TcpListener::bind(addr).await?;
    loop {
        let (stream, peer) = tokio::select! {
            r = listener.accept() => r?,
            _ = shutdown.cancelled() => return Ok(()),
        };
        let acceptor = acceptor.clone();
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let tls = match acceptor.accept(stream).await {
                Ok(s) => s,
                Err(e) => {
                    tracing::warn!(%peer, error = %e, "tls handshake failed");
                    return;
                }
            };
            let svc = service_fn(move |req: Request<hyper::body::Incoming>| {
                let metrics = metrics.clone();
                async move { Ok::<_, Infallible>(admin_response(&metrics, req.uri().path())) }
            });
            if let Err(e) = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(tls), svc)
                .await
            {
                tracing::debug!(error = %e, "admin connection closed");
            }
        });
    }
}

fn admin_response(metrics: &Metrics, path: &str) -> Response<Full<Bytes>> {
    match path {
        "/metrics" => Response::new(Full::new(Bytes::from(metrics.render()))),
        _ => Response::builder().status(404).body(Full::new(Bytes::new())).unwrap(),
    }
}
