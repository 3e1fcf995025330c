//! Stage 3a, *roots*: the functions that may hold a root body, found in the IR before any body is
//! resolved, so that resolution can start from them and follow calls
//! ([`crate::resolve::resolve_reachable`]) instead of resolving the whole dependency graph.
//!
//! A root body ([`crate::graph::build`]) is, in a unit whose package reports roots: the body of an
//! `async fn` or of a `Future::poll` / `Stream::poll_next` impl, the body of a configured root,
//! and every async block or async closure. The first two are known from the signature; the
//! others need a look into the body. The scan here over-approximates where it cannot be exact
//! (a `macro_rules!` expansion is searched whole): a function listed without a root body only
//! costs its resolution, a function missed would lose its findings.

use std::collections::BTreeSet;

use rayon::prelude::*;

use crate::discover::Workspace;
use crate::index::{FnId, Index, ModId};
use crate::ir::{IrBlock, IrExpr, IrPath, IrStmt};
use crate::resolve::BodyKind;

/// Functions that may hold a root body, in id order: every function with a body, in a unit that
/// reports roots, that is a root itself (async fn, poll fn, runtime entry, configured in
/// `roots`) or whose body, with the `macro_rules!` it invokes, contains an async block or an
/// async closure, or that names `block_on`.
pub fn candidates(ws: &Workspace, index: &Index, configured: &[String]) -> Vec<FnId> {
    let report_unit: Vec<bool> = index
        .units
        .iter()
        .map(|u| ws.packages[u.package].report_roots)
        .collect();
    // In parallel (each may decode a body); `collect` keeps id order.
    (0..index.fns.len())
        .into_par_iter()
        .filter(|&f| {
            let def = &index.fns[f];
            let Some(packed) = &def.ir.body else {
                return false;
            };
            if !report_unit[def.unit] || is_test_support(ws, index, f, configured) {
                return false;
            }
            if crate::graph::root_kind(index, f, BodyKind::Fn).is_some()
                || def.ir.attrs.runtime_entry
                || (!configured.is_empty() && configured.contains(&index.fn_display(f)))
            {
                return true;
            }
            // A sync `main` that runs `rt.block_on(run())`: its calls decide which async fns
            // only the block_on thread polls (`threads`).
            if def.ir.attrs.names_block_on {
                return true;
            }
            // Only now is the body decoded ([`crate::ir::FnBody`]).
            AsyncScan::new(index, def.module).block(&packed.block())
        })
        .collect()
}

/// Module names that hold code for tests only, when `#[cfg(test)]` does not say so: helpers
/// that test modules of *other* crates import (`pub mod testkit;`, `pub mod test_utils;`).
const TEST_MODULES: &[&str] = &[
    "test",
    "tests",
    "testing",
    "testkit",
    "testutil",
    "testutils",
    "test_util",
    "test_utils",
    "test_helper",
    "test_helpers",
    "test_support",
];

/// Whether a workspace function is test support rather than production code, and so holds no
/// root (issue 16: code built only for tests is not production). Three signs, any of which will
/// do:
/// - its package is a library that other members use only as a dev-dependency
///   ([`crate::discover::PackageInfo::test_support`]);
/// - its crate or one of its modules is named like a test kit ([`TEST_MODULES`], a `test_` prefix
///   or a `_test(s)` suffix), e.g. kanidm's `kanidmd_lib::testkit::setup_test`;
/// - its name says so: `build_db_pool_for_tests` (lemmy).
///
/// Such a function is still analysed: production code that calls it reaches it as a callee, and
/// only then can its blocking calls be reported. A function listed in `roots` stays a root.
/// Names like `test_connection` are deliberately not taken: production health checks use them.
pub(crate) fn is_test_support(
    ws: &Workspace,
    index: &Index,
    f: FnId,
    configured: &[String],
) -> bool {
    let def = &index.fns[f];
    let unit = &index.units[def.unit];
    // A kit's name, or one ending in `_` and a kit's name (`kanidmd_testkit`, `api_tests`).
    let test_name = |s: &str| {
        s.starts_with("test_")
            || TEST_MODULES.iter().any(|m| {
                s.strip_suffix(m)
                    .is_some_and(|p| p.is_empty() || p.ends_with('_'))
            })
    };
    let name = def.ir.name.as_str();
    let marked = ws.packages[unit.package].test_support
        || test_name(&unit.crate_name)
        || index.modules[def.module].path.iter().any(|m| test_name(m))
        || ["_for_test", "_for_tests", "_for_testing"]
            .iter()
            .any(|s| name.ends_with(s));
    marked && (configured.is_empty() || !configured.contains(&index.fn_display(f)))
}

