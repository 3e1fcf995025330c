//! Cache of lowered crates, so a warm run parses only the files that changed.
//!
//! A crate's lowered IR depends on its package id, the unit (lib/bin, root file), its cfg set
//! (features and target), the analyzer's own lowering code and its sources: the key is all but
//! the last. Registry and git sources are immutable, so for them the key is enough. Workspace
//! members and path dependencies change under us: their entries also hold the files the load
//! read and looked for ([`crate::inputs`]), and an entry whose inputs changed is *stale*, loaded
//! afresh and rewritten. Entries live in `<target dir>/nonblock/cache/` as
//! `magic ‖ sha256(payload) ‖ payload`, the payload being postcard's inputs then the IR (so a
//! stale entry is known before its IR is decoded); a truncated, corrupted or undecodable entry
//! is a miss and is rewritten, never trusted. Writes go through a temporary file and a rename, so
//! concurrent runs never read a partial entry.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::discover::{CrateUnit, UnitKind, Workspace};
use crate::index::LoadedUnit;
use crate::inputs::Input;
use crate::ir::IrModule;
use crate::load::{SourceFile, UnitLoad};
use crate::report::Diagnostic;

const MAGIC: &[u8; 8] = b"NBCACHE1";
/// Bumped whenever the IR or the lowering changes meaning without a version bump.
const FORMAT: u32 = 19;

/// What an entry holds after its modules (`Vec<IrModule>`), read on its own ([`read`]).
#[derive(Deserialize)]
struct EntryTail {
    files: Vec<(PathBuf, u64)>,
    diagnostics: Vec<StoredDiagnostic>,
    /// A member's [`crate::member_changes::MemberShape`] digests, computed when the entry was
    /// written, so a warm run does not encode the member's IR again.
    shape: Option<([u8; 16], [u8; 16])>,
}

/// An entry as written (modules, then [`EntryTail`]): borrowed from the fresh load, so writing
/// never copies a crate's IR.
#[derive(Serialize)]
struct EntryRef<'a> {
    modules: &'a [IrModule],
    files: Vec<(&'a Path, u64)>,
    diagnostics: Vec<StoredDiagnostic>,
    shape: Option<([u8; 16], [u8; 16])>,
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
    /// Entries of workspace members or path dependencies whose files changed.
    pub stale: usize,
    /// The whole report was reused: no input of the run changed (`crate::run_cache`).
    pub report_reused: bool,
    /// Functions (dependencies', and members' the edits did not reach) whose resolution was
    /// reused from an earlier run (`crate::resolve_memo`).
    pub resolutions_reused: usize,
    /// Reused resolutions that differ from a fresh one: checked only with
    /// `NONBLOCK_VERIFY_RESOLVE_MEMO`, and always 0 unless the memo's key misses something.
    pub memo_mismatches: usize,
}

/// The cache key of a unit lowered knowing its dependencies' exported macros (`externs`, the
/// fingerprint of [`crate::macro_rules::ExternMacros`]; empty when there are none).
pub fn key(ws: &Workspace, unit: &CrateUnit, externs: &str) -> String {
    key_for_version(ws, unit, env!("CARGO_PKG_VERSION"), externs)
}

/// A workspace member or path dependency: its entry is valid only with its inputs unchanged.
pub fn is_mutable(ws: &Workspace, unit: &CrateUnit) -> bool {
    ws.packages[unit.package].source.is_mutable()
}

fn key_for_version(ws: &Workspace, unit: &CrateUnit, version: &str, externs: &str) -> String {
    let package = &ws.packages[unit.package];
    let mut h = Sha256::new();
    h.update(version.as_bytes());
    h.update(externs.as_bytes());
    h.update([0]);
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
    crate::rules::hex(&h.finalize()[..16])
}

/// A hash of the code that produces cached IR, so a changed lowering never reads entries written
/// by an older build of the same version. It is the whole analyzer's source fingerprint
/// (`build.rs`): lowering calls into more modules than it names (`memo`, `macro_rules`,
/// `critical`, `guard`, ..), and a list of files to hash went stale once already (a changed
/// `memo.rs` kept serving IR lowered by the previous build until `--no-cache`).
fn lowering_fingerprint() -> &'static [u8] {
    env!("NONBLOCK_SOURCE_FINGERPRINT").as_bytes()
}

fn entry_path(dir: &Path, key: &str) -> PathBuf {
    dir.join(format!("{key}.bin"))
}

/// Stands in for the externs fingerprint in the key of a unit's exported macros, which no
/// dependency's macros decide (a fingerprint is hex: no collision with a lowered unit's key).
const EXPORTS_KEY: &str = "#macro_export";

