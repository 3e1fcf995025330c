//! How long a lock guard can live: the critical-section analysis behind the rules' `guard_apis`.
//!
//! Why: a std or parking_lot lock taken in async code only for a short critical section that
//! never waits is the pattern Tokio's documentation recommends (`Mutex` docs, "Which kind of
//! mutex should you use?"). Reporting every such `lock()` was the largest false-positive class of
//! the real-crate audit (docs/accuracy.md). What makes a lock acquisition starve a worker is a
//! critical section that waits, or runs long, while other acquirers park: the guard held over an
//! `.await` or over a `while`/`loop` loop (which may spin or wait on a condition; a `for` loop
//! over a finite iterator is ordinary code). So a call to a guard API is reported only when its
//! guard can outlive a short, non-waiting stretch of code.
//!
//! The analysis is syntactic, on the lowered IR, per call site ([`Hold`]):
//! - the guard is a temporary of its statement (`*m.lock().unwrap() += 1`,
//!   `m.read().unwrap().clone()`): it lives until the statement ends, so the section is short
//!   unless the statement itself awaits or loops (`match m.lock().unwrap().get(k) { .. }`
//!   keeps the guard for the whole `match`, arms included);
//! - the guard is bound by `let` (`let g = m.lock().unwrap();`): it lives until the block ends,
//!   so the section is short unless a later statement of the block awaits or loops;
//! - the guard is a temporary of a `match` arm's body: an arm is a temporary scope of its own,
//!   so only that body's awaits and loops count (not the scrutinee's `.await`, not other arms);
//! - the guard is the block's value (`fn guard(&self) -> MutexGuard<..> { self.m.lock().unwrap() }`):
//!   it escapes to the caller ([`Hold::Escapes`]); such a lock helper is judged at each call site
//!   by the same rules, as if the caller had called `lock` itself.
//!
//! A blocking call *inside* a short critical section is still reported on its own (its rule
//! matches the call), so the lock is the only thing this analysis stops reporting.

use crate::ir::{IrBlock, IrExpr, IrStmt, Pos};

/// How long the value a call returns can live, as far as lock guards are concerned.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Hold {
    /// Not decided (a call site outside any statement, e.g. in a `let` closure's expression
    /// body before it is classified): treated like [`Hold::Long`].
    #[default]
    Unknown,
    /// Dropped before any `.await` or loop: a short critical section if the call takes a lock.
    Short,
    /// May live across an `.await` or a loop.
    Long,
    /// The value of a block (a function's result): its guard is held as long as the caller
    /// keeps it. Reported like [`Hold::Long`]; a function whose only blocking effect is such a
    /// guard is a lock helper, judged at its call sites (`graph::guard_helpers`).
    Escapes,
}

impl Hold {
    /// A temporary's hold in code that waits (awaits or loops) or does not.
    pub fn of_temporary(waits: bool) -> Hold {
        if waits {
            Hold::Long
        } else {
            Hold::Short
        }
    }
}

/// How the value of a statement's outermost call is kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    /// `let PAT = CALL...;`: lives until the block ends.
    Let,
    /// The block's last expression: its value leaves the block.
    Escapes,
}

/// The call whose value a statement keeps, with how it is kept: the call at the end of the
/// chain of value-preserving adapters (`unwrap`, `expect`, `?`, ...) of a `let` initialiser or of
/// the block's last expression.
pub fn kept_call(stmt: &IrStmt, is_last: bool) -> Option<(Pos, Binding)> {
    match stmt {
        IrStmt::Let { init: Some(e), .. } => value_call(e).map(|p| (p, Binding::Let)),
        IrStmt::Expr(e) if is_last => value_call(e).map(|p| (p, Binding::Escapes)),
        _ => None,
    }
}

/// Methods that hand their receiver's guard on unchanged (wrapped in `Ok`/`Some` or unwrapped).
const GUARD_PRESERVING: &[&str] = &[
    "unwrap",
    "expect",
    "unwrap_or_else",
    "unwrap_or_default",
    "map_err",
    "ok",
    "into",
];

/// The call whose value an expression is: the call at the end of its chain of value-preserving
/// adapters (see [`kept_call`]).
pub fn value_call(e: &IrExpr) -> Option<Pos> {
    match e {
        IrExpr::MethodCall {
            receiver, method, ..
        } if GUARD_PRESERVING.contains(&method.as_str()) => value_call(receiver),
        IrExpr::Try(inner) => value_call(inner),
        IrExpr::MethodCall { pos, .. } | IrExpr::Call { pos, .. } => Some(*pos),
        _ => None,
    }
}

/// The statements after `let g = ..;` (`stmt`) while `g` lives: up to an explicit `drop(g);`
/// (garage's `known_hosts` guard is dropped before the pings are spawned), else all of `rest`.
pub fn until_dropped<'s>(stmt: &IrStmt, rest: &'s [IrStmt]) -> &'s [IrStmt] {
    let IrStmt::Let { pat, .. } = stmt else {
        return rest;
    };
    let Some(name) = &pat.ident else {
        return rest;
    };
    let drops_it = |s: &IrStmt| {
        let IrStmt::Expr(IrExpr::Call { func, args, .. }) = s else {
            return false;
        };
        let is_drop = matches!(&**func, IrExpr::Path(p, _)
            if matches!(p.names().as_slice(), ["drop"] | ["mem", "drop"] | ["std", "mem", "drop"]));
        is_drop
            && matches!(args.as_slice(), [IrExpr::Path(a, _)] if a.single() == Some(name.as_str()))
    };
    match rest.iter().position(drops_it) {
        Some(end) => &rest[..end],
        None => rest,
    }
}

