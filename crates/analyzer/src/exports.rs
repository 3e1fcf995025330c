//! Part of stage 2, *load*: the `#[macro_export]` `macro_rules!` each crate offers the crates that
//! depend on it, found before any crate is lowered.
//!
//! A crate's lowering expands its direct dependencies' exported macros
//! ([`crate::macro_rules::ExternMacros`]), so it must know them when it starts. Lowering the
//! crates in dependency order would give them for free, but it serialises the parse stage on
//! chains of crates: on vaultwarden (441 packages, 2 cores) that order took the parse from 10.7 s
//! to 14 s and peak memory from 655 MiB to 830 MiB. Instead every crate is scanned first, cheaply:
//! only its `.rs` files under the crate root's directory that mention `macro_export` are parsed,
//! and only their `macro_rules!` items (at top level and in inline modules) are kept, as text.
//!
//! An over-approximation of the module tree: a file no `mod` declares, or a module whose `mod`
//! item is cfg'd out, may still export a macro here; a definition's own `#[cfg]` and its inline
//! modules' are honoured, and for a name defined twice the last one in path order wins (files
//! sorted by path, items in order). A macro generated into `OUT_DIR` by a build script or
//! defined under a `#[path]` outside the root's directory is not found: its invocations are
//! walked arm by arm, as any unexpanded macro.

use std::path::Path;

use crate::cfg::CfgSet;

/// Tokens an exported definition may have to be offered to other crates. Larger ones are data:
/// ICU4X's baked data crates export 45 MB of `macro_rules!` text in mas' graph
/// (icu_experimental_data alone 28 MB in 64 macros), which their users expand into tables, and
/// wasmparser's `for_each_operator!` is a list of 500 operators. Held as text for every user and
/// expanded, they cost 260 MB of peak memory on mas and no call that blocks; their invocations
/// are walked arm by arm, as before.
pub const MACRO_EXPORT_TOKENS: usize = 8_000;

/// The `#[macro_export]` macros of the crate whose root file is `root`, as (name, body text), each
/// name once.
pub fn scan(root: &Path, cfg: &CfgSet) -> Vec<(String, String)> {
    let Some(dir) = root.parent() else {
        return Vec::new();
    };
    let mut files: Vec<std::path::PathBuf> = walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && e.path().extension().is_some_and(|x| x == "rs"))
        .map(|e| e.into_path())
        .collect();
    files.sort();
    let mut out: Vec<(String, String)> = Vec::new();
    for file in files {
        let Ok(text) = std::fs::read_to_string(&file) else {
            continue;
        };
        if !text.contains("macro_export") {
            continue;
        }
        // Only files with an export are parsed, and their spans are not needed afterwards.
        if let Ok(parsed) = syn::parse_file(&text) {
            if cfg.enabled(&parsed.attrs) {
                collect(&parsed.items, cfg, &mut out);
            }
        }
    }
    proc_macro2::extra::invalidate_current_thread_spans();
    let mut seen = std::collections::HashSet::new();
    let mut unique: Vec<(String, String)> = out
        .into_iter()
        .rev()
        .filter(|(name, _)| seen.insert(name.clone()))
        .collect();
    unique.reverse();
    unique
}

fn collect(items: &[syn::Item], cfg: &CfgSet, out: &mut Vec<(String, String)>) {
    for item in items {
        match item {
            syn::Item::Macro(m) if m.mac.path.is_ident("macro_rules") => {
                let exported = m.attrs.iter().any(|a| a.path().is_ident("macro_export"));
                let (Some(name), true) = (&m.ident, exported && cfg.enabled(&m.attrs)) else {
                    continue;
                };
                let size = crate::macro_rules::token_count(&m.mac.tokens, MACRO_EXPORT_TOKENS + 1);
                if size <= MACRO_EXPORT_TOKENS {
                    out.push((name.to_string(), m.mac.tokens.to_string()));
                }
            }
            syn::Item::Mod(syn::ItemMod {
                attrs,
                content: Some((_, inner)),
                ..
            }) if cfg.enabled(attrs) => collect(inner, cfg, out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exported_macros_of_every_file_are_found_once_each_and_cfg_is_honoured() {
        let dir = crate::synthetic::scratch_dir("exports-scan");
        let src = dir.join("src");
        std::fs::create_dir_all(src.join("nested")).unwrap();
        std::fs::write(src.join("lib.rs"), "mod nested;\n#[macro_export]\nmacro_rules! top { () => { 1 } }\nmacro_rules! private { () => {} }\n").unwrap();
        std::fs::write(
            src.join("nested/mod.rs"),
            "#[macro_export]\nmacro_rules! top { () => { 2 } }\n\
             #[cfg(windows)]\n#[macro_export]\nmacro_rules! only_windows { () => {} }\n\
             mod inline { #[macro_export] macro_rules! inner { ($e:expr) => { $e } } }\n",
        )
        .unwrap();
        std::fs::write(src.join("plain.rs"), "pub fn f() {}\n").unwrap();
        let mut cfg = CfgSet::default();
        cfg.names.insert("unix".into());
        let found = scan(&src.join("lib.rs"), &cfg);
        let names: Vec<&str> = found.iter().map(|(n, _)| n.as_str()).collect();
        // `top` twice: the later file in path order (src/nested/mod.rs) wins.
        assert_eq!(names, ["top", "inner"], "{found:?}");
        assert!(found[0].1.contains('2'), "{found:?}");
    }
}
