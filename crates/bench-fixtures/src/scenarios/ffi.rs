//! ffi (NB10xx): a real `extern "C"` call, libc's `usleep`, against the same call in
//! `spawn_blocking`.
//!
//! The function is declared in an `extern` block here, exactly the shape the rule flags: the
//! compiler and the runtime see an opaque foreign call and cannot know it parks the thread.

use std::time::Duration;

use super::category::{
    offload, CategoryConfig, CategorySpec, Fixture, Stateless, UnitFuture, Variant,
};

extern "C" {
    /// POSIX `usleep(3)` from the C library std already links.
    fn usleep(usec: u32) -> i32;
}

/// Calls libc's `usleep`, sleeping in foreign code.
pub fn foreign_sleep(d: Duration) -> Result<(), String> {
    let usec = u32::try_from(d.as_micros()).map_err(|_| "usleep duration too long".to_string())?;
    // SAFETY: usleep takes a plain integer and touches no memory of ours.
    let rc = unsafe { usleep(usec) };
    if rc == 0 {
        Ok(())
    } else {
        Err(format!(
            "usleep failed: {}",
            std::io::Error::last_os_error()
        ))
    }
}

pub const SPEC: CategorySpec = CategorySpec {
    name: "ffi",
    rule_prefix: "NB10",
    confirmation: "extern \"C\" usleep(50 000) from libc in one task per worker vs the same call in spawn_blocking",
    blocking_api: "extern \"C\" usleep",
    alternative_api: "spawn_blocking(usleep)",
    cpu_bound: false,
    setup,
};

fn setup(_: &CategoryConfig) -> Result<Box<dyn Fixture>, String> {
    Ok(Box::new(Stateless(unit)))
}

fn unit(variant: Variant, unit: Duration) -> UnitFuture {
    Box::pin(async move {
        match variant {
            Variant::Blocking => foreign_sleep(unit),
            Variant::Alternative => offload(move || foreign_sleep(unit)).await,
        }
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn usleep_really_sleeps() {
        let t = std::time::Instant::now();
        super::foreign_sleep(std::time::Duration::from_millis(3)).unwrap();
        assert!(t.elapsed() >= std::time::Duration::from_millis(3));
    }
}
