//! Stage 4, *graph*: tasks spawned onto a dedicated runtime (configuration `[runtimes]
//! dedicated`).
//!
//! A project that isolates CPU-heavy or blocking work on a runtime of its own (CeresDB's fix for
//! compaction starving flushes, InfluxDB's "dedicated executor") puts that work in async tasks on
//! purpose: they cannot starve the main runtime's workers. The configuration names what creates
//! or hands out such a runtime — a function or method returning its `Runtime` or `Handle` (also a
//! builder function), or a static holding one — and the async blocks and async closures spawned
//! onto it are then not roots.
//!
//! A task is *spawned onto* a dedicated runtime when it is written in the arguments of `spawn`,
//! `spawn_local` or `block_on` called on a dedicated value, or of `spawn_on(.., handle)` with a
//! dedicated handle among its arguments. A value is dedicated when it is a call of a configured
//! function (as resolved, so re-exports, methods and `Self::` paths work), a configured static,
//! a method called on a dedicated value (`cpu_runtime().handle().clone()`, `CPU.get().unwrap()`),
//! a reference or dereference of one, or a local bound to one earlier in the same function
//! (`let cpu = cpu_handle();`, until the name is bound again). A handle that arrives as a
//! parameter or a struct field is not followed: its task stays a root.
//!
//! Everything lexically inside such an argument runs on the dedicated runtime, so nested async
//! blocks there (a `tokio::spawn` inside the spawned task spawns onto the same runtime) are not
//! roots either. An `async fn` stays a root of its own wherever its future is spawned.

use std::collections::{BTreeMap, BTreeSet};

use crate::index::{FnId, Index, ModId, Res};
use crate::ir::{FnBody, IrBlock, IrExpr, IrPath, IrStmt, IrType, Pos};
use crate::resolve::{Body, BodyKind, CallSite, Target};

/// The configured dedicated-runtime sources, resolved in the index.
pub(crate) struct DedicatedRuntimes {
    /// Functions and methods returning a dedicated runtime or handle.
    fns: BTreeSet<FnId>,
    /// Statics holding one: the module they are declared in, their name and declared type.
    statics: Vec<(ModId, String, IrType)>,
}

/// Methods that run their future argument on the receiver's runtime.
const RUNS_ON_RECEIVER: [&str; 3] = ["spawn", "spawn_local", "block_on"];

impl DedicatedRuntimes {
    /// Resolves the configured paths (`my_crate::rt::cpu_runtime`, `my_crate::rt::CPU`) in every
    /// analysed unit of their crate. Paths that name nothing are ignored, like `offload` paths.
    pub(crate) fn resolve(index: &Index, paths: &[String]) -> DedicatedRuntimes {
        let mut fns = BTreeSet::new();
        let mut statics = Vec::new();
        for path in paths {
            fns.extend(crate::graph::resolve_absolute(index, path));
            let segs: Vec<String> = path.split("::").map(str::to_string).collect();
            let Some((name, _)) = segs.split_last() else {
                continue;
            };
            for u in &index.units {
                if u.crate_name != segs[0] || u.root == usize::MAX || segs.len() < 2 {
                    continue;
                }
                for r in index.resolve_path_in(u.root, &segs[1..], false, 0) {
                    if let Res::Value(m, ty) = r {
                        statics.push((m, name.clone(), ty));
                    }
                }
            }
        }
        DedicatedRuntimes { fns, statics }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.fns.is_empty() && self.statics.is_empty()
    }

    /// The indices (into `bodies`, the function's bodies) of the async blocks and closures of
    /// function `f` that are spawned onto a dedicated runtime.
    pub(crate) fn spawned_bodies(
        &self,
        index: &Index,
        f: FnId,
        bodies: &[Body],
    ) -> BTreeSet<usize> {
        let Some(block) = index.fns[f].ir.body.as_ref().map(FnBody::block) else {
            return BTreeSet::new();
        };
        let mut targets = BTreeMap::new();
        for b in bodies {
            call_targets(&b.calls, &mut targets);
        }
        let mut walk = Walk {
            index,
            dedicated: self,
            module: index.fns[f].module,
            targets,
            locals: BTreeSet::new(),
            spawned: BTreeSet::new(),
        };
        walk.block(&block);
        bodies
            .iter()
            .enumerate()
            .filter(|(_, b)| b.kind != BodyKind::Fn && walk.spawned.contains(&b.pos))
            .map(|(i, _)| i)
            .collect()
    }
}

/// Every call site's targets by position, closure arguments' included.
fn call_targets<'a>(calls: &'a [CallSite], out: &mut BTreeMap<Pos, Vec<&'a Target>>) {
    for c in calls {
        out.entry(c.pos).or_default().extend(c.targets.iter());
        for ca in &c.closure_args {
            call_targets(&ca.calls, out);
        }
    }
}

