//! Cache of lowered dependency crates, so a warm run parses only the workspace's own files.
//!
//! Registry and git sources are immutable, so a crate's lowered IR depends only on its package
//! id, the unit (lib/bin, root file), its cfg set (features and target) and the analyzer's own
//! version: that is the key. Path dependencies and workspace members are never cached (their
//! sources change under us). Entries live in `<target dir>/nonblock/cache/` as
//! `magic ‖ sha256(payload) ‖ payload` with a postcard payload; a truncated, corrupted or
//! undecodable entry is a miss and is rewritten, never trusted. Writes go through a temporary
//! file and a rename, so concurrent runs never read a partial entry.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::discover::{CrateUnit, SourceKind, UnitKind, Workspace};
use crate::index::LoadedUnit;
use crate::ir::IrModule;
use crate::load::{SourceFile, UnitLoad};
use crate::report::Diagnostic;

const MAGIC: &[u8; 8] = b"NBCACHE1";
/// Bumped whenever the IR or the lowering changes meaning without a version bump.
const FORMAT: u32 = 6;

#[derive(Deserialize)]
struct Entry {
    modules: Vec<IrModule>,
    files: Vec<(PathBuf, u64)>,
    diagnostics: Vec<StoredDiagnostic>,
}

/// [`Entry`] as written: borrowed from the fresh load, so writing never copies a crate's IR.
#[derive(Serialize)]
struct EntryRef<'a> {
    modules: &'a [IrModule],
    files: Vec<(&'a Path, u64)>,
    diagnostics: Vec<StoredDiagnostic>,
}

/// A [`Diagnostic`] as stored: every field, in order. `Diagnostic`'s own serde form leaves out
/// empty fields (for the JSON report), which postcard, a format that does not describe itself,
/// cannot read back: every entry of a crate with a diagnostic was rejected as corrupt and the
/// crate parsed again on each warm run (33 of deno's).
type StoredDiagnostic = (
    String,
    Option<String>,
    Option<String>,
    String,
    Option<u32>,
    Option<u32>,
    bool,
);

fn stored(d: &Diagnostic) -> StoredDiagnostic {
    let d = d.clone();
    (
        d.kind, d.file, d.package, d.message, d.line, d.column, d.member,
    )
}

fn restored(d: StoredDiagnostic) -> Diagnostic {
    let (kind, file, package, message, line, column, member) = d;
    Diagnostic {
        kind,
        file,
        package,
        message,
        line,
        column,
        member,
    }
}

/// Hits and misses of one run (shown by `-v`; not part of the JSON, which must not depend on
/// the cache's state).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    pub hits: usize,
    pub misses: usize,
    pub rejected: usize,
}

/// The cache key of a unit, or `None` when its sources are mutable (workspace, path deps).
pub fn key(ws: &Workspace, unit: &CrateUnit) -> Option<String> {
    key_for_version(ws, unit, env!("CARGO_PKG_VERSION"))
}

fn key_for_version(ws: &Workspace, unit: &CrateUnit, version: &str) -> Option<String> {
    let package = &ws.packages[unit.package];
    if !matches!(package.source, SourceKind::Registry | SourceKind::Git) {
        return None;
    }
    let mut h = Sha256::new();
    h.update(version.as_bytes());
    h.update(FORMAT.to_le_bytes());
    h.update(lowering_fingerprint());
    h.update(package.id.as_bytes());
    h.update([0]);
    h.update(unit.crate_name.as_bytes());
    h.update([matches!(unit.kind, UnitKind::Lib) as u8]);
    h.update(unit.root.to_string_lossy().as_bytes());
    for n in &unit.cfg.names {
        h.update([1]);
        h.update(n.as_bytes());
    }
    for (k, v) in &unit.cfg.pairs {
        h.update([2]);
        h.update(k.as_bytes());
        h.update([3]);
        h.update(v.as_bytes());
    }
    Some(crate::rules::hex(&h.finalize()[..16]))
}

