//! net (NB03xx): a request over `std::net::TcpStream` to a slow server against
//! `tokio::net::TcpStream`.
//!
//! The server ([`crate::servers::SlowServer`], 127.0.0.1, ephemeral port, its own thread) answers
//! after one unit (50 ms). The blocking client spends that time in `read`, holding the worker;
//! the tokio client registers with the I/O driver and yields.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

use super::category::{CategoryConfig, CategorySpec, Fixture, RunUnits, UnitFuture, Variant};
use crate::servers::{raw_request, SlowServer, BODY};

pub const SPEC: CategorySpec = CategorySpec {
    name: "net",
    rule_prefix: "NB03",
    confirmation: "std::net::TcpStream request to a 127.0.0.1 server that answers after 50 ms, in one task per worker vs tokio::net::TcpStream",
    blocking_api: "std::net::TcpStream",
    alternative_api: "tokio::net::TcpStream",
    cpu_bound: false,
    setup,
};

/// Client-side I/O timeout: a bound, never reached unless the server is gone.
const IO_TIMEOUT: Duration = Duration::from_secs(10);

struct NetFixture;

struct Units {
    server: SlowServer,
    variant: Variant,
}

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    Ok(Box::new(NetFixture))
}

/// Starts a slow server sized for one run of `cfg`.
pub fn server_for(cfg: &CategoryConfig) -> Result<SlowServer, String> {
    SlowServer::start(
        cfg.unit,
        cfg.offenders * cfg.rounds * 2 + 16,
        cfg.helper_deadline(),
    )
    .map_err(|e| format!("slow server: {e}"))
}

fn check(response: &str) -> Result<(), String> {
    if response.starts_with("HTTP/1.1 200") && response.ends_with(BODY) {
        Ok(())
    } else {
        Err(format!("unexpected response: {response:?}"))
    }
}

/// The blocking client.
pub fn std_request(addr: SocketAddr) -> Result<(), String> {
    let io = |e: std::io::Error| format!("std::net: {e}");
    let mut stream = std::net::TcpStream::connect_timeout(&addr, IO_TIMEOUT).map_err(io)?;
    stream.set_read_timeout(Some(IO_TIMEOUT)).map_err(io)?;
    stream.write_all(raw_request(addr).as_bytes()).map_err(io)?;
    let mut response = String::new();
    stream.read_to_string(&mut response).map_err(io)?;
    check(&response)
}

/// The async client.
pub async fn tokio_request(addr: SocketAddr) -> Result<(), String> {
    let exchange = async {
        let mut stream = tokio::net::TcpStream::connect(addr).await?;
        stream.write_all(raw_request(addr).as_bytes()).await?;
        let mut response = String::new();
        stream.read_to_string(&mut response).await?;
        Ok::<_, std::io::Error>(response)
    };
    let response = tokio::time::timeout(IO_TIMEOUT, exchange)
        .await
        .map_err(|_| "tokio::net: timed out".to_string())?
        .map_err(|e| format!("tokio::net: {e}"))?;
    check(&response)
}

impl Fixture for NetFixture {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        Ok(Arc::new(Units {
            server: server_for(cfg)?,
            variant,
        }))
    }
}

impl RunUnits for Units {
    fn call(self: Arc<Self>, _: usize, _: usize) -> UnitFuture {
        Box::pin(async move {
            let addr = self.server.addr();
            match self.variant {
                Variant::Blocking => std_request(addr),
                Variant::Alternative => tokio_request(addr).await,
            }
        })
    }
}
