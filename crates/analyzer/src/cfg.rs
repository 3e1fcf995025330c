//! `#[cfg(..)]` and `#[cfg_attr(..)]` evaluation against one crate's resolved features and the
//! target's cfg values.
//!
//! The target's values come from `rustc --print cfg` (running the compiler driver to print its
//! configuration executes nothing from the scanned repository). `test` is always off: code under
//! `#[cfg(test)]` never runs on a production runtime; nor does `debug_assertions` code (the
//! release profile is what production runs).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use syn::punctuated::Punctuated;
use syn::{Attribute, Meta, Token};

/// The cfg values in force for one crate: target values plus `feature = ".."` entries.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct CfgSet {
    /// Name-only options (`unix`, `debug_assertions`).
    pub names: BTreeSet<String>,
    /// Key-value options (`target_os = "linux"`, `feature = "fs"`).
    pub pairs: BTreeSet<(String, String)>,
}

impl CfgSet {
    /// Parses `rustc --print cfg` output: one `name` or `key="value"` per line.
    pub fn parse_rustc_output(text: &str) -> CfgSet {
        let mut set = CfgSet::default();
        for line in text.lines().map(str::trim).filter(|l| !l.is_empty()) {
            match line.split_once('=') {
                Some((k, v)) => {
                    set.pairs
                        .insert((k.to_string(), v.trim_matches('"').to_string()));
                }
                None => {
                    set.names.insert(line.to_string());
                }
            }
        }
        set
    }

    /// The target's cfg values, asking the rustc of the toolchain that applies in `dir` (the
    /// scanned workspace's directory, so its `rust-toolchain.toml` is honoured as cargo would).
    pub fn for_target(target: Option<&str>, dir: Option<&Path>) -> Result<CfgSet, String> {
        let mut cmd = rustc_in(dir);
        cmd.args(["--print", "cfg"]);
        if let Some(t) = target {
            cmd.args(["--target", t]);
        }
        let out = cmd
            .output()
            .map_err(|e| format!("cannot run rustc --print cfg: {e}"))?;
        if !out.status.success() {
            return Err(format!(
                "rustc --print cfg failed: {}",
                tool_failure_text(&out.stderr)
            ));
        }
        let mut set = CfgSet::parse_rustc_output(&String::from_utf8_lossy(&out.stdout));
        // Production is a release build: `debug_assertions` is off there (rustc reports it
        // because its own default is the dev profile's), and `test` is off by definition. Code
        // under `#[cfg(debug_assertions)]` and in `debug_assert!` never runs in production.
        set.names.remove("test");
        set.names.remove("debug_assertions");
        Ok(set)
    }

    pub fn with_features<'a>(&self, features: impl IntoIterator<Item = &'a str>) -> CfgSet {
        let mut set = self.clone();
        for f in features {
            set.pairs.insert(("feature".to_string(), f.to_string()));
        }
        set
    }

    /// Evaluates one cfg predicate. Unknown forms are false, as rustc treats unset options.
    pub fn eval(&self, meta: &Meta) -> bool {
        match meta {
            Meta::Path(p) => p
                .get_ident()
                .is_some_and(|i| self.names.contains(&i.to_string())),
            Meta::NameValue(nv) => {
                let Some(key) = nv.path.get_ident() else {
                    return false;
                };
                let syn::Expr::Lit(syn::ExprLit {
                    lit: syn::Lit::Str(s),
                    ..
                }) = &nv.value
                else {
                    return false;
                };
                self.pairs.contains(&(key.to_string(), s.value()))
            }
            Meta::List(list) => {
                let Some(op) = list.path.get_ident().map(|i| i.to_string()) else {
                    return false;
                };
                let Ok(args) =
                    list.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated)
                else {
                    return false;
                };
                match op.as_str() {
                    "all" => args.iter().all(|m| self.eval(m)),
                    "any" => args.iter().any(|m| self.eval(m)),
                    "not" => args.len() == 1 && !self.eval(&args[0]),
                    _ => false,
                }
            }
        }
    }

    /// Expands every `#[cfg_attr(pred, a, b)]` in place (recursively), so later checks see the
    /// attributes that are really in force.
    pub fn expand_cfg_attr(&self, attrs: &mut Vec<Attribute>) {
        let mut out = Vec::with_capacity(attrs.len());
        for attr in attrs.drain(..) {
            self.expand_one(attr, &mut out, 0);
        }
        *attrs = out;
    }

    fn expand_one(&self, attr: Attribute, out: &mut Vec<Attribute>, depth: usize) {
        if depth > 16 || !attr.path().is_ident("cfg_attr") {
            out.push(attr);
            return;
        }
        let Ok(args) = attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated) else {
            return;
        };
        let mut iter = args.into_iter();
        let Some(pred) = iter.next() else { return };
        if self.eval(&pred) {
            for meta in iter {
                let inner = Attribute {
                    meta,
                    ..attr.clone()
                };
                self.expand_one(inner, out, depth + 1);
            }
        }
    }

    /// True when every `#[cfg(..)]` among `attrs` holds. Call after [`Self::expand_cfg_attr`].
    pub fn enabled(&self, attrs: &[Attribute]) -> bool {
        attrs
            .iter()
            .filter(|a| a.path().is_ident("cfg"))
            .all(|a| match a.parse_args::<Meta>() {
                Ok(m) => self.eval(&m),
                Err(_) => false,
            })
    }

    /// Expands `cfg_attr` and reports whether the item is enabled, in one step.
    pub fn keep(&self, attrs: &mut Vec<Attribute>) -> bool {
        self.expand_cfg_attr(attrs);
        self.enabled(attrs)
    }
}

