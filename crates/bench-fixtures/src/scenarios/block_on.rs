//! block-on (NB08xx): `pollster::block_on` of a future inside async code against `.await`.
//!
//! The future is a reply from a backend thread (a `tokio::sync::oneshot` answered 50 ms later),
//! the shape of a client library with its own I/O thread. `block_on` parks the worker thread
//! until the reply arrives; `.await` gives the worker back. (A future that needs the *same*
//! runtime's timer or I/O driver would be worse: with every worker inside `block_on` nothing
//! drives the driver and the runtime deadlocks. The fixture avoids that so every run is bounded.)

use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tokio::sync::oneshot;

use super::category::{CategoryConfig, CategorySpec, Fixture, RunUnits, UnitFuture, Variant};

pub const SPEC: CategorySpec = CategorySpec {
    name: "block-on",
    rule_prefix: "NB08",
    confirmation: "pollster::block_on of a reply a backend thread sends 50 ms later, in one task per worker vs .await",
    blocking_api: "pollster::block_on",
    alternative_api: ".await",
    cpu_bound: false,
    setup,
};

type Request = (Instant, oneshot::Sender<u64>);

struct BlockOnFixture;

struct Units {
    requests: Mutex<Option<mpsc::Sender<Request>>>,
    backend: Mutex<Option<JoinHandle<()>>>,
    unit: Duration,
    variant: Variant,
}

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    Ok(Box::new(BlockOnFixture))
}

/// The backend: answers each request at its due time, in arrival order; stops when every sender
/// is gone or at the deadline.
fn backend(rx: mpsc::Receiver<Request>, deadline: Instant) {
    let mut served = 0u64;
    while let Ok((due, reply)) = rx.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    {
        std::thread::sleep(due.saturating_duration_since(Instant::now()));
        served += 1;
        let _ = reply.send(served);
    }
}

impl Fixture for BlockOnFixture {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        let (tx, rx) = mpsc::channel();
        let deadline = Instant::now() + cfg.helper_deadline();
        let handle = std::thread::Builder::new()
            .name("nb-backend".into())
            .spawn(move || backend(rx, deadline))
            .map_err(|e| format!("backend thread: {e}"))?;
        Ok(Arc::new(Units {
            requests: Mutex::new(Some(tx)),
            backend: Mutex::new(Some(handle)),
            unit: cfg.unit,
            variant,
        }))
    }
}

impl Drop for Units {
    fn drop(&mut self) {
        // Closing the channel ends the backend loop.
        self.requests
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Some(h) = self
            .backend
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            let _ = h.join();
        }
    }
}

impl RunUnits for Units {
    fn call(self: Arc<Self>, _: usize, _: usize) -> UnitFuture {
        Box::pin(async move {
            let (reply, rx) = oneshot::channel();
            let sender = self
                .requests
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone()
                .ok_or("backend stopped")?;
            sender
                .send((Instant::now() + self.unit, reply))
                .map_err(|_| "backend stopped".to_string())?;
            let answer = match self.variant {
                Variant::Blocking => pollster::block_on(rx),
                Variant::Alternative => rx.await,
            };
            answer
                .map(drop)
                .map_err(|_| "backend dropped the reply".to_string())
        })
    }
}
