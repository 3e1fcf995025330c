//! Fn items that reach their call through a value the walker does not follow
//! (`tests/fixtures/resolution-shapes` dropped both cases, session 18). A local bound to fn items
//! is called (`Local::fn_items`), and a fn item where a closure goes is typed, but:
//! - a fn item wrapped in `Some(..)` and bound again by `if let Some(h)`: the pattern binds the
//!   payload's *type*, not the fn items the `Option` holds;
//! - a fn item stored in a struct field and called as `(hooks.on_flush)(..)`: field values are
//!   not tracked per struct literal.
//! Needed: carry a value's fn items through `Some(..)`/struct literals to the patterns and field
//! reads that take them out.

fn throttle(ms: u64) {
    std::thread::sleep(std::time::Duration::from_millis(ms));
}

fn flush_to_disk(p: &str) {
    let _ = std::fs::write(p, b"");
}

pub struct Hooks {
    pub on_flush: fn(&str),
}

pub async fn optional_handler(event: u64) {
    let handler = Some(throttle);
    if let Some(h) = handler {
        h(event); // expect: NB0201
    }
}

pub async fn field_handler(p: &str) {
    let hooks = Hooks { on_flush: flush_to_disk };
    (hooks.on_flush)(p); // expect: NB0101
}