/// One function's walk, in statement order so `let` bindings are seen before their uses.
struct Walk<'a> {
    index: &'a Index,
    dedicated: &'a DedicatedRuntimes,
    module: ModId,
    targets: BTreeMap<Pos, Vec<&'a Target>>,
    /// Local names currently bound to a dedicated value.
    locals: BTreeSet<String>,
    /// Positions of the async blocks and closures spawned onto a dedicated runtime.
    spawned: BTreeSet<Pos>,
}

impl Walk<'_> {
    fn block(&mut self, b: &IrBlock) {
        for stmt in &b.stmts {
            match stmt {
                IrStmt::Let {
                    pat, init, diverge, ..
                } => {
                    if let Some(init) = init {
                        self.expr(init);
                    }
                    if let Some(d) = diverge {
                        self.block(d);
                    }
                    let dedicated = init.as_ref().is_some_and(|e| self.is_dedicated(e));
                    for name in pat.names() {
                        if dedicated && pat.ident.as_ref() == Some(name) {
                            self.locals.insert(name.to_string());
                        } else {
                            self.locals.remove(name.as_str());
                        }
                    }
                }
                IrStmt::Expr(e) => self.expr(e),
                IrStmt::Item => {}
            }
        }
    }

    fn expr(&mut self, e: &IrExpr) {
        match e {
            IrExpr::MethodCall {
                receiver,
                method,
                args,
                ..
            } => {
                let onto_receiver =
                    RUNS_ON_RECEIVER.contains(&method.as_str()) && self.is_dedicated(receiver);
                let onto_argument =
                    method == "spawn_on" && args.iter().any(|a| self.is_dedicated(a));
                if onto_receiver || onto_argument {
                    for a in args {
                        collect_async(a, &mut self.spawned);
                    }
                }
                self.expr(receiver);
                for a in args {
                    self.expr(a);
                }
            }
            _ => for_each_child(e, |child| match child {
                Child::Expr(x) => self.expr(x),
                Child::Block(b) => self.block(b),
            }),
        }
    }

    fn is_dedicated(&self, e: &IrExpr) -> bool {
        match e {
            IrExpr::Call { pos, .. } => self.calls_configured(*pos),
            IrExpr::MethodCall { receiver, pos, .. } => {
                self.calls_configured(*pos) || self.is_dedicated(receiver)
            }
            IrExpr::Path(p, _) => self.is_dedicated_path(p),
            IrExpr::Ref(inner) | IrExpr::Deref(inner) | IrExpr::Try(inner) => {
                self.is_dedicated(inner)
            }
            _ => false,
        }
    }

    /// The call at `pos` resolved to a configured function.
    fn calls_configured(&self, pos: Pos) -> bool {
        self.targets.get(&pos).is_some_and(|ts| {
            ts.iter()
                .any(|t| matches!(t, Target::Fn(f, _) if self.dedicated.fns.contains(f)))
        })
    }

    fn is_dedicated_path(&self, p: &IrPath) -> bool {
        if let Some(name) = p.single() {
            if self.locals.contains(name) {
                return true;
            }
        }
        let Some(last) = p.segments.last() else {
            return false;
        };
        let names: Vec<String> = p.segments.iter().map(|s| s.name.to_string()).collect();
        self.index
            .resolve_path_in(self.module, &names, p.leading_colon, 0)
            .into_iter()
            .any(|r| match r {
                Res::Value(m, ty) => self
                    .dedicated
                    .statics
                    .iter()
                    .any(|(sm, sn, st)| *sm == m && *sn == last.name && *st == ty),
                _ => false,
            })
    }
}

/// The positions of every async block and async closure written in `e`, nested ones included.
fn collect_async(e: &IrExpr, out: &mut BTreeSet<Pos>) {
    match e {
        IrExpr::Async { pos, .. } => {
            out.insert(*pos);
        }
        IrExpr::Closure {
            is_async: true,
            pos,
            ..
        } => {
            out.insert(*pos);
        }
        _ => {}
    }
    for_each_child(e, |child| match child {
        Child::Expr(x) => collect_async(x, out),
        Child::Block(b) => {
            for stmt in &b.stmts {
                match stmt {
                    IrStmt::Let { init, diverge, .. } => {
                        if let Some(i) = init {
                            collect_async(i, out);
                        }
                        if let Some(d) = diverge {
                            for s in &d.stmts {
                                if let IrStmt::Expr(x) = s {
                                    collect_async(x, out);
                                }
                            }
                        }
                    }
                    IrStmt::Expr(x) => collect_async(x, out),
                    IrStmt::Item => {}
                }
            }
        }
    });
}

