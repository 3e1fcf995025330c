//! Part of stage 2, *lower*: values a function memoises in a static, computed on a cold path.
//!
//! A hand-written cache computes its value once (or again only when its key changes) and keeps
//! it in a `static`:
//!
//! ```ignore
//! static COMPILED: Mutex<Option<(String, Regex)>> = Mutex::new(None);
//! let mut guard = COMPILED.lock().unwrap();
//! if let Some((source, regex)) = &*guard { if *source == wanted { return regex.is_match(s) } }
//! let regex = Regex::new(&wanted).unwrap();          // only when the cache misses
//! *guard = Some((wanted, regex));
//! ```
//!
//! (vaultwarden's `should_block_address_regex`). The call that builds the stored value runs on
//! the cache's cold path, like a `OnceLock` initialiser: it is kind `init` (issue 16's "cold path
//! known from the code"), reported only with `[report] init = true`.
//!
//! Recognised, syntactically, within one function body:
//! - a *cache guard*: a local bound to `STATIC.lock()` / `.write()` / `.borrow_mut()` /
//!   `.get_mut()` (through `unwrap`, `expect`, `?`, `.await`), where `STATIC` is an
//!   upper-case identifier (Rust's naming for statics) or a path ending in one, or the closure
//!   parameter of a thread-local's `STATIC.with(|cache| ..)`;
//! - a *store* into the cache: `*guard = VALUE`, `guard.insert(.., VALUE)`, `guard.replace(VALUE)`,
//!   `guard.get_or_insert(VALUE)`, or the same on `STATIC.lock()..` written in place, or
//!   `STATIC.get_or_insert_with(f)` on a `static mut` `Option` (backtrace's symbol cache);
//! - the memoised calls: every call (and fn item handed over as a value) in the store's value,
//!   and every call in the initialiser of a local (`let regex = ..;`) that the stored value names.
//!
//! A *keyed cache* in a concurrent map held directly in a static (`DashMap`, `papaya`,
//! `scc::HashMap`: no lock guard) is recognised by its shape: the function looks the key up in
//! the static and returns early on a hit (`if let Some(v) = CACHE.get(k) { return .. }`, `if
//! CACHE.contains_key(k) { return .. }`), and later inserts into the same static
//! (`CACHE.insert(k, value)`). The value built between them is the cache's cold path
//! (vaultwarden's `operator_for_path`, which creates the storage directory once per path). A
//! static inserted into without such a lookup first (a registry of handlers, a list of seen
//! ids) is not a cache: every call stores.
//!
//! chrono's `TZ_INFO.with(|c| c.borrow_mut().get_or_insert_with(Cache::default))` is the common
//! case: the time-zone file is read once per thread, not on every `Local::now()`.
//!
//! A *lazy cell written by hand*, an enum whose method replaces `*self` on its uninitialised
//! state, is recognised like a `OnceCell` (whose cold path counts as `init` wherever the cell
//! lives):
//!
//! ```ignore
//! match self {
//!     LazyDiskCache::Uninit { root, max_size } => {
//!         *self = LazyDiskCache::Init(LruDiskCache::new(&root, *max_size)?); // once
//!         self.get_or_init()
//!     }
//!     LazyDiskCache::Init(d) => Ok(d),
//! }
//! ```
//!
//! (sccache's `LazyDiskCache::get_or_init`, which creates and scans the cache directory on the
//! first preprocessor-cache lookup; rounds 2–7 of the review found it four times as init-once).
//! The arm's pattern names one variant and the stored value builds another, so the state moves on
//! and the arm does not run again unless something resets it. An arm that stores its own variant
//! (`State::Idle => *self = State::Idle(..)`) or an `Option` field is not such a cell.
//!
//! A value stored in a local `Mutex` or a field (`self.cache`) is not recognised: whether that
//! cache outlives a request is not visible from the function.

use std::collections::{BTreeMap, BTreeSet};

use syn::spanned::Spanned;
use syn::visit::Visit;

use crate::ir::Pos;
use crate::lower::pos;

/// The positions (as the IR records calls: a path call at its function path, a method call at
/// its method name) of the calls whose value `body` memoises in a static, sorted.
pub fn memoised_calls(body: &syn::Block) -> Vec<Pos> {
    let mut scan = Scan::default();
    scan.visit_block(body);
    let mut out = BTreeSet::new();
    for value in &scan.stored {
        calls_in(value, &mut out);
        let mut names = Names::default();
        names.visit_expr(value);
        for name in names.0 {
            for init in scan.lets.get(&name).into_iter().flatten() {
                calls_in(init, &mut out);
            }
        }
    }
    out.into_iter().collect()
}

