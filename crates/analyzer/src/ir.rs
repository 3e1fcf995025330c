//! The lowered intermediate representation every stage after *parse* works on.
//!
//! Why not keep `syn` trees: `proc_macro2` values are `!Send`, so a `syn::File` cannot leave the
//! rayon thread that parsed it, and a whole dependency graph of syntax trees costs gigabytes.
//! The loader therefore lowers each file, on the thread that parsed it, into this small tree that
//! keeps only what call resolution needs: item names and signatures, `use` trees, and function
//! bodies reduced to calls, bindings and the expressions whose types matter.
//!
//! The IR of a large application's whole dependency graph is most of the run's memory (deno:
//! 4.5 M expressions, 3.7 M path segments), so its nodes are kept small: names written in
//! bodies and paths are interned ([`Name`]), lists are [`ThinVec`]s (one word, no allocation
//! when empty; rustc's AST does the same), and large, rare parts of a node are boxed. The
//! serialized form (the cache's) is the same as with `String`s and `Vec`s. Function bodies are
//! kept encoded until read ([`FnBody`]).

use serde::{Deserialize, Serialize};
pub use thin_vec::{thin_vec, ThinVec};

/// An interned name (a path segment, a method, a field, a local binding): one word, compared by
/// pointer, ordered and displayed as its text. A dependency graph repeats few names millions of
/// times (deno: 5.7 M names in the IR, 178 000 distinct). `ustr`'s table is global and never
/// freed, which suits a process that analyses one workspace.
pub type Name = ustr::Ustr;

/// Interns `s` ([`Name`]).
/// The longest string literal whose text the IR keeps ([`IrExpr::Str`]); longer ones are kept
/// as "a string literal" only. Interned like other names, so the same text costs one copy.
pub const STR_TEXT_MAX: usize = 128;

pub fn name(s: &str) -> Name {
    ustr::ustr(s)
}

// The node sizes the layout is designed for (was 152, 336 and 48 bytes with `String`s and
// `Vec`s): a change that grows a node grows every body of the graph, so it should be deliberate.
#[cfg(target_pointer_width = "64")]
const _: () = {
    assert!(std::mem::size_of::<IrExpr>() == 40);
    assert!(std::mem::size_of::<IrStmt>() == 64);
    assert!(std::mem::size_of::<IrPath>() == 24);
};

/// A position in a source file: 1-based line, 1-based column (characters, as rustc prints).
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

/// A path as written, e.g. `std::fs::read` or `<T as Trait>::f` (`qself` holds `T`).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub struct IrPath {
    pub leading_colon: bool,
    pub segments: ThinVec<IrSegment>,
    /// `<T as Trait>::f`: `T`; the segments then start with the trait's path.
    pub qself: Option<Box<IrType>>,
    /// For a qualified path: how many leading segments name the trait (`<T as a::Tr>::f` → 2).
    pub qself_position: u32,
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub struct IrSegment {
    pub name: Name,
    pub generics: ThinVec<IrType>,
}

impl IrType {
    /// The type behind its references (`&impl Trait` → `impl Trait`).
    pub fn peel_refs(&self) -> &IrType {
        match self {
            IrType::Ref(inner) => inner.peel_refs(),
            other => other,
        }
    }
}

