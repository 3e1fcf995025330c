//! Progress reporting: the analyzer tells a sink which phase it is in and how many crates are
//! parsed; the CLI draws a bar from it on a terminal. The analyzer never writes to stderr itself.

/// A receiver of progress events. Called from analysis threads, hence `Sync`.
pub trait Progress: Sync {
    /// A phase starts; `total` is its number of steps (crates), 0 when it has none.
    fn phase(&self, _name: &'static str, _total: usize) {}
    /// One step of the current phase is done.
    fn advance(&self) {}
    /// The run is over (successfully or not).
    fn finish(&self) {}
}

/// No progress output: the library default and the CLI's choice off a terminal or under `-q`.
pub struct Silent;

impl Progress for Silent {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Mutex;

    #[derive(Default)]
    struct Recorder {
        phases: Mutex<Vec<(&'static str, usize)>>,
        steps: AtomicUsize,
    }

    impl Progress for Recorder {
        fn phase(&self, name: &'static str, total: usize) {
            self.phases.lock().unwrap().push((name, total));
        }
        fn advance(&self) {
            self.steps.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn every_crate_parsed_is_one_step_of_the_parse_phase() {
        let (ws, _scratch) = crate::testutil::scratch_workspace(
            "progress",
            "pub fn f() {}\n",
            crate::discover::SourceKind::Path,
            false,
        );
        let rec = Recorder::default();
        let start = std::time::Instant::now();
        crate::analyze_workspace(
            &ws,
            &crate::RuleDb::builtin(),
            &crate::config::Config::default(),
            &rec,
            start,
            Default::default(),
            false,
        );
        let phases = rec.phases.lock().unwrap().clone();
        assert_eq!(
            phases,
            [("parse", 1), ("index", 0), ("resolve", 0), ("graph", 0)]
        );
        assert_eq!(rec.steps.load(Ordering::SeqCst), 1);
    }
}