#[derive(Default)]
struct Scan<'a> {
    /// Locals bound to a static's lock guard.
    guards: BTreeSet<String>,
    /// Local name → the initialisers it is bound to (a name may be re-bound).
    lets: BTreeMap<String, Vec<&'a syn::Expr>>,
    /// Values stored into a cache.
    stored: Vec<&'a syn::Expr>,
    /// Closure parameters that stand for a thread-local static (`STATIC.with(|alias| ..)`).
    aliases: BTreeSet<String>,
    /// Statics (by last path segment) looked up by an `if` that returns on a hit, so far: a
    /// later insert into one of them fills a keyed cache.
    looked_up: BTreeSet<String>,
    /// The variant (last path segment) of the `match self` arm, or `if let V = self`, being
    /// visited, innermost last.
    self_states: Vec<Option<String>>,
}

impl<'a> Visit<'a> for Scan<'a> {
    fn visit_local(&mut self, l: &'a syn::Local) {
        if let (syn::Pat::Ident(p), Some(init)) = (strip_type(&l.pat), &l.init) {
            let name = p.ident.to_string();
            if is_static_guard(&init.expr, &self.aliases) {
                self.guards.insert(name.clone());
            }
            self.lets.entry(name).or_default().push(&init.expr);
        }
        syn::visit::visit_local(self, l);
    }

    fn visit_expr_assign(&mut self, a: &'a syn::ExprAssign) {
        if let syn::Expr::Unary(
            u @ syn::ExprUnary {
                op: syn::UnOp::Deref(_),
                ..
            },
        ) = &*a.left
        {
            // `*self = Enum::Init(build())` in the arm of another variant: a lazy cell.
            let moves_on = || {
                is_self(&u.expr)
                    && self
                        .self_states
                        .last()
                        .cloned()
                        .flatten()
                        .is_some_and(|from| variant_built(&a.right).is_some_and(|to| to != from))
            };
            if self.is_cache(&u.expr) || moves_on() {
                self.stored.push(&a.right);
            }
        }
        syn::visit::visit_expr_assign(self, a);
    }

    fn visit_expr_match(&mut self, m: &'a syn::ExprMatch) {
        if !is_self(&m.expr) {
            return syn::visit::visit_expr_match(self, m);
        }
        self.visit_expr(&m.expr);
        for arm in &m.arms {
            self.self_states.push(variant_of(&arm.pat));
            if let Some((_, guard)) = &arm.guard {
                self.visit_expr(guard);
            }
            self.visit_expr(&arm.body);
            self.self_states.pop();
        }
    }

    fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
        // `TZ_INFO.with(|cache| ..)`: inside, `cache` is the thread-local static (chrono's
        // time-zone cache, `cache.borrow_mut().get_or_insert_with(Cache::default)`).
        if m.method == "with" && is_static_path(strip_adapters(&m.receiver), &self.aliases) {
            if let Some(syn::Expr::Closure(c)) = m.args.first() {
                if let Some(syn::Pat::Ident(p)) = c.inputs.first().map(strip_type) {
                    self.aliases.insert(p.ident.to_string());
                }
            }
        }
        let stores = matches!(
            m.method.to_string().as_str(),
            "insert"
                | "replace"
                | "get_or_insert"
                | "get_or_insert_with"
                | "set"
                | "or_insert"
                | "or_insert_with"
        );
        let keyed = m.method == "insert"
            && static_name(&m.receiver, &self.aliases).is_some_and(|s| self.looked_up.contains(&s));
        // `CACHE.get_or_insert_with(Cache::new)` on a `static mut CACHE: Option<Cache>` used
        // in place (backtrace's `Cache::with_global`): only a static `Option` has that method
        // and is mutable without a guard.
        let in_place = matches!(
            m.method.to_string().as_str(),
            "get_or_insert" | "get_or_insert_with"
        ) && is_static_path(strip_adapters(&m.receiver), &self.aliases);
        if stores && (keyed || in_place || self.is_cache(&m.receiver)) {
            if let Some(value) = m.args.last() {
                self.stored.push(value);
            }
        }
        syn::visit::visit_expr_method_call(self, m);
    }

    fn visit_expr_if(&mut self, i: &'a syn::ExprIf) {
        // `if let Enum::Uninit { .. } = self { *self = Enum::Init(..) }`: a lazy cell's test.
        if let syn::Expr::Let(l) = &*i.cond {
            if is_self(&l.expr) {
                self.visit_expr(&l.expr);
                self.self_states.push(variant_of(&l.pat));
                self.visit_block(&i.then_branch);
                self.self_states.pop();
                if let Some((_, e)) = &i.else_branch {
                    self.visit_expr(e);
                }
                return;
            }
        }
        // `if let Some(v) = CACHE.get(k) { return .. }` / `if CACHE.contains_key(k) { return }`:
        // the hit returns, so what follows runs on a miss.
        let mut returns = Returns(false);
        returns.visit_block(&i.then_branch);
        if returns.0 {
            let mut lookups = Lookups {
                aliases: &self.aliases,
                out: &mut self.looked_up,
            };
            lookups.visit_expr(&i.cond);
        }
        syn::visit::visit_expr_if(self, i);
    }

    // A closure's or nested item's body is another function's business.
    fn visit_item(&mut self, _: &'a syn::Item) {}
}