impl IrPath {
    pub fn names(&self) -> Vec<&str> {
        self.segments.iter().map(|s| s.name.as_str()).collect()
    }
    pub fn single(&self) -> Option<&str> {
        if self.segments.len() == 1 && !self.leading_colon && self.qself.is_none() {
            Some(&self.segments[0].name)
        } else {
            None
        }
    }
    pub fn display(&self) -> String {
        let names = self.names().join("::");
        if self.leading_colon {
            format!("::{names}")
        } else {
            names
        }
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
pub enum IrType {
    Path(IrPath),
    Ref(Box<IrType>),
    Ptr(Box<IrType>),
    Slice(Box<IrType>),
    Array(Box<IrType>),
    Tuple(ThinVec<IrType>),
    /// `impl A + B`: trait paths.
    ImplTrait(ThinVec<IrPath>),
    /// `dyn A + B`: trait paths.
    DynTrait(ThinVec<IrPath>),
    FnPtr,
    Never,
    Infer,
    Other,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct IrGeneric {
    pub name: String,
    pub bounds: ThinVec<IrPath>,
}

/// A function signature: enough to type parameters and the call's result.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct IrSig {
    pub is_async: bool,
    pub has_self: bool,
    /// Parameters other than `self`: the binding name (for simple patterns) and the type.
    pub params: ThinVec<(Option<Name>, IrType)>,
    pub self_ty: Option<IrType>,
    pub ret: Option<IrType>,
    pub generics: ThinVec<IrGeneric>,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct IrFn {
    pub name: String,
    pub sig: IrSig,
    pub body: Option<FnBody>,
    pub pos: Pos,
    pub attrs: FnAttrs,
}

/// A function's body, kept encoded from lowering until a stage reads it ([`FnBody::block`]).
///
/// Why: bodies are most of a dependency graph's IR (deno: 313 of 578 MiB live after parsing),
/// yet only the functions an async root reaches are ever resolved (deno: 51 000 of 200 000).
/// Encoded in the cache's format (postcard) a body takes a sixth of its decoded size (deno:
/// 54 MB); lowering packs each body as soon as it is built, so its nodes never sit among the
/// syntax trees the parse phase frees, and the run cache stores the bytes as they are. Stages
/// that read a body (root candidates, resolution, the thread analysis) decode it where they
/// need it and drop it after; resolution does so once per resolved function or instance.
#[derive(Clone)]
pub struct FnBody(Box<[u8]>);

impl FnBody {
    pub fn pack(block: &IrBlock) -> FnBody {
        FnBody(
            postcard::to_allocvec(block)
                .expect("an IR block encodes: every IR type serializes")
                .into_boxed_slice(),
        )
    }

    /// The body, decoded. The bytes were packed by this build ([`FnBody::pack`]) or read from a
    /// cache entry whose checksum and format version matched, so they decode.
    pub fn block(&self) -> IrBlock {
        postcard::from_bytes(&self.0).expect("a packed body decodes: packed by this build")
    }

    /// The encoded bytes, for fingerprints.
    pub fn bytes(&self) -> &[u8] {
        &self.0
    }

    /// The encoded size, for the memory figures of `-v`.
    pub fn encoded_len(&self) -> usize {
        self.0.len()
    }
}

impl std::fmt::Debug for FnBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.block().fmt(f)
    }
}

impl Serialize for FnBody {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serde_bytes::Bytes::new(&self.0).serialize(s)
    }
}

impl<'de> Deserialize<'de> for FnBody {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<FnBody, D::Error> {
        let bytes = serde_bytes::ByteBuf::deserialize(d)?;
        Ok(FnBody(bytes.into_vec().into_boxed_slice()))
    }
}

