//! CI-sized robustness corpus (issue 9; the full run is `scripts/corpus.sh`): a handful of crates
//! from the dependency graph of `examples/demo-service` are each analysed *as if they were the
//! analysed root*, with the method of `scripts/corpus.py`: the package's registry source is copied
//! to a scratch directory, its manifest made standalone (an empty `[workspace]`; no dev-dependencies,
//! bench/test/example targets or patches; optional dependencies and features limited to what the
//! demo-service resolve had, and `default` set to exactly the features it had there; a proc-macro
//! library made a plain one, since the tool skips proc-macro crates by design), the demo service's
//! `Cargo.lock` seeded, and the analysis run `--offline`.
//!
//! Each must produce a report with files analysed, no internal error (a caught panic) and no panic
//! anywhere, within a hang guard.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc;
use std::time::Duration;

use nonblock_analyzer::{analyze, Options, RuleDb};
use nonblock_tests::repo_root;

/// The crates, with why each is here. All are in the demo service's normal dependency graph.
const CRATES: &[(&str, &str)] = &[
    ("serde_derive", "proc-macro crate, syn/quote-heavy"),
    ("tokio-macros", "proc-macro crate"),
    (
        "pin-project-lite",
        "macro-heavy: the whole API is macro_rules!",
    ),
    (
        "serde_json",
        "macro-heavy (json!, internal macro_rules), cfg-heavy",
    ),
    (
        "libc",
        "FFI-heavy, no_std, macro-generated items (s!, f!), per-target modules",
    ),
    ("memchr", "no_std, arch-specific SIMD modules"),
    ("dotenvy", "plain std crate with a blocking API"),
];

/// Hang guard only: a crate taking this long is stuck, not slow.
const HANG_GUARD: Duration = Duration::from_secs(180);

static PANICS: AtomicUsize = AtomicUsize::new(0);

struct Package {
    name: String,
    version: String,
    dir: PathBuf,
    /// Package names this package depends on in the demo service's resolve.
    resolved: BTreeSet<String>,
    /// Features it had there.
    features: Vec<String>,
}

fn demo_packages() -> BTreeMap<String, Package> {
    let manifest = repo_root().join("examples/demo-service/Cargo.toml");
    // Not offline: on a fresh machine this downloads the sources, as the other suites do.
    let out = Command::new(env!("CARGO"))
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(&manifest)
        .output()
        .expect("cargo metadata runs");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let meta: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: BTreeMap<&str, &str> = meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| (p["id"].as_str().unwrap(), p["name"].as_str().unwrap()))
        .collect();
    let nodes: BTreeMap<&str, &serde_json::Value> = meta["resolve"]["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| (n["id"].as_str().unwrap(), n))
        .collect();
    let mut out = BTreeMap::new();
    for p in meta["packages"].as_array().unwrap() {
        let id = p["id"].as_str().unwrap();
        let node = nodes[id];
        let pkg = Package {
            name: p["name"].as_str().unwrap().to_string(),
            version: p["version"].as_str().unwrap().to_string(),
            dir: Path::new(p["manifest_path"].as_str().unwrap())
                .parent()
                .unwrap()
                .to_path_buf(),
            resolved: node["deps"]
                .as_array()
                .unwrap()
                .iter()
                .map(|d| names[d["pkg"].as_str().unwrap()].to_string())
                .collect(),
            features: node["features"]
                .as_array()
                .map(|f| f.iter().map(|x| x.as_str().unwrap().to_string()).collect())
                .unwrap_or_default(),
        };
        out.insert(pkg.name.clone(), pkg);
    }
    out
}

const DEP_TABLES: &[&str] = &["dependencies", "build-dependencies", "build_dependencies"];

fn dep_tables(doc: &mut toml::Table) -> Vec<&mut toml::Table> {
    let mut out = Vec::new();
    let (top, target): (Vec<_>, Vec<_>) = doc.iter_mut().partition(|(k, _)| k.as_str() != "target");
    for (k, v) in top {
        if DEP_TABLES.contains(&k.as_str()) {
            if let Some(t) = v.as_table_mut() {
                out.push(t);
            }
        }
    }
    for (_, v) in target {
        for (_, cfg) in v.as_table_mut().into_iter().flat_map(|t| t.iter_mut()) {
            for (k, v) in cfg.as_table_mut().into_iter().flat_map(|t| t.iter_mut()) {
                if DEP_TABLES.contains(&k.as_str()) {
                    if let Some(t) = v.as_table_mut() {
                        out.push(t);
                    }
                }
            }
        }
    }
    out
}