impl Scan<'_> {
    /// A cache guard local, or a static's lock taken in place; also through the accessors that
    /// reach into the cached container (`guard.get_or_insert_with(HashMap::new).insert(..)`,
    /// `guard.entry(k).or_insert(..)`).
    fn is_cache(&self, e: &syn::Expr) -> bool {
        let mut e = strip_adapters(e);
        while let syn::Expr::MethodCall(m) = e {
            let into_container = matches!(
                m.method.to_string().as_str(),
                "get_or_insert_with" | "get_or_insert_default" | "get_or_insert" | "entry"
            );
            if !into_container {
                break;
            }
            e = strip_adapters(&m.receiver);
        }
        match e {
            syn::Expr::Path(p) => p
                .path
                .get_ident()
                .is_some_and(|i| self.guards.contains(&i.to_string())),
            other => is_static_guard(other, &self.aliases),
        }
    }
}

/// `self`, `*self`, `&mut *self`, `&*self`, in parentheses.
fn is_self(e: &syn::Expr) -> bool {
    match e {
        syn::Expr::Path(p) => p.path.is_ident("self"),
        syn::Expr::Unary(u) if matches!(u.op, syn::UnOp::Deref(_)) => is_self(&u.expr),
        syn::Expr::Reference(r) => is_self(&r.expr),
        syn::Expr::Paren(p) => is_self(&p.expr),
        _ => false,
    }
}

/// The variant a pattern names, by its last path segment: `Enum::Uninit { .. }`,
/// `Enum::Init(_)`, `Self::Empty`; `None` for anything else (bindings, wildcards, or-patterns).
fn variant_of(p: &syn::Pat) -> Option<String> {
    let path = match p {
        syn::Pat::Struct(s) => &s.path,
        syn::Pat::TupleStruct(t) => &t.path,
        syn::Pat::Path(p) => &p.path,
        syn::Pat::Reference(r) => return variant_of(&r.pat),
        syn::Pat::Paren(p) => return variant_of(&p.pat),
        _ => return None,
    };
    variant_name(path)
}

/// The variant a value builds, by its last path segment: `Enum::Init(..)`, `Enum::Ready { .. }`,
/// `Self::Done`, through `?`, `.unwrap()` and parentheses.
fn variant_built(e: &syn::Expr) -> Option<String> {
    let path = match strip_adapters(e) {
        syn::Expr::Call(c) => match &*c.func {
            syn::Expr::Path(p) => &p.path,
            _ => return None,
        },
        syn::Expr::Struct(s) => &s.path,
        syn::Expr::Path(p) => &p.path,
        _ => return None,
    };
    variant_name(path)
}

/// A path's last segment when it has more than one: a single segment is a binding or a unit
/// struct, not an enum's variant.
fn variant_name(path: &syn::Path) -> Option<String> {
    (path.segments.len() > 1).then(|| path.segments.last().map(|s| s.ident.to_string()))?
}

/// The static `e` names directly (no lock guard: a concurrent map), by its last path segment.
fn static_name(e: &syn::Expr, aliases: &BTreeSet<String>) -> Option<String> {
    let e = strip_adapters(e);
    let syn::Expr::Path(p) = e else {
        return None;
    };
    if !is_static_path(e, aliases) {
        return None;
    }
    p.path.segments.last().map(|s| s.ident.to_string())
}

