//! Expansion of `macro_rules!` macros defined in the crate being lowered.
//!
//! Without it, a macro's arms are walked with every metavariable unknown: calls on `$me` stay
//! unresolved, and a tt-muncher (html5ever's `go!`, which re-invokes itself and `shorthand!` for
//! each step) is walked arm × arm at every invocation (96 000 unresolved calls on lemmy from those
//! two macros alone). Here an invocation is matched against the arms in order, metavariables are
//! bound to the invocation's tokens, and the first matching arm's transcriber is instantiated; the
//! result is lowered like code written at the call site.
//!
//! Matching follows `macro_rules!`: arms are tried in order, and inside an arm there is no
//! backtracking. Fragments are parsed with `syn` (`expr` with `syn::Expr`, `ty` with `syn::Type`,
//! …). A repetition takes iterations greedily while its body matches a fork of the input; rustc
//! decides with one token of lookahead, which agrees on the macros real code writes (it rejects
//! the ambiguous ones). Not supported (the caller falls back to walking every arm): meta-variable
//! expressions (`${count(x)}`).
//!
//! Macros of other crates: a `#[macro_export]` definition of a direct dependency is expanded too
//! ([`ExternMacros`]), with `$crate` read as the name the invoking crate knows the dependency by.
//! Definitions cross threads as text (token streams are `!Send`) and are parsed on first use in
//! each invoking crate; their own tokens carry no position in the invoking file, so what they
//! generate is placed at the invocation ([`respan_definition`]).
//!
//! Hand-rolled: the one maintained implementation, rust-analyzer's `mbe` (published as
//! `ra_ap_mbe`), works on rust-analyzer's own token trees and syntax tree, with no stable API; the
//! matcher below is small because `syn` parses the fragments.

use std::collections::HashMap;
use std::rc::Rc;

use proc_macro2::{Delimiter, Group, Ident, Spacing, TokenStream, TokenTree};
use syn::ext::IdentExt;
use syn::parse::discouraged::Speculative;
use syn::parse::{ParseStream, Parser};

/// A `macro_rules!` definition: its arms, in order.
#[derive(Debug, Clone)]
pub struct MacroRules {
    arms: Vec<Arm>,
    /// Matching work done so far (arms tried × invocation tokens), against [`MAX_MATCH_WORK`].
    spent: std::cell::Cell<usize>,
}

/// Matching work one macro may cost in one crate. A generated parser with hundreds of arms
/// (typenum's `__op_internal__`: 26 000 expansions on lemmy, two minutes) stops being expanded
/// here and falls back to the arm walk; macros that call blocking code are cheap to match.
const MAX_MATCH_WORK: usize = 5_000_000;

#[derive(Debug, Clone)]
struct Arm {
    matcher: Vec<Matcher>,
    transcriber: TokenStream,
}

/// One element of an arm's matcher.
#[derive(Debug, Clone)]
enum Matcher {
    /// A token that must appear as written (identifier, punctuation or literal, by text).
    Token(TokenTree),
    /// A delimited group whose contents match the inner matchers exactly.
    Group(Delimiter, Vec<Matcher>),
    /// `$name:kind`.
    Fragment(String, Fragment),
    /// `$( .. ) sep? op`.
    Repeat {
        body: Vec<Matcher>,
        separator: Option<TokenTree>,
        at_most_one: bool,
        at_least_one: bool,
    },
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Fragment {
    Ident,
    Expr,
    Ty,
    Path,
    Pat,
    PatParam,
    Stmt,
    Block,
    Item,
    Literal,
    Lifetime,
    Meta,
    Vis,
    Tt,
}

impl Fragment {
    fn from_name(name: &str) -> Option<Fragment> {
        Some(match name {
            "ident" => Fragment::Ident,
            "expr" | "expr_2021" => Fragment::Expr,
            "ty" => Fragment::Ty,
            "path" => Fragment::Path,
            "pat" => Fragment::Pat,
            "pat_param" => Fragment::PatParam,
            "stmt" => Fragment::Stmt,
            "block" => Fragment::Block,
            "item" => Fragment::Item,
            "literal" => Fragment::Literal,
            "lifetime" => Fragment::Lifetime,
            "meta" => Fragment::Meta,
            "vis" => Fragment::Vis,
            "tt" => Fragment::Tt,
            _ => return None,
        })
    }

