//! What the standard library's functions, methods and public fields yield, read from the data
//! table `rules/std-types.toml` (its header documents the notation and the lookup order).
//!
//! std's source is not analysed, so without these facts a chain through std
//! (`env::var_os("X").map(PathBuf::from)`, `output.status.success()`) loses its type at the first
//! std call and every later method call is unresolved. Keeping the facts as data, beside the
//! rules, lets a reviewer check each against std's documentation and a user see what the
//! resolver assumes; the code here only parses the table once and instantiates its types.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde::Deserialize;

use crate::ty::Ty;

/// The embedded table. `build.rs` fingerprints it with the analyzer's sources, so a cached
/// report is never reused by a build whose table differs.
pub const STD_TYPES_FILE: &str = include_str!("../../../rules/std-types.toml");

/// A type of the table, with the receiver's type and type arguments still to fill in.
#[derive(Clone, Debug, PartialEq)]
enum Template {
    /// `Self`: the receiver's type.
    This,
    /// `T0`, `T1`: the receiver's type arguments.
    Arg(usize),
    Str,
    Ref(Box<Template>),
    Slice(Box<Template>),
    Tuple(Vec<Template>),
    Adt(String, Vec<Template>),
    /// `_`: a type the caller's context decides (`try_into`'s target), unknown here.
    Infer,
    /// `Owned<T>`: `T` without its references (`Option<&T>::cloned()` is `Option<T>`).
    Owned(Box<Template>),
}

/// One type's methods: exact names, then `prefix*` names in the table's order.
#[derive(Debug, Default)]
struct Methods {
    exact: BTreeMap<String, Template>,
    prefixes: Vec<(String, Template)>,
}

impl Methods {
    fn get(&self, method: &str) -> Option<&Template> {
        self.exact.get(method).or_else(|| {
            self.prefixes
                .iter()
                .find(|(p, _)| method.starts_with(p.as_str()))
                .map(|(_, t)| t)
        })
    }
}

#[derive(Debug, Default)]
pub struct StdTypes {
    functions: BTreeMap<String, Template>,
    methods: BTreeMap<String, Methods>,
    fields: BTreeMap<String, BTreeMap<String, Template>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    functions: BTreeMap<String, String>,
    #[serde(default)]
    methods: BTreeMap<String, toml::Table>,
    #[serde(default)]
    fields: BTreeMap<String, BTreeMap<String, String>>,
}

/// The embedded table, parsed once.
pub fn table() -> &'static StdTypes {
    static TABLE: OnceLock<StdTypes> = OnceLock::new();
    TABLE.get_or_init(|| StdTypes::parse(STD_TYPES_FILE).expect("rules/std-types.toml is valid"))
}

impl StdTypes {
    pub fn parse(text: &str) -> Result<StdTypes, String> {
        let file: File = toml::from_str(text).map_err(|e| e.to_string())?;
        let ty =
            |where_: &str, s: &str| parse_template(s).map_err(|e| format!("{where_}: `{s}`: {e}"));
        let mut out = StdTypes::default();
        for (name, t) in &file.functions {
            out.functions.insert(name.clone(), ty(name, t)?);
        }
        for (owner, entries) in &file.methods {
            let mut m = Methods::default();
            for (name, value) in entries {
                let toml::Value::String(t) = value else {
                    return Err(format!("{owner}::{name}: a type must be a string"));
                };
                let t = ty(&format!("{owner}::{name}"), t)?;
                match name.strip_suffix('*') {
                    Some(prefix) => m.prefixes.push((prefix.to_string(), t)),
                    None => {
                        m.exact.insert(name.clone(), t);
                    }
                }
            }
            // Longer prefixes first, so a more specific one wins whatever the table's order.
            m.prefixes
                .sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
            out.methods.insert(owner.clone(), m);
        }
        for (owner, entries) in &file.fields {
            let mut f = BTreeMap::new();
            for (name, t) in entries {
                f.insert(name.clone(), ty(&format!("{owner}.{name}"), t)?);
            }
            out.fields.insert(owner.clone(), f);
        }
        Ok(out)
    }

