//! Types as the call resolver sees them, and what it knows of the standard library's types.
//!
//! The standard library's source is not analysed (it is not part of the dependency graph, and
//! `rust-src` may be absent), so its types are *external*: known by canonical path
//! (`core::`/`alloc::` written as `std::`). The few facts the resolver needs about them —
//! which types deref to what, which methods return `Self`, what `Mutex::lock` yields — live in
//! the small tables below, kept next to the code that uses them.

#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum TyCon {
    Local(usize),
    External(String),
}

#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum TraitRef {
    Local(usize),
    External(String),
}

#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub enum Ty {
    Adt(TyCon, Vec<Ty>),
    Ref(Box<Ty>),
    /// A generic parameter with its trait bounds, and each bound's generic arguments
    /// (`A: Parser<I, O, E>` → `[[I, O, E]]`; empty when not known), so a call of the trait's
    /// method on it has the trait's parameters bound (`a.parse(i)` returns `IResult<I, O, E>`).
    Param {
        name: String,
        bounds: Vec<TraitRef>,
        bound_args: Vec<Vec<Ty>>,
    },
    /// `dyn A + B` or `impl A + B`.
    Dyn(Vec<TraitRef>),
    Tuple(Vec<Ty>),
    Slice(Box<Ty>),
    Str,
    Unknown,
}

impl Ty {
    pub fn external(path: impl Into<String>, args: Vec<Ty>) -> Ty {
        Ty::Adt(TyCon::External(path.into()), args)
    }

    pub fn external_path(&self) -> Option<&str> {
        match self {
            Ty::Adt(TyCon::External(p), _) => Some(p),
            _ => None,
        }
    }

    pub fn type_args(&self) -> &[Ty] {
        match self {
            Ty::Adt(_, args) => args,
            _ => &[],
        }
    }

    pub fn is_unknown(&self) -> bool {
        matches!(self, Ty::Unknown)
    }

    /// Strips references.
    pub fn peel_refs(&self) -> &Ty {
        match self {
            Ty::Ref(inner) => inner.peel_refs(),
            other => other,
        }
    }

    /// `Result<T, _>` / `Option<T>` (and `io::Result<T>`-style aliases) → `T`, for `?`,
    /// `.unwrap()` and friends. Any other type is returned as is: a constructor known only
    /// by the heuristic "`T::new` returns `T`" may really return `Result<T>`.
    pub fn unwrap_result_like(self) -> Ty {
        match &self {
            Ty::Adt(TyCon::External(p), args) if is_result_like(p) => {
                args.first().cloned().unwrap_or(Ty::Unknown)
            }
            _ => self,
        }
    }

    /// The error type of a `Result` (`Err(e)` binds it): the second argument of
    /// `std::result::Result<T, E>` (local aliases are expanded to it), `std::io::Error` for
    /// `io::Result<T>`; `Unknown` for anything else, an unexpanded alias of another crate included.
    pub fn result_error(&self) -> Ty {
        match self.peel_refs() {
            Ty::Adt(TyCon::External(p), args) if p == "std::result::Result" && args.len() == 2 => {
                args[1].clone()
            }
            Ty::Adt(TyCon::External(p), _) if p == "std::io::Result" => {
                Ty::external("std::io::Error", Vec::new())
            }
            _ => Ty::Unknown,
        }
    }

    /// One step of auto-deref for external smart pointers and std's owned/borrowed pairs.
    pub fn deref_external(&self) -> Option<Ty> {
        match self {
            Ty::Ref(inner) => Some((**inner).clone()),
            Ty::Adt(TyCon::External(p), args) if DEREF_TO_ARG.contains(&p.as_str()) => {
                args.first().cloned()
            }
            _ => self.owned_deref(),
        }
    }

    /// The borrowed form std's owned types deref to (`String` → `str`, `PathBuf` → `Path`,
    /// `OsString` → `OsStr`, `Vec<T>` → `[T]`), where their methods are found.
    pub fn owned_deref(&self) -> Option<Ty> {
        let Ty::Adt(TyCon::External(p), args) = self else {
            return None;
        };
        DEREF_TO_TYPE
            .iter()
            .find(|(from, _)| from == p)
            .map(|(_, to)| match *to {
                "str" => Ty::Str,
                "[T]" => Ty::Slice(Box::new(args.first().cloned().unwrap_or(Ty::Unknown))),
                other => Ty::external(other, Vec::new()),
            })
    }

    /// The name std's methods of this type are listed under: its path for an external type,
    /// `str`, `slice` (`str::len`, `slice::first`, `std::vec::Vec::pop`).
    pub fn std_owner_name(&self) -> Option<&str> {
        match self {
            Ty::Adt(TyCon::External(p), _) => Some(p),
            Ty::Str => Some("str"),
            Ty::Slice(_) => Some("slice"),
            _ => None,
        }
    }
}

