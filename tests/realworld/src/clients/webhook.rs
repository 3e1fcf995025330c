use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::Request;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use once_cell::sync::Lazy;

static CLIENT: Lazy<Client<HttpConnector, Full<Bytes>>> =
    Lazy::new(|| Client::builder(TokioExecutor::new()).build_http());

/// Notifies the fulfilment system; plain hyper because it only speaks HTTP/1 on the internal network.
pub async fn notify(url: &str, payload: Bytes) -> anyhow::Result<u16> {
    let req = Request::post(url)
        .header("content-type", "application/json")
        .body(Full::new(payload))?;
    let resp = CLIENT.request(req).await?;
    let status = resp.status().as_u16();
    let _body = resp.into_body().collect().await?.to_bytes();
    Ok(status)
}
