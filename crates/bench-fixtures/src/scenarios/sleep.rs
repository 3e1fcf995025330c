//! sleep (NB02xx): `std::thread::sleep` against `tokio::time::sleep`.
//!
//! The seeds' own stand-in for every blocking call, here as a category of its own: the thread is
//! descheduled for the whole duration, with the worker's poll loop inside it.

use std::time::Duration;

use super::category::{CategoryConfig, CategorySpec, Fixture, Stateless, UnitFuture, Variant};

pub const SPEC: CategorySpec = CategorySpec {
    name: "sleep",
    rule_prefix: "NB02",
    confirmation: "std::thread::sleep(50 ms) in one task per worker vs tokio::time::sleep(50 ms)",
    blocking_api: "std::thread::sleep",
    alternative_api: "tokio::time::sleep",
    cpu_bound: false,
    setup,
};

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    Ok(Box::new(Stateless(unit)))
}

fn unit(variant: Variant, unit: Duration) -> UnitFuture {
    Box::pin(async move {
        match variant {
            Variant::Blocking => std::thread::sleep(unit),
            Variant::Alternative => tokio::time::sleep(unit).await,
        }
        Ok(())
    })
}