    /// Parses one fragment from `input` and returns its tokens.
    fn parse(self, input: ParseStream) -> syn::Result<TokenStream> {
        use quote::ToTokens;
        Ok(match self {
            Fragment::Ident => Ident::parse_any(input)?.into_token_stream(),
            // An `expr` keeps its precedence where it is substituted (`$a * 2` with `a = 1 + 1`):
            // rustc wraps it in an invisible group, and so does `syn`'s parser.
            Fragment::Expr => {
                let e: syn::Expr = input.parse()?;
                TokenTree::Group(Group::new(Delimiter::None, e.into_token_stream())).into()
            }
            Fragment::Ty => input.parse::<syn::Type>()?.into_token_stream(),
            Fragment::Path => input.parse::<syn::Path>()?.into_token_stream(),
            Fragment::Pat => syn::Pat::parse_multi_with_leading_vert(input)?.into_token_stream(),
            Fragment::PatParam => syn::Pat::parse_single(input)?.into_token_stream(),
            Fragment::Stmt => parse_stmt(input)?,
            Fragment::Block => input.parse::<syn::Block>()?.into_token_stream(),
            Fragment::Item => input.parse::<syn::Item>()?.into_token_stream(),
            Fragment::Literal => {
                let mut out = TokenStream::new();
                if input.peek(syn::Token![-]) {
                    out.extend(input.parse::<syn::Token![-]>()?.into_token_stream());
                }
                out.extend(input.parse::<syn::Lit>()?.into_token_stream());
                out
            }
            Fragment::Lifetime => input.parse::<syn::Lifetime>()?.into_token_stream(),
            Fragment::Meta => input.parse::<syn::Meta>()?.into_token_stream(),
            Fragment::Vis => input.parse::<syn::Visibility>()?.into_token_stream(),
            Fragment::Tt => input.parse::<TokenTree>()?.into(),
        })
    }
}

/// A `stmt` fragment: a statement without its trailing semicolon (`let x = 1`, an item, an
/// expression).
fn parse_stmt(input: ParseStream) -> syn::Result<TokenStream> {
    use quote::ToTokens;
    if input.peek(syn::Token![let]) {
        // `syn` parses `let` only as a whole statement with its `;`: collect the tokens up to
        // the next top-level `;` or the end.
        let mut out = TokenStream::new();
        while !input.is_empty() && !input.peek(syn::Token![;]) {
            out.extend(std::iter::once(input.parse::<TokenTree>()?));
        }
        return Ok(out);
    }
    if let Ok(item) = input.fork().parse::<syn::Item>() {
        let _ = input.parse::<syn::Item>()?;
        return Ok(item.into_token_stream());
    }
    Ok(input.parse::<syn::Expr>()?.into_token_stream())
}

/// What a metavariable is bound to: a fragment's tokens, or one binding per repetition.
/// Shared (`Rc`): transcribing a repetition rebinds each name per iteration, and a tt-muncher's
/// `$($rest:tt)*` holds thousands of tokens; copying them per iteration was quadratic.
#[derive(Debug, Clone)]
enum Binding {
    One(TokenStream),
    /// A `tt` fragment: one token tree, without a stream of its own around it.
    Tree(TokenTree),
    Seq(Rc<Vec<Binding>>),
}

type Bindings = HashMap<String, Binding>;

impl MacroRules {
    /// Parses a `macro_rules!` body (`(matcher) => { transcriber }; ..`). `None` when no arm
    /// parses; arms using unsupported matcher syntax are dropped.
    pub fn parse(body: TokenStream) -> Option<MacroRules> {
        let tts: Vec<TokenTree> = body.into_iter().collect();
        let mut arms = Vec::new();
        let mut i = 0;
        while i + 3 < tts.len() + 1 {
            match (&tts[i], tts.get(i + 1), tts.get(i + 2), tts.get(i + 3)) {
                (
                    TokenTree::Group(m),
                    Some(TokenTree::Punct(a)),
                    Some(TokenTree::Punct(b)),
                    Some(TokenTree::Group(t)),
                ) if a.as_char() == '=' && b.as_char() == '>' => {
                    if let Some(matcher) = parse_matcher(m.stream()) {
                        arms.push(Arm {
                            matcher,
                            transcriber: t.stream(),
                        });
                    }
                    i += 4;
                }
                _ => i += 1,
            }
        }
        (!arms.is_empty()).then_some(MacroRules {
            arms,
            spent: std::cell::Cell::new(0),
        })
    }

    /// Expands an invocation's tokens with the first arm that matches them. `$crate` becomes
    /// `::crate_name`. `None` when no arm matches, the transcriber uses unsupported syntax, the
    /// input is a data table ([`MAX_INPUT_TOKENS`]) or the macro has spent [`MAX_MATCH_WORK`].
    pub fn expand(&self, input: &TokenStream, crate_name: &str) -> Option<TokenStream> {
        self.expand_counted(input, token_count(input, MAX_INPUT_TOKENS), crate_name)
    }

