//! What a cached result of *mutable* sources depends on: the files the loader read and the module
//! files it looked for and did not find.
//!
//! Registry and git sources are immutable, so their cache entries are keyed by package id alone
//! (`cache::key`). Workspace members and path dependencies change under us: an entry built from
//! them is valid only while every file it read has the same content, and every module file it
//! looked for in vain (`mod x;` with neither `x.rs` nor `x/mod.rs`, or the `x.rs` passed over for
//! `x/mod.rs`) is still absent. Contents are compared by digest, not by modification time: a
//! checkout or an editor that restores a file's old time cannot make a stale entry look fresh.
//!
//! Invariant: a load that met anything these records cannot describe (an unreadable file, a
//! symlink that does not resolve, a file over the size limit) records no inputs at all, and a
//! unit without inputs is never cached; it is loaded again on every run.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// One file (or directory listing) as it was seen.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Input {
    pub path: PathBuf,
    /// The first 16 bytes of the content's SHA-256, or `None` when the path was not a file.
    /// For a [`Input::listing`], the digest of the sorted entry names.
    pub digest: Option<[u8; 16]>,
    /// A directory's listing rather than a file's contents (a glob of workspace members:
    /// `crates/*` gains a member when a directory appears, with no manifest changing).
    #[serde(default)]
    pub listing: bool,
}

impl Input {
    /// A file read with these contents.
    pub fn read(path: &Path, contents: &[u8]) -> Input {
        Input {
            path: path.to_path_buf(),
            digest: Some(digest(contents)),
            listing: false,
        }
    }

    /// The names in a directory, or `None` as digest when it is not one.
    pub fn listing(dir: &Path) -> Input {
        Input {
            path: dir.to_path_buf(),
            digest: listing_digest(dir),
            listing: true,
        }
    }

    /// A path looked for and not found as a file.
    pub fn absent(path: &Path) -> Input {
        Input {
            path: path.to_path_buf(),
            digest: None,
            listing: false,
        }
    }

    /// The file is as it was: same contents, or still not a file.
    pub fn unchanged(&self) -> bool {
        if self.listing {
            return listing_digest(&self.path) == self.digest;
        }
        if !self.path.is_file() {
            return self.digest.is_none();
        }
        match (self.digest, std::fs::read(&self.path)) {
            (Some(d), Ok(contents)) => digest(&contents) == d,
            _ => false,
        }
    }
}

/// Every input is as it was.
pub fn all_unchanged(inputs: &[Input]) -> bool {
    inputs.iter().all(Input::unchanged)
}

fn listing_digest(dir: &Path) -> Option<[u8; 16]> {
    let mut names: Vec<_> = std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok().map(|e| e.file_name()))
        .collect();
    names.sort();
    let mut joined = Vec::new();
    for n in names {
        joined.extend_from_slice(n.as_encoded_bytes());
        joined.push(0);
    }
    Some(digest(&joined))
}

fn digest(contents: &[u8]) -> [u8; 16] {
    let full = Sha256::digest(contents);
    let mut d = [0; 16];
    d.copy_from_slice(&full[..16]);
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_input_is_unchanged_until_its_file_changes_appears_or_goes() {
        let dir = std::env::temp_dir().join(format!("nonblock-inputs-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("a.rs");
        std::fs::write(&file, "fn a() {}").unwrap();
        let read = Input::read(&file, b"fn a() {}");
        let absent = Input::absent(&dir.join("b.rs"));
        assert!(read.unchanged() && absent.unchanged());
        std::fs::write(&file, "fn a() { std::fs::read(\"x\"); }").unwrap();
        assert!(!read.unchanged(), "an edited file is a change");
        std::fs::write(&file, "fn a() {}").unwrap();
        assert!(
            read.unchanged(),
            "contents decide, not the modification time"
        );
        std::fs::write(dir.join("b.rs"), "").unwrap();
        assert!(
            !absent.unchanged(),
            "a module file that appeared is a change"
        );
        std::fs::remove_file(&file).unwrap();
        assert!(!read.unchanged(), "a removed file is a change");
        assert!(!all_unchanged(&[Input::absent(&dir.join("c.rs")), read]));
        let listing = Input::listing(&dir);
        assert!(listing.unchanged());
        std::fs::create_dir(dir.join("new-member")).unwrap();
        assert!(
            !listing.unchanged(),
            "a directory that appeared is a change"
        );
        assert!(
            Input::listing(&dir.join("none")).unchanged(),
            "still no directory"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }
}
