//! The last line of defence: a panic while analysing one crate becomes an `internal` diagnostic
//! naming the crate, the run goes on, and the CLI exits 2 (a report with a hole in it must not
//! pass CI silently).
//!
//! `catch_unwind` alone would still let the default panic hook print `thread '..' panicked at`
//! between the human diagnostics, and loses the location. So a chained hook is installed once: on
//! a thread inside [`guard`] it records message and location for the diagnostic and prints
//! nothing; everywhere else (tests' assertion failures, callers' own panics) it defers to the hook
//! that was there before.

use std::cell::{Cell, RefCell};
use std::panic::{self, AssertUnwindSafe};
use std::sync::Once;

thread_local! {
    /// How many [`guard`] frames are active on this thread.
    static GUARDED: Cell<usize> = const { Cell::new(0) };
    /// `message (at file:line)` of the last panic caught on this thread.
    static LAST: RefCell<Option<String>> = const { RefCell::new(None) };
}

static HOOK: Once = Once::new();

fn install_hook() {
    HOOK.call_once(|| {
        let previous = panic::take_hook();
        panic::set_hook(Box::new(move |info| {
            if GUARDED.with(Cell::get) == 0 {
                previous(info);
                return;
            }
            let message = payload_text(info.payload());
            let text = match info.location() {
                Some(l) => format!("{message} (at {}:{})", l.file(), l.line()),
                None => message,
            };
            LAST.with(|last| *last.borrow_mut() = Some(text));
        }));
    });
}

fn payload_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "panic with a non-text payload".to_string()
    }
}

/// Runs `f`; a panic inside it comes back as `Err(message and location)`.
///
/// The analysis state `f` touches is either owned by `f` or read-only (the index, the rules), so
/// nothing half-updated outlives a caught panic: `AssertUnwindSafe` is sound here.
pub fn guard<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    install_hook();
    GUARDED.with(|g| g.set(g.get() + 1));
    let result = panic::catch_unwind(AssertUnwindSafe(f));
    GUARDED.with(|g| g.set(g.get() - 1));
    result.map_err(|payload| {
        LAST.with(|last| last.borrow_mut().take())
            .unwrap_or_else(|| payload_text(payload.as_ref()))
    })
}

/// The diagnostic for a panic caught while `stage` ran on `package`.
pub fn internal_error(package: Option<&str>, stage: &str, panic: &str) -> crate::Diagnostic {
    let subject = match package {
        Some(p) => format!("crate `{p}`"),
        None => "the workspace".to_string(),
    };
    crate::Diagnostic {
        kind: "internal".into(),
        file: None,
        package: package.map(str::to_string),
        message: format!(
            "internal error while {stage} {subject}: {panic}; findings from this part are \
             missing from the report (this is a cargo-nonblock bug: please report it)"
        ),
        ..Default::default()
    }
}

/// Fault injection for the end-to-end tests of this module's promise (a panic is caught,
/// reported and exits 2): `NONBLOCK_INJECT_PANIC=<stage>:<crate_name>` panics when `stage` (`parse`,
/// `resolve`) reaches `crate`, and `NONBLOCK_INJECT_PANIC=graph` panics in the whole-graph stage.
/// There is no other way to make a correct analyzer panic on purpose.
pub fn inject(stage: &str, package: &str) {
    let Some(spec) = injection() else {
        return;
    };
    let hit = match spec.split_once(':') {
        Some((s, p)) => s == stage && p == package,
        None => spec == stage,
    };
    if hit {
        panic!("injected panic ({spec})");
    }
}

/// The `NONBLOCK_INJECT_PANIC` spec of this process, if any. A run with one must analyse, never
/// reuse a cached report (`run_cache`).
pub fn injection() -> Option<&'static str> {
    static SPEC: std::sync::OnceLock<Option<String>> = std::sync::OnceLock::new();
    SPEC.get_or_init(|| std::env::var("NONBLOCK_INJECT_PANIC").ok())
        .as_deref()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_error_with_its_message_and_location() {
        let err = guard(|| -> u32 { panic!("boom {}", 7) }).unwrap_err();
        assert!(err.starts_with("boom 7 (at "), "{err}");
        assert!(err.contains("guard.rs:"), "{err}");
        assert_eq!(guard(|| 5), Ok(5));
    }

    #[test]
    fn guards_nest_and_unwind_their_depth() {
        let outer = guard(|| {
            let inner = guard(|| -> () { panic!("inner") });
            assert!(inner.unwrap_err().starts_with("inner"));
            GUARDED.with(Cell::get)
        });
        assert_eq!(outer, Ok(1));
        assert_eq!(GUARDED.with(Cell::get), 0);
    }

    #[test]
    fn the_diagnostic_names_the_crate() {
        let d = internal_error(Some("serde"), "resolving calls in", "boom");
        assert_eq!(d.kind, "internal");
        assert_eq!(d.package.as_deref(), Some("serde"));
        assert!(d.message.contains("crate `serde`: boom"), "{}", d.message);
    }
}
