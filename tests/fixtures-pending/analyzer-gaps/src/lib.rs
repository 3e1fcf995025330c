//! Call sites the rule database covers but the analyzer misses (`expect:`) or reports wrongly
//! (`ok(..)` lines that get a finding). One module per missing analyzer capability; each module's
//! header says what the analyzer would need.
#![allow(dead_code, unused_variables, unused_must_use, unused_imports, clippy::all)]

pub mod alias_results;
pub mod argument_values;
pub mod blanket_impls;
pub mod for_loops;
pub mod foreign_macros;
pub mod std_trait_defaults;