/// `scripts/corpus.py`'s `standalone_manifest`, for the manifests of the crates above.
fn standalone_manifest(text: &str, pkg: &Package) -> String {
    let mut doc: toml::Table = text.parse().expect("registry manifest parses");
    for key in [
        "dev-dependencies",
        "dev_dependencies",
        "bench",
        "test",
        "example",
        "patch",
        "replace",
        "workspace",
    ] {
        doc.remove(key);
    }
    if let Some(p) = doc.get_mut("package").and_then(|p| p.as_table_mut()) {
        p.remove("workspace");
    }
    if let Some(t) = doc.get_mut("target").and_then(|t| t.as_table_mut()) {
        for (_, cfg) in t.iter_mut() {
            if let Some(cfg) = cfg.as_table_mut() {
                cfg.remove("dev-dependencies");
                cfg.remove("dev_dependencies");
            }
        }
    }
    // Optional dependencies the demo resolve did not have were never downloaded.
    for deps in dep_tables(&mut doc) {
        deps.retain(|key, spec| {
            let optional = spec.get("optional").and_then(|o| o.as_bool()) == Some(true);
            let package = spec.get("package").and_then(|p| p.as_str()).unwrap_or(key);
            !optional || pkg.resolved.contains(package)
        });
    }
    let left: BTreeSet<String> = dep_tables(&mut doc)
        .into_iter()
        .flat_map(|t| t.keys().cloned().collect::<Vec<_>>())
        .collect();
    // Only the features the demo resolve had (cargo resolves a root with all of them), and
    // `default` exactly those: the crate is analysed with the cfg it has in the demo.
    let features = doc
        .entry("features")
        .or_insert_with(|| toml::Value::Table(toml::Table::new()))
        .as_table_mut()
        .expect("[features] is a table");
    features.retain(|f, _| f == "default" || pkg.features.iter().any(|e| e == f));
    let kept: BTreeSet<String> = features.keys().cloned().collect();
    let live = |entry: &str| match entry.strip_prefix("dep:") {
        Some(dep) => left.contains(dep),
        None if entry.contains('/') => {
            left.contains(entry.split('/').next().unwrap().trim_end_matches('?'))
        }
        None => kept.contains(entry) || left.contains(entry),
    };
    for (_, list) in features.iter_mut() {
        if let Some(list) = list.as_array_mut() {
            list.retain(|e| e.as_str().is_some_and(live));
        }
    }
    let default: Vec<toml::Value> = pkg
        .features
        .iter()
        .filter(|f| *f != "default" && (kept.contains(*f) || left.contains(*f)))
        .map(|f| toml::Value::String(f.clone()))
        .collect();
    features.insert("default".into(), toml::Value::Array(default));
    // The tool skips proc-macro crates by design; as a plain lib their source is analysed.
    if let Some(lib) = doc.get_mut("lib").and_then(|l| l.as_table_mut()) {
        for key in ["proc-macro", "proc_macro"] {
            if lib.contains_key(key) {
                lib.insert(key.into(), toml::Value::Boolean(false));
            }
        }
    }
    doc.insert("workspace".into(), toml::Value::Table(toml::Table::new()));
    toml::to_string(&doc).expect("manifest serialises")
}

fn copy_dir(src: &Path, dst: &Path) {
    for entry in walkdir::WalkDir::new(src) {
        let entry = entry.unwrap();
        let rel = entry.path().strip_prefix(src).unwrap();
        if rel
            .components()
            .next()
            .is_some_and(|c| c.as_os_str() == "target")
        {
            continue;
        }
        let to = dst.join(rel);
        if entry.file_type().is_dir() {
            std::fs::create_dir_all(&to).unwrap();
        } else if entry.file_type().is_file() {
            std::fs::copy(entry.path(), &to).unwrap();
        }
    }
}

#[test]
fn demo_dependency_crates_analysed_as_roots_without_panic_or_internal_error() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        PANICS.fetch_add(1, Ordering::SeqCst);
        previous(info);
    }));

    let packages = demo_packages();
    let lock = repo_root().join("examples/demo-service/Cargo.lock");
    let scratch = std::env::temp_dir().join(format!("nonblock-corpus-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    let mut failures = Vec::new();
    for (name, why) in CRATES {
        let pkg = packages
            .get(*name)
            .unwrap_or_else(|| panic!("{name} is no longer in the demo service's graph"));
        let copy = scratch.join(format!("{}-{}", pkg.name, pkg.version));
        copy_dir(&pkg.dir, &copy);
        let text = std::fs::read_to_string(pkg.dir.join("Cargo.toml")).unwrap();
        std::fs::write(copy.join("Cargo.toml"), standalone_manifest(&text, pkg)).unwrap();
        std::fs::copy(&lock, copy.join("Cargo.lock")).unwrap();

        let opts = Options {
            manifest_path: Some(copy.join("Cargo.toml")),
            offline: true,
            no_cache: true,
            ..Options::default()
        };
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name(format!("corpus-{name}"))
            .stack_size(64 << 20)
            .spawn(move || {
                let result = std::panic::catch_unwind(|| {
                    analyze(&opts, &RuleDb::builtin()).map(|r| r.to_json())
                });
                let _ = tx.send(result);
            })
            .unwrap();
        let json = match rx.recv_timeout(HANG_GUARD) {
            Err(_) => {
                failures.push(format!("{name}: no report after {HANG_GUARD:?} (hang)"));
                continue;
            }
            Ok(Err(_)) => {
                failures.push(format!("{name}: the analysis panicked"));
                continue;
            }
            Ok(Ok(Err(e))) => {
                failures.push(format!("{name}: fatal error: {e}"));
                continue;
            }
            Ok(Ok(Ok(json))) => json,
        };
        let report: serde_json::Value = serde_json::from_str(&json).unwrap();
        let internal: Vec<_> = report["errors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "internal")
            .collect();
        let counted = report["stats"]["internal_errors"].as_u64().unwrap_or(0);
        if !internal.is_empty() || counted > 0 {
            failures.push(format!("{name}: internal errors: {internal:?}"));
        }
        // The crate itself was analysed, not skipped (proc-macro crates are, unless made libs).
        let skipped: Vec<_> = report["errors"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "skipped" && e["package"] == *name)
            .collect();
        if !skipped.is_empty() {
            failures.push(format!("{name}: the root crate was skipped: {skipped:?}"));
        }
        let files = report["stats"]["files"].as_u64().unwrap_or(0);
        if files == 0 {
            failures.push(format!("{name} ({why}): no file analysed"));
        }
        eprintln!(
            "corpus: {name} {} ({why}): {files} files, {} diagnostics",
            pkg.version,
            report["errors"].as_array().unwrap().len()
        );
    }
    std::fs::remove_dir_all(&scratch).ok();
    assert_eq!(PANICS.load(Ordering::SeqCst), 0, "a panic was printed");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
