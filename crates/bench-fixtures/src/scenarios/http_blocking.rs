//! http-blocking (NB04xx): a `ureq` GET to a slow HTTP server against the same call in
//! `spawn_blocking`.
//!
//! `ureq` (like `reqwest::blocking`) performs the whole exchange on the calling thread. The server
//! is the same 127.0.0.1 slow server as the net confirmation, answering after one unit (50 ms).
//! The alternative keeps the blocking client but moves the call to the blocking pool, which is
//! the fix when an async client is not an option.

use std::sync::Arc;
use std::time::Duration;

use super::category::{
    offload, CategoryConfig, CategorySpec, Fixture, RunUnits, UnitFuture, Variant,
};
use crate::scenarios::net::server_for;
use crate::servers::{SlowServer, BODY};

pub const SPEC: CategorySpec = CategorySpec {
    name: "http-blocking",
    rule_prefix: "NB04",
    confirmation: "ureq GET to a 127.0.0.1 HTTP server that answers after 50 ms, in one task per worker vs the same call in spawn_blocking",
    blocking_api: "ureq::Agent::get().call()",
    alternative_api: "spawn_blocking(ureq)",
    cpu_bound: false,
    setup,
};

struct HttpFixture;

struct Units {
    server: SlowServer,
    agent: ureq::Agent,
    variant: Variant,
}

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    Ok(Box::new(HttpFixture))
}

/// A blocking GET of `url` with `agent`, checking the body.
pub fn get(agent: &ureq::Agent, url: &str) -> Result<(), String> {
    let mut response = agent.get(url).call().map_err(|e| format!("ureq: {e}"))?;
    let body = response
        .body_mut()
        .read_to_string()
        .map_err(|e| format!("ureq body: {e}"))?;
    if body == BODY {
        Ok(())
    } else {
        Err(format!("unexpected body {body:?}"))
    }
}

impl Fixture for HttpFixture {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .timeout_global(Some(Duration::from_secs(10)))
            .build()
            .into();
        Ok(Arc::new(Units {
            server: server_for(cfg)?,
            agent,
            variant,
        }))
    }
}

impl RunUnits for Units {
    fn call(self: Arc<Self>, _: usize, _: usize) -> UnitFuture {
        Box::pin(async move {
            let url = self.server.url();
            match self.variant {
                Variant::Blocking => get(&self.agent, &url),
                Variant::Alternative => {
                    let agent = self.agent.clone();
                    offload(move || get(&agent, &url)).await
                }
            }
        })
    }
}