/// A sub-expression or a nested block of an expression.
enum Child<'a> {
    Expr(&'a IrExpr),
    Block(&'a IrBlock),
}

/// Calls `f` on each direct child of `e`, in source order.
fn for_each_child<'a>(e: &'a IrExpr, mut f: impl FnMut(Child<'a>)) {
    match e {
        IrExpr::Call { func, args, .. } => {
            f(Child::Expr(func));
            args.iter().for_each(|a| f(Child::Expr(a)));
        }
        IrExpr::MethodCall { receiver, args, .. } => {
            f(Child::Expr(receiver));
            args.iter().for_each(|a| f(Child::Expr(a)));
        }
        IrExpr::Field(x, _)
        | IrExpr::Ref(x)
        | IrExpr::Deref(x)
        | IrExpr::Try(x)
        | IrExpr::Await(x)
        | IrExpr::Cast(x, _)
        | IrExpr::Let(_, x) => f(Child::Expr(x)),
        IrExpr::Closure { body, .. } => f(Child::Expr(body)),
        IrExpr::Async { body, .. } | IrExpr::Block(body) => f(Child::Block(body)),
        IrExpr::If {
            cond,
            then,
            otherwise,
        } => {
            f(Child::Expr(cond));
            f(Child::Block(then));
            if let Some(o) = otherwise {
                f(Child::Expr(o));
            }
        }
        IrExpr::Match { scrutinee, arms } => {
            f(Child::Expr(scrutinee));
            arms.iter().for_each(|(_, x)| f(Child::Expr(x)));
        }
        IrExpr::For { iter, body, .. } => {
            f(Child::Expr(iter));
            f(Child::Block(body));
        }
        IrExpr::StructLit(_, fields) => fields.iter().for_each(|(_, x)| f(Child::Expr(x))),
        IrExpr::Loop(xs)
        | IrExpr::Other(xs)
        | IrExpr::Tuple(xs)
        | IrExpr::Array(xs)
        | IrExpr::Index { exprs: xs, .. }
        | IrExpr::Arith(xs) => {
            xs.iter().for_each(|x| f(Child::Expr(x)));
        }
        IrExpr::Macro { exprs, .. } => exprs.iter().for_each(|x| f(Child::Expr(x))),
        IrExpr::Path(..) | IrExpr::Str(_) | IrExpr::SocketAddrStr | IrExpr::Lit(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::analyze_files_with;

    fn sites(src: &str, dedicated: &[&str]) -> Vec<(u32, String)> {
        let config = crate::config::Config {
            dedicated_runtimes: dedicated.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        };
        crate::testutil::sites(&analyze_files_with(&[("src/lib.rs", src)], &config))
    }

    const RUNTIMES: &str = "pub fn cpu_runtime() -> &'static tokio::runtime::Runtime { todo!() }\n\
        pub fn cpu_handle() -> tokio::runtime::Handle { cpu_runtime().handle().clone() }\n\
        pub static CPU: std::sync::LazyLock<tokio::runtime::Runtime> = std::sync::LazyLock::new(|| todo!());\n\
        pub static IO: std::sync::LazyLock<tokio::runtime::Runtime> = std::sync::LazyLock::new(|| todo!());\n";

    #[test]
    fn tasks_spawned_onto_a_configured_runtime_are_not_roots() {
        let src = format!(
            "{RUNTIMES}\
             fn d() -> std::time::Duration {{ todo!() }}\n\
             pub async fn a() {{\n\
             cpu_runtime().spawn(async {{ std::thread::sleep(d()); }});\n\
             let h = cpu_handle();\n\
             h.spawn(async {{ std::thread::sleep(d()); }});\n\
             CPU.spawn(async {{ tokio::spawn(async {{ std::thread::sleep(d()); }}); }});\n\
             IO.spawn(async {{ std::thread::sleep(d()); }});\n\
             tokio::spawn(async {{ std::thread::sleep(d()); }});\n\
             let h = tokio::runtime::Handle::current();\n\
             h.spawn(async {{ std::thread::sleep(d()); }});\n\
             }}\n"
        );
        let configured = ["app::cpu_runtime", "app::cpu_handle", "app::CPU"];
        // Lines 7, 9 and 10 spawn onto the dedicated runtime (10 also the task nested in the
        // spawned one); 11 (another static), 12 (the current runtime) and 14 (a rebound name)
        // do not.
        assert_eq!(
            sites(&src, &configured),
            [
                (11, "NB0201".into()),
                (12, "NB0201".into()),
                (14, "NB0201".into())
            ]
        );
        // Without the configuration every task is a root.
        assert_eq!(sites(&src, &[]).len(), 6);
    }
}
