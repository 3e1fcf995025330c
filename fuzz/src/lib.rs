//! Structured inputs for the fuzz targets: small workspaces of up to three crates whose files are
//! built from Rust-shaped fragments (modules with `#[path]`, `use` trees with globs and aliases,
//! async and sync functions calling each other and blocking APIs, impls, traits, macros, extern
//! blocks) mixed with raw text. Random bytes alone almost never get past the parser; these reach
//! the index, the resolver and the propagation, which is where an analyzer's bugs live.

use std::fmt::Write;
use std::path::PathBuf;

use arbitrary::Arbitrary;
use nonblock_analyzer::render::{human, sarif, DiskSources};
use nonblock_analyzer::synthetic::{analyze_synthetic, builtin_rules, scratch_dir, SyntheticCrate};

/// Identifiers drawn from a small pool so that fragments refer to each other.
const NAMES: &[&str] = &[
    "a", "b", "c", "m", "n", "f", "g", "h", "load", "read", "sleep", "lock", "new", "run", "fs",
    "io", "thread", "sync", "Self", "self", "super", "crate", "std", "tokio", "dep", "util", "T",
    "S", "r#fn", "r#mod", "Client", "Mutex", "Config", "main",
];

const BLOCKING: &[&str] = &[
    "std::fs::read(\"x\")",
    "std::thread::sleep(std::time::Duration::from_millis(1))",
    "std::net::TcpStream::connect(\"h:1\")",
    "std::fs::File::open(\"x\").unwrap().read_to_end(&mut v)",
    "reqwest::blocking::get(\"u\")",
    "futures::executor::block_on(async {})",
    "std::io::stdin().read_line(&mut s)",
    "std::process::Command::new(\"x\").output()",
    "m.lock().unwrap()",
    "tokio::task::spawn_blocking(move || std::fs::read(\"x\"))",
    "tokio::fs::read(\"x\").await",
    "serde_json::from_str::<V>(s)",
];

const TYPES: &[&str] = &[
    "String",
    "Vec<u8>",
    "std::sync::Mutex<T>",
    "Arc<Mutex<S>>",
    "&str",
    "Option<S>",
    "Result<S, E>",
    "Box<dyn Fn()>",
    "impl Future<Output = ()>",
    "std::path::PathBuf",
    "Self",
    "fn() -> S",
    "(S, T)",
    "[u8; 4]",
    "&'static dyn Trait",
];

const PATHS: &[&str] = &[
    "m.rs",
    "m/mod.rs",
    "a/b.rs",
    "../outside.rs",
    "/nonexistent/x.rs",
    "lib.rs",
    "",
    ".",
    "a/../m.rs",
    "src/lib.rs",
    "x\u{0}y.rs",
    "very/deep/dir/f.rs",
];

#[derive(Arbitrary, Debug, Clone, Copy)]
pub struct Name(u8);

impl Name {
    fn s(self) -> &'static str {
        NAMES[self.0 as usize % NAMES.len()]
    }
}

#[derive(Arbitrary, Debug)]
pub struct Tree {
    pub crates: Vec<CrateSpec>,
}

#[derive(Arbitrary, Debug)]
pub struct CrateSpec {
    pub files: Vec<FileSpec>,
}

#[derive(Arbitrary, Debug)]
pub struct FileSpec {
    pub path: FilePath,
    pub items: Vec<Item>,
}

#[derive(Arbitrary, Debug)]
pub enum FilePath {
    Lib,
    Named(Name),
    ModRs(Name),
    Nested(Name, Name),
    Fixed(u8),
}

#[derive(Arbitrary, Debug)]
pub enum Item {
    Mod {
        name: Name,
        inline: Option<Vec<Item>>,
        path: Option<u8>,
        cfg: Option<Cfg>,
    },
    Use {
        public: bool,
        path: Vec<Name>,
        tail: UseTail,
    },
    Fn(FnItem),
    Struct(Name, Vec<(Name, u8)>),
    Impl {
        ty: Name,
        generic: bool,
        trait_: Option<Name>,
        fns: Vec<FnItem>,
    },
    Trait(Name, Vec<FnItem>),
    MacroRules(Name, Vec<Stmt>),
    MacroCall(Name, Vec<Item>),
    Extern(Vec<Name>),
    Alias(Name, u8),
    Const(Name, u8),
    ExternCrate(Name, Option<Name>),
    Raw(String),
}