    /// [`Self::expand`] with the input's [`token_count`] already taken, with a limit of at least
    /// [`MAX_INPUT_TOKENS`] (the lowering counts it for its own budget; counting copies the
    /// invocation's tokens, group by group).
    pub fn expand_counted(
        &self,
        input: &TokenStream,
        size: usize,
        crate_name: &str,
    ) -> Option<TokenStream> {
        if size > MAX_INPUT_TOKENS || self.spent.get() > MAX_MATCH_WORK {
            return None;
        }
        let head: Vec<TokenTree> = input.clone().into_iter().take(HEAD_TOKENS).collect();
        let work = size.max(1);
        let startable: Vec<bool> = self
            .arms
            .iter()
            .map(|arm| !cannot_start(&arm.matcher, &head))
            .collect();
        if !startable.contains(&true) {
            self.spent.set(self.spent.get() + work * self.arms.len());
            return None;
        }
        // One token buffer for every arm tried: each arm matches a fork of the same stream
        // (building a buffer over the invocation per arm was most of what matching built).
        let mut matched: Option<(&Arm, Bindings)> = None;
        let parsed = (|stream: ParseStream| {
            for (arm, &startable) in self.arms.iter().zip(&startable) {
                self.spent.set(self.spent.get() + work);
                if !startable {
                    continue;
                }
                let fork = stream.fork();
                let mut bindings = Bindings::new();
                if match_all(&arm.matcher, &fork, &mut bindings).is_ok() {
                    matched = Some((arm, bindings));
                    break;
                }
            }
            stream.parse::<TokenStream>().map(drop)
        })
        .parse2(input.clone());
        let (arm, bindings) = matched.filter(|_| parsed.is_ok())?;
        transcribe(arm.transcriber.clone(), &bindings, crate_name)
    }
}

/// One crate's `#[macro_export]` macros as text, built once and shared by the crates that
/// depend on it.
#[derive(Debug, Default)]
pub struct Exports {
    /// Macro name → definition body text.
    bodies: HashMap<String, std::sync::Arc<str>>,
    fingerprint: [u8; 16],
}

impl Exports {
    /// From a crate's exports (name, body text), each name once.
    pub fn new(exports: Vec<(String, String)>) -> Exports {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        let mut bodies = HashMap::new();
        for (name, body) in exports {
            h.update(name.as_bytes());
            h.update([0]);
            h.update(body.as_bytes());
            h.update([1]);
            bodies.insert(name, body.into());
        }
        let mut fingerprint = [0; 16];
        fingerprint.copy_from_slice(&h.finalize()[..16]);
        Exports {
            bodies,
            fingerprint,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.bodies.is_empty()
    }
}

/// The `#[macro_export]` macros a crate can name from its direct dependencies.
#[derive(Debug, Default)]
pub struct ExternMacros {
    /// Each dependency with exports, by the name the invoking crate knows it by, in name order.
    deps: Vec<(String, std::sync::Arc<Exports>)>,
    /// A hash of the dependencies' names and exports, for the cache key of the invoking crate;
    /// empty when there are none.
    pub fingerprint: String,
    /// The invoking crate's own macros are never expanded at their call sites nor their arms
    /// walked (`opaque_macros` in `rules/runtime.toml`): their arms are not lowered
    /// ([`ExternMacros::for_opaque_crate`]).
    pub opaque: bool,
}

impl ExternMacros {
    /// From each dependency's name in the invoking crate and its exports; those without any are
    /// left out.
    pub fn new(deps: Vec<(String, std::sync::Arc<Exports>)>) -> ExternMacros {
        use sha2::{Digest, Sha256};
        let deps: Vec<_> = deps.into_iter().filter(|(_, e)| !e.is_empty()).collect();
        let mut fingerprint = String::new();
        if !deps.is_empty() {
            let mut h = Sha256::new();
            for (krate, exports) in &deps {
                h.update(krate.as_bytes());
                h.update([0]);
                h.update(exports.fingerprint);
            }
            fingerprint = crate::rules::hex(&h.finalize()[..16]);
        }
        ExternMacros {
            deps,
            fingerprint,
            opaque: false,
        }
    }

    /// The same, for a crate whose macros the resolver never expands (tracing, log): lowering
    /// the arms of every `macro_rules!` of such a crate (tracing's `event!` family, hundreds of
    /// arms, each parsed leniently with its metavariables as placeholders) was two fifths of
    /// parsing tracing, for IR that nothing reads. The cache key tells such a unit apart.
    pub fn for_opaque_crate(mut self) -> ExternMacros {
        self.opaque = true;
        self.fingerprint = format!("opaque:{}", self.fingerprint);
        self
    }

