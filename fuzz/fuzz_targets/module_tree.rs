//! Structured workspaces (module trees, `#[path]`, `use` graphs, calls between crates) through
//! parse → lower → index → resolve → graph → propagate → report → render.
#![no_main]

use libfuzzer_sys::fuzz_target;
use nonblock_fuzz::{check, Tree};

fuzz_target!(|tree: Tree| {
    check(&tree.render());
});
