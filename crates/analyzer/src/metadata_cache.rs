//! `cargo metadata`'s output, kept for the next run: on a large workspace it is most of the time
//! a warm run has left (deno: 0.8 s of 0.9 s) once the report itself is reused.
//!
//! What `cargo metadata` prints depends on the command line (manifest path, features, target,
//! `--offline`/`--locked`/`--frozen`), the environment cargo reads (`CARGO_*`, `RUST*`), the
//! toolchain, and files: `Cargo.lock`, every manifest of the workspace and of path dependencies,
//! `.cargo/config[.toml]` from the directory cargo runs in up to the root and in `CARGO_HOME`,
//! and the directories that glob members (`crates/*`) expand over. The *key* hashes the first
//! three (the toolchain as `rustc -vV` prints it, which the run needs anyway for the host
//! triple); the *entry* holds the files as [`Input`]s and the output, and is used only when every
//! input is unchanged. Registry sources and the index are not inputs: with a lockfile, cargo
//! resolves nothing, and without one nothing is cached.
//!
//! Where: `<target dir>/nonblock/metadata-<key>.json`, the target dir being `CARGO_TARGET_DIR`
//! or `target/` beside `Cargo.lock`, found without cargo. An entry is written only when
//! `cargo metadata` reports that same target directory, so a project whose configuration moves
//! the target directory elsewhere is never given a `target/` it did not ask for (its runs simply
//! do not cache metadata). `--no-cache` neither reads nor writes entries.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::inputs::Input;
use crate::options::Options;

/// Bumped when the entry's layout or the choice of inputs changes.
const FORMAT: u32 = 1;

#[derive(Deserialize)]
struct Entry {
    inputs: Vec<Input>,
    /// `cargo metadata`'s stdout, as printed.
    metadata: String,
}

/// [`Entry`] as written, borrowing the output (megabytes on a large workspace).
#[derive(Serialize)]
struct EntryRef<'a> {
    inputs: &'a [Input],
    metadata: &'a str,
}

/// Where this run's entry is, if metadata can be cached for it.
pub struct Slot {
    path: PathBuf,
    target_dir: PathBuf,
    /// The directory `cargo metadata` runs in (its `.cargo/config` ancestors are inputs).
    cwd: PathBuf,
}

impl Slot {
    /// The slot of a run: `None` with `--no-cache`, or when no `Cargo.lock` is found above the
    /// directory cargo runs in (asked again after `cargo metadata`, which writes a missing one).
    pub fn new(opts: &Options, cwd: Option<&Path>, rustc_vv: &str) -> Option<Slot> {
        if opts.no_cache {
            return None;
        }
        let cwd = match cwd {
            Some(d) => std::path::absolute(d).ok()?,
            None => std::env::current_dir().ok()?,
        };
        let lock_dir = cwd.ancestors().find(|d| d.join("Cargo.lock").is_file())?;
        let target_dir = match std::env::var_os("CARGO_TARGET_DIR") {
            Some(t) => cwd.join(t),
            None => lock_dir.join("target"),
        };
        let key = key(opts, &cwd, rustc_vv);
        Some(Slot {
            path: target_dir
                .join("nonblock")
                .join(format!("metadata-{key}.json")),
            target_dir,
            cwd,
        })
    }

    /// The cached output, if every input is as it was.
    pub fn read(&self) -> Option<cargo_metadata::Metadata> {
        let text = std::fs::read(&self.path).ok()?;
        let entry: Entry = serde_json::from_slice(&text).ok()?;
        if !crate::inputs::all_unchanged(&entry.inputs) {
            return None;
        }
        cargo_metadata::MetadataCommand::parse(&entry.metadata).ok()
    }

    /// Keeps `output` (the `cargo metadata` stdout that `metadata` was parsed from) for the next
    /// run. Failures are ignored: the cache is an optimisation.
    pub fn write(&self, output: &str, metadata: &cargo_metadata::Metadata) {
        if metadata.target_directory.as_std_path() != self.target_dir {
            return;
        }
        let Some(inputs) = inputs(metadata, &self.cwd) else {
            return;
        };
        let entry = EntryRef {
            inputs: &inputs,
            metadata: output,
        };
        let Ok(bytes) = serde_json::to_vec(&entry) else {
            return;
        };
        crate::cache::write_atomically(&self.path, &bytes);
        if let Some(dir) = self.path.parent() {
            crate::cache::keep_newest(dir, "metadata-", 4);
        }
    }
}

fn key(opts: &Options, cwd: &Path, rustc_vv: &str) -> String {
    let mut h = Sha256::new();
    let mut part = |bytes: &[u8]| {
        h.update((bytes.len() as u64).to_le_bytes());
        h.update(bytes);
    };
    part(env!("CARGO_PKG_VERSION").as_bytes());
    part(&FORMAT.to_le_bytes());
    part(cwd.as_os_str().as_encoded_bytes());
    let manifest = opts
        .manifest_path
        .as_deref()
        .map(|p| std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf()));
    part(format!("{manifest:?}").as_bytes());
    part(
        format!(
            "{:?} {} {} {:?} {} {} {}",
            opts.features,
            opts.all_features,
            opts.no_default_features,
            opts.target,
            opts.offline,
            opts.locked,
            opts.frozen
        )
        .as_bytes(),
    );
    part(rustc_vv.as_bytes());
    let mut env: Vec<(String, String)> = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.to_string_lossy().into_owned())))
        .filter(|(k, _)| k.starts_with("CARGO") || k.starts_with("RUST"))
        .collect();
    env.sort();
    for (k, v) in env {
        part(k.as_bytes());
        part(v.as_bytes());
    }
    crate::rules::hex(&h.finalize()[..16])
}

