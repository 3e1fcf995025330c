//! Fingerprints the analyzer's own sources (`NONBLOCK_SOURCE_FINGERPRINT`), so a cached report
//! (`src/run_cache.rs`) is never reused by a build whose analysis differs, even one with the same
//! version number (a development build, a patched install).

use std::hash::{DefaultHasher, Hash, Hasher};
use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=src");
    // The std signature table is embedded data the analysis reads like code (`src/std_types.rs`).
    println!("cargo:rerun-if-changed=../../rules/std-types.toml");
    let mut files = vec![PathBuf::from("../../rules/std-types.toml")];
    collect(Path::new("src"), &mut files);
    files.sort();
    // std's SipHash with its fixed keys: stable for one compiler, which is all a fingerprint of
    // one build needs; a collision would take a deliberate effort, not an edit.
    let mut h = DefaultHasher::new();
    for f in &files {
        f.hash(&mut h);
        std::fs::read(f)
            .expect("analyzer source is readable")
            .hash(&mut h);
    }
    println!(
        "cargo:rustc-env=NONBLOCK_SOURCE_FINGERPRINT={:016x}",
        h.finish()
    );
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("analyzer source dir is readable") {
        let path = entry.expect("analyzer source dir entry").path();
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}
