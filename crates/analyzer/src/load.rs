//! Stages 1b–2, *load and parse*: follow `mod` items from each crate root to its files, parse each
//! file once with syn, and lower it to IR on the same thread (syn trees are `!Send`).
//!
//! Module files are found as rustc finds them: `x.rs` or `x/mod.rs` next to a `mod.rs`-like
//! file, under `dir/stem/` next to any other file, and `#[path]` relative to the declaring file's
//! directory. A file that cannot be read or parsed, a `mod` cycle, and a `#[path]` leading out of
//! the package become diagnostics; the rest of the crate is still analysed.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::discover::{CrateUnit, Workspace};
use crate::index::LoadedUnit;
use crate::ir::IrModule;
use crate::lower::{ItemMacros, Lowerer, ModDecl};
use crate::report::Diagnostic;

/// Files larger than this are reported and skipped: generated tables of this size hold no
/// hand-written blocking calls, and parsing them would dominate the run's memory.
pub const MAX_FILE_BYTES: u64 = 16 * 1024 * 1024;
const MAX_MODULE_DEPTH: usize = 64;

#[derive(Clone, Debug)]
pub struct SourceFile {
    pub path: PathBuf,
    pub unit: usize,
    pub bytes: u64,
}

pub struct UnitLoad {
    pub loaded: LoadedUnit,
    pub files: Vec<SourceFile>,
    pub diagnostics: Vec<Diagnostic>,
}

struct Loader<'a> {
    ws: &'a Workspace,
    unit_index: usize,
    unit: &'a CrateUnit,
    package_dir: PathBuf,
    /// Files on the current `mod` chain: loading one again is a cycle.
    stack: Vec<PathBuf>,
    /// Module paths already loaded: a second declaration (both arms of an over-approximated
    /// cfg macro) is skipped silently.
    loaded_paths: BTreeSet<Vec<String>>,
    /// `macro_rules!` seen so far in this crate, for expanding item macros (textual order).
    item_macros: ItemMacros,
    modules: Vec<IrModule>,
    files: Vec<SourceFile>,
    diagnostics: Vec<Diagnostic>,
}

/// Loads one crate unit. File ids in the result are local (0..files.len()); the caller rebases.
pub fn load_unit(ws: &Workspace, unit_index: usize) -> UnitLoad {
    let unit = &ws.units[unit_index];
    let package_dir = ws.packages[unit.package].manifest_dir.clone();
    let package_dir = package_dir.canonicalize().unwrap_or(package_dir);
    let mut loader = Loader {
        ws,
        unit_index,
        unit,
        package_dir,
        stack: Vec::new(),
        loaded_paths: BTreeSet::new(),
        item_macros: ItemMacros::default(),
        modules: Vec::new(),
        files: Vec::new(),
        diagnostics: Vec::new(),
    };
    if unit.skip {
        return UnitLoad {
            loaded: LoadedUnit {
                unit: unit_index,
                modules: Vec::new(),
            },
            files: Vec::new(),
            diagnostics: Vec::new(),
        };
    }
    let root = unit.root.clone();
    let dir = root.parent().map(Path::to_path_buf).unwrap_or_default();
    loader.load_file(&root, Vec::new(), dir, 0);
    UnitLoad {
        loaded: LoadedUnit {
            unit: unit_index,
            modules: loader.modules,
        },
        files: loader.files,
        diagnostics: loader.diagnostics,
    }
}