/// A `rustc` command (or `$RUSTC`) run in `dir`: under rustup, the toolchain is chosen by the
/// directory's `rust-toolchain.toml`, so the scan asks the same compiler a build there would.
pub(crate) fn rustc_in(dir: Option<&Path>) -> Command {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
    let mut cmd = Command::new(rustc);
    if let Some(d) = dir {
        cmd.current_dir(d);
    }
    cmd
}

/// The reason a toolchain command gave on stderr, as the user needs it: rustup's own words
/// ("toolchain '1.93.0-x86_64-unknown-linux-gnu' is not installed" and its `help:` line) without
/// the backtrace that `RUST_BACKTRACE` appends, plus how to scan anyway.
pub(crate) fn tool_failure_text(stderr: &[u8]) -> String {
    let text = String::from_utf8_lossy(stderr);
    let reason: Vec<&str> = text
        .lines()
        .take_while(|l| !l.starts_with("Stack backtrace:"))
        .filter(|l| !l.trim().is_empty())
        .collect();
    let mut reason = reason.join("\n");
    if reason.is_empty() {
        reason = "no reason given on stderr".to_string();
    }
    if reason.contains("is not installed") && reason.contains("toolchain") {
        reason.push_str(
            "\nnote: the workspace's rust-toolchain file selects this toolchain; install it, or \
             scan with another one: RUSTUP_TOOLCHAIN=stable cargo nonblock",
        );
    }
    reason
}

#[cfg(test)]
mod tests {
    use super::*;

    fn linux() -> CfgSet {
        CfgSet::parse_rustc_output("unix\ntarget_os=\"linux\"\ndebug_assertions\n")
            .with_features(["fs"])
    }

    fn attrs(src: &str) -> Vec<Attribute> {
        let item: syn::ItemFn = syn::parse_str(&format!("{src} fn f() {{}}")).unwrap();
        item.attrs
    }

    #[test]
    fn evaluates_names_pairs_and_combinators() {
        let cfg = linux();
        assert!(cfg.enabled(&attrs("#[cfg(unix)]")));
        assert!(!cfg.enabled(&attrs("#[cfg(windows)]")));
        assert!(cfg.enabled(&attrs("#[cfg(feature = \"fs\")]")));
        assert!(!cfg.enabled(&attrs("#[cfg(feature = \"net\")]")));
        assert!(cfg.enabled(&attrs("#[cfg(all(unix, not(feature = \"net\")))]")));
        assert!(cfg.enabled(&attrs("#[cfg(any(windows, target_os = \"linux\"))]")));
        assert!(!cfg.enabled(&attrs("#[cfg(test)]")));
        assert!(!cfg.enabled(&attrs("#[cfg(all(unix, test))]")));
    }

    #[test]
    fn cfg_attr_expands_only_when_its_predicate_holds() {
        let cfg = linux();
        let mut a = attrs("#[cfg_attr(windows, cfg(any()))] #[cfg_attr(unix, path = \"x.rs\")]");
        assert!(cfg.keep(&mut a));
        assert_eq!(a.len(), 1);
        assert!(a[0].path().is_ident("path"));
        let mut b = attrs("#[cfg_attr(unix, cfg(feature = \"net\"))]");
        assert!(!cfg.keep(&mut b));
    }

    #[test]
    fn a_missing_toolchain_is_reported_in_rustups_words_without_the_backtrace() {
        let stderr = b"error: toolchain '1.93.0-x86_64-unknown-linux-gnu' is not installed\n\
            help: run `rustup toolchain install` to install it\n\n\
            Stack backtrace:\n   0: anyhow::error\n";
        let text = super::tool_failure_text(stderr);
        assert!(text.starts_with("error: toolchain '1.93.0-x86_64-unknown-linux-gnu' is not installed\nhelp: run `rustup toolchain install`"), "{text}");
        assert!(
            !text.contains("backtrace") && !text.contains("anyhow"),
            "{text}"
        );
        assert!(text.contains("RUSTUP_TOOLCHAIN=stable"), "{text}");
        assert_eq!(super::tool_failure_text(b""), "no reason given on stderr");
    }

    /// The scan sees a release build: rustc's `debug_assertions` (on by its dev default) and
    /// `test` are not in the target's set.
    #[test]
    fn the_target_set_is_a_release_build() {
        let set = CfgSet::for_target(None, None).expect("rustc --print cfg");
        assert!(
            set.names.contains("unix") || set.names.contains("windows"),
            "{set:?}"
        );
        assert!(!set.names.contains("debug_assertions"), "{set:?}");
        assert!(!set.names.contains("test"), "{set:?}");
    }
}