#[derive(Arbitrary, Debug)]
pub enum UseTail {
    Name(Name),
    Glob,
    Group(Vec<Name>),
    Alias(Name, Name),
}

#[derive(Arbitrary, Debug)]
pub enum Cfg {
    Test,
    Unix,
    Windows,
    Feature(Name),
    Not(Box<Cfg>),
    All(Vec<Cfg>),
}

#[derive(Arbitrary, Debug)]
pub struct FnItem {
    pub name: Name,
    pub asyncness: bool,
    pub tokio_main: bool,
    pub params: Vec<(Name, u8)>,
    pub ret: Option<u8>,
    pub body: Option<Vec<Stmt>>,
}

#[derive(Arbitrary, Debug)]
pub enum Stmt {
    Expr(Expr),
    Let(Name, Option<u8>, Expr),
    Item(Box<Item>),
}

#[derive(Arbitrary, Debug)]
pub enum Expr {
    Call(Vec<Name>, Vec<Expr>),
    Method(Box<Expr>, Name, Vec<Expr>),
    Path(Vec<Name>),
    Closure(bool, Vec<Name>, Box<Expr>),
    Async(Vec<Stmt>),
    Block(Vec<Stmt>),
    SpawnBlocking(Vec<Stmt>),
    ThreadSpawn(Vec<Stmt>),
    Await(Box<Expr>),
    Try(Box<Expr>),
    Ref(Box<Expr>),
    Field(Box<Expr>, Name),
    Macro(Name, Vec<Expr>),
    Blocking(u8),
    Match(Box<Expr>, Vec<Expr>),
    If(Box<Expr>, Vec<Stmt>, Vec<Stmt>),
    For(Name, Box<Expr>, Vec<Stmt>),
    Nest(u8, u16),
    Lit(u32),
    Raw(String),
}

/// Caps rendered recursion so one input stays small (the analyzer's own depth limits are tested
/// by `Expr::Nest`, which nests up to a few thousand levels on its own).
const MAX_DEPTH: usize = 24;

struct Out {
    text: String,
    depth: usize,
}

impl Out {
    fn path(&mut self, segs: &[Name]) {
        if segs.is_empty() {
            self.text.push('x');
        }
        for (i, s) in segs.iter().take(6).enumerate() {
            if i > 0 {
                self.text.push_str("::");
            }
            self.text.push_str(s.s());
        }
    }

    fn cfg(&mut self, c: &Cfg) {
        match c {
            Cfg::Test => self.text.push_str("test"),
            Cfg::Unix => self.text.push_str("unix"),
            Cfg::Windows => self.text.push_str("windows"),
            Cfg::Feature(n) => {
                let _ = write!(self.text, "feature = \"{}\"", n.s());
            }
            Cfg::Not(inner) if self.depth < MAX_DEPTH => {
                self.depth += 1;
                self.text.push_str("not(");
                self.cfg(inner);
                self.text.push(')');
                self.depth -= 1;
            }
            Cfg::All(cs) if self.depth < MAX_DEPTH => {
                self.depth += 1;
                self.text.push_str("all(");
                for c in cs.iter().take(4) {
                    self.cfg(c);
                    self.text.push(',');
                }
                self.text.push(')');
                self.depth -= 1;
            }
            _ => self.text.push_str("unix"),
        }
    }

    fn items(&mut self, items: &[Item]) {
        for item in items.iter().take(16) {
            self.item(item);
            self.text.push('\n');
        }
    }