/// Searches a body for what the resolver turns into a body of its own: `async` blocks and
/// `async` closures, written in the body, in a macro's argument expressions, or in the arms of a
/// `macro_rules!` the resolver would expand there (looked up from the function's module, as
/// `Walker::walk_macro` does).
struct AsyncScan<'i> {
    index: &'i Index,
    module: ModId,
    /// Macros already searched for this function: a macro's arms give the same answer every
    /// time they are searched from the same module, and recursive macros must not loop.
    searched: BTreeSet<usize>,
}

impl<'i> AsyncScan<'i> {
    fn new(index: &'i Index, module: ModId) -> Self {
        AsyncScan {
            index,
            module,
            searched: BTreeSet::new(),
        }
    }

    fn block(&mut self, b: &IrBlock) -> bool {
        b.stmts.iter().any(|s| match s {
            IrStmt::Let { init, diverge, .. } => {
                init.as_ref().is_some_and(|e| self.expr(e))
                    || diverge.as_ref().is_some_and(|d| self.block(d))
            }
            IrStmt::Expr(e) => self.expr(e),
            IrStmt::Item => false,
        })
    }

    fn exprs(&mut self, es: &[IrExpr]) -> bool {
        es.iter().any(|e| self.expr(e))
    }

    fn expr(&mut self, e: &IrExpr) -> bool {
        match e {
            IrExpr::Async { .. } | IrExpr::Closure { is_async: true, .. } => true,
            IrExpr::Closure { body, .. } => self.expr(body),
            IrExpr::Call { func, args, .. } => self.expr(func) || self.exprs(args),
            IrExpr::MethodCall { receiver, args, .. } => self.expr(receiver) || self.exprs(args),
            IrExpr::Path(..) | IrExpr::Str(_) | IrExpr::SocketAddrStr | IrExpr::Lit(_) => false,
            IrExpr::Field(inner, _)
            | IrExpr::Ref(inner)
            | IrExpr::Deref(inner)
            | IrExpr::Try(inner)
            | IrExpr::Await(inner)
            | IrExpr::Cast(inner, _)
            | IrExpr::Let(_, inner) => self.expr(inner),
            IrExpr::Block(b) => self.block(b),
            IrExpr::If {
                cond,
                then,
                otherwise,
            } => {
                self.expr(cond)
                    || self.block(then)
                    || otherwise.as_ref().is_some_and(|o| self.expr(o))
            }
            IrExpr::Match { scrutinee, arms } => {
                self.expr(scrutinee) || arms.iter().any(|(_, body)| self.expr(body))
            }
            IrExpr::For { iter, body, .. } => self.expr(iter) || self.block(body),
            IrExpr::StructLit(_, fields) => fields.iter().any(|(_, x)| self.expr(x)),
            IrExpr::Macro {
                path,
                exprs,
                expanded,
                ..
            } => self.exprs(exprs) || (!expanded && self.expansion(path)),
            IrExpr::Other(children)
            | IrExpr::Tuple(children)
            | IrExpr::Array(children)
            | IrExpr::Index {
                exprs: children, ..
            }
            | IrExpr::Arith(children)
            | IrExpr::Loop(children) => self.exprs(children),
        }
    }

