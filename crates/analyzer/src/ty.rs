//! Types as the call resolver sees them, and what it knows of the standard library's types.
//!
//! The standard library's source is not analysed (it is not part of the dependency graph, and
//! `rust-src` may be absent), so its types are *external*: known by canonical path
//! (`core::`/`alloc::` written as `std::`). The few facts the resolver needs about them —
//! which types deref to what, which methods return `Self`, what `Mutex::lock` yields — live in
//! the small tables below, kept next to the code that uses them.

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TyCon {
    Local(usize),
    External(String),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum TraitRef {
    Local(usize),
    External(String),
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Ty {
    Adt(TyCon, Vec<Ty>),
    Ref(Box<Ty>),
    /// A generic parameter with its trait bounds.
    Param {
        name: String,
        bounds: Vec<TraitRef>,
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

    /// One step of auto-deref for external smart pointers and std's owned/borrowed pairs.
    pub fn deref_external(&self) -> Option<Ty> {
        match self {
            Ty::Ref(inner) => Some((**inner).clone()),
            Ty::Adt(TyCon::External(p), args) => {
                let p = p.as_str();
                if DEREF_TO_ARG.contains(&p) {
                    return args.first().cloned();
                }
                DEREF_TO_TYPE
                    .iter()
                    .find(|(from, _)| *from == p)
                    .map(|(_, to)| match *to {
                        "str" => Ty::Str,
                        "[T]" => Ty::Slice(Box::new(args.first().cloned().unwrap_or(Ty::Unknown))),
                        other => Ty::external(other, Vec::new()),
                    })
            }
            _ => None,
        }
    }
}

/// The primitive types other than `str` (which is [`Ty::Str`]), named as written.
pub fn is_primitive(name: &str) -> bool {
    is_integer(name) || matches!(name, "bool" | "char" | "f32" | "f64")
}

fn is_integer(name: &str) -> bool {
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

/// What an inherent method of a primitive number returns, where it is the receiver's type or an
/// `Option` of it (`n.checked_add(1)?.wrapping_mul(2)`).
fn primitive_return(ty: &str, method: &str) -> Option<Ty> {
    let this = Ty::external(ty, Vec::new());
    let float = matches!(ty, "f32" | "f64");
    if !is_integer(ty) && !float {
        return None;
    }
    if is_integer(ty) && method.starts_with("checked_") && method != "checked_ilog" {
        return Some(Ty::external("std::option::Option", vec![this]));
    }
    let same = method.starts_with("wrapping_")
        || method.starts_with("saturating_")
        || matches!(
            method,
            "pow" | "abs" | "min" | "max" | "clamp" | "swap_bytes" | "to_be" | "to_le"
        )
        || (float
            && matches!(
                method,
                "floor" | "ceil" | "round" | "trunc" | "sqrt" | "powi" | "powf" | "exp" | "ln"
            ));
    same.then_some(this)
}

/// What common methods of std types return, from the receiver's type arguments where the
/// result holds one (`map.get(k)` → `Option<&V>`, `v.pop()` → `Option<T>`). Only std's own
/// types (`std::..`, `str`, slices, primitives) are answered: a dependency's type of the same
/// method name is analysed from its source.
fn std_method_return(type_path: &str, method: &str, recv: Option<&Ty>) -> Option<Ty> {
    let std_type = type_path.starts_with("std::")
        || matches!(type_path, "str" | "slice")
        || is_primitive(type_path);
    if !std_type {
        return None;
    }
    let ext = |p: &str, args: Vec<Ty>| Ty::external(p, args);
    let r = |t: Ty| Ty::Ref(Box::new(t));
    let opt = |t: Ty| ext("std::option::Option", vec![t]);
    let string = || ext("std::string::String", Vec::new());
    let args = match recv {
        Some(Ty::Adt(_, args)) => args.clone(),
        Some(Ty::Slice(elem)) => vec![(**elem).clone()],
        _ => Vec::new(),
    };
    let arg = |i: usize| args.get(i).cloned().unwrap_or(Ty::Unknown);
    // Methods of this name on every std type that has them return the same type (but
    // `fs::Metadata::len`, a file's size, is a `u64`).
    if type_path == "std::fs::Metadata" && method == "len" {
        return Some(ext("u64", Vec::new()));
    }
    match method {
        "len" | "capacity" => return Some(ext("usize", Vec::new())),
        "is_empty" | "is_some" | "is_none" | "is_ok" | "is_err" | "contains" | "contains_key"
        | "starts_with" | "ends_with" | "is_absolute" | "is_relative" => {
            return Some(ext("bool", Vec::new()))
        }
        "to_string" => return Some(string()),
        _ => {}
    }
    let short = type_path.rsplit("::").next().unwrap_or(type_path);
    let t = match (short, method) {
        ("str" | "String", "trim" | "trim_start" | "trim_end" | "as_str") => r(Ty::Str),
        ("str" | "String", "to_lowercase" | "to_uppercase" | "replace" | "repeat")
        | ("str", "to_owned") => string(),
        ("str" | "String", "as_bytes") => r(Ty::Slice(Box::new(ext("u8", Vec::new())))),
        ("str" | "String", "strip_prefix" | "strip_suffix") => opt(r(Ty::Str)),
        ("slice", "to_vec" | "to_owned") => ext("std::vec::Vec", vec![arg(0)]),
        ("slice" | "Vec" | "VecDeque", "first" | "last") => opt(r(arg(0))),
        ("Vec" | "VecDeque" | "BinaryHeap", "pop" | "pop_front" | "pop_back") => opt(arg(0)),
        ("HashMap" | "BTreeMap", "get") => opt(r(arg(1))),
        ("HashMap" | "BTreeMap", "get_mut") => opt(r(arg(1))),
        ("HashMap" | "BTreeMap", "insert" | "remove") => opt(arg(1)),
        ("Path" | "OsStr" | "OsString", "to_str") => opt(r(Ty::Str)),
        ("Path", "file_name" | "extension" | "file_stem") => {
            opt(r(ext("std::ffi::OsStr", Vec::new())))
        }
        ("Instant", "elapsed" | "duration_since") => ext("std::time::Duration", Vec::new()),
        ("Duration", "as_secs") => ext("u64", Vec::new()),
        ("Duration", "as_millis" | "as_micros" | "as_nanos") => ext("u128", Vec::new()),
        ("AtomicUsize", "load" | "fetch_add" | "fetch_sub" | "swap") => ext("usize", Vec::new()),
        ("AtomicU64", "load" | "fetch_add" | "fetch_sub" | "swap") => ext("u64", Vec::new()),
        ("AtomicU32", "load" | "fetch_add" | "fetch_sub" | "swap") => ext("u32", Vec::new()),
        ("AtomicBool", "load" | "swap") => ext("bool", Vec::new()),
        ("Cell", "get") => arg(0),
        _ => return None,
    };
    Some(t)
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

const DEREF_TO_TYPE: &[(&str, &str)] = &[
    ("std::string::String", "str"),
    ("std::path::PathBuf", "std::path::Path"),
    ("std::ffi::OsString", "std::ffi::OsStr"),
    ("std::vec::Vec", "[T]"),
];

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
/// chain (`std::io::stdin().read_line(..)`, `Command::new(..).arg(..).output()`).
pub fn external_return(callee: &str, receiver: Option<&Ty>) -> Option<Ty> {
    // Methods reached through the `PathBuf → Path` deref are listed once.
    let normalized = callee.replacen("std::path::PathBuf::", "std::path::Path::", 1);
    let callee = normalized.as_str();
    let fixed = match callee {
        "std::io::stdin" => Some("std::io::Stdin"),
        "std::io::stdout" => Some("std::io::Stdout"),
        "std::io::stderr" => Some("std::io::Stderr"),
        "std::io::Stdin::lock" => Some("std::io::StdinLock"),
        "std::fs::read_dir" | "std::path::Path::read_dir" => Some("std::fs::ReadDir"),
        "std::fs::metadata" | "std::path::Path::metadata" => Some("std::fs::Metadata"),
        "std::fs::OpenOptions::open" | "std::fs::File::open" | "std::fs::File::create" => {
            Some("std::fs::File")
        }
        // Not `File`: `File::options().read(true)` sets a flag (crossterm's tty_fd), it reads
        // nothing.
        "std::fs::File::options" | "std::fs::OpenOptions::new" => Some("std::fs::OpenOptions"),
        "std::net::TcpListener::accept" => None,
        "std::process::Command::spawn" => Some("std::process::Child"),
        "std::thread::spawn" | "std::thread::Builder::spawn" => Some("std::thread::JoinHandle"),
        "std::path::Path::new" | "std::path::Path::parent" => Some("std::path::Path"),
        "std::path::Path::join" | "std::path::Path::to_path_buf" => Some("std::path::PathBuf"),
        _ => None,
    };
    if let Some(f) = fixed {
        return Some(Ty::external(f, Vec::new()));
    }
    // Channel constructors return `(Sender, Receiver)`: typed so that `let (tx, rx) = ..;
    // rx.recv()` reaches the blocking receive.
    let channel = match callee {
        "std::sync::mpsc::channel" => {
            Some(("std::sync::mpsc::Sender", "std::sync::mpsc::Receiver"))
        }
        "std::sync::mpsc::sync_channel" => {
            Some(("std::sync::mpsc::SyncSender", "std::sync::mpsc::Receiver"))
        }
        "crossbeam_channel::unbounded" | "crossbeam_channel::bounded" => {
            Some(("crossbeam_channel::Sender", "crossbeam_channel::Receiver"))
        }
        _ => None,
    };
    if let Some((tx, rx)) = channel {
        return Some(Ty::Tuple(vec![
            Ty::external(tx, Vec::new()),
            Ty::external(rx, Vec::new()),
        ]));
    }
    let recv = receiver.map(|r| r.peel_refs());
    let (type_path, method) = callee.rsplit_once("::")?;
    if let Some(t) = primitive_return(type_path, method) {
        return Some(t);
    }
    if let Some(t) = std_method_return(type_path, method, recv) {
        return Some(t);
    }
    // Guards: `Mutex<T>::lock()` → `MutexGuard<T>` (wrapped in a Result the caller unwraps).
    let guard = match callee {
        "std::sync::Mutex::lock" | "std::sync::Mutex::try_lock" => Some("std::sync::MutexGuard"),
        "std::sync::RwLock::read" | "std::sync::RwLock::try_read" => {
            Some("std::sync::RwLockReadGuard")
        }
        "std::sync::RwLock::write" | "std::sync::RwLock::try_write" => {
            Some("std::sync::RwLockWriteGuard")
        }
        "std::cell::RefCell::borrow" => Some("std::cell::Ref"),
        "std::cell::RefCell::borrow_mut" => Some("std::cell::RefMut"),
        _ => None,
    };
    if let Some(g) = guard {
        let inner = match recv {
            Some(Ty::Adt(_, args)) => args.first().cloned().unwrap_or(Ty::Unknown),
            _ => Ty::Unknown,
        };
        return Some(Ty::external(g, vec![inner]));
    }
    if SELF_RETURNING
        .iter()
        .any(|(t, ms)| *t == type_path && ms.contains(&method))
    {
        return Some(
            recv.cloned()
                .unwrap_or_else(|| Ty::external(type_path, Vec::new())),
        );
    }
    None
}

/// Builder methods of std types that return the builder (`&mut Self` or `Self`).
const SELF_RETURNING: &[(&str, &[&str])] = &[
    (
        "std::process::Command",
        &[
            "arg",
            "args",
            "env",
            "envs",
            "env_remove",
            "env_clear",
            "current_dir",
            "stdin",
            "stdout",
            "stderr",
            "uid",
            "gid",
        ],
    ),
    (
        "std::fs::OpenOptions",
        &[
            "read",
            "write",
            "append",
            "truncate",
            "create",
            "create_new",
            "mode",
            "custom_flags",
        ],
    ),
    ("std::thread::Builder", &["name", "stack_size"]),
    ("std::fs::DirBuilder", &["recursive", "mode"]),
];

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
        assert_eq!(external_return("bool::then", None), None);
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