    fn item(&mut self, item: &Item) {
        if self.depth >= MAX_DEPTH {
            return;
        }
        self.depth += 1;
        match item {
            Item::Mod {
                name,
                inline,
                path,
                cfg,
            } => {
                if let Some(c) = cfg {
                    self.text.push_str("#[cfg(");
                    self.cfg(c);
                    self.text.push_str(")]\n");
                }
                if let Some(p) = path {
                    let _ = writeln!(
                        self.text,
                        "#[path = {:?}]",
                        PATHS[*p as usize % PATHS.len()]
                    );
                }
                let _ = write!(self.text, "pub mod {}", name.s());
                match inline {
                    Some(items) => {
                        self.text.push_str(" {\n");
                        self.items(items);
                        self.text.push('}');
                    }
                    None => self.text.push(';'),
                }
            }
            Item::Use { public, path, tail } => {
                if *public {
                    self.text.push_str("pub ");
                }
                self.text.push_str("use ");
                self.path(path);
                self.text.push_str("::");
                match tail {
                    UseTail::Name(n) => self.text.push_str(n.s()),
                    UseTail::Glob => self.text.push('*'),
                    UseTail::Group(ns) => {
                        self.text.push('{');
                        for n in ns.iter().take(5) {
                            let _ = write!(self.text, "{}, ", n.s());
                        }
                        self.text.push('}');
                    }
                    UseTail::Alias(a, b) => {
                        let _ = write!(self.text, "{} as {}", a.s(), b.s());
                    }
                }
                self.text.push(';');
            }
            Item::Fn(f) => self.fn_item(f),
            Item::Struct(name, fields) => {
                let _ = write!(self.text, "pub struct {} {{", name.s());
                for (n, t) in fields.iter().take(5) {
                    let _ = write!(self.text, "pub {}: {}, ", n.s(), ty(*t));
                }
                self.text.push('}');
            }
            Item::Impl {
                ty: t,
                generic,
                trait_,
                fns,
            } => {
                self.text
                    .push_str(if *generic { "impl<T: Tr> " } else { "impl " });
                if let Some(tr) = trait_ {
                    let _ = write!(self.text, "{} for ", tr.s());
                }
                self.text.push_str(if *generic { "T" } else { t.s() });
                self.text.push_str(" {\n");
                for f in fns.iter().take(6) {
                    self.fn_item(f);
                    self.text.push('\n');
                }
                self.text.push('}');
            }
            Item::Trait(name, fns) => {
                let _ = writeln!(self.text, "pub trait {} {{", name.s());
                for f in fns.iter().take(6) {
                    self.fn_item(f);
                    self.text.push('\n');
                }
                self.text.push('}');
            }
            Item::MacroRules(name, body) => {
                let _ = write!(
                    self.text,
                    "#[macro_export]\nmacro_rules! {} {{ () => {{ ",
                    name.s()
                );
                self.stmts(body);
                self.text.push_str(" }; ($e:expr) => { $crate::f($e) }; }");
            }
            Item::MacroCall(name, items) => {
                let _ = write!(self.text, "{}! {{\n", name.s());
                self.items(items);
                self.text.push('}');
            }
            Item::Extern(names) => {
                self.text.push_str("extern \"C\" {\n");
                for n in names.iter().take(8) {
                    let _ = writeln!(self.text, "    pub fn {}(x: i32) -> i32;", n.s());
                }
                self.text.push('}');
            }
            Item::Alias(name, t) => {
                let _ = write!(self.text, "pub type {} = {};", name.s(), ty(*t));
            }
            Item::Const(name, t) => {
                let _ = write!(self.text, "pub static {}: {} = todo!();", name.s(), ty(*t));
            }
            Item::ExternCrate(name, alias) => {
                let _ = write!(self.text, "extern crate {}", name.s());
                if let Some(a) = alias {
                    let _ = write!(self.text, " as {}", a.s());
                }
                self.text.push(';');
            }
            Item::Raw(s) => self.text.push_str(s),
        }
        self.depth -= 1;
    }