    /// The dependency and body text of macro `name` named through `krate` (`Some`: a path
    /// `krate::name!`), or by its bare name when exactly one dependency exports it (`info!` of
    /// both `log` and `tracing` is ambiguous without the crate's imports, and stays an arm walk).
    pub fn lookup(&self, krate: Option<&str>, name: &str) -> Option<(String, std::sync::Arc<str>)> {
        let mut found = self
            .deps
            .iter()
            .filter(|(k, _)| krate.is_none_or(|want| want == k))
            .filter_map(|(k, e)| Some((k.clone(), e.bodies.get(name)?.clone())));
        let first = found.next()?;
        found.next().is_none().then_some(first)
    }
}

/// Parses a dependency's macro body from its text with every token at `Span::call_site()`, so
/// [`respan_definition`] can tell its tokens from the invocation's after expansion.
pub fn parse_definition(text: &str) -> Option<MacroRules> {
    let tokens: TokenStream = text.parse().ok()?;
    MacroRules::parse(set_spans(tokens, proc_macro2::Span::call_site(), &|_| true))
}

/// Places the tokens an expansion took from a dependency's definition (at `call_site`) at the
/// invocation (`at`); the invocation's own tokens keep their positions.
pub fn respan_definition(tokens: TokenStream, at: proc_macro2::Span) -> TokenStream {
    set_spans(tokens, at, &|s| s.byte_range() == (0..0))
}

fn set_spans(
    tokens: TokenStream,
    to: proc_macro2::Span,
    which: &dyn Fn(proc_macro2::Span) -> bool,
) -> TokenStream {
    tokens
        .into_iter()
        .map(|mut tt| {
            let here = which(tt.span());
            if let TokenTree::Group(g) = &tt {
                let mut inner = Group::new(g.delimiter(), set_spans(g.stream(), to, which));
                inner.set_span(if here { to } else { g.span() });
                return TokenTree::Group(inner);
            }
            if here {
                tt.set_span(to);
            }
            tt
        })
        .collect()
}

/// Invocations longer than this are data tables (lookup tables, generated lists), not code
/// whose calls matter; a tt-muncher over them would re-match the rest at every step.
pub const MAX_INPUT_TOKENS: usize = 20_000;

/// The number of tokens in a stream, groups' contents included, counting stops past `limit`.
pub fn token_count(tokens: &TokenStream, limit: usize) -> usize {
    let mut n = 0;
    for tt in tokens.clone() {
        n += 1;
        if let TokenTree::Group(g) = &tt {
            n += token_count(&g.stream(), limit);
        }
        if n > limit {
            break;
        }
    }
    n
}

fn parse_matcher(tokens: TokenStream) -> Option<Vec<Matcher>> {
    let mut out = Vec::new();
    let mut tts = tokens.into_iter().peekable();
    while let Some(tt) = tts.next() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == '$' => match tts.next()? {
                TokenTree::Ident(name) => {
                    // `$name:kind`; a `$name` without a kind is not a valid matcher.
                    match (tts.next()?, tts.next()?) {
                        (TokenTree::Punct(colon), TokenTree::Ident(kind))
                            if colon.as_char() == ':' =>
                        {
                            let fragment = Fragment::from_name(&kind.to_string())?;
                            out.push(Matcher::Fragment(name.to_string(), fragment));
                        }
                        _ => return None,
                    }
                }
                TokenTree::Group(g) if g.delimiter() == Delimiter::Parenthesis => {
                    let body = parse_matcher(g.stream())?;
                    let (separator, op) = repetition_tail(&mut tts)?;
                    out.push(Matcher::Repeat {
                        body,
                        separator,
                        at_most_one: op == '?',
                        at_least_one: op == '+',
                    });
                }
                _ => return None,
            },
            TokenTree::Group(g) => {
                out.push(Matcher::Group(g.delimiter(), parse_matcher(g.stream())?))
            }
            other => out.push(Matcher::Token(other)),
        }
    }
    Some(out)
}

/// After `$( .. )`: an optional separator token, then `*`, `+` or `?`.
fn repetition_tail(
    tts: &mut std::iter::Peekable<impl Iterator<Item = TokenTree>>,
) -> Option<(Option<TokenTree>, char)> {
    let is_op = |tt: &TokenTree| matches!(tt, TokenTree::Punct(p) if matches!(p.as_char(), '*' | '+' | '?'));
    let first = tts.next()?;
    if is_op(&first) {
        // `$(..),*` has separator `,`; `$(..)*` none. A `?` can take no separator.
        let TokenTree::Punct(p) = &first else {
            return None;
        };
        return Some((None, p.as_char()));
    }
    let op = tts.next()?;
    match &op {
        TokenTree::Punct(p) if is_op(&op) => Some((Some(first), p.as_char())),
        _ => None,
    }
}

/// Matches the whole of `input` (the invocation, or a group's contents).
fn match_all(matchers: &[Matcher], input: ParseStream, bindings: &mut Bindings) -> syn::Result<()> {
    match_seq(matchers, input, bindings)?;
    if input.is_empty() {
        Ok(())
    } else {
        Err(input.error("unexpected tokens after the matcher"))
    }
}

