//! `#[cfg(..)]` and `#[cfg_attr(..)]` evaluation against one crate's resolved features and the
//! target's cfg values.
//!
//! The target's values come from `rustc --print cfg` (running the compiler driver to print its
//! configuration executes nothing from the scanned repository). `test` is always off: code under
//! `#[cfg(test)]` never runs on a production runtime.

use std::collections::BTreeSet;
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

    /// The target's cfg values, or a conservative Linux x86_64 set when rustc cannot be asked.
    pub fn for_target(target: Option<&str>) -> Result<CfgSet, String> {
        let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_string());
        let mut cmd = Command::new(rustc);
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
                String::from_utf8_lossy(&out.stderr).trim()
            ));
        }
        let mut set = CfgSet::parse_rustc_output(&String::from_utf8_lossy(&out.stdout));
        // `rustc --print cfg` without `-C debug-assertions` still reports it on a dev profile;
        // either way `test` is off by definition.
        set.names.remove("test");
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
}