/// The `#[macro_export]` macros a unit offers its dependents ([`crate::exports::scan`]), read
/// from the cache for a registry or git crate. Why: scanning reads every source file of the
/// crate to find the few that mention `macro_export`, on every run that loads anything, while
/// such a crate's sources cannot change (its package id names them): on deno's one-edit run the
/// scans of its 783 units were two fifths of the parse stage. A workspace member or path
/// dependency is scanned each time (its files may have changed). Entries are
/// `magic ‖ sha256(payload) ‖ postcard(exports)`; a bad one is scanned again and rewritten.
pub fn unit_exports(ws: &Workspace, unit: usize) -> Vec<(String, String)> {
    let u = &ws.units[unit];
    let scan = || crate::exports::scan(&u.root, &u.cfg);
    let Some(dir) = ws.cache_dir.as_deref() else {
        return scan();
    };
    if is_mutable(ws, u) {
        return scan();
    }
    let path = dir.join(format!("exports-{}.bin", key(ws, u, EXPORTS_KEY)));
    let cached = std::fs::read(&path)
        .ok()
        .and_then(|bytes| unframed(&bytes).and_then(|payload| postcard::from_bytes(payload).ok()));
    if let Some(exports) = cached {
        return exports;
    }
    let exports = scan();
    if let Ok(payload) = postcard::to_stdvec(&exports) {
        write_atomically(&path, &framed(&payload));
    }
    exports
}

/// `magic ‖ sha256(payload) ‖ payload`, the form of every entry of this cache.
pub(crate) fn framed(payload: &[u8]) -> Vec<u8> {
    let mut bytes = Vec::with_capacity(payload.len() + MAGIC.len() + 32);
    bytes.extend_from_slice(MAGIC);
    bytes.extend_from_slice(&Sha256::digest(payload));
    bytes.extend_from_slice(payload);
    bytes
}

/// The payload of a [`framed`] entry; `None` when it is short, of another magic or its checksum
/// does not match.
pub(crate) fn unframed(bytes: &[u8]) -> Option<&[u8]> {
    if bytes.len() < MAGIC.len() + 32 || &bytes[..MAGIC.len()] != MAGIC {
        return None;
    }
    let (sum, payload) = bytes[MAGIC.len()..].split_at(32);
    (Sha256::digest(payload).as_slice() == sum).then_some(payload)
}

/// What reading an entry found.
pub enum Lookup {
    Hit(Box<UnitLoad>),
    Miss,
    /// A mutable unit's entry whose inputs changed.
    Stale,
    /// Present but short, with a bad checksum, or undecodable: rebuilt, never trusted.
    Corrupt,
}

