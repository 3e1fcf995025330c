// The whole API of the crate is in a file pulled in by `include!`, as generated bindings often are.
include!("generated.rs");