    fn expansion(&mut self, path: &IrPath) -> bool {
        let Some(m) = self.index.find_macro(self.module, path) else {
            return false;
        };
        if !self.searched.insert(m) {
            return false;
        }
        let index = self.index;
        index.macros[m].arms.iter().any(|arm| self.exprs(arm))
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::scratch_workspace;

    /// One crate through resolve, graph and propagate twice: with every function resolved (as
    /// before lazy resolution) and with only the candidates and what they reach.
    struct Both {
        candidates: Vec<String>,
        /// Owners of the root bodies when everything is resolved.
        roots: Vec<String>,
        full: String,
        lazy: String,
    }

    fn both(name: &str, src: &str, configured: &[String]) -> Both {
        let (ws, _scratch) =
            scratch_workspace(name, src, crate::discover::SourceKind::Workspace, false);
        let load = crate::load::load_unit(&ws, 0);
        let index = crate::index::Index::build(&ws, vec![load.loaded]);
        let rules = crate::RuleDb::builtin();
        let candidates = super::candidates(&ws, &index, configured);
        let findings = |from: &[usize]| {
            let resolved = crate::resolve::resolve_reachable(&index, &rules, from);
            let graph = crate::graph::build(&ws, &index, &rules, configured, resolved.bodies);
            let cuts = crate::propagate::Cuts::default();
            // Body indices differ (fewer bodies): name a body by its owner and position.
            let name = |b: usize| (graph.bodies[b].owner, graph.bodies[b].pos);
            let raw: Vec<_> = crate::propagate::run(&graph, &index, &cuts)
                .findings
                .into_iter()
                .map(|r| {
                    let ancestors: Vec<_> = r
                        .reached_from
                        .iter()
                        .map(|a| (name(a.body), a.pos))
                        .collect();
                    (
                        name(r.body),
                        r.root,
                        r.api,
                        r.confidence,
                        r.steps,
                        ancestors,
                    )
                })
                .collect();
            let roots: Vec<usize> = graph
                .bodies
                .iter()
                .filter(|b| b.root.is_some())
                .map(|b| b.owner)
                .collect();
            (format!("{raw:?}"), roots)
        };
        let all: Vec<usize> = (0..index.fns.len()).collect();
        let (full, mut roots) = findings(&all);
        let (lazy, _) = findings(&candidates);
        roots.dedup();
        let name = |f: usize| index.fns[f].ir.name.clone();
        Both {
            candidates: candidates.into_iter().map(name).collect(),
            roots: roots.into_iter().map(name).collect(),
            full,
            lazy,
        }
    }

    #[test]
    fn every_function_holding_a_root_body_is_a_candidate() {
        let src = "use std::future::Future; use std::pin::Pin; use std::task::{Context, Poll};\n\
                   macro_rules! run { ($e:expr) => { async move { $e } } }\n\
                   macro_rules! outer { ($e:expr) => { run!($e) } }\n\
                   macro_rules! plain { ($e:expr) => { $e } }\n\
                   async fn a() {}\n\
                   fn block() { let _f = async { 1 }; }\n\
                   fn closure() { let _c = async move |x: u8| x; }\n\
                   fn in_sync_closure() { let _c = || async { 1 }; }\n\
                   fn in_macro_args() { let _ = vec![async { 1 }]; }\n\
                   fn by_expansion() { let _ = run!(1); }\n\
                   fn by_nested_expansion() { let _ = outer!(1); }\n\
                   fn in_match(x: u8) { match x { 0 => { let _ = async {}; } _ => {} } }\n\
                   fn configured() {}\n\
                   fn sync_only() { let _ = plain!(1); let _c = || 1; }\n\
                   struct F;\n\
                   impl Future for F { type Output = (); fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> { Poll::Ready(()) } }\n";
        let configured = vec!["dep::configured".to_string()];
        let r = both("roots-candidates", src, &configured);
        assert_eq!(
            r.candidates,
            [
                "a",
                "block",
                "closure",
                "in_sync_closure",
                "in_macro_args",
                "by_expansion",
                "by_nested_expansion",
                "in_match",
                "configured",
                "poll"
            ]
        );
        for root in &r.roots {
            assert!(r.candidates.contains(root), "{root} holds a root body");
        }
        assert!(r.roots.len() >= 9, "{:?}", r.roots);
    }

    /// Everything the graph stage reads per function — edges, closure parameters called,
    /// inferred boundary wrappers, stored closures, trait dispatch — comes out the same when only
    /// what the roots reach is resolved.
    #[test]
    fn lazy_resolution_finds_what_full_resolution_finds() {
        let src = "fn offload<F: FnOnce() + Send + 'static>(f: F) { std::thread::spawn(f); }\n\
                   fn offload2<F: FnOnce() + Send + 'static>(g: F) { offload(move || g()); }\n\
                   fn runs<F: FnOnce()>(f: F) { f() }\n\
                   fn runs2<F: FnOnce()>(f: F) { runs(f) }\n\
                   fn unused_wrapper<F: FnOnce()>(f: F) { offload(f) }\n\
                   fn unused() { std::fs::read(\"u\"); runs(|| { std::fs::read(\"v\"); }); }\n\
                   trait Store { fn get(&self); }\n\
                   struct A; struct B;\n\
                   impl Store for A { fn get(&self) { std::fs::read(\"a\"); } }\n\
                   impl Store for B { fn get(&self) { std::thread::sleep(d()); } }\n\
                   fn dyn_get(s: &dyn Store) { s.get() }\n\
                   fn stored() { let fs: Vec<Box<dyn Fn()>> = vec![Box::new(|| { std::fs::read(\"s\"); })]; for f in &fs { f() } }\n\
                   fn d() -> std::time::Duration { todo!() }\n\
                   fn helper() { std::fs::read(\"h\"); }\n\
                   async fn a(s: &dyn Store) {\n\
                   runs(|| helper());\n\
                   offload(|| { std::fs::read(\"x\"); });\n\
                   offload2(|| { std::fs::read(\"x\"); });\n\
                   runs2(|| { std::fs::read(\"x\"); });\n\
                   dyn_get(s);\n\
                   stored();\n\
                   tokio::spawn(async move { A.get(); });\n}\n";
        let r = both("roots-lazy", src, &[]);
        assert_eq!(r.full, r.lazy);
        assert!(
            r.full.contains("line: 14"),
            "helper, through a closure: {}",
            r.full
        );
    }

    /// Test-support code outside `#[cfg(test)]` holds no root (a `testkit` module, a
    /// `_for_tests` fn), yet production code that awaits it still reaches its blocking calls;
    /// `test_connection` is a production name and stays a root; `roots` can re-enable one.
    #[test]
    fn test_support_fns_are_no_roots_but_stay_reachable() {
        let src = "pub mod testkit {\n\
                   pub async fn setup() { std::fs::read(\"a\"); }\n\
                   pub async fn used_in_prod() { std::fs::read(\"b\"); }\n\
                   }\n\
                   pub async fn pool_for_tests() { std::fs::read(\"c\"); }\n\
                   pub async fn test_connection() { std::fs::read(\"d\"); }\n\
                   pub async fn serve() { testkit::used_in_prod().await; }\n";
        let sites = |configured: &[String]| {
            let report = crate::testutil::analyze_files_with(
                &[("src/lib.rs", src)],
                &crate::config::Config {
                    roots: configured.to_vec(),
                    ..Default::default()
                },
            );
            let mut lines: Vec<(u32, Vec<u32>)> = report
                .findings
                .iter()
                .map(|f| {
                    (
                        f.path[0].line,
                        f.reached_from.iter().map(|c| c.line).collect(),
                    )
                })
                .collect();
            lines.sort();
            lines
        };
        assert_eq!(sites(&[]), [(3, vec![7]), (6, vec![])]);
        assert_eq!(
            sites(&["app::pool_for_tests".to_string()]),
            [(3, vec![7]), (5, vec![]), (6, vec![])]
        );
    }
}