/// Reads the entry of `key`; `mutable` entries must hold inputs, all unchanged.
pub fn read(dir: &Path, key: &str, unit: usize, mutable: bool) -> Lookup {
    let Ok(bytes) = std::fs::read(entry_path(dir, key)) else {
        return Lookup::Miss;
    };
    let Some(payload) = unframed(&bytes) else {
        return Lookup::Corrupt;
    };
    let Ok((inputs, rest)) = postcard::take_from_bytes::<Option<Vec<Input>>>(payload) else {
        return Lookup::Corrupt;
    };
    if mutable && !inputs.as_deref().is_some_and(crate::inputs::all_unchanged) {
        return Lookup::Stale;
    }
    // Field by field (postcard writes a struct as its fields in order), to know where the
    // modules' bytes end: every name of the IR is in them, and only there (the name search of
    // `member_changes`; the file paths after them would only add false matches).
    let Ok((modules, after)) = postcard::take_from_bytes::<Vec<IrModule>>(rest) else {
        return Lookup::Corrupt;
    };
    let modules_bytes = &rest[..rest.len() - after.len()];
    let Ok(tail) = postcard::from_bytes::<EntryTail>(after) else {
        return Lookup::Corrupt;
    };
    Lookup::Hit(Box::new(UnitLoad {
        loaded: LoadedUnit { unit, modules },
        files: tail
            .files
            .into_iter()
            .map(|(path, bytes)| SourceFile { path, unit, bytes })
            .collect(),
        diagnostics: tail.diagnostics.into_iter().map(restored).collect(),
        inputs,
        // The entry's bytes hold every name of the IR: the haystack of the name search.
        shape: tail.shape.map(|digests| {
            crate::member_changes::MemberShape::stored(digests, modules_bytes.to_vec())
        }),
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
        shape: load.shape.as_ref().map(|s| s.digests()),
    };
    let Ok(mut payload) = postcard::to_stdvec(&load.inputs) else {
        return;
    };
    let Ok(payload) = postcard::to_extend(&entry, std::mem::take(&mut payload)) else {
        return;
    };
    write_atomically(&entry_path(dir, key), &framed(&payload));
}

/// Writes `bytes` to `path` through a temporary file and a rename (creating the directory), so a
/// concurrent run never reads a partial file. Failures are ignored: every cache is an
/// optimisation, and a missing entry is a miss.
pub fn write_atomically(path: &Path, bytes: &[u8]) {
    let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
        return;
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(
        "{}.{}.tmp",
        name.to_string_lossy(),
        std::process::id()
    ));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// Removes all but the `keep` most recently written files of `dir` whose names start with
/// `prefix` (whole-run entries: reports, `cargo metadata` outputs). Their keys change with every
/// new build of the tool or option set, and each can be megabytes (deno's report: 17 MiB), so
/// without this every upgrade would leave one behind for good. Failures are ignored.
pub fn keep_newest(dir: &Path, prefix: &str, keep: usize) {
    for old in newest_first(dir, prefix).into_iter().skip(keep) {
        let _ = std::fs::remove_file(old);
    }
}

/// The files of `dir` whose names start with `prefix`, most recently written first (an
/// unreadable directory has none).
pub fn newest_first(dir: &Path, prefix: &str) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = entries
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    found.sort_by(|a, b| b.cmp(a));
    found.into_iter().map(|(_, path)| path).collect()
}

/// Loads a unit through the cache when it has a key and a cache directory is set.
pub fn load_unit(
    ws: &Workspace,
    unit: usize,
    externs: std::sync::Arc<crate::macro_rules::ExternMacros>,
    stats: &std::sync::Mutex<CacheStats>,
) -> UnitLoad {
    let Some(dir) = ws.cache_dir.as_deref() else {
        return crate::load::load_unit_with(ws, unit, externs);
    };
    let key = key(ws, &ws.units[unit], &externs.fingerprint);
    let mutable = is_mutable(ws, &ws.units[unit]);
    match read(dir, &key, unit, mutable) {
        Lookup::Hit(hit) => {
            stats.lock().expect("cache stats lock").hits += 1;
            return *hit;
        }
        Lookup::Miss => stats.lock().expect("cache stats lock").misses += 1,
        Lookup::Stale => stats.lock().expect("cache stats lock").stale += 1,
        Lookup::Corrupt => stats.lock().expect("cache stats lock").rejected += 1,
    }
    let mut fresh = crate::load::load_unit_with(ws, unit, externs);
    if mutable && fresh.inputs.is_none() {
        // Nothing to check a later run against: never reuse this unit's old entry either.
        let _ = std::fs::remove_file(entry_path(dir, &key));
    } else {
        if mutable {
            let shape = crate::member_changes::MemberShape::of(&fresh.loaded.modules);
            fresh.shape = Some(shape);
        }
        write(dir, &key, &fresh);
    }
    fresh
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::discover::SourceKind;
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
    fn exported_macros_are_scanned_once_for_immutable_crates_only() {
        let lib = "#[macro_export]\nmacro_rules! read_it { () => { std::fs::read(\"x\") }; }\n";
        let changed = "#[macro_export]\nmacro_rules! other { () => {}; }\n";
        let (ws, _scratch) = scratch_workspace("cache-exports", lib, SourceKind::Registry, true);
        let first = unit_exports(&ws, 0);
        assert_eq!(first.len(), 1, "{first:?}");
        assert_eq!(first[0].0, "read_it");
        // A registry crate's sources cannot change: the second run reads the scan back (the
        // file rewritten here behind the cache's back proves it was not read again).
        std::fs::write(&ws.units[0].root, changed).unwrap();
        assert_eq!(unit_exports(&ws, 0), first);
        // A damaged entry is not trusted: the crate is scanned again (and the entry rewritten).
        let dir = ws.cache_dir.clone().unwrap();
        let entry = crate::testutil::cache_file(&dir, |n| n.starts_with("exports-")).unwrap();
        let mut damaged = std::fs::read(&entry).unwrap();
        let last = damaged.len() - 1;
        damaged[last] ^= 0xff;
        std::fs::write(&entry, &damaged).unwrap();
        assert_eq!(unit_exports(&ws, 0)[0].0, "other");
        assert_eq!(unit_exports(&ws, 0)[0].0, "other");
        // A path dependency is scanned on every run.
        let (ws, _scratch) = scratch_workspace("cache-exports-path", lib, SourceKind::Path, true);
        assert_eq!(unit_exports(&ws, 0), first);
        std::fs::write(&ws.units[0].root, changed).unwrap();
        assert_eq!(unit_exports(&ws, 0)[0].0, "other");
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
    fn workspace_and_path_crates_are_reused_only_while_their_files_are_unchanged() {
        for source in [SourceKind::Path, SourceKind::Workspace] {
            let lib = "mod a;\nmod gone;\npub async fn r() {\n a::f();\n}\n";
            let (ws, scratch) = scratch_workspace("cache-path", lib, source, true);
            let dir = &scratch.0;
            std::fs::create_dir_all(dir.join("src/a")).unwrap();
            std::fs::write(dir.join("src/a/mod.rs"), "pub fn f() {}\n").unwrap();
            let cold = analyze_workspace_of(&ws);
            assert_eq!((cold.cache.misses, cold.findings.len()), (1, 0));
            let warm = analyze_workspace_of(&ws);
            assert_eq!((warm.cache.hits, warm.cache.stale), (1, 0), "{source:?}");
            assert_eq!(
                cold.without_timings().to_json(),
                warm.without_timings().to_json()
            );
            // An edited module file.
            std::fs::write(
                dir.join("src/a/mod.rs"),
                "pub fn f() { std::fs::read(\"x\"); }\n",
            )
            .unwrap();
            let edited = analyze_workspace_of(&ws);
            assert_eq!((edited.cache.hits, edited.cache.stale), (0, 1));
            assert_eq!(edited.findings.len(), 1, "the edit is analysed");
            // `src/a.rs` appearing beside `src/a/mod.rs` would be an error for rustc, but the
            // missing `gone` module appearing changes what the crate is.
            assert_eq!(analyze_workspace_of(&ws).cache.hits, 1);
            std::fs::write(dir.join("src/gone.rs"), "pub fn g() {}\n").unwrap();
            let appeared = analyze_workspace_of(&ws);
            assert_eq!(appeared.cache.stale, 1, "a module file that appeared");
            assert!(appeared.errors.is_empty(), "{:?}", appeared.errors);
        }
    }

    #[test]
    fn a_workspace_crate_with_an_unreadable_module_is_never_cached() {
        let lib = "mod bad;\npub async fn r() {}\n";
        let (ws, scratch) = scratch_workspace("cache-unreadable", lib, SourceKind::Workspace, true);
        let huge = vec![b'/'; crate::load::MAX_FILE_BYTES as usize + 1];
        std::fs::write(scratch.0.join("src/bad.rs"), huge).unwrap();
        analyze_workspace_of(&ws);
        let warm = analyze_workspace_of(&ws);
        assert_eq!((warm.cache.hits, warm.cache.misses), (0, 1));
        assert!(warm.errors.iter().any(|e| e.kind == "size"));
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
        let base = key(&ws, unit, "");
        let mut featured = unit.clone();
        featured.cfg = unit.cfg.with_features(["extra"]);
        assert_ne!(key(&ws, &featured, ""), base);
        let mut windows = unit.clone();
        windows.cfg.names.remove("unix");
        assert_ne!(key(&ws, &windows, ""), base);
        assert_ne!(key_for_version(&ws, unit, "999.0.0", ""), base);
        assert_ne!(
            key(&ws, unit, "0123"),
            base,
            "a dependency's exported macros changed"
        );
        let opaque = crate::macro_rules::ExternMacros::new(Vec::new()).for_opaque_crate();
        assert_ne!(
            key(&ws, unit, &opaque.fingerprint),
            base,
            "an opaque crate's unit is lowered without its macros' arms"
        );
        assert_eq!(key(&ws, unit, ""), base, "keys are stable");
    }

    #[test]
    fn only_the_newest_whole_run_entries_are_kept() {
        let dir = std::env::temp_dir().join(format!("nonblock-keep-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        for (i, name) in ["report-a.json", "report-b.json", "report-c.json"]
            .iter()
            .enumerate()
        {
            std::fs::write(dir.join(name), "").unwrap();
            let t =
                std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1000 + i as u64);
            std::fs::File::options()
                .write(true)
                .open(dir.join(name))
                .unwrap()
                .set_modified(t)
                .unwrap();
        }
        std::fs::write(dir.join("unit.bin"), "").unwrap();
        keep_newest(&dir, "report-", 2);
        let mut left: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left, ["report-b.json", "report-c.json", "unit.bin"]);
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn corrupted_or_truncated_entries_are_rebuilt_not_trusted() {
        let (ws, _scratch) = scratch_workspace("cache-corrupt", LIB, SourceKind::Registry, true);
        let reference = analyze_workspace_of(&ws).without_timings().to_json();
        let dir = ws.cache_dir.clone().unwrap();
        // The unit's lowered IR (its exported macros have an entry of their own).
        let entry = crate::testutil::cache_file(&dir, |n| !n.starts_with("exports-")).unwrap();
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