fn match_seq(matchers: &[Matcher], input: ParseStream, bindings: &mut Bindings) -> syn::Result<()> {
    for m in matchers {
        match m {
            Matcher::Token(expected) => {
                let found: TokenTree = input.parse()?;
                if !same_token(expected, &found) {
                    return Err(syn::Error::new(found.span(), "token differs"));
                }
            }
            Matcher::Group(delim, inner) if next_group_is(input, *delim) => {
                // The group's contents as a stream of the same token buffer (no buffer of its
                // own per group per arm tried).
                let content;
                match delim {
                    Delimiter::Parenthesis => {
                        syn::parenthesized!(content in input);
                    }
                    Delimiter::Brace => {
                        syn::braced!(content in input);
                    }
                    Delimiter::Bracket => {
                        syn::bracketed!(content in input);
                    }
                    Delimiter::None => unreachable!("next_group_is excludes None"),
                }
                match_all(inner, &content, bindings)?;
            }
            Matcher::Group(delim, inner) => {
                let found: TokenTree = input.parse()?;
                match found {
                    TokenTree::Group(g) if g.delimiter() == *delim => {
                        (|s: ParseStream| match_all(inner, s, bindings)).parse2(g.stream())?;
                    }
                    other => return Err(syn::Error::new(other.span(), "group expected")),
                }
            }
            Matcher::Fragment(name, Fragment::Tt) => {
                let tree: TokenTree = input.parse()?;
                bindings.insert(name.clone(), Binding::Tree(tree));
            }
            Matcher::Fragment(name, fragment) => {
                let tokens = fragment.parse(input)?;
                bindings.insert(name.clone(), Binding::One(tokens));
            }
            Matcher::Repeat {
                body,
                separator,
                at_most_one,
                at_least_one,
            } => {
                let mut iterations: Vec<Bindings> = Vec::new();
                loop {
                    let fork = input.fork();
                    if !iterations.is_empty() {
                        if let Some(sep) = separator {
                            match fork.parse::<TokenTree>() {
                                Ok(found) if same_token(sep, &found) => {}
                                _ => break,
                            }
                        }
                    }
                    let mut inner = Bindings::new();
                    let before = fork.cursor();
                    if match_seq(body, &fork, &mut inner).is_err() {
                        break;
                    }
                    // A body that matched nothing would repeat forever.
                    if fork.cursor() == before {
                        break;
                    }
                    input.advance_to(&fork);
                    iterations.push(inner);
                    if *at_most_one {
                        break;
                    }
                }
                if *at_least_one && iterations.is_empty() {
                    return Err(input.error("repetition expects at least one"));
                }
                let mut names = Vec::new();
                fragment_names(body, &mut names);
                for name in names {
                    let seq = iterations
                        .iter_mut()
                        .filter_map(|it| it.remove(&name))
                        .collect();
                    bindings.insert(name, Binding::Seq(Rc::new(seq)));
                }
            }
        }
    }
    Ok(())
}

/// Whether the next token is a group delimited by `delim` itself, not inside a `None`-delimited
/// group (syn's `parenthesized!` would look through one; the match takes such a group as a
/// token, as before).
fn next_group_is(input: ParseStream, delim: Delimiter) -> bool {
    delim != Delimiter::None
        && matches!(input.cursor().token_tree(), Some((TokenTree::Group(g), _)) if g.delimiter() == delim)
}

fn fragment_names(matchers: &[Matcher], out: &mut Vec<String>) {
    for m in matchers {
        match m {
            Matcher::Fragment(name, _) => out.push(name.clone()),
            Matcher::Group(_, inner) | Matcher::Repeat { body: inner, .. } => {
                fragment_names(inner, out)
            }
            Matcher::Token(_) => {}
        }
    }
}

/// How many of an invocation's leading tokens [`cannot_start`] compares.
const HEAD_TOKENS: usize = 4;

/// Whether an arm's matcher fails on its leading literal tokens and groups against the
/// invocation's first tokens (`head`), so the arm need not be tried: a tt-muncher's arms mostly
/// start with their own `@tag`, and trying one builds a syn token buffer over the whole input.
/// Decided here only what [`match_seq`] tests first, in order: a literal token or a group the
/// input's token cannot be, a missing token, an empty matcher against a non-empty input. A
/// fragment or repetition ends the comparison, and so does a `None`-delimited token (a
/// forwarded fragment), left to the full match.
fn cannot_start(matchers: &[Matcher], head: &[TokenTree]) -> bool {
    let forwarded = |t: Option<&TokenTree>| matches!(t, Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::None);
    if matchers.is_empty() {
        return !head.is_empty() && !forwarded(head.first());
    }
    for (i, m) in matchers.iter().enumerate().take(HEAD_TOKENS) {
        let found = head.get(i);
        if forwarded(found) {
            return false;
        }
        let fails = match (m, found) {
            (Matcher::Token(_) | Matcher::Group(..), None) => true,
            (Matcher::Token(expected), Some(found)) => !same_token(expected, found),
            (Matcher::Group(delim, _), Some(found)) => {
                !matches!(found, TokenTree::Group(g) if g.delimiter() == *delim)
            }
            _ => return false,
        };
        if fails {
            return true;
        }
    }
    false
}

fn same_token(a: &TokenTree, b: &TokenTree) -> bool {
    match (a, b) {
        (TokenTree::Ident(x), TokenTree::Ident(y)) => x == y,
        (TokenTree::Punct(x), TokenTree::Punct(y)) => x.as_char() == y.as_char(),
        (TokenTree::Literal(x), TokenTree::Literal(y)) => x.to_string() == y.to_string(),
        _ => false,
    }
}

/// Instantiates a transcriber with the bindings of one match.
fn transcribe(tokens: TokenStream, bindings: &Bindings, crate_name: &str) -> Option<TokenStream> {
    transcribe_in(tokens, bindings, &[], crate_name)
}

/// A metavariable's binding: the innermost repetition's iteration first (`frames`, innermost
/// last), then the match's.
fn lookup<'a>(
    bindings: &'a Bindings,
    frames: &[(&'a str, &'a Binding)],
    name: &str,
) -> Option<&'a Binding> {
    frames
        .iter()
        .rev()
        .find(|(n, _)| *n == name)
        .map(|(_, b)| *b)
        .or_else(|| bindings.get(name))
}

