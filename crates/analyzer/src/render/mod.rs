//! Renderers: each is a function from the same [`Report`](crate::Report) to text.

pub mod cargo_messages;
pub mod github;
pub mod human;
pub mod sarif;
pub mod summary;

/// The output formats of the CLI (`--format`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Human,
    Json,
    Sarif,
    Github,
    /// Markdown for `$GITHUB_STEP_SUMMARY`: totals, counts per rule, the top findings.
    Summary,
}

/// `1 finding`, `3 findings`.
pub(crate) fn plural(n: usize, one: &str, many: &str) -> String {
    if n == 1 {
        format!("{n} {one}")
    } else {
        format!("{n} {many}")
    }
}

/// `1 async caller`, `3 async callers`: how `reached_from_count` reads.
pub fn async_callers(count: usize) -> String {
    plural(count, "async caller", "async callers")
}

/// `reached from 2 async callers: `a::main` (src/main.rs:20), `a::job` (src/job.rs:7)`, with
/// `, and N more` past the listed ones: the note of the human and cargo-message renderings.
pub(crate) fn reached_from_note(f: &crate::report::Finding) -> String {
    let listed: Vec<String> = f
        .reached_from
        .iter()
        .map(|r| format!("`{}` ({}:{})", r.function, r.file, r.line))
        .collect();
    let mut note = format!(
        "reached from {}: {}",
        async_callers(f.reached_from_count),
        listed.join(", ")
    );
    if f.reached_from_count > listed.len() {
        note.push_str(&format!(
            ", and {} more",
            f.reached_from_count - listed.len()
        ));
    }
    note
}

/// Reads the source text of a reported file (workspace-relative or absolute path), for snippets.
pub trait SourceProvider {
    fn source(&self, file: &str) -> Option<String>;
}

/// Reads files from disk, resolving workspace-relative paths against the workspace root.
pub struct DiskSources {
    pub workspace_root: std::path::PathBuf,
}

impl SourceProvider for DiskSources {
    fn source(&self, file: &str) -> Option<String> {
        let p = std::path::Path::new(file);
        let full = if p.is_absolute() {
            p.to_path_buf()
        } else {
            self.workspace_root.join(p)
        };
        std::fs::read_to_string(full).ok()
    }
}