/// The statics a condition looks a key up in (`get`, `contains_key`, `get_mut`).
struct Lookups<'s> {
    aliases: &'s BTreeSet<String>,
    out: &'s mut BTreeSet<String>,
}

impl<'a> Visit<'a> for Lookups<'_> {
    fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
        if matches!(
            m.method.to_string().as_str(),
            "get" | "contains_key" | "get_mut"
        ) {
            if let Some(name) = static_name(&m.receiver, self.aliases) {
                self.out.insert(name);
            }
        }
        syn::visit::visit_expr_method_call(self, m);
    }
}

/// Whether a block returns (`return`, outside closures and nested items).
struct Returns(bool);

impl<'a> Visit<'a> for Returns {
    fn visit_expr_return(&mut self, _: &'a syn::ExprReturn) {
        self.0 = true;
    }
    fn visit_expr_closure(&mut self, _: &'a syn::ExprClosure) {}
    fn visit_expr_async(&mut self, _: &'a syn::ExprAsync) {}
    fn visit_item(&mut self, _: &'a syn::Item) {}
}

/// `STATIC.lock()` (and friends), through `unwrap`, `expect`, `?` and `.await`.
fn is_static_guard(e: &syn::Expr, aliases: &BTreeSet<String>) -> bool {
    let syn::Expr::MethodCall(m) = strip_adapters(e) else {
        return false;
    };
    matches!(
        m.method.to_string().as_str(),
        "lock" | "write" | "borrow_mut" | "get_mut"
    ) && is_static_path(strip_adapters(&m.receiver), aliases)
}

/// An upper-case identifier, or a path ending in one: a `static` by Rust's naming convention;
/// or a closure parameter standing for a thread-local static (`aliases`).
fn is_static_path(e: &syn::Expr, aliases: &BTreeSet<String>) -> bool {
    let syn::Expr::Path(p) = e else {
        return false;
    };
    if p.path
        .get_ident()
        .is_some_and(|i| aliases.contains(&i.to_string()))
    {
        return true;
    }
    p.path.segments.last().is_some_and(|s| {
        let name = s.ident.to_string();
        name.len() > 1
            && name.chars().any(|c| c.is_ascii_uppercase())
            && name
                .chars()
                .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
    })
}

/// The expression under value-preserving adapters: `unwrap()`, `expect(..)`, `?`, `.await`,
/// parentheses and references.
fn strip_adapters(mut e: &syn::Expr) -> &syn::Expr {
    loop {
        e = match e {
            syn::Expr::MethodCall(m)
                if matches!(
                    m.method.to_string().as_str(),
                    "unwrap" | "expect" | "unwrap_or_else" | "as_mut" | "deref_mut"
                ) =>
            {
                &m.receiver
            }
            syn::Expr::Try(t) => &t.expr,
            syn::Expr::Await(a) => &a.base,
            syn::Expr::Paren(p) => &p.expr,
            syn::Expr::Reference(r) => &r.expr,
            _ => return e,
        };
    }
}

fn strip_type(p: &syn::Pat) -> &syn::Pat {
    match p {
        syn::Pat::Type(t) => strip_type(&t.pat),
        other => other,
    }
}

/// Single-segment paths named in an expression: the locals a stored value is built from.
#[derive(Default)]
struct Names(BTreeSet<String>);

impl<'a> Visit<'a> for Names {
    fn visit_expr_path(&mut self, p: &'a syn::ExprPath) {
        if let Some(i) = p.path.get_ident() {
            self.0.insert(i.to_string());
        }
    }
}

/// Every call's position in `e`, as the lowering records it, and every path's: a fn item handed
/// over as a value (`get_or_insert_with(Cache::default)`) is called at its path.
fn calls_in(e: &syn::Expr, out: &mut BTreeSet<Pos>) {
    struct Calls<'o>(&'o mut BTreeSet<Pos>);
    impl<'a> Visit<'a> for Calls<'_> {
        fn visit_expr_path(&mut self, p: &'a syn::ExprPath) {
            self.0.insert(pos(p.span()));
        }
        fn visit_expr_call(&mut self, c: &'a syn::ExprCall) {
            self.0.insert(pos(c.func.span()));
            syn::visit::visit_expr_call(self, c);
        }
        fn visit_expr_method_call(&mut self, m: &'a syn::ExprMethodCall) {
            self.0.insert(pos(m.method.span()));
            syn::visit::visit_expr_method_call(self, m);
        }
    }
    Calls(out).visit_expr(e);
}

#[cfg(test)]
mod tests {
    use crate::testutil::analyze_files_with;