    /// What the std function or method `callee` (`std::env::var`, `std::vec::Vec::pop`,
    /// `str::trim`, `u32::checked_add`) returns on a receiver of type `recv` (`None`: called
    /// as a path, `Vec::pop(&mut v)`, or a free function). `None` when the table does not say.
    pub fn returns(&self, callee: &str, recv: Option<&Ty>) -> Option<Ty> {
        if let Some(t) = self.functions.get(callee) {
            return Some(instantiate(t, recv, None));
        }
        let (type_path, method) = callee.rsplit_once("::")?;
        if !is_std_type(type_path) {
            return None;
        }
        let mut owner = type_path.to_string();
        let mut recv = recv.cloned();
        // Auto-deref from an owned type to its borrowed form (String → str, PathBuf → Path,
        // OsString → OsStr, Vec → slice), as a method call probes them. The receiver's arguments
        // stay (a `Vec<T>`'s T is its slice's T0).
        loop {
            if let Some(t) = self.method_of(&owner, method) {
                return Some(instantiate(t, recv.as_ref(), Some(&owner)));
            }
            // The receiver when it is of this type, else the type the path names.
            let this = recv
                .as_ref()
                .map(|r| r.peel_refs().clone())
                .filter(|r| r.std_owner_name() == Some(owner.as_str()))
                .unwrap_or_else(|| Ty::external(owner.as_str(), Vec::new()));
            let Some(target) = this.owned_deref() else {
                break;
            };
            owner = target
                .std_owner_name()
                .expect("an owned type derefs to a named one")
                .into();
            recv = recv.map(|_| target);
        }
        self.methods
            .get("*")
            .and_then(|m| m.get(method))
            .map(|t| instantiate(t, recv.as_ref(), Some(&owner)))
    }

    /// The type of the public field `field` of the std struct `t`.
    pub fn field(&self, t: &Ty, field: &str) -> Option<Ty> {
        let path = t.external_path()?;
        let fields = self
            .fields
            .get(path)
            .or_else(|| self.fields.get(short(path)))?;
        fields
            .get(field)
            .map(|f| instantiate(f, Some(t), Some(path)))
    }

    fn method_of(&self, owner: &str, method: &str) -> Option<&Template> {
        let group = if crate::ty::is_integer(owner) {
            Some("{integer}")
        } else if matches!(owner, "f32" | "f64") {
            Some("{float}")
        } else {
            None
        };
        [Some(owner), Some(short(owner)), group]
            .into_iter()
            .flatten()
            .filter_map(|o| self.methods.get(o))
            .find_map(|m| m.get(method))
    }
}

/// std's own types: `std::..` paths (core and alloc are written `std::`), `str`, slices and
/// primitives. A dependency's type of the same name is analysed from its source.
fn is_std_type(type_path: &str) -> bool {
    type_path.starts_with("std::") || crate::ty::is_builtin(type_path)
}

fn short(path: &str) -> &str {
    path.rsplit("::").next().unwrap_or(path)
}

/// `recv` with its references stripped, and its type arguments (a slice's element is its T0).
fn receiver_parts(recv: Option<&Ty>) -> (Option<Ty>, Vec<Ty>) {
    let Some(r) = recv.map(Ty::peel_refs) else {
        return (None, Vec::new());
    };
    let args = match r {
        Ty::Adt(_, args) => args.clone(),
        Ty::Slice(elem) => vec![(**elem).clone()],
        _ => Vec::new(),
    };
    (Some(r.clone()), args)
}

fn instantiate(t: &Template, recv: Option<&Ty>, owner: Option<&str>) -> Ty {
    let (this, args) = receiver_parts(recv);
    let this = this.unwrap_or_else(|| match owner {
        Some("str") => Ty::Str,
        Some(o) => Ty::external(o, Vec::new()),
        None => Ty::Unknown,
    });
    fill(t, &this, &args)
}

