//! What a run analyses and how: the CLI's selection flags as plain data.

use std::path::PathBuf;

#[derive(Clone, Debug, Default)]
pub struct Options {
    pub manifest_path: Option<PathBuf>,
    /// `-p/--package`: report roots only from these members (everything is still analysed).
    pub packages: Vec<String>,
    pub exclude: Vec<String>,
    pub features: Vec<String>,
    pub all_features: bool,
    pub no_default_features: bool,
    pub target: Option<String>,
    pub offline: bool,
    pub locked: bool,
    pub frozen: bool,
    /// Analysis threads (default: rayon's choice, which honours `RAYON_NUM_THREADS`). Output is
    /// identical for every value.
    pub threads: Option<usize>,
    /// Do not read or write the cache of lowered dependency crates.
    pub no_cache: bool,
    /// Also map the fingerprints findings had under the v1 contract to today's findings
    /// (`Report::v1_fingerprints`), so that a v1 baseline applies: one more propagation, over
    /// every call, done only when asked.
    pub v1_fingerprints: bool,
}