/// The primitive types other than `str` (which is [`Ty::Str`]), named as written.
pub fn is_primitive(name: &str) -> bool {
    is_number(name) || matches!(name, "bool" | "char")
}

/// The built-in types std's methods are listed under by their own name rather than a path:
/// primitives, `str`, slices and raw pointers ([`Ty::std_owner_name`], [`POINTER`]).
pub fn is_builtin(name: &str) -> bool {
    is_primitive(name) || matches!(name, "str" | "slice" | POINTER)
}

/// The primitive integer and float types.
pub(crate) fn is_number(name: &str) -> bool {
    is_integer(name) || matches!(name, "f32" | "f64")
}

pub(crate) fn is_integer(name: &str) -> bool {
    matches!(
        name,
        "u8" | "u16"
            | "u32"
            | "u64"
            | "u128"
            | "usize"
            | "i8"
            | "i16"
            | "i32"
            | "i64"
            | "i128"
            | "isize"
    )
}

fn is_result_like(p: &str) -> bool {
    is_option_or_result(p) || p == "Result"
}

/// `Option`, `Result`, or a `Result` alias of another crate (`io::Result`, `anyhow::Result`), by
/// external path.
pub(crate) fn is_option_or_result(p: &str) -> bool {
    p == "std::option::Option" || p == "std::result::Result" || p.ends_with("::Result")
}

/// Smart pointers and guards that deref to their first generic argument.
const DEREF_TO_ARG: &[&str] = &[
    "std::boxed::Box",
    "std::sync::Arc",
    "std::rc::Rc",
    "std::sync::MutexGuard",
    "std::sync::RwLockReadGuard",
    "std::sync::RwLockWriteGuard",
    "std::cell::Ref",
    "std::cell::RefMut",
    "std::borrow::Cow",
    "std::mem::ManuallyDrop",
    "std::pin::Pin",
    "std::sync::LazyLock",
    "std::cell::LazyCell",
];

/// Guards and lazy cells among [`DEREF_TO_ARG`] that have no methods of their own, only
/// associated functions (`Ref::map(r, f)`, `LazyLock::force(&l)`), so that every method call on
/// them is one of their target's: `cell.borrow().as_ref()` is `Option::as_ref` on a
/// `RefCell<Option<T>>`, not a method of `Ref`.
const DEREF_ONLY: &[&str] = &[
    "std::sync::MutexGuard",
    "std::sync::RwLockReadGuard",
    "std::sync::RwLockWriteGuard",
    "std::cell::Ref",
    "std::cell::RefMut",
    "std::mem::ManuallyDrop",
    "std::sync::LazyLock",
    "std::cell::LazyCell",
];

/// Whether a method call on std type `path` always reaches its deref target ([`DEREF_ONLY`]).
pub fn has_no_methods(path: &str) -> bool {
    DEREF_ONLY.contains(&path)
}

const DEREF_TO_TYPE: &[(&str, &str)] = &[
    ("std::string::String", "str"),
    ("std::path::PathBuf", "std::path::Path"),
    ("std::ffi::OsString", "std::ffi::OsStr"),
    ("std::vec::Vec", "[T]"),
];

/// The name raw pointers (`*const T`, `*mut T`) have as external types, as in std's docs.
pub const POINTER: &str = "pointer";

/// Names std's prelude brings into every module, with their canonical paths.
pub fn prelude_path(name: &str) -> Option<Vec<String>> {
    let path = match name {
        "Vec" => "std::vec::Vec",
        "String" => "std::string::String",
        "Box" => "std::boxed::Box",
        "Option" => "std::option::Option",
        "Some" => "std::option::Option::Some",
        "None" => "std::option::Option::None",
        "Result" => "std::result::Result",
        "Ok" => "std::result::Result::Ok",
        "Err" => "std::result::Result::Err",
        "ToString" => "std::string::ToString",
        "ToOwned" => "std::borrow::ToOwned",
        "Clone" => "std::clone::Clone",
        "Default" => "std::default::Default",
        "Drop" => "std::ops::Drop",
        "Iterator" => "std::iter::Iterator",
        "IntoIterator" => "std::iter::IntoIterator",
        "From" => "std::convert::From",
        "Into" => "std::convert::Into",
        "TryFrom" => "std::convert::TryFrom",
        "TryInto" => "std::convert::TryInto",
        "AsRef" => "std::convert::AsRef",
        "AsMut" => "std::convert::AsMut",
        "Send" => "std::marker::Send",
        "Sync" => "std::marker::Sync",
        "Sized" => "std::marker::Sized",
        "Fn" => "std::ops::Fn",
        "FnMut" => "std::ops::FnMut",
        "FnOnce" => "std::ops::FnOnce",
        "drop" => "std::mem::drop",
        _ => return None,
    };
    Some(path.split("::").map(str::to_string).collect())
}