    /// `(line, api, kind)` of every finding of a one-file crate, with `[report] init` on/off.
    /// The lines of the findings with `init` off are exactly `expected`.
    fn assert_finding_lines(src: &str, expected: &[u32]) {
        let all = findings(src, false);
        let lines: Vec<u32> = all.iter().map(|f| f.0).collect();
        assert_eq!(lines, expected, "{all:?}");
    }

    fn findings(src: &str, report_init: bool) -> Vec<(u32, String, String)> {
        let config = crate::config::Config {
            report_init,
            ..Default::default()
        };
        let report = analyze_files_with(&[("src/lib.rs", src)], &config);
        let mut v: Vec<(u32, String, String)> = report
            .findings
            .iter()
            .map(|f| (f.path[0].line, f.api.clone(), f.kind.clone()))
            .collect();
        v.sort();
        v
    }

    #[test]
    fn a_value_cached_in_a_static_is_built_on_the_cold_path() {
        // vaultwarden's should_block_address_regex, with std::fs standing in for the compile.
        let src = "use std::sync::Mutex;\n\
                   fn cached(wanted: String) -> usize {\n\
                   \x20   static CACHE: Mutex<Option<(String, Vec<u8>)>> = Mutex::new(None);\n\
                   \x20   let mut guard = CACHE.lock().unwrap();\n\
                   \x20   if let Some((k, v)) = &*guard { if *k == wanted { return v.len(); } }\n\
                   \x20   let bytes = std::fs::read(&wanted).unwrap();\n\
                   \x20   let n = bytes.len();\n\
                   \x20   *guard = Some((wanted, bytes));\n\
                   \x20   n\n\
                   }\n\
                   fn uncached(wanted: String) -> usize {\n\
                   \x20   let bytes = std::fs::read(&wanted).unwrap();\n\
                   \x20   bytes.len()\n\
                   }\n\
                   async fn handler() {\n\
                   \x20   cached(String::new());\n\
                   \x20   uncached(String::new());\n\
                   }\n";
        assert_eq!(
            findings(src, false),
            [(17, "std::fs::read".to_string(), "worker".to_string())],
            "only the uncached read is per request"
        );
        let with_init = findings(src, true);
        assert!(
            with_init.contains(&(16, "std::fs::read".to_string(), "init".to_string())),
            "{with_init:?}"
        );
    }

    /// chrono's per-thread time-zone cache: `Cache::default` (reading the zone file) is handed
    /// to `get_or_insert_with` as a fn item, on the thread-local's `with` parameter.
    #[test]
    fn a_thread_local_cache_filled_by_a_fn_item_is_cold() {
        let src = "use std::cell::RefCell;\n\
                   struct Cache(Vec<u8>);\n\
                   impl Default for Cache {\n\
                   \x20   fn default() -> Cache { Cache(std::fs::read(\"/etc/localtime\").unwrap()) }\n\
                   }\n\
                   thread_local! { static TZ_INFO: RefCell<Option<Cache>> = Default::default(); }\n\
                   fn offset() -> usize {\n\
                   \x20   TZ_INFO.with(|maybe_cache| maybe_cache.borrow_mut().get_or_insert_with(Cache::default).0.len())\n\
                   }\n\
                   fn uncached(o: &mut Option<Cache>) -> usize { o.get_or_insert_with(Cache::default).0.len() }\n\
                   async fn handler(o: &mut Option<Cache>) {\n\
                   \x20   offset();\n\
                   \x20   uncached(o);\n\
                   }\n";
        assert_finding_lines(src, &[13]);
    }

    /// num_cpus' `cgroups_num_cpus`: a static declared inside the fn, its `Once::call_once`
    /// given a fn item. The initialiser runs once per process (kind init).
    #[test]
    fn a_once_declared_inside_a_fn_runs_its_fn_item_once() {
        let src = "use std::sync::Once;\n\
                   fn init_cgroups() { let _ = std::fs::read(\"/proc/self/cgroup\"); }\n\
                   fn cgroups_num_cpus() -> usize {\n\
                   \x20   static ONCE: Once = Once::new();\n\
                   \x20   ONCE.call_once(init_cgroups);\n\
                   \x20   1\n\
                   }\n\
                   async fn handler() {\n\
                   \x20   cgroups_num_cpus();\n\
                   \x20   init_cgroups();\n\
                   }\n";
        assert_finding_lines(src, &[10]);
    }