/// A hash of the code that produces cached IR, so a changed lowering never reads entries written
/// by an older build of the same version.
fn lowering_fingerprint() -> &'static [u8] {
    static FINGERPRINT: std::sync::OnceLock<Vec<u8>> = std::sync::OnceLock::new();
    FINGERPRINT.get_or_init(|| {
        let mut h = Sha256::new();
        for src in [
            include_str!("ir.rs"),
            include_str!("lower.rs"),
            include_str!("load.rs"),
            include_str!("cfg.rs"),
        ] {
            h.update(src.as_bytes());
        }
        h.finalize().to_vec()
    })
}

fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.bin"))
}

/// What reading an entry found.
pub enum Lookup {
    Hit(Box<UnitLoad>),
    Miss,
    /// Present but short, with a bad checksum, or undecodable: rebuilt, never trusted.
    Corrupt,
}

pub fn read(dir: &Path, key: &str, unit: usize) -> Lookup {
    let Ok(bytes) = std::fs::read(entry_path(dir, key)) else {
        return Lookup::Miss;
    };
    if bytes.len() < MAGIC.len() + 32 || &bytes[..MAGIC.len()] != MAGIC {
        return Lookup::Corrupt;
    }
    let (sum, payload) = bytes[MAGIC.len()..].split_at(32);
    if Sha256::digest(payload).as_slice() != sum {
        return Lookup::Corrupt;
    }
    let Ok(entry) = postcard::from_bytes::<Entry>(payload) else {
        return Lookup::Corrupt;
    };
    Lookup::Hit(Box::new(UnitLoad {
        loaded: LoadedUnit {
            unit,
            modules: entry.modules,
        },
        files: entry
            .files
            .into_iter()
            .map(|(path, bytes)| SourceFile { path, unit, bytes })
            .collect(),
        diagnostics: entry.diagnostics.into_iter().map(restored).collect(),
    }))
}

