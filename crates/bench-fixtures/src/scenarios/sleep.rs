//! sleep (NB02xx): `std::thread::sleep` against `tokio::time::sleep`.
//!
//! The seeds' own stand-in for every blocking call, here as a category of its own: the thread is
//! descheduled for the whole duration, with the worker's poll loop inside it.

use std::sync::Arc;
use std::time::Duration;

use super::category::{CategoryConfig, CategorySpec, Fixture, RunUnits, UnitFuture, Variant};

pub const SPEC: CategorySpec = CategorySpec {
    name: "sleep",
    rule_prefix: "NB02",
    confirmation: "std::thread::sleep(50 ms) in one task per worker vs tokio::time::sleep(50 ms)",
    blocking_api: "std::thread::sleep",
    alternative_api: "tokio::time::sleep",
    cpu_bound: false,
    setup,
};

struct SleepFixture;

struct Units {
    unit: Duration,
    variant: Variant,
}

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    Ok(Box::new(SleepFixture))
}

impl Fixture for SleepFixture {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        Ok(Arc::new(Units {
            unit: cfg.unit,
            variant,
        }))
    }
}

impl RunUnits for Units {
    fn call(self: Arc<Self>, _: usize, _: usize) -> UnitFuture {
        Box::pin(async move {
            match self.variant {
                Variant::Blocking => std::thread::sleep(self.unit),
                Variant::Alternative => tokio::time::sleep(self.unit).await,
            }
            Ok(())
        })
    }
}