    /// backtrace's `Cache::with_global`: a `static mut` `Option` declared in the fn, filled in
    /// place by a fn item; the same call on a parameter's `Option` runs every time.
    #[test]
    fn a_static_mut_option_filled_in_place_is_cold() {
        let src = "struct Cache(Vec<u8>);\n\
                   impl Cache { fn new() -> Cache { Cache(std::fs::read(\"/proc/self/maps\").unwrap()) } }\n\
                   fn with_global() -> usize {\n\
                   \x20   static mut MAPPINGS_CACHE: Option<Cache> = None;\n\
                   \x20   #[allow(static_mut_refs)]\n\
                   \x20   unsafe { MAPPINGS_CACHE.get_or_insert_with(Cache::new).0.len() }\n\
                   }\n\
                   fn uncached(o: &mut Option<Cache>) -> usize { o.get_or_insert_with(Cache::new).0.len() }\n\
                   async fn handler(o: &mut Option<Cache>) {\n\
                   \x20   with_global();\n\
                   \x20   uncached(o);\n\
                   }\n";
        assert_finding_lines(src, &[11]);
    }

    #[test]
    fn stores_in_place_and_into_maps_are_caches_too_but_locals_are_not() {
        let src = "use std::sync::Mutex;\nuse std::collections::HashMap;\n\
                   static SEEN: Mutex<Option<Vec<u8>>> = Mutex::new(None);\n\
                   static BY_KEY: Mutex<Option<HashMap<String, Vec<u8>>>> = Mutex::new(None);\n\
                   fn in_place() { *SEEN.lock().unwrap() = Some(std::fs::read(\"a\").unwrap()); }\n\
                   fn into_map(m: &mut HashMap<String, Vec<u8>>) {\n\
                   \x20   let v = std::fs::read(\"b\").unwrap();\n\
                   \x20   let mut cache = BY_KEY.lock().unwrap();\n\
                   \x20   cache.get_or_insert_with(HashMap::new).insert(String::new(), v);\n\
                   \x20   m.clear();\n\
                   }\n\
                   fn local_cache() {\n\
                   \x20   let local = Mutex::new(None);\n\
                   \x20   let mut guard = local.lock().unwrap();\n\
                   \x20   *guard = Some(std::fs::read(\"c\").unwrap());\n\
                   }\n\
                   async fn handler(m: &mut HashMap<String, Vec<u8>>) {\n\
                   \x20   in_place();\n\
                   \x20   into_map(m);\n\
                   \x20   local_cache();\n\
                   }\n";
        let lines: Vec<u32> = findings(src, false).into_iter().map(|f| f.0).collect();
        // Only the local Mutex's store is per call: in_place and into_map store into statics.
        assert_eq!(lines, [20], "{:?}", findings(src, false));
    }