/// Writes an entry atomically; failures are ignored (the cache is an optimisation).
pub fn write(dir: &Path, key: &str, load: &UnitLoad) {
    let entry = EntryRef {
        modules: &load.loaded.modules,
        files: load
            .files
            .iter()
            .map(|f| (f.path.as_path(), f.bytes))
            .collect(),
        diagnostics: load.diagnostics.iter().map(stored).collect(),
    };
    let Ok(payload) = postcard::to_stdvec(&entry) else {
        return;
    };
    let mut bytes = Vec::with_capacity(payload.len() + 40);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&Sha256::digest(&payload));
    bytes.extend_from_slice(&payload);
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!("{key}.{}.tmp", std::process::id()));
    if std::fs::write(&tmp, &bytes).is_ok() && std::fs::rename(&tmp, entry_path(dir, key)).is_err()
    {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Loads a unit through the cache when it has a key and a cache directory is set.
pub fn load_unit(ws: &Workspace, unit: usize, stats: &std::sync::Mutex<CacheStats>) -> UnitLoad {
    let (Some(dir), Some(key)) = (ws.cache_dir.as_deref(), key(ws, &ws.units[unit])) else {
        return crate::load::load_unit(ws, unit);
    };
    match read(dir, &key, unit) {
        Lookup::Hit(hit) => {
            stats.lock().expect("cache stats lock").hits += 1;
            return *hit;
        }
        Lookup::Miss => stats.lock().expect("cache stats lock").misses += 1,
        Lookup::Corrupt => stats.lock().expect("cache stats lock").rejected += 1,
    }
    let fresh = crate::load::load_unit(ws, unit);
    write(dir, &key, &fresh);
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testutil::{analyze_workspace_of, scratch_workspace};

    const LIB: &str = "pub async fn a() {\n std::fs::read(\"x\");\n}\n";

    #[test]
    fn a_second_run_reuses_dependency_crates_with_identical_output() {
        let (ws, _scratch) = scratch_workspace("cache-hit", LIB, SourceKind::Registry, true);
        let cold = analyze_workspace_of(&ws);
        let warm = analyze_workspace_of(&ws);
        assert_eq!((cold.cache.hits, cold.cache.misses), (0, 1));
        assert_eq!((warm.cache.hits, warm.cache.misses), (1, 0));
        assert_eq!(
            cold.without_timings().to_json(),
            warm.without_timings().to_json()
        );
    }

    #[test]
    fn a_crate_with_diagnostics_is_reused_with_them() {
        // `Diagnostic`'s JSON form leaves out empty fields, which postcard cannot read back: such
        // entries used to be rejected as corrupt and parsed again on every warm run.
        let lib = "mod missing;\npub async fn a() {\n std::fs::read(\"x\");\n}\n";
        let (ws, _scratch) = scratch_workspace("cache-diag", lib, SourceKind::Registry, true);
        let cold = analyze_workspace_of(&ws);
        assert!(
            !cold.errors.is_empty(),
            "the missing module is a diagnostic"
        );
        let warm = analyze_workspace_of(&ws);
        assert_eq!(
            (warm.cache.hits, warm.cache.misses, warm.cache.rejected),
            (1, 0, 0)
        );
        assert_eq!(
            cold.without_timings().to_json(),
            warm.without_timings().to_json()
        );
    }

    #[test]
    fn workspace_and_path_crates_are_never_cached() {
        let (ws, _scratch) = scratch_workspace("cache-path", LIB, SourceKind::Path, true);
        analyze_workspace_of(&ws);
        assert_eq!(analyze_workspace_of(&ws).cache, CacheStats::default());
    }

    #[test]
    fn a_rules_change_takes_effect_on_a_warm_cache() {
        // The cache holds lowered source, which no rule influences, so the rules are not part
        // of the key: a rule added after the cache was filled must still match on a warm run.
        let lib = "pub async fn a() { legacy_load(); }\npub fn legacy_load() {}\n";
        let (ws, _scratch) = scratch_workspace("cache-rules", lib, SourceKind::Registry, true);
        let cold = analyze_workspace_of(&ws);
        assert_eq!((cold.cache.misses, cold.findings.len()), (1, 0));
        let mut rules = crate::RuleDb::builtin();
        rules.add_user_api("fs", "dep::legacy_load", "reads the legacy file", None);
        let warm = crate::analyze_workspace(
            &ws,
            &rules,
            &crate::config::Config::default(),
            &crate::progress::Silent,
            std::time::Instant::now(),
            std::collections::BTreeMap::new(),
            false,
        );
        assert_eq!(warm.cache.hits, 1);
        assert_eq!(warm.findings.len(), 1, "{:?}", warm.findings);
        assert_eq!(warm.findings[0].api, "dep::legacy_load");
    }

    #[test]
    fn keys_change_with_features_target_cfg_and_analyzer_version() {
        let (ws, _scratch) = scratch_workspace("cache-key", LIB, SourceKind::Registry, true);
        let unit = &ws.units[0];
        let base = key(&ws, unit).unwrap();
        let mut featured = unit.clone();
        featured.cfg = unit.cfg.with_features(["extra"]);
        assert_ne!(key(&ws, &featured).unwrap(), base);
        let mut windows = unit.clone();
        windows.cfg.names.remove("unix");
        assert_ne!(key(&ws, &windows).unwrap(), base);
        assert_ne!(key_for_version(&ws, unit, "999.0.0").unwrap(), base);
        assert_eq!(key(&ws, unit).unwrap(), base, "keys are stable");
    }

    #[test]
    fn corrupted_or_truncated_entries_are_rebuilt_not_trusted() {
        let (ws, _scratch) = scratch_workspace("cache-corrupt", LIB, SourceKind::Registry, true);
        let reference = analyze_workspace_of(&ws).without_timings().to_json();
        let dir = ws.cache_dir.clone().unwrap();
        let entry = std::fs::read_dir(&dir)
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let good = std::fs::read(&entry).unwrap();
        for damaged in [good[..good.len() / 2].to_vec(), {
            let mut b = good.clone();
            let last = b.len() - 1;
            b[last] ^= 0xff;
            b
        }] {
            std::fs::write(&entry, &damaged).unwrap();
            let r = analyze_workspace_of(&ws);
            assert_eq!(r.cache.rejected, 1);
            assert_eq!(r.without_timings().to_json(), reference);
            assert_eq!(
                std::fs::read(&entry).unwrap(),
                good,
                "the entry is rewritten"
            );
        }
    }
}
