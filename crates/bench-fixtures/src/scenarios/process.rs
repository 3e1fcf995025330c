//! process (NB06xx): waiting for a child with `std::process::Command::status` against
//! `tokio::process::Command`.
//!
//! The child is the system's `sleep` utility running for one unit (50 ms): the worker waits in
//! `waitpid` for the whole time. tokio's version waits for SIGCHLD on its driver instead.

use std::sync::Arc;
use std::time::Duration;

use super::category::{CategoryConfig, CategorySpec, Fixture, RunUnits, UnitFuture, Variant};

pub const SPEC: CategorySpec = CategorySpec {
    name: "process",
    rule_prefix: "NB06",
    confirmation: "std::process::Command::new(\"sleep\").status() for a 50 ms child in one task per worker vs tokio::process::Command",
    blocking_api: "std::process::Command::status",
    alternative_api: "tokio::process::Command::status",
    cpu_bound: false,
    setup,
};

struct ProcessFixture;

struct Units {
    seconds: String,
    variant: Variant,
}

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    // Fail early, with a clear message, on a system without `sleep`.
    let status = std::process::Command::new("sleep")
        .arg("0")
        .status()
        .map_err(|e| format!("cannot run `sleep`: {e}"))?;
    if !status.success() {
        return Err(format!("`sleep 0` failed: {status}"));
    }
    Ok(Box::new(ProcessFixture))
}

fn seconds(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64())
}

impl Fixture for ProcessFixture {
    fn start_run(
        &self,
        cfg: &CategoryConfig,
        variant: Variant,
    ) -> Result<Arc<dyn RunUnits>, String> {
        Ok(Arc::new(Units {
            seconds: seconds(cfg.unit),
            variant,
        }))
    }
}

impl RunUnits for Units {
    fn call(self: Arc<Self>, _: usize, _: usize) -> UnitFuture {
        Box::pin(async move {
            let status = match self.variant {
                Variant::Blocking => std::process::Command::new("sleep")
                    .arg(&self.seconds)
                    .status(),
                Variant::Alternative => {
                    tokio::process::Command::new("sleep")
                        .arg(&self.seconds)
                        .status()
                        .await
                }
            }
            .map_err(|e| format!("sleep: {e}"))?;
            if status.success() {
                Ok(())
            } else {
                Err(format!("sleep exited with {status}"))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn durations_are_given_to_sleep_in_seconds() {
        assert_eq!(
            super::seconds(std::time::Duration::from_millis(50)),
            "0.050"
        );
    }
}