/// [`transcribe`] inside repetitions: `frames` binds each repeated metavariable to its
/// iteration's value. A repetition's iterations used to copy the whole binding map each (a
/// tt-muncher's `$($rest)*` of n tokens copied it n times per expansion).
fn transcribe_in<'a>(
    tokens: TokenStream,
    bindings: &'a Bindings,
    frames: &[(&'a str, &'a Binding)],
    crate_name: &str,
) -> Option<TokenStream> {
    let mut out: Vec<TokenTree> = Vec::new();
    let mut tts = tokens.into_iter().peekable();
    while let Some(tt) = tts.next() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == '$' => match tts.next() {
                Some(TokenTree::Ident(id)) if id == "crate" => {
                    let krate = Ident::new(crate_name, id.span());
                    out.extend(quote::quote!(::#krate));
                }
                Some(TokenTree::Ident(id)) => match lookup(bindings, frames, &id.to_string()) {
                    Some(Binding::One(value)) => out.extend(value.clone()),
                    Some(Binding::Tree(value)) => out.push(value.clone()),
                    // A metavariable used at a shallower depth than it was bound: rustc rejects
                    // the macro; an unbound one is written as is (rustc: the same).
                    Some(Binding::Seq(_)) => return None,
                    None => {
                        out.push(TokenTree::Punct(p));
                        out.push(TokenTree::Ident(id));
                    }
                },
                Some(TokenTree::Group(g)) if g.delimiter() == Delimiter::Parenthesis => {
                    let (separator, _) = repetition_tail(&mut tts)?;
                    let mut used = Vec::new();
                    metavars_used(g.stream(), &mut used);
                    let seqs: Vec<(&str, &Rc<Vec<Binding>>)> = used
                        .iter()
                        .filter_map(|n| match lookup(bindings, frames, n) {
                            Some(Binding::Seq(s)) => Some((n.as_str(), s)),
                            _ => None,
                        })
                        .collect();
                    // No repeated metavariable inside: rustc rejects it.
                    let count = seqs.first()?.1.len();
                    if seqs.iter().any(|(_, s)| s.len() != count) {
                        return None;
                    }
                    let mut inner: Vec<(&str, &Binding)> = frames.to_vec();
                    for i in 0..count {
                        if i > 0 {
                            if let Some(sep) = &separator {
                                out.push(sep.clone());
                            }
                        }
                        inner.truncate(frames.len());
                        inner.extend(seqs.iter().map(|(n, s)| (*n, &s[i])));
                        out.extend(transcribe_in(g.stream(), bindings, &inner, crate_name)?);
                    }
                }
                // `${count(x)}` and other meta-variable expressions.
                Some(TokenTree::Group(_)) => return None,
                Some(other) => {
                    out.push(TokenTree::Punct(p));
                    out.push(other);
                }
                None => out.push(TokenTree::Punct(p)),
            },
            TokenTree::Group(g) => {
                let mut group = Group::new(
                    g.delimiter(),
                    transcribe_in(g.stream(), bindings, frames, crate_name)?,
                );
                group.set_span(g.span());
                out.push(TokenTree::Group(group));
            }
            other => out.push(other),
        }
    }
    Some(out.into_iter().collect())
}