    fn fn_item(&mut self, f: &FnItem) {
        if f.tokio_main {
            self.text.push_str("#[tokio::main]\n");
        }
        self.text.push_str("pub ");
        if f.asyncness {
            self.text.push_str("async ");
        }
        let _ = write!(self.text, "fn {}(", f.name.s());
        for (n, t) in f.params.iter().take(4) {
            let _ = write!(self.text, "{}: {}, ", n.s(), ty(*t));
        }
        self.text.push(')');
        if let Some(t) = f.ret {
            let _ = write!(self.text, " -> {}", ty(t));
        }
        match &f.body {
            Some(body) => {
                self.text.push_str(" {\n");
                self.stmts(body);
                self.text.push('}');
            }
            None => self.text.push(';'),
        }
    }

    fn stmts(&mut self, stmts: &[Stmt]) {
        for s in stmts.iter().take(12) {
            match s {
                Stmt::Expr(e) => {
                    self.expr(e);
                    self.text.push_str(";\n");
                }
                Stmt::Let(n, t, e) => {
                    let _ = write!(self.text, "let {}", n.s());
                    if let Some(t) = t {
                        let _ = write!(self.text, ": {}", ty(*t));
                    }
                    self.text.push_str(" = ");
                    self.expr(e);
                    self.text.push_str(";\n");
                }
                Stmt::Item(i) => {
                    self.item(i);
                    self.text.push('\n');
                }
            }
        }
    }

    fn args(&mut self, args: &[Expr]) {
        self.text.push('(');
        for a in args.iter().take(4) {
            self.expr(a);
            self.text.push_str(", ");
        }
        self.text.push(')');
    }

    fn block(&mut self, stmts: &[Stmt]) {
        self.text.push_str("{ ");
        self.stmts(stmts);
        self.text.push('}');
    }

    fn expr(&mut self, e: &Expr) {
        if self.depth >= MAX_DEPTH {
            self.text.push_str("()");
            return;
        }
        self.depth += 1;
        match e {
            Expr::Call(p, args) => {
                self.path(p);
                self.args(args);
            }
            Expr::Method(recv, name, args) => {
                self.expr(recv);
                let _ = write!(self.text, ".{}", name.s());
                self.args(args);
            }
            Expr::Path(p) => self.path(p),
            Expr::Closure(is_move, params, body) => {
                if *is_move {
                    self.text.push_str("move ");
                }
                self.text.push('|');
                for p in params.iter().take(3) {
                    let _ = write!(self.text, "{}, ", p.s());
                }
                self.text.push_str("| ");
                self.expr(body);
            }
            Expr::Async(stmts) => {
                self.text.push_str("async move ");
                self.block(stmts);
            }
            Expr::Block(stmts) => self.block(stmts),
            Expr::SpawnBlocking(stmts) => {
                self.text.push_str("tokio::task::spawn_blocking(move || ");
                self.block(stmts);
                self.text.push(')');
            }
            Expr::ThreadSpawn(stmts) => {
                self.text.push_str("std::thread::spawn(move || ");
                self.block(stmts);
                self.text.push(')');
            }
            Expr::Await(inner) => {
                self.expr(inner);
                self.text.push_str(".await");
            }
            Expr::Try(inner) => {
                self.expr(inner);
                self.text.push('?');
            }
            Expr::Ref(inner) => {
                self.text.push('&');
                self.expr(inner);
            }
            Expr::Field(inner, name) => {
                self.expr(inner);
                let _ = write!(self.text, ".{}", name.s());
            }
            Expr::Macro(name, args) => {
                let _ = write!(self.text, "{}!", name.s());
                self.args(args);
            }
            Expr::Blocking(i) => self.text.push_str(BLOCKING[*i as usize % BLOCKING.len()]),
            Expr::Match(scrutinee, arms) => {
                self.text.push_str("match ");
                self.expr(scrutinee);
                self.text.push_str(" { ");
                for (i, arm) in arms.iter().take(4).enumerate() {
                    let _ = write!(self.text, "{i} => ");
                    self.expr(arm);
                    self.text.push_str(", ");
                }
                self.text.push_str("_ => () }");
            }
            Expr::If(cond, then, other) => {
                self.text.push_str("if ");
                self.expr(cond);
                self.text.push(' ');
                self.block(then);
                self.text.push_str(" else ");
                self.block(other);
            }
            Expr::For(var, iter, body) => {
                let _ = write!(self.text, "for {} in ", var.s());
                self.expr(iter);
                self.text.push(' ');
                self.block(body);
            }
            Expr::Nest(kind, depth) => {
                // Deep nesting on its own: up to 4096 levels of parens, blocks, unary ops or
                // closures around a blocking call.
                let depth = (*depth % 4096) as usize;
                let (open, close) = match kind % 4 {
                    0 => ("(", ")"),
                    1 => ("{", "}"),
                    2 => ("!", ""),
                    _ => ("|| ", ""),
                };
                self.text.push_str(&open.repeat(depth));
                self.text.push_str(BLOCKING[0]);
                self.text.push_str(&close.repeat(depth));
            }
            Expr::Lit(n) => {
                let _ = write!(self.text, "{n}");
            }
            Expr::Raw(s) => self.text.push_str(s),
        }
        self.depth -= 1;
    }
}