fn fill(t: &Template, this: &Ty, args: &[Ty]) -> Ty {
    match t {
        Template::This => this.clone(),
        Template::Arg(i) => args.get(*i).cloned().unwrap_or(Ty::Unknown),
        Template::Str => Ty::Str,
        Template::Ref(inner) => Ty::Ref(Box::new(fill(inner, this, args))),
        Template::Slice(inner) => Ty::Slice(Box::new(fill(inner, this, args))),
        Template::Tuple(elems) => Ty::Tuple(elems.iter().map(|e| fill(e, this, args)).collect()),
        Template::Adt(p, targs) => Ty::external(
            p.clone(),
            targs.iter().map(|a| fill(a, this, args)).collect(),
        ),
        Template::Infer => Ty::Unknown,
        Template::Owned(inner) => fill(inner, this, args).peel_refs().clone(),
    }
}

/// Parses one of the table's types with syn (Rust's own type grammar, so the table reads as
/// Rust).
fn parse_template(s: &str) -> Result<Template, String> {
    let t: syn::Type = syn::parse_str(s).map_err(|e| e.to_string())?;
    convert(&t)
}

fn convert(t: &syn::Type) -> Result<Template, String> {
    Ok(match t {
        syn::Type::Reference(r) => Template::Ref(Box::new(convert(&r.elem)?)),
        syn::Type::Ptr(p) => Template::Adt(crate::ty::POINTER.into(), vec![convert(&p.elem)?]),
        syn::Type::Slice(s) => Template::Slice(Box::new(convert(&s.elem)?)),
        syn::Type::Array(a) => Template::Slice(Box::new(convert(&a.elem)?)),
        syn::Type::Tuple(t) => {
            Template::Tuple(t.elems.iter().map(convert).collect::<Result<_, _>>()?)
        }
        syn::Type::Paren(p) => convert(&p.elem)?,
        syn::Type::Infer(_) => Template::Infer,
        syn::Type::Path(p) if p.qself.is_none() => {
            let names: Vec<String> = p
                .path
                .segments
                .iter()
                .map(|s| s.ident.to_string())
                .collect();
            let args = match &p
                .path
                .segments
                .last()
                .expect("a path has a segment")
                .arguments
            {
                syn::PathArguments::None => Vec::new(),
                syn::PathArguments::AngleBracketed(ab) => ab
                    .args
                    .iter()
                    .map(|a| match a {
                        syn::GenericArgument::Type(t) => convert(t),
                        other => Err(format!("unsupported argument `{}`", quote::quote!(#other))),
                    })
                    .collect::<Result<_, _>>()?,
                syn::PathArguments::Parenthesized(_) => return Err("fn sugar".into()),
            };
            match names.as_slice() {
                [one] if one == "Self" && args.is_empty() => Template::This,
                [one] if one == "str" => Template::Str,
                [one] if one == "Owned" && args.len() == 1 => {
                    Template::Owned(Box::new(args.into_iter().next().expect("one argument")))
                }
                [one] if one.len() == 2 && one.starts_with('T') && args.is_empty() => {
                    match one[1..].parse() {
                        Ok(i) => Template::Arg(i),
                        Err(_) => return Err(format!("unknown parameter `{one}`")),
                    }
                }
                [one] => {
                    let path = match one.as_str() {
                        "Cow" => "std::borrow::Cow".to_string(),
                        // The resolver's model of an iterator (`resolve::iterator_result`).
                        "Iterator" => "std::slice::Iter".to_string(),
                        _ if crate::ty::is_primitive(one) => one.clone(),
                        _ => crate::ty::prelude_path(one)
                            .map(|p| p.join("::"))
                            .ok_or_else(|| format!("`{one}` is no prelude name: write its path"))?,
                    };
                    Template::Adt(path, args)
                }
                _ => Template::Adt(names.join("::"), args),
            }
        }
        other => return Err(format!("unsupported type `{}`", quote::quote!(#other))),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ext(p: &str, args: Vec<Ty>) -> Ty {
        Ty::external(p, args)
    }

    #[test]
    fn the_embedded_table_parses() {
        let t = StdTypes::parse(STD_TYPES_FILE).unwrap();
        assert!(t.functions.len() > 40 && t.methods.len() > 30);
    }

    #[test]
    fn a_bad_entry_is_reported_with_its_name() {
        let err = StdTypes::parse("[functions]\n\"std::x\" = \"Vec<\"\n").unwrap_err();
        assert!(err.starts_with("std::x: `Vec<`"), "{err}");
        let err = StdTypes::parse("[methods.str]\nfoo = \"Thing\"\n").unwrap_err();
        assert!(err.contains("no prelude name"), "{err}");
        assert!(
            StdTypes::parse("[method.str]\n").is_err(),
            "unknown section"
        );
    }

    #[test]
    fn receiver_arguments_fill_the_template() {
        let t = table();
        let map = ext(
            "std::collections::hash_map::HashMap",
            vec![ext("std::string::String", vec![]), ext("u64", vec![])],
        );
        // Found by the type's last segment, whichever module path named it.
        assert_eq!(
            t.returns("std::collections::hash_map::HashMap::get", Some(&map)),
            Some(ext(
                "std::option::Option",
                vec![Ty::Ref(Box::new(ext("u64", vec![])))]
            ))
        );
        let v = ext("std::vec::Vec", vec![ext("u8", vec![])]);
        assert_eq!(
            t.returns("std::vec::Vec::pop", Some(&Ty::Ref(Box::new(v.clone())))),
            Some(ext("std::option::Option", vec![ext("u8", vec![])]))
        );
    }

    #[test]
    fn lookup_goes_through_deref_then_the_wildcard() {
        let t = table();
        let s = ext("std::string::String", vec![]);
        // String → str
        assert_eq!(
            t.returns("std::string::String::trim", Some(&s)),
            Some(Ty::Ref(Box::new(Ty::Str)))
        );
        // Vec<T> → [T]: the slice's element is the Vec's argument.
        let v = ext("std::vec::Vec", vec![ext("u16", vec![])]);
        assert_eq!(
            t.returns("std::vec::Vec::first", Some(&v)),
            Some(ext(
                "std::option::Option",
                vec![Ty::Ref(Box::new(ext("u16", vec![])))]
            ))
        );
        // A type-specific entry wins over the wildcard: a file's size is a u64.
        assert_eq!(
            t.returns("std::fs::Metadata::len", None),
            Some(ext("u64", vec![]))
        );
        assert_eq!(
            t.returns("std::vec::Vec::len", Some(&v)),
            Some(ext("usize", vec![]))
        );
        // Not a std type: its source answers, not this table.
        assert_eq!(t.returns("bytes::Bytes::len", None), None);
        assert_eq!(
            t.returns("bool::then", None),
            Some(ext("std::option::Option", vec![Ty::Unknown]))
        );
        assert_eq!(t.returns("char::escape_unicode", None), None);
    }

    #[test]
    fn primitive_groups_and_prefixes() {
        let t = table();
        let n = ext("u32", vec![]);
        assert_eq!(
            t.returns("u32::checked_mul", Some(&n)),
            Some(ext("std::option::Option", vec![n.clone()]))
        );
        // An exact name wins over a prefix.
        assert_eq!(
            t.returns("u32::checked_ilog2", Some(&n)),
            Some(ext("std::option::Option", vec![ext("u32", vec![])]))
        );
        assert_eq!(
            t.returns("u64::wrapping_add", None),
            Some(ext("u64", vec![]))
        );
        assert_eq!(
            t.returns("f64::floor", Some(&ext("f64", vec![]))),
            Some(ext("f64", vec![]))
        );
        assert_eq!(
            t.returns("f64::checked_add", None),
            None,
            "floats have no checked_*"
        );
    }

    #[test]
    fn free_functions_and_fields() {
        let t = table();
        assert_eq!(
            t.returns("std::env::var_os", None),
            Some(ext(
                "std::option::Option",
                vec![ext("std::ffi::OsString", vec![])]
            ))
        );
        assert_eq!(
            t.returns("std::sync::mpsc::channel", None),
            Some(Ty::Tuple(vec![
                ext("std::sync::mpsc::Sender", vec![]),
                ext("std::sync::mpsc::Receiver", vec![])
            ]))
        );
        let out = ext("std::process::Output", vec![]);
        assert_eq!(
            t.field(&out, "status"),
            Some(ext("std::process::ExitStatus", vec![]))
        );
        assert_eq!(t.field(&out, "pid"), None);
        assert_eq!(
            t.returns("std::process::ExitStatus::success", None),
            Some(ext("bool", vec![]))
        );
    }
}