#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct FnAttrs {
    /// `#[tokio::main]`, `#[tokio::test]`, `#[actix_web::main]`, ...: the body runs on a runtime.
    pub runtime_entry: bool,
    /// `#[tokio::main]` (multi-thread flavor) or `#[async_std::main]`: the body is driven by
    /// `block_on` on the thread that starts the runtime, not by a worker.
    #[serde(default)]
    pub block_on_entry: bool,
    /// `// nonblock:allow(..)` and similar directives are handled in report; this records the
    /// line of the item for suppression lookups.
    pub item_line: u32,
    /// Calls whose value the body memoises in a static (`crate::memo`): built on the cache's
    /// cold path, so kind `init`.
    #[serde(default)]
    pub memoised: Vec<Pos>,
    /// What later stages ask of every body, answered at lowering so that they need not decode
    /// it ([`FnBody`]): the body names `block_on`, builds a current-thread runtime
    /// (`crate::threads::runtime_mentions`), its tail expression names a parameter
    /// (`crate::stored::tail_names_param`).
    pub names_block_on: bool,
    pub builds_current_thread: bool,
    pub tail_names_param: bool,
    /// The body's writes to struct fields, deduplicated ([`crate::fields`]).
    pub field_writes: ThinVec<crate::fields::FieldWrite>,
    /// The body writes a struct literal (`S { f: g }`): only such bodies can store a fn item in
    /// a field ([`crate::field_fns`]), so only they are read for it, and only they of a member's
    /// free functions count in its interface ([`crate::member_changes`]).
    #[serde(default)]
    pub struct_literal: bool,
    /// The fn carries an attribute that may call or export it without its name being written
    /// anywhere (`#[wasm_bindgen]`, `#[no_mangle]`, a framework's proc macro): any attribute
    /// other than documentation, lints, `inline`, `instrument` and the like
    /// (`graph::uncalled_roots` keeps such an fn a root).
    #[serde(default)]
    pub exported: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct IrBlock {
    pub stmts: ThinVec<IrStmt>,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub enum IrStmt {
    Let {
        pat: Box<IrPat>,
        ty: Option<Box<IrType>>,
        init: Option<IrExpr>,
        diverge: Option<IrBlock>,
    },
    Expr(IrExpr),
    /// A fn item nested in a body; it is indexed as an item of the enclosing module.
    Item,
}

/// A struct pattern's type path and its fields' patterns by field name ([`IrPat::fields`]).
pub type FieldPats = (IrPath, ThinVec<(Name, IrPat)>);

/// The part of a pattern the type walker uses.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct IrPat {
    /// `x`, `mut x`, `ref x`: the whole value is bound to this name.
    pub ident: Option<Name>,
    /// `Ok(x)` / `Some(x)` / `Err(x)`: `x` binds the payload of a Result/Option.
    pub unwrap_ident: Option<Name>,
    /// Every other name the pattern binds (their type is unknown).
    pub others: ThinVec<Name>,
    /// `(a, b)`: element patterns, typed from a tuple's elements.
    pub tuple: ThinVec<IrPat>,
    /// `[a, b, ..]`: element patterns of an array or slice, each typed as its element (a rest
    /// pattern `..`, or `rest @ ..`, binds nothing typed and is left out).
    #[serde(default)]
    pub elements: ThinVec<IrPat>,
    /// `Some(S::Server(c))`: the pattern inside `Ok(..)`/`Some(..)` when it is not a plain name.
    #[serde(default)]
    pub unwrap_pat: Option<Box<IrPat>>,
    /// `S::Server(c)`: a tuple variant or tuple struct pattern, with its element patterns, typed
    /// from the variant's fields.
    #[serde(default)]
    pub variant: Option<Box<(IrPath, ThinVec<IrPat>)>>,
    /// `Position { offset, line: l, .. }`: a struct or struct-variant pattern, with each named
    /// field's pattern (a tuple struct written with braces names its fields `0`, `1`), typed
    /// from the type's fields.
    #[serde(default)]
    pub fields: Option<Box<FieldPats>>,
    /// The enum variants the pattern matches, by name, when it is nothing but variants
    /// (`IdList::AllIds`, `Some(_)`, `A(x) | B(x)`); empty when it may match anything (a binding,
    /// `_`, a literal). A call in a `match` arm on a parameter runs only when the parameter is
    /// one of these ([`crate::values`]).
    #[serde(default)]
    pub variants: ThinVec<Name>,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub enum IrExpr {
    Call {
        func: Box<IrExpr>,
        args: ThinVec<IrExpr>,
        pos: Pos,
    },
    MethodCall {
        receiver: Box<IrExpr>,
        method: Name,
        args: ThinVec<IrExpr>,
        pos: Pos,
    },
    Path(IrPath, Pos),
    Field(Box<IrExpr>, Name),
    Ref(Box<IrExpr>),
    Deref(Box<IrExpr>),
    Try(Box<IrExpr>),
    Await(Box<IrExpr>),
    Closure {
        is_async: bool,
        params: ThinVec<(IrPat, Option<IrType>)>,
        body: Box<IrExpr>,
        pos: Pos,
    },
    Async {
        body: IrBlock,
        pos: Pos,
    },
    Block(IrBlock),
    If {
        cond: Box<IrExpr>,
        then: IrBlock,
        otherwise: Option<Box<IrExpr>>,
    },
    /// `let PAT = EXPR` in `if let` / `while let` conditions.
    Let(Box<IrPat>, Box<IrExpr>),
    Match {
        scrutinee: Box<IrExpr>,
        arms: ThinVec<(IrPat, IrExpr)>,
    },
    /// `for pat in iter { body }`: calls `IntoIterator::into_iter(iter)`, then `next` on the
    /// result each turn; `pos` is the iterated expression's.
    For {
        pat: Box<IrPat>,
        iter: Box<IrExpr>,
        body: IrBlock,
        pos: Pos,
    },
    /// `while COND { .. }` (condition, then the body as a block) and `loop { .. }` (the body).
    /// Kept apart from [`IrExpr::Other`] because a lock guard held over a loop is not a short
    /// critical section (see `resolve::guard`).
    Loop(ThinVec<IrExpr>),
    /// `Path { field: value, .. }`: each field's name with its value (`..base` under the name
    /// `..`). The names let a value coerced to a `&dyn Trait` field be followed
    /// ([`crate::instances`]).
    StructLit(IrPath, ThinVec<(Name, IrExpr)>),
    Cast(Box<IrExpr>, Box<IrType>),
    /// A string literal, with its text when it is at most [`STR_TEXT_MAX`] bytes long: a rule
    /// may exempt calls given a short fixed argument (`small_literal_bytes`, `rules/cpu.toml`'s
    /// regex-compile).
    Str(Option<Name>),
    /// A string literal that parses as a `std::net::SocketAddr` (`"127.0.0.1:8080"`): handed to
    /// `bind` or `to_socket_addrs` it resolves no name (see the rules' `dns_only_apis`).
    SocketAddrStr,
    /// A macro invocation: the expressions its tokens parse to, and the macro's path so that a
    /// `macro_rules!` of the analysed graph can be expanded at this site.
    Macro {
        path: Box<IrPath>,
        exprs: ThinVec<IrExpr>,
        pos: Pos,
        /// The invocation's first token when it is a plain identifier followed by `:`, `,` or
        /// `=>` (`db_run! { conn: .. }`): the value a leading `$conn:ident` metavariable stands
        /// for, so an expansion calling a method on it (`$conn.run(..)`) can be resolved.
        #[serde(default)]
        first_ident: Option<Name>,
        /// `exprs` is the expansion of a `macro_rules!` of the invocation's own crate (see
        /// `macro_rules`), not the invocation's tokens: resolution walks it and nothing else.
        #[serde(default)]
        expanded: bool,
    },
    /// Any other expression: its type is unknown, its sub-expressions are still walked.
    Other(ThinVec<IrExpr>),
    /// A tuple expression `(a, b)`: typed as the tuple of its elements' types, so an address
    /// written `(ip, port)` is known to need no name resolution (`resolve`'s `is_ip_address`)
    /// and `let (a, b) = (x, y)` binds typed locals.
    Tuple(ThinVec<IrExpr>),
    /// An array expression `[a, b]` (or `[x; N]`, as `[x]`): typed as a slice of its
    /// elements' type, so `[".ii", ".c"].iter().find(..)` resolves.
    Array(ThinVec<IrExpr>),
    /// `base[index]`: `exprs` is `[base, index]`; `range` when the index is a range (`v[1..]`,
    /// a slice of the base's elements). Typed as the element (`Vec<T>` → `T`, `HashMap<K, V>` →
    /// `V`, an analysed type's `Index::Output`), so `self.trans[sid].as_usize()` resolves.
    Index {
        exprs: ThinVec<IrExpr>,
        range: bool,
    },
    /// `a + b`, `a >> b` and the other arithmetic and bit operators (not comparisons, not `&&`
    /// and `||`): `[lhs, rhs]`. On primitive numbers the value has their type
    /// (`(sid.as_usize() >> stride).checked_sub(2)`); an operator impl of an analysed type is
    /// not modelled (unknown).
    Arith(ThinVec<IrExpr>),
    /// A number, char or byte literal, by its type's name: the suffix (`0u8`), else
    /// [`UNSUFFIXED_INTEGER`] or [`UNSUFFIXED_FLOAT`] (the context decides: `1 + n`), `char`,
    /// `u8` for `b'a'`. Typed so that `let mut class = 0u8; class.checked_add(1)` resolves
    /// (aho-corasick's alphabet).
    Lit(Name),
}

/// [`IrExpr::Lit`]'s name for an integer literal without a suffix.
pub const UNSUFFIXED_INTEGER: &str = "{integer}";
/// [`IrExpr::Lit`]'s name for a float literal without a suffix.
pub const UNSUFFIXED_FLOAT: &str = "{float}";

impl IrPat {
    /// Every name the pattern binds, nested patterns included.
    pub fn names(&self) -> Vec<&Name> {
        let mut out: Vec<&Name> = self.ident.iter().chain(&self.unwrap_ident).collect();
        out.extend(&self.others);
        let nested = self
            .tuple
            .iter()
            .chain(&self.elements)
            .chain(self.unwrap_pat.as_deref())
            .chain(self.variant.iter().flat_map(|v| v.1.iter()))
            .chain(self.fields.iter().flat_map(|f| f.1.iter().map(|(_, p)| p)));
        for p in nested {
            out.extend(p.names());
        }
        out
    }
}

impl IrExpr {
    /// Whether `pred` holds for this expression or any expression inside it (closure and async
    /// bodies included), depth first.
    pub fn any(&self, pred: &mut dyn FnMut(&IrExpr) -> bool) -> bool {
        if pred(self) {
            return true;
        }
        let block = |b: &IrBlock, pred: &mut dyn FnMut(&IrExpr) -> bool| b.any(pred);
        match self {
            IrExpr::Call { func, args, .. } => func.any(pred) || args.iter().any(|a| a.any(pred)),
            IrExpr::MethodCall { receiver, args, .. } => {
                receiver.any(pred) || args.iter().any(|a| a.any(pred))
            }
            IrExpr::Field(i, _)
            | IrExpr::Ref(i)
            | IrExpr::Deref(i)
            | IrExpr::Try(i)
            | IrExpr::Await(i)
            | IrExpr::Cast(i, _)
            | IrExpr::Let(_, i) => i.any(pred),
            IrExpr::Closure { body, .. } => body.any(pred),
            IrExpr::Async { body, .. } | IrExpr::Block(body) => block(body, pred),
            IrExpr::If {
                cond,
                then,
                otherwise,
            } => {
                cond.any(pred)
                    || block(then, pred)
                    || otherwise.as_ref().is_some_and(|o| o.any(pred))
            }
            IrExpr::Match { scrutinee, arms } => {
                scrutinee.any(pred) || arms.iter().any(|(_, a)| a.any(pred))
            }
            IrExpr::For { iter, body, .. } => iter.any(pred) || block(body, pred),
            IrExpr::StructLit(_, fields) => fields.iter().any(|(_, x)| x.any(pred)),
            IrExpr::Other(xs)
            | IrExpr::Tuple(xs)
            | IrExpr::Array(xs)
            | IrExpr::Index { exprs: xs, .. }
            | IrExpr::Arith(xs)
            | IrExpr::Loop(xs)
            | IrExpr::Macro { exprs: xs, .. } => xs.iter().any(|x| x.any(pred)),
            IrExpr::Path(..) | IrExpr::Str(_) | IrExpr::SocketAddrStr | IrExpr::Lit(_) => false,
        }
    }
}

impl IrBlock {
    /// Whether `pred` holds for any expression of the block's statements ([`IrExpr::any`]).
    pub fn any(&self, pred: &mut dyn FnMut(&IrExpr) -> bool) -> bool {
        self.stmts.iter().any(|s| match s {
            IrStmt::Let { init, diverge, .. } => {
                init.as_ref().is_some_and(|e| e.any(pred))
                    || diverge.as_ref().is_some_and(|d| d.any(pred))
            }
            IrStmt::Expr(e) => e.any(pred),
            IrStmt::Item => false,
        })
    }
}

/// The identifier a `macro_rules!` transcriber's metavariables (`$body`, `$conn`) are lowered to.
pub const METAVAR_PLACEHOLDER: &str = "__nb_meta";

/// One `use` leaf: `use a::b::c as d;` → name `d`, path `a::b::c`; `use a::b::*;` → glob.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct IrUse {
    pub path: Vec<String>,
    pub leading_colon: bool,
    pub alias: Option<String>,
    pub glob: bool,
    /// `pub use` (any `pub(..)`): a glob import of the module sees it; a private `use` is seen
    /// only inside its own module.
    pub public: bool,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub enum IrItemKind {
    Struct {
        /// Named fields (`a: T`) and tuple fields (`0: T`).
        fields: Vec<(String, IrType)>,
        generics: ThinVec<IrGeneric>,
    },
    Enum {
        /// Each variant's fields, named (`a: T`) or positional (`0: T`), so a pattern binding
        /// a variant's payload (`S::Server(c)`) gets its type.
        variants: Vec<(String, Vec<(String, IrType)>)>,
        generics: ThinVec<IrGeneric>,
    },
    Union,
    Trait {
        methods: Vec<IrFn>,
        supertraits: ThinVec<IrPath>,
        /// The trait's own type parameters (`Parser<I, O, E>`), bound at a call through a
        /// generic's bound (`A: Parser<Input, Output, Error>`).
        #[serde(default)]
        generics: ThinVec<IrGeneric>,
        /// `type AllocatedMemory: SliceWrapperMut<T>;`: each associated type's trait bounds,
        /// all a generic caller knows of a value of that type (`AllocF::AllocatedMemory`).
        assoc_bounds: Vec<(String, ThinVec<IrPath>)>,
    },
    /// `type Result<T, E = Error> = std::result::Result<T, E>`: the target and the alias's type
    /// parameters with their defaults, so a use (`Result<File>`) can be substituted.
    TypeAlias {
        target: IrType,
        params: Vec<(String, Option<IrType>)>,
    },
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct IrTypeItem {
    pub name: String,
    pub kind: IrItemKind,
    pub pos: Pos,
    /// The traits a `#[derive(..)]` implements (`clap::Parser`): the generated impl is never
    /// seen (proc macros do not run), so `Options::parse()` resolves to the trait's method.
    #[serde(default)]
    pub derives: ThinVec<IrPath>,
}

#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct IrImpl {
    pub self_ty: IrType,
    pub trait_: Option<IrPath>,
    pub generics: ThinVec<IrGeneric>,
    pub fns: Vec<IrFn>,
    /// `type Target = X;` and other associated types, by name.
    pub assoc_types: Vec<(String, IrType)>,
    /// `const MAX: StateID = ..;` and other associated constants, by name, with their types.
    #[serde(default)]
    pub assoc_consts: Vec<(String, IrType)>,
}

/// A `macro_rules!` definition: each arm's transcriber lowered leniently to expressions.
#[derive(Serialize, Deserialize, Clone, Debug)]
pub struct IrMacro {
    pub name: String,
    pub exported: bool,
    pub arms: Vec<ThinVec<IrExpr>>,
}

/// The items of one module, in source order, after `#[cfg]` evaluation.
#[derive(Serialize, Deserialize, Clone, Debug, Default)]
pub struct IrModule {
    /// Module path inside its crate (`[]` for the crate root).
    pub path: Vec<String>,
    pub file: u32,
    pub fns: Vec<IrFn>,
    pub types: Vec<IrTypeItem>,
    pub impls: Vec<IrImpl>,
    pub uses: Vec<IrUse>,
    /// `extern crate foo as bar;`: (crate, alias).
    pub extern_crates: Vec<(String, Option<String>)>,
    /// Functions declared in `extern` blocks: called across the FFI boundary.
    pub foreign_fns: Vec<IrFn>,
    pub macros: Vec<IrMacro>,
    /// Names of modules declared in this module (children), in order.
    pub children: Vec<String>,
    /// Constants and statics, with their types, so `CONST.method()` resolves.
    pub values: Vec<(String, IrType)>,
    /// Writes to struct fields outside functions (const and static initialisers, `macro_rules!`
    /// arms): they always count ([`crate::fields`]).
    pub field_writes: Vec<crate::fields::FieldWrite>,
    /// Every name the module's code and attributes mention as a path's last segment (or an
    /// attribute's identifier or string), sorted: a dependency's function nothing mentions never
    /// runs in this build ([`crate::fields`]).
    pub mentions: Vec<Name>,
    /// The method names its method calls (`x.name()`) mention, sorted. Apart from `mentions`
    /// because a free function cannot be called with method syntax (`graph::uncalled_roots`:
    /// atuin's `client.login(..)` does not call `atuin_client::login::login`).
    #[serde(default)]
    pub method_mentions: Vec<Name>,
}