fn ty(i: u8) -> &'static str {
    TYPES[i as usize % TYPES.len()]
}

fn file_path(p: &FilePath) -> String {
    match p {
        FilePath::Lib => "src/lib.rs".into(),
        FilePath::Named(n) => format!("src/{}.rs", n.s()),
        FilePath::ModRs(n) => format!("src/{}/mod.rs", n.s()),
        FilePath::Nested(a, b) => format!("src/{}/{}.rs", a.s(), b.s()),
        FilePath::Fixed(i) => {
            let p = PATHS[*i as usize % PATHS.len()];
            if p.is_empty() || p.starts_with('/') || p.contains('\0') || p == "." {
                "src/lib.rs".into()
            } else {
                format!("src/{p}")
            }
        }
    }
}

impl Tree {
    /// The synthetic crates this tree describes: the first is the workspace member, the others
    /// its dependencies (`dep`, `util`).
    pub fn render(&self) -> Vec<SyntheticCrate> {
        const CRATES: [&str; 3] = ["app", "dep", "util"];
        self.crates
            .iter()
            .take(3)
            .enumerate()
            .map(|(i, c)| SyntheticCrate {
                name: CRATES[i].into(),
                member: i == 0,
                files: c
                    .files
                    .iter()
                    .take(6)
                    .map(|f| {
                        let mut out = Out {
                            text: String::new(),
                            depth: 0,
                        };
                        out.items(&f.items);
                        (file_path(&f.path), out.text.into_bytes())
                    })
                    .collect(),
            })
            .collect()
    }
}

/// Analyses `crates` and renders the report every way the CLI can, checking the invariants a
/// crash detector cannot see: no caught internal error, JSON that parses back.
pub fn check(crates: &[SyntheticCrate]) {
    let dir: PathBuf = scratch_dir("fuzz");
    let Ok(report) = analyze_synthetic(&dir, crates) else {
        // The file system refused a generated name: not the analyzer's business.
        let _ = std::fs::remove_dir_all(&dir);
        return;
    };
    assert_eq!(
        report.stats.internal_errors, 0,
        "caught internal error: {:?}",
        report.errors
    );
    let json = report.to_json();
    serde_json_roundtrip(&json);
    let sources = DiskSources {
        workspace_root: dir.clone(),
    };
    let _ = human::render(&report, &sources, false);
    // SARIF's rule table (every rule's docs) dwarfs a small input's analysis: render it only when
    // there is something to locate.
    if !report.findings.is_empty() {
        let _ = sarif::render(
            &report,
            builtin_rules(),
            &sarif::Roots::detect(&dir),
            &sources,
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

fn serde_json_roundtrip(json: &str) {
    if let Err(e) = serde_json::from_str::<serde_json::Value>(json) {
        panic!("the report is not valid JSON: {e}");
    }
}