/// The names of the metavariables a transcriber fragment uses (`$name`), nested groups included.
fn metavars_used(tokens: TokenStream, out: &mut Vec<String>) {
    let mut tts = tokens.into_iter().peekable();
    while let Some(tt) = tts.next() {
        match tt {
            TokenTree::Punct(p) if p.as_char() == '$' && p.spacing() == Spacing::Alone => {
                if let Some(TokenTree::Ident(id)) = tts.peek() {
                    if id != "crate" && !out.contains(&id.to_string()) {
                        out.push(id.to_string());
                    }
                }
            }
            TokenTree::Group(g) => metavars_used(g.stream(), out),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(rules: &str, input: &str) -> Option<String> {
        let rules = MacroRules::parse(rules.parse().unwrap()).expect("rules parse");
        rules
            .expand(&input.parse().unwrap(), "demo")
            .map(|t| sq(&t.to_string()))
    }

    /// Token text without whitespace: `Display` spacing depends on each punct's spacing.
    fn sq(s: &str) -> String {
        s.split_whitespace().collect()
    }

    /// The leading-token test that spares building a token buffer for an arm decides only what
    /// the full match would: a differing literal token or group (`@inner` against `@other`), an
    /// empty matcher against input; never past a fragment, a repetition or a forwarded
    /// (`None`-delimited) fragment.
    #[test]
    fn arms_that_cannot_start_on_the_first_token_are_skipped() {
        let arms = |rules: &str| MacroRules::parse(rules.parse().unwrap()).unwrap().arms;
        let head = |input: &str| -> Vec<TokenTree> {
            input
                .parse::<TokenStream>()
                .unwrap()
                .into_iter()
                .take(HEAD_TOKENS)
                .collect()
        };
        let a = arms("(@inner $x:expr) => {}; ([$($x:tt)*]) => {}; ($x:ident) => {}; () => {}; ($($x:tt)*) => {}");
        let skipped = |input: &str| -> Vec<bool> {
            a.iter()
                .map(|arm| cannot_start(&arm.matcher, &head(input)))
                .collect()
        };
        assert_eq!(skipped("@inner 1"), [false, true, false, true, false]);
        assert_eq!(skipped("@other 1"), [true, true, false, true, false]);
        assert_eq!(skipped("[a b]"), [true, false, false, true, false]);
        assert_eq!(skipped("(a b)"), [true, true, false, true, false]);
        assert_eq!(skipped(""), [true, true, false, false, false]);
        let forwarded = TokenStream::from(TokenTree::Group(Group::new(
            Delimiter::None,
            "@inner".parse().unwrap(),
        )));
        let none_first: Vec<TokenTree> = forwarded.into_iter().collect();
        assert!(a.iter().all(|arm| !cannot_start(&arm.matcher, &none_first)));
        // A repetition decides nothing: it may match no token.
        let rep = arms("($(,)* @tag) => {}");
        assert!(!cannot_start(&rep[0].matcher, &head("x")));
        // Skipping changes no expansion.
        assert_eq!(
            expand(
                "(@inner $x:expr) => { f($x) }; (@go $x:expr) => { g($x) }; ($x:expr) => { h($x) }",
                "@go 1"
            ),
            Some("g(1)".to_string())
        );
    }

    #[test]
    fn the_first_matching_arm_is_instantiated() {
        let rules = "(slow $e:expr) => { sleep($e) }; (fast $e:expr) => { $e.quiet() }";
        assert_eq!(expand(rules, "fast d"), Some(sq("d . quiet ()")));
        assert_eq!(expand(rules, "slow 1"), Some(sq("sleep (1)")));
        assert_eq!(expand(rules, "other d"), None);
        // Trailing tokens no arm accounts for: no match.
        assert_eq!(expand(rules, "fast d d"), None);
    }

    /// The lowering counts an invocation once for two budgets (`Lowerer::expand_with`): a count is
    /// exact up to its limit, and over the limit whenever the tokens are.
    #[test]
    fn token_counts_are_exact_up_to_their_limit() {
        let tokens: TokenStream = "a (b [c d] e) { f } g".parse().unwrap();
        // A group counts once besides its contents: a, (..), b, [..], c, d, e, {..}, f, g.
        for limit in 10..14 {
            assert_eq!(token_count(&tokens, limit), 10, "limit {limit}");
        }
        for limit in 0..10 {
            assert!(token_count(&tokens, limit) > limit, "limit {limit}");
        }
    }

    /// Nested repetitions: an outer iteration's value is seen inside the inner repetition, and
    /// an inner one shadows nothing outside its iteration. Groups in the matcher match groups of
    /// the same delimiter only.
    #[test]
    fn nested_repetitions_see_their_enclosing_iterations_values() {
        let rules = "($($k:ident => [$($v:tt),*]);* ; $last:tt) => { $( $( f($k, $v); )* g($k); )* h($last) }";
        assert_eq!(
            expand(rules, "a => [1, 2]; b => [3]; c => []; z"),
            Some(sq(
                "f (a , 1) ; f (a , 2) ; g (a) ; f (b , 3) ; g (b) ; g (c) ; h (z)"
            ))
        );
        assert_eq!(expand(rules, "a => (1, 2); z"), None);
        assert_eq!(expand(rules, "a => {1, 2}; z"), None);
    }

    #[test]
    fn repetitions_bind_one_value_per_iteration_with_separators() {
        let rules = "($($x:expr),* $(,)?) => { $( f($x); )* }; ($($k:ident = $v:expr);+) => { $( g($k, $v) ),+ }";
        assert_eq!(
            expand(rules, "a, b.c(), 3,"),
            Some(sq("f (a) ; f (b . c ()) ; f (3) ;"))
        );
        assert_eq!(expand(rules, ""), Some(sq("")));
        assert_eq!(
            expand(rules, "a = 1; b = 2"),
            Some(sq("g (a , 1) , g (b , 2)"))
        );
    }

    #[test]
    fn nested_groups_and_fragments_of_every_common_kind_match() {
        let rules = "($v:vis fn $name:ident($($arg:ident : $t:ty),*) -> $r:ty $body:block) => { $v fn $name($($arg: $t),*) -> $r $body }";
        assert_eq!(
            expand(
                rules,
                "pub fn f(a: u8, b: Vec<String>) -> usize { a.len() }"
            ),
            Some(sq(
                "pub fn f (a : u8 , b : Vec < String >) -> usize { a . len () }"
            ))
        );
        let rules = "($p:path, $l:literal, $lt:lifetime, $m:meta, $pat:pat) => { $p($l) }";
        assert_eq!(
            expand(rules, "a::b::<u8>, -1, 'x, derive(Debug), Some(_) | None"),
            Some(sq("a :: b :: < u8 > (- 1)"))
        );
    }

    #[test]
    fn crate_paths_and_expression_precedence_are_kept() {
        let rules = "($e:expr) => { $crate::io::run($e * 2) }";
        let out = MacroRules::parse(rules.parse().unwrap())
            .unwrap()
            .expand(&"1 + 1".parse().unwrap(), "demo")
            .unwrap();
        // The expression stays one operand: an invisible group around `1 + 1`.
        let parsed: syn::Expr = syn::parse2(out.clone()).unwrap();
        let syn::Expr::Call(call) = parsed else {
            panic!("{out}")
        };
        assert_eq!(
            quote::ToTokens::to_token_stream(&call.func).to_string(),
            ":: demo :: io :: run"
        );
        let syn::Expr::Binary(mul) = &call.args[0] else {
            panic!("{out}")
        };
        assert!(matches!(&*mul.left, syn::Expr::Group(_)), "{out}");
    }

    #[test]
    fn tt_munchers_match_one_step_at_a_time() {
        let rules = "($me:ident :) => {}; ($me:ident : $s:ident $($rest:tt)*) => { $me.$s(); go!($me : $($rest)*); }";
        assert_eq!(
            expand(rules, "self: a b c"),
            Some(sq("self . a () ; go ! (self : b c) ;"))
        );
        assert_eq!(expand(rules, "self:"), Some(sq("")));
    }

    #[test]
    fn unsupported_or_malformed_macros_do_not_expand() {
        // A metavariable expression.
        assert_eq!(expand("($($x:ident)*) => { ${count(x)} }", "a b"), None);
        // A repeated metavariable used outside its repetition.
        assert_eq!(expand("($($x:ident)*) => { $x }", "a b"), None);
        // Repetitions of different lengths driven together.
        assert_eq!(
            expand(
                "($($x:ident)* ; $($y:ident)*) => { $( $x $y )* }",
                "a b ; c"
            ),
            None
        );
        // Unknown fragment kinds drop the arm; no arm left: no rules.
        assert!(MacroRules::parse("($x:nonsense) => { $x }".parse().unwrap()).is_none());
    }

    /// A dependency's `#[macro_export]` macros expand in the crate that invokes them: only the
    /// arm that matches runs (anyhow's `anyhow!("literal")` never takes the `$err:expr` arm's
    /// `anyhow_kind()` path), `$crate` names the dependency, and what the definition generates is
    /// placed at the invocation's line. Before, every arm was walked at every invocation.
    #[test]
    fn a_dependencys_exported_macros_expand_arm_by_match() {
        let dep = "#[macro_export]\n\
                   macro_rules! fail {\n\
                   \x20   ($msg:literal) => { $crate::Error::msg($msg) };\n\
                   \x20   ($err:expr) => { $crate::private::kind(&$err).load_sync() };\n\
                   }\n\
                   #[macro_export]\n\
                   macro_rules! read_now { ($p:expr) => { ::std::fs::read($p) }; }\n\
                   #[macro_export]\n\
                   macro_rules! forward { ($($tt:tt)*) => { $crate::private::inner!(($crate) $($tt)*) }; }\n\
                   #[macro_export]\n\
                   macro_rules! muncher {\n\
                   \x20   (@done $($t:tt)*) => { $crate::private::inner!($($t)*) };\n\
                   \x20   ($($t:tt)*) => { $crate::muncher!(@done $($t)*) };\n\
                   }\n\
                   pub struct Error;\n\
                   impl Error { pub fn msg(_m: &str) -> Error { Error } }\n\
                   pub mod private {\n\
                   \x20   pub struct K;\n\
                   \x20   impl K { pub fn load_sync(&self) -> super::Error { std::fs::read(\"cfg\").ok(); super::Error } }\n\
                   \x20   pub fn kind<T>(_: &T) -> K { K }\n\
                   }\n";
        let app = "use failing::fail;\n\
                   pub async fn literal() { let _ = fail!(\"no\"); }\n\
                   pub async fn error(x: u8) { let _ = fail!(x); }\n\
                   pub async fn by_path() {\n\
                   \x20   let _ = failing::read_now!(\"p\");\n\
                   }\n\
                   pub async fn forwarded() {\n\
                   \x20   let _ = failing::forward! { std::thread::sleep(std::time::Duration::from_secs(1)); };\n\
                   }\n\
                   pub async fn munched() {\n\
                   \x20   let _ = failing::muncher! { std::thread::sleep(std::time::Duration::from_secs(1)); };\n\
                   }\n";
        let report =
            crate::testutil::analyze_app_with_dependency("extern-macros", app, "failing", dep);
        let lines = crate::testutil::site_lines(&report);
        // A macro that forwards its input to a proc macro (async-stream's `try_stream!`) is not
        // expanded: its input is walked as written (line 8); nor is a tt-muncher whose later
        // step does (tokio's `select!`), rather than lowering its `@done ..` syntax (line 11).
        assert_eq!(lines, [3, 5, 8, 11], "{:?}", report.findings);
    }
}