/// The files `cargo metadata` read, as they are now; `None` when one cannot be read or a member
/// glob is too wide to record (`**`).
fn inputs(metadata: &cargo_metadata::Metadata, cwd: &Path) -> Option<Vec<Input>> {
    let root = metadata.workspace_root.as_std_path();
    let mut inputs = vec![file(&root.join("Cargo.lock"))?];
    for p in &metadata.packages {
        if p.source.is_none() {
            inputs.push(file(p.manifest_path.as_std_path())?);
        }
    }
    let cargo_home = std::env::var_os("CARGO_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::home_dir().map(|h| h.join(".cargo")));
    let config_dirs = cwd.ancestors().map(|d| d.join(".cargo")).chain(cargo_home);
    for dir in config_dirs {
        for name in ["config.toml", "config"] {
            let path = dir.join(name);
            inputs.push(if path.is_file() {
                file(&path)?
            } else {
                Input::absent(&path)
            });
        }
    }
    inputs.extend(member_glob_listings(root)?);
    Some(inputs)
}

fn file(path: &Path) -> Option<Input> {
    std::fs::read(path).ok().map(|c| Input::read(path, &c))
}

/// The directories a glob in `[workspace] members`/`exclude` can match in: a member appears
/// there without any manifest changing. `crates/*` lists `crates` and each directory in it (a
/// `Cargo.toml` appearing in one). `None` for `**`, which would mean every directory below.
fn member_glob_listings(root: &Path) -> Option<Vec<Input>> {
    let text = std::fs::read_to_string(root.join("Cargo.toml")).ok()?;
    let manifest: toml::Table = toml::from_str(&text).ok()?;
    let Some(workspace) = manifest.get("workspace").and_then(|w| w.as_table()) else {
        return Some(Vec::new());
    };
    let patterns = ["members", "exclude", "default-members"]
        .iter()
        .filter_map(|k| workspace.get(*k).and_then(|v| v.as_array()))
        .flatten()
        .filter_map(|v| v.as_str());
    let mut listings = Vec::new();
    for pattern in patterns {
        let segments: Vec<&str> = pattern.split('/').collect();
        let Some(first_glob) = segments.iter().position(|s| s.contains(['*', '?', '['])) else {
            continue;
        };
        if pattern.contains("**") {
            return None;
        }
        // Every directory at the glob's depth and above, from its fixed prefix down.
        let mut level = vec![root.join(segments[..first_glob].join("/"))];
        for _ in first_glob..segments.len() {
            let mut next = Vec::new();
            for dir in &level {
                listings.push(Input::listing(dir));
                if let Ok(entries) = std::fs::read_dir(dir) {
                    let mut subdirs: Vec<PathBuf> = entries
                        .filter_map(|e| e.ok().map(|e| e.path()))
                        .filter(|p| p.is_dir())
                        .collect();
                    subdirs.sort();
                    next.extend(subdirs);
                }
            }
            level = next;
        }
        listings.extend(level.iter().map(|d| Input::listing(d)));
    }
    Some(listings)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("nonblock-meta-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("crates/a")).unwrap();
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/*\"]\n",
        )
        .unwrap();
        dir
    }

    #[test]
    fn a_glob_member_directory_appearing_or_gaining_a_manifest_is_a_change() {
        let dir = scratch("glob");
        let listings = member_glob_listings(&dir).unwrap();
        assert_eq!(listings.len(), 2, "crates and crates/a: {listings:?}");
        assert!(crate::inputs::all_unchanged(&listings));
        std::fs::write(dir.join("crates/a/Cargo.toml"), "").unwrap();
        assert!(
            !crate::inputs::all_unchanged(&listings),
            "a/Cargo.toml appeared"
        );
        let listings = member_glob_listings(&dir).unwrap();
        std::fs::create_dir(dir.join("crates/b")).unwrap();
        assert!(
            !crate::inputs::all_unchanged(&listings),
            "crates/b appeared"
        );
        std::fs::write(
            dir.join("Cargo.toml"),
            "[workspace]\nmembers = [\"**/x\"]\n",
        )
        .unwrap();
        assert!(member_glob_listings(&dir).is_none(), "`**` is not recorded");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn keys_differ_by_options_toolchain_and_directory() {
        let opts = Options::default();
        let base = key(&opts, Path::new("/w"), "rustc 1.95.0");
        assert_eq!(base, key(&opts, Path::new("/w"), "rustc 1.95.0"), "stable");
        assert_ne!(base, key(&opts, Path::new("/v"), "rustc 1.95.0"));
        assert_ne!(base, key(&opts, Path::new("/w"), "rustc 1.96.0"));
        let featured = Options {
            features: vec!["x".into()],
            ..Default::default()
        };
        assert_ne!(base, key(&featured, Path::new("/w"), "rustc 1.95.0"));
        let targeted = Options {
            target: Some("aarch64-unknown-linux-gnu".into()),
            ..Default::default()
        };
        assert_ne!(base, key(&targeted, Path::new("/w"), "rustc 1.95.0"));
    }
}