impl Loader<'_> {
    fn package_name(&self) -> &str {
        &self.ws.packages[self.unit.package].name
    }

    fn diag(&mut self, kind: &str, file: &Path, message: String) {
        self.diagnostics.push(Diagnostic {
            kind: kind.to_string(),
            file: Some(self.ws.display_path(file)),
            package: Some(self.package_name().to_string()),
            message,
        });
    }

    /// Loads `path` as module `module_path`; `child_dir` is where its `mod x;` files live.
    fn load_file(
        &mut self,
        path: &Path,
        module_path: Vec<String>,
        child_dir: PathBuf,
        depth: usize,
    ) {
        if depth > MAX_MODULE_DEPTH {
            self.diag(
                "module",
                path,
                "module nesting deeper than 64 levels; not followed".into(),
            );
            return;
        }
        let canonical = match path.canonicalize() {
            Ok(c) => c,
            Err(e) => {
                let what = if module_path.is_empty() {
                    "crate root"
                } else {
                    "module file"
                };
                self.diag("io", path, format!("cannot read {what}: {e}"));
                return;
            }
        };
        if !canonical.starts_with(&self.package_dir) {
            self.diag(
                "module",
                path,
                format!(
                    "module `{}` points outside its package; not followed",
                    module_path.join("::")
                ),
            );
            return;
        }
        if self.stack.contains(&canonical) {
            self.diag(
                "module",
                path,
                format!(
                    "module `{}` includes its own ancestor (a `mod` cycle); not followed",
                    module_path.join("::")
                ),
            );
            return;
        }
        if !self.loaded_paths.insert(module_path.clone()) {
            return;
        }
        let bytes = match std::fs::metadata(&canonical) {
            Ok(m) if m.len() > MAX_FILE_BYTES => {
                self.diag(
                    "size",
                    path,
                    format!(
                        "file is {} bytes, over the {} byte limit; skipped",
                        m.len(),
                        MAX_FILE_BYTES
                    ),
                );
                return;
            }
            Ok(m) => m.len(),
            Err(e) => {
                self.diag("io", path, format!("cannot read file: {e}"));
                return;
            }
        };
        let text = match std::fs::read(&canonical) {
            Ok(b) => match String::from_utf8(b) {
                Ok(t) => t,
                Err(e) => {
                    self.diag(
                        "encoding",
                        path,
                        format!(
                            "file is not valid UTF-8 (at byte {})",
                            e.utf8_error().valid_up_to()
                        ),
                    );
                    return;
                }
            },
            Err(e) => {
                self.diag("io", path, format!("cannot read file: {e}"));
                return;
            }
        };
        let file = match syn::parse_file(&text) {
            Ok(f) => f,
            Err(e) => {
                let lc = e.span().start();
                self.diag("parse", path, format!("{}:{}: {e}", lc.line, lc.column + 1));
                return;
            }
        };
        let file_id = self.files.len() as u32;
        self.files.push(SourceFile {
            path: path.to_path_buf(),
            unit: self.unit_index,
            bytes,
        });
        let file_dir = path.parent().map(Path::to_path_buf).unwrap_or_default();
        self.stack.push(canonical);
        self.lower_module(file.items, module_path, file_id, child_dir, file_dir, depth);
        self.stack.pop();
    }

    fn lower_module(
        &mut self,
        items: Vec<syn::Item>,
        module_path: Vec<String>,
        file_id: u32,
        child_dir: PathBuf,
        file_dir: PathBuf,
        depth: usize,
    ) {
        let crate_name = self.unit.crate_name.clone();
        let cfg = self.unit.cfg.clone();
        let mut module = IrModule {
            path: module_path.clone(),
            file: file_id,
            ..Default::default()
        };
        let decls =
            Lowerer::new(&cfg, &crate_name, &mut self.item_macros).lower_items(items, &mut module);
        self.modules.push(module);
        for decl in decls {
            self.load_decl(
                decl,
                &module_path,
                file_id,
                &child_dir,
                &file_dir,
                depth + 1,
            );
        }
    }

    fn load_decl(
        &mut self,
        decl: ModDecl,
        parent: &[String],
        file_id: u32,
        child_dir: &Path,
        file_dir: &Path,
        depth: usize,
    ) {
        let mut module_path = parent.to_vec();
        module_path.push(decl.name.clone());
        if depth > MAX_MODULE_DEPTH {
            return;
        }
        match decl.inline {
            Some(items) => {
                if !self.loaded_paths.insert(module_path.clone()) {
                    return;
                }
                let dir = match &decl.path_attr {
                    Some(p) => child_dir.join(p),
                    None => child_dir.join(&decl.name),
                };
                // `#[path]` inside an inline module is relative to the inline module's directory.
                self.lower_module(items, module_path, file_id, dir.clone(), dir, depth);
            }
            None => {
                let (file, dir) = match &decl.path_attr {
                    Some(p) => {
                        let f = file_dir.join(p);
                        let d = f.parent().map(Path::to_path_buf).unwrap_or_default();
                        (f, d)
                    }
                    None => {
                        // `mod r#ref;` lives in `ref.rs`.
                        let stem = decl.name.strip_prefix("r#").unwrap_or(&decl.name);
                        let flat = child_dir.join(format!("{stem}.rs"));
                        let nested = child_dir.join(stem).join("mod.rs");
                        if flat.is_file() {
                            (flat, child_dir.join(stem))
                        } else if nested.is_file() {
                            (nested, child_dir.join(stem))
                        } else {
                            let shown = self.ws.display_path(&flat);
                            let parent_file = self
                                .files
                                .get(file_id as usize)
                                .map(|f| f.path.clone())
                                .unwrap_or_default();
                            self.diag(
                                "module",
                                &parent_file,
                                format!(
                                    "module `{}` has no file (looked for {shown} and {}/mod.rs); it may be generated at build time",
                                    module_path.join("::"),
                                    self.ws.display_path(&child_dir.join(&decl.name))
                                ),
                            );
                            return;
                        }
                    }
                };
                self.load_file(&file, module_path, dir, depth);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::{analyze_files, sites};

    #[test]
    fn raw_identifier_modules_load_their_plain_file() {
        let r = analyze_files(&[
            ("src/lib.rs", "mod r#ref;\n"),
            ("src/ref.rs", "async fn a() {\n std::fs::read(\"x\");\n}\n"),
        ]);
        assert_eq!(sites(&r), [(2, "NB0101".into())]);
        assert!(r.errors.is_empty(), "{:?}", r.errors);
    }

    #[test]
    fn missing_module_files_and_parse_errors_are_diagnostics_and_the_rest_is_analysed() {
        let r = analyze_files(&[
            (
                "src/lib.rs",
                "mod gone;\nmod broken;\nasync fn a() {\n std::fs::read(\"x\");\n}\n",
            ),
            ("src/broken.rs", "fn (\n"),
        ]);
        assert_eq!(sites(&r), [(4, "NB0101".into())]);
        let kinds: Vec<&str> = r.errors.iter().map(|e| e.kind.as_str()).collect();
        assert_eq!(kinds, ["module", "parse"]);
    }
}