    /// vaultwarden's `operator_for_path`: a per-path cache in a static concurrent map (no lock
    /// guard). A lookup that returns on a hit, then an insert into the same static: the build
    /// between them runs once per key. A registry (insert without a lookup), a lookup whose hit
    /// does not return, and a local map are per call.
    #[test]
    fn a_keyed_cache_in_a_static_map_is_built_on_the_cold_path() {
        let src = "struct Map;\n\
                   impl Map {\n\
                   \x20   fn get(&self, _k: &str) -> Option<u8> { None }\n\
                   \x20   fn contains_key(&self, _k: &str) -> bool { false }\n\
                   \x20   fn insert(&self, _k: String, _v: u8) {}\n\
                   }\n\
                   static REGISTRY: Map = Map;\n\
                   static SEEN: Map = Map;\n\
                   fn operator_for_path(path: &str) -> u8 {\n\
                   \x20   static OPERATORS: Map = Map;\n\
                   \x20   if let Some(op) = OPERATORS.get(path) { return op; }\n\
                   \x20   let op = { std::fs::create_dir_all(path).unwrap(); 1 };\n\
                   \x20   OPERATORS.insert(path.to_owned(), op);\n\
                   \x20   op\n\
                   }\n\
                   fn checked(path: &str) {\n\
                   \x20   static DONE: Map = Map;\n\
                   \x20   if DONE.contains_key(path) { return; }\n\
                   \x20   let v = std::fs::read(path).unwrap().len() as u8;\n\
                   \x20   DONE.insert(path.to_owned(), v);\n\
                   }\n\
                   fn register(path: &str) {\n\
                   \x20   let v = std::fs::read(path).unwrap().len() as u8;\n\
                   \x20   REGISTRY.insert(path.to_owned(), v);\n\
                   }\n\
                   fn no_return(path: &str) {\n\
                   \x20   if let Some(_) = SEEN.get(path) { println!(\"again\"); }\n\
                   \x20   let v = std::fs::read(path).unwrap().len() as u8;\n\
                   \x20   SEEN.insert(path.to_owned(), v);\n\
                   }\n\
                   fn local(path: &str) -> u8 {\n\
                   \x20   let map = Map;\n\
                   \x20   if let Some(op) = map.get(path) { return op; }\n\
                   \x20   let op = std::fs::read(path).unwrap().len() as u8;\n\
                   \x20   map.insert(path.to_owned(), op);\n\
                   \x20   op\n\
                   }\n\
                   async fn handler() {\n\
                   \x20   operator_for_path(\"a\");\n\
                   \x20   checked(\"b\");\n\
                   \x20   register(\"c\");\n\
                   \x20   no_return(\"d\");\n\
                   \x20   local(\"e\");\n\
                   }\n";
        assert_finding_lines(src, &[41, 42, 43]);
        let with_init = findings(src, true);
        assert!(
            with_init.contains(&(
                39,
                "std::fs::create_dir_all".to_string(),
                "init".to_string()
            )),
            "{with_init:?}"
        );
        assert!(
            with_init.contains(&(40, "std::fs::read".to_string(), "init".to_string())),
            "{with_init:?}"
        );
    }

    /// sccache's `LazyDiskCache::get_or_init`: the arm of the uninitialised variant replaces
    /// `*self` with the initialised one, built by a call that creates the cache directory. That
    /// call runs once per cell. An arm that stores its own variant again, and a `match` on
    /// something other than `self`, are per call.
    #[test]
    fn a_hand_written_lazy_cell_builds_its_value_once() {
        let src = "struct Disk;\n\
                   impl Disk { fn new(p: &str) -> Result<Disk, ()> { std::fs::create_dir_all(p).unwrap(); Ok(Disk) } }\n\
                   enum Lazy { Uninit { root: String }, Init(Disk) }\n\
                   impl Lazy {\n\
                   \x20   fn get_or_init(&mut self) -> Result<&mut Disk, ()> {\n\
                   \x20       match self {\n\
                   \x20           Lazy::Uninit { root } => { *self = Lazy::Init(Disk::new(&root)?); self.get_or_init() }\n\
                   \x20           Lazy::Init(d) => Ok(d),\n\
                   \x20       }\n\
                   \x20   }\n\
                   \x20   fn reopen(&mut self) {\n\
                   \x20       if let Lazy::Init(_) = self { *self = Lazy::Init(Disk::new(\"again\").unwrap()); }\n\
                   \x20   }\n\
                   \x20   fn first(&mut self) {\n\
                   \x20       if let Lazy::Uninit { .. } = self { *self = Lazy::Init(Disk::new(\"first\").unwrap()); }\n\
                   \x20   }\n\
                   }\n\
                   fn rebuild(slot: &mut Lazy, other: &Lazy) {\n\
                   \x20   match other { Lazy::Uninit { .. } => *slot = Lazy::Init(Disk::new(\"x\").unwrap()), Lazy::Init(_) => {} }\n\
                   }\n\
                   async fn handler(l: &mut Lazy, o: &Lazy) {\n\
                   \x20   l.get_or_init();\n\
                   \x20   l.reopen();\n\
                   \x20   l.first();\n\
                   \x20   rebuild(l, o);\n\
                   }\n";
        assert_finding_lines(src, &[23, 25]);
        let with_init = findings(src, true);
        assert!(
            with_init.contains(&(
                22,
                "std::fs::create_dir_all".to_string(),
                "init".to_string()
            )),
            "{with_init:?}"
        );
        assert!(
            with_init.contains(&(
                24,
                "std::fs::create_dir_all".to_string(),
                "init".to_string()
            )),
            "{with_init:?}"
        );
    }
}