/// Whether a statement can wait or run for an unbounded time: it contains an `.await`, a loop,
/// or an awaiting macro (`select!`, `join!`). Async blocks and async closures written in it are
/// other futures: their awaits do not suspend this one.
pub fn stmt_waits(s: &IrStmt) -> bool {
    match s {
        IrStmt::Let { init, diverge, .. } => {
            init.as_ref().is_some_and(expr_waits) || diverge.as_ref().is_some_and(block_waits)
        }
        IrStmt::Expr(e) => expr_waits(e),
        IrStmt::Item => false,
    }
}

fn block_waits(b: &IrBlock) -> bool {
    b.stmts.iter().any(stmt_waits)
}

/// See [`stmt_waits`].
pub fn expr_waits(e: &IrExpr) -> bool {
    match e {
        IrExpr::Await(_) | IrExpr::Loop(_) => true,
        // A `for` loop walks a finite iterator: over an in-memory collection (garage's
        // `for (id, info) in known_hosts.list.iter()` under the `RwLock` read guard, deno's
        // diagnostics pushed under a `Mutex`) it is a short section like any other code. What it
        // waits on is reported on its own: its awaits here, its blocking calls by their rules.
        IrExpr::For { iter, body, .. } => expr_waits(iter) || block_waits(body),
        IrExpr::Async { .. } => false,
        IrExpr::Closure { is_async, body, .. } => !is_async && expr_waits(body),
        IrExpr::Call { func, args, .. } => expr_waits(func) || args.iter().any(expr_waits),
        IrExpr::MethodCall { receiver, args, .. } => {
            expr_waits(receiver) || args.iter().any(expr_waits)
        }
        IrExpr::Field(inner, _)
        | IrExpr::Ref(inner)
        | IrExpr::Deref(inner)
        | IrExpr::Try(inner)
        | IrExpr::Cast(inner, _)
        | IrExpr::Let(_, inner) => expr_waits(inner),
        IrExpr::Block(b) => block_waits(b),
        IrExpr::If {
            cond,
            then,
            otherwise,
        } => expr_waits(cond) || block_waits(then) || otherwise.as_deref().is_some_and(expr_waits),
        IrExpr::Match { scrutinee, arms } => {
            expr_waits(scrutinee) || arms.iter().any(|(_, body)| expr_waits(body))
        }
        IrExpr::Macro { path, exprs, .. } => {
            let name = path.segments.last().map(|s| s.name.as_str());
            matches!(name, Some("select" | "join" | "try_join")) || exprs.iter().any(expr_waits)
        }
        IrExpr::StructLit(_, fields) => fields.iter().any(|(_, x)| expr_waits(x)),
        IrExpr::Other(exprs)
        | IrExpr::Tuple(exprs)
        | IrExpr::Array(exprs)
        | IrExpr::Index { exprs, .. }
        | IrExpr::Arith(exprs) => exprs.iter().any(expr_waits),
        IrExpr::Path(..) | IrExpr::Str(_) | IrExpr::SocketAddrStr | IrExpr::Lit(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use crate::testutil::lib_rs_sites as one;

    #[test]
    fn temporaries_short_let_bound_guards_for_loops_and_dropped_guards_are_not_reported() {
        let src = "use std::sync::{Mutex, RwLock};\n\
                   async fn a(m: &Mutex<Vec<u8>>, rw: &RwLock<u8>) -> usize {\n\
                   *m.lock().unwrap() = Vec::new();\n\
                   let n = *rw.read().unwrap();\n\
                   let len = m.lock().unwrap().len();\n\
                   let g = m.lock().unwrap();\n\
                   g.len() + n as usize + len\n}\n\
                   async fn over_a_for_loop(m: &Mutex<Vec<u8>>, out: &mut Vec<u8>) {\n\
                   let g = m.lock().unwrap();\n\
                   for x in g.iter() { out.push(*x); }\n}\n\
                   async fn dropped_before_the_await(m: &Mutex<Vec<u8>>) {\n\
                   let g = m.lock().unwrap();\n\
                   let n = g.len();\n\
                   drop(g);\n\
                   tick(n).await;\n}\n\
                   async fn tick(_: usize) {}\n";
        assert_eq!(one(src), []);
    }

    #[test]
    fn guards_held_over_an_await_or_a_loop_are_reported_also_through_lock_helpers() {
        let src = "use std::sync::Mutex;\n\
                   async fn over_await(m: &Mutex<u8>) {\n\
                   let g = m.lock().unwrap();\n\
                   tick().await;\n\
                   drop(g);\n}\n\
                   async fn over_loop(m: &Mutex<Vec<u8>>) {\n\
                   let g = m.lock().unwrap();\n\
                   while g.is_empty() { let _ = 1; }\n}\n\
                   async fn in_match(m: &Mutex<Option<u8>>) {\n\
                   match *m.lock().unwrap() { Some(_) => tick().await, None => {} }\n}\n\
                   async fn helper_held_over_await(m: &Mutex<u8>) {\n\
                   let g = guard(m);\n tick().await;\n drop(g);\n}\n\
                   async fn helper_short(m: &Mutex<u8>) -> u8 {\n\
                   *guard(m) + 1\n}\n\
                   fn guard(m: &Mutex<u8>) -> std::sync::MutexGuard<'_, u8> {\n\
                   m.lock().unwrap()\n}\n\
                   async fn tick() {}\n";
        assert_eq!(
            one(src),
            [
                (3, "NB0701".into()),
                (8, "NB0701".into()),
                (12, "NB0701".into()),
                (15, "NB0701".into()),
            ]
        );
    }

    #[test]
    fn a_guard_in_a_match_arm_lives_for_that_arm_only() {
        // aws-config's IMDS provider: the await is the scrutinee, the lock is taken in an arm
        // after it and released when the arm ends.
        let src = "use std::sync::RwLock;\n\
                   async fn a(cache: &RwLock<Option<u8>>) -> Option<u8> {\n\
                   match fetch().await {\n\
                   Some(v) => Some(v),\n\
                   None => *cache.read().unwrap(),\n\
                   }\n}\n\
                   async fn b(cache: &RwLock<Option<u8>>) -> u8 {\n\
                   match fetch().await {\n\
                   Some(v) => v,\n\
                   None => { let g = cache.read().unwrap(); fetch().await; g.unwrap_or(0) }\n\
                   }\n}\n\
                   async fn fetch() -> Option<u8> { None }\n";
        assert_eq!(one(src), [(11, "NB0701".into())]);
    }

    #[test]
    fn addresses_that_are_already_ip_addresses_resolve_no_name() {
        let src = "use std::net::{SocketAddr, TcpListener, ToSocketAddrs, UdpSocket};\n\
                   async fn a(addr: SocketAddr, host: &str) {\n\
                   let u = UdpSocket::bind(\"127.0.0.1:34254\");\n\
                   let l = TcpListener::bind(addr);\n\
                   let l2 = TcpListener::bind(&addr);\n\
                   let r = \"10.0.0.1:80\".to_socket_addrs();\n\
                   let h = TcpListener::bind(host);\n\
                   let n = UdpSocket::bind(\"localhost:34254\");\n\
                   let c = std::net::TcpStream::connect(addr);\n}\n";
        // A host name is resolved (7, 8); a TCP connect waits for the peer whatever the address (9).
        assert_eq!(
            one(src),
            [
                (7, "NB0301".into()),
                (8, "NB0301".into()),
                (9, "NB0301".into())
            ]
        );
    }

    /// lemmy's `HttpServer::bind((SETTINGS.bind, SETTINGS.port))`: actix resolves the address
    /// with `addrs.to_socket_addrs()` on its generic parameter, two calls down. An `(IpAddr,
    /// port)` pair (written in place or bound to a local first), a `SocketAddr` or an `IP:port`
    /// literal handed down excludes that call; a host name, or a pair naming one, keeps it.
    #[test]
    fn an_ip_address_passed_down_to_a_generic_resolver_resolves_no_name() {
        let src = "use std::net::{IpAddr, SocketAddr, ToSocketAddrs};\n\
                   pub struct Server;\n\
                   impl Server { pub fn bind<A: ToSocketAddrs>(self, addrs: A) -> Server { bind_addrs(addrs); self } }\n\
                   fn bind_addrs<A: ToSocketAddrs>(addrs: A) { addrs.to_socket_addrs(); }\n\
                   pub struct Settings { pub bind: IpAddr, pub port: u16, pub host: String }\n\
                   pub static SETTINGS: std::sync::LazyLock<Settings> = std::sync::LazyLock::new(|| todo!());\n\
                   async fn serve(s: &Settings, sa: SocketAddr) {\n\
                   Server.bind((SETTINGS.bind, SETTINGS.port));\n\
                   let pair = (s.bind, s.port);\n\
                   Server.bind(pair);\n\
                   Server.bind(sa);\n\
                   Server.bind(\"127.0.0.1:80\");\n\
                   Server.bind((s.host.as_str(), s.port));\n\
                   Server.bind(\"example.com:80\");\n\
                   }\n";
        assert_eq!(one(src), [(13, "NB0301".into()), (14, "NB0301".into())]);
    }

    #[test]
    fn other_waits_of_the_same_rule_are_reported_whatever_the_statement() {
        // Only the rules' `guard_apis` are judged by their critical section: a channel receive
        // or a join waits for another thread however briefly its value is kept.
        let src = "async fn a(rx: std::sync::mpsc::Receiver<u8>) -> u8 {\n\
                   rx.recv().unwrap()\n}\n";
        assert_eq!(one(src), [(2, "NB0701".into())]);
    }
}