/// `core::x` and `alloc::x` are the same items as `std::x`; rules are written against `std::`.
pub fn canonical_external(mut path: Vec<String>) -> Vec<String> {
    if let Some(first) = path.first_mut() {
        if first == "core" || first == "alloc" {
            *first = "std".to_string();
        }
    }
    path
}

/// What an external function or method returns, where the resolver must know to keep typing a
/// chain (`std::io::stdin().read_line(..)`, `Command::new(..).arg(..).output()`): std's
/// signatures, from the data table `rules/std-types.toml` ([`crate::std_types`]).
pub fn external_return(callee: &str, receiver: Option<&Ty>) -> Option<Ty> {
    crate::std_types::table().returns(callee, receiver)
}

/// Methods that return (a reference to) the receiver's own type.
pub fn is_identity_method(name: &str) -> bool {
    matches!(
        name,
        "clone"
            | "as_ref"
            | "as_mut"
            | "borrow"
            | "borrow_mut"
            | "by_ref"
            | "as_deref"
            | "to_owned"
    )
}

/// Methods of Option/Result that yield the payload.
pub fn is_unwrap_method(name: &str) -> bool {
    matches!(
        name,
        "unwrap"
            | "expect"
            | "unwrap_or"
            | "unwrap_or_else"
            | "unwrap_or_default"
            | "unwrap_unchecked"
    )
}

#[cfg(test)]
mod tests {

    /// crossterm's `tty_fd`: `File::options().read(true).write(true).open("/dev/tty")` is one
    /// open, not a `File::read` (atuin's finding through crossterm in the session-8 audit).
    #[test]
    fn file_options_is_a_builder_not_a_file() {
        let src = "async fn tty() {\n    let _f = std::fs::File::options()\n        .read(true)\n        .write(true)\n        .open(\"/dev/tty\");\n}\n";
        let report = crate::testutil::analyze_files(&[("src/lib.rs", src)]);
        let apis: Vec<&str> = report.findings.iter().map(|f| f.api.as_str()).collect();
        assert_eq!(apis, ["std::fs::OpenOptions::open"]);
    }

    use super::*;

    #[test]
    fn arc_mutex_lock_unwrap_derefs_to_the_payload() {
        let file = Ty::external("std::fs::File", vec![]);
        let arc = Ty::external(
            "std::sync::Arc",
            vec![Ty::external("std::sync::Mutex", vec![file.clone()])],
        );
        let mutex = arc.deref_external().unwrap();
        let guard = external_return("std::sync::Mutex::lock", Some(&mutex)).unwrap();
        assert_eq!(guard.deref_external(), Some(file));
    }

    /// Common std methods carry their result type; a dependency's method of the same name is
    /// not answered from this table, and `Metadata::len` is a size in bytes (`u64`).
    #[test]
    fn std_methods_return_from_the_receivers_type_arguments() {
        let file = Ty::external("std::fs::File", vec![]);
        let map = Ty::external(
            "std::collections::HashMap",
            vec![Ty::external("std::string::String", vec![]), file.clone()],
        );
        assert_eq!(
            external_return("std::collections::HashMap::get", Some(&map)),
            Some(Ty::external(
                "std::option::Option",
                vec![Ty::Ref(Box::new(file.clone()))]
            ))
        );
        let v = Ty::external("std::vec::Vec", vec![file.clone()]);
        assert_eq!(
            external_return("std::vec::Vec::pop", Some(&v)),
            Some(Ty::external("std::option::Option", vec![file]))
        );
        assert_eq!(
            external_return("std::vec::Vec::len", Some(&v)),
            Some(Ty::external("usize", vec![]))
        );
        assert_eq!(
            external_return("std::fs::Metadata::len", None),
            Some(Ty::external("u64", vec![]))
        );
        assert_eq!(external_return("bytes::Bytes::len", None), None);
        let n = Ty::external("u32", vec![]);
        assert_eq!(
            external_return("u32::checked_mul", Some(&n)),
            Some(Ty::external("std::option::Option", vec![n.clone()]))
        );
        assert_eq!(external_return("u32::wrapping_add", Some(&n)), Some(n));
        assert_eq!(external_return("char::escape_unicode", None), None);
    }

    #[test]
    fn builders_return_themselves_and_results_unwrap() {
        let cmd = Ty::external("std::process::Command", vec![]);
        assert_eq!(
            external_return("std::process::Command::arg", Some(&cmd)),
            Some(cmd.clone())
        );
        let res = Ty::external("std::io::Result", vec![cmd.clone()]);
        assert_eq!(res.unwrap_result_like(), cmd);
        assert_eq!(
            canonical_external(vec!["core".into(), "mem".into()]),
            vec!["std".to_string(), "mem".to_string()]
        );
    }
}
