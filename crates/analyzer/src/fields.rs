//! Which values a struct's `Option` or `bool` field can hold in this build, from every write the
//! analysed graph makes to it: a call in a branch on a field that no live code ever sets to the
//! branch's variant is dead (`if let Some(h) = self.skip { open(h) }` with `skip` only ever
//! `None`).
//!
//! Why: dependencies are configured through builder options, and the code behind an option the
//! application never turns on is reported from every path through it. lychee walks directories
//! with ignore's `Walk`, whose `skip_entry` opens a file handle only `if let Some(ref stdout) =
//! self.skip`; `skip` comes from `WalkBuilder::skip_stdout(true)`, which nothing in lychee's graph
//! calls (scripts/apps/review-s10.toml: 2 false findings). kanidm's daemon branches on
//! `config.integration_test_config`, which only its test kit sets (2 more).
//!
//! The facts, all syntactic:
//! - *lowering* records each function's writes to fields ([`FieldWrite`], in
//!   `FnAttrs::field_writes`): a struct literal's fields, an assignment to a field (`x.f = v`,
//!   `*this.f = v`, `*f = v` through a binding that destructured one), and what may change a field
//!   behind the code's back (`&mut x.f`, a compound assignment, `Option`'s setters `insert`,
//!   `replace`, `get_or_insert*`; `take` writes `None`). Writes outside functions (const and
//!   static initialisers, `macro_rules!` arms) are kept per module and always count. Every name a
//!   body or an attribute mentions (a path's last segment, a method name, an attribute's
//!   identifiers and strings) is kept per module too ([`crate::ir::IrModule::mentions`]).
//! - *resolution* records on each call the branches on a field it is written in
//!   ([`FieldCond`]: `if let Some(..) = x.f`, `match x.f`, `if x.f`, `if !x.f`,
//!   `if x.f.is_some()`, `.is_none()`), with the field's owner type when the receiver's type is
//!   known (`self`, a typed local).
//! - [`FieldValues::compute`] gathers the writes of the *live* functions: trait methods (called
//!   through traits, operators and derives), non-test functions of workspace members and of
//!   packages whose roots are reported (a library's public API has callers outside the graph),
//!   and any other function whose name some analysed code mentions. A dependency's `skip_stdout` that nothing names never runs in this
//!   build, and neither does a test kit's setup that only a proc macro's `quote!` calls. A
//!   struct's derives write too: `Default` sets `Option` fields to `None` and `bool` fields to
//!   `false`; any other derive than the std ones (`Deserialize`, a builder) may set any field.
//! - *graph* drops a call whose field condition no gathered value satisfies.
//!
//! Soundness: a condition is decided only when every value the field can get is known; a field
//! with no write at all, a write of an unknown value, a mutable borrow, or an unknown derive keeps
//! the branch. With the owner unknown, the writes to every field of that name count. Runs that
//! skip a crate (`skip = [..]`: its writes are unseen) decide nothing. Known gaps: writes in
//! items that did not parse, in item macros other than `macro_rules!` and `cfg_if!`
//! (`lazy_static!` bodies), through raw pointers or `unsafe` transmutes, and a field set through
//! a `&mut` binding whose name is not the field's (`let Self { skip: s, .. } = self; *s =
//! Some(h)`) are not seen.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde::{Deserialize, Serialize};

use crate::discover::Workspace;
use crate::index::{FnOwner, Index, TypeKind};
use crate::ir::{IrType, Name};

/// One write to a field: the owner type's name when the code names it (a struct literal's path,
/// `self.f` in an impl of it), the field, and the value.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FieldWrite {
    pub owner: Option<Name>,
    pub field: Name,
    pub value: WriteValue,
}

/// What a write stores.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum WriteValue {
    /// A constant variant or bool: `None`, `Some(..)`, `true`, `Kind::A`.
    Variant(Name),
    /// Another field's value (`skip: self.skip.clone()` in a builder's `build`).
    Field(Option<Name>, Name),
    /// Anything else.
    Unknown,
}

/// A call's branch condition on a field: it runs only when the field holds one of `any_of`.
#[derive(
    Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
pub struct FieldCond {
    pub owner: Option<Name>,
    pub field: Name,
    pub any_of: Arc<[Name]>,
}

/// The variants a condition may test: `Option`'s and `bool`'s, the field types whose every
/// change is a write seen here (an enum field may change through its own `&mut self` methods).
pub fn decidable(variant: &str) -> bool {
    matches!(variant, "Some" | "None" | "true" | "false")
}

/// `Option`'s methods that change the variant in place; `take` and `take_if` leave `None`.
pub fn option_setter(method: &str) -> Option<WriteValue> {
    match method {
        "take" | "take_if" => Some(WriteValue::Variant(crate::ir::name("None"))),
        "insert" | "replace" | "get_or_insert" | "get_or_insert_with" | "get_or_insert_default" => {
            Some(WriteValue::Unknown)
        }
        _ => None,
    }
}

/// The owner name of `self` in an impl whose self type is `ty` (`Walk<T>` → `Walk`).
pub fn owner_of_self_type(ty: &IrType) -> Option<Name> {
    match ty {
        IrType::Path(p) => p.segments.last().map(|s| s.name),
        IrType::Ref(inner) => owner_of_self_type(inner),
        _ => None,
    }
}

/// The std derives, which write no field (`Clone` copies an existing value).
const STD_DERIVES: &[&str] = &[
    "Debug",
    "Clone",
    "Copy",
    "PartialEq",
    "Eq",
    "PartialOrd",
    "Ord",
    "Hash",
];

/// The set of values a field may hold; `None` when unknown.
type Values = Option<BTreeSet<Name>>;

fn union(into: &mut Values, from: &Values) -> bool {
    match (into.as_mut(), from) {
        (None, _) => false,
        (Some(_), None) => {
            *into = None;
            true
        }
        (Some(a), Some(b)) => {
            let before = a.len();
            a.extend(b.iter().copied());
            a.len() != before
        }
    }
}

/// What every field can hold, from the live writes ([`FieldValues::compute`]).
#[derive(Default)]
pub struct FieldValues {
    /// Off when the configuration skips a crate of the graph: its writes are unseen.
    enabled: bool,
    /// By (owner, field); owner `None`: writes whose owner the code does not name, which apply
    /// to every field of that name.
    values: BTreeMap<(Option<Name>, Name), Values>,
    /// The owners written per field name.
    owners: BTreeMap<Name, Vec<Option<Name>>>,
}

impl FieldValues {
    /// Gathers the writes of the live functions and of the modules (see the module docs).
    pub fn compute(ws: &Workspace, index: &Index, configured_roots: &[String]) -> FieldValues {
        // A crate the configuration skips is not loaded: its writes are unseen. (Proc-macro
        // crates, also listed as skipped, run in the compiler and write no runtime value.)
        if ws.units.iter().any(|u| u.skip) {
            return FieldValues::default();
        }
        let mut direct: BTreeMap<(Option<Name>, Name), Vec<WriteValue>> = BTreeMap::new();
        let mut add = |w: &FieldWrite| {
            direct.entry((w.owner, w.field)).or_default().push(w.value);
        };
        for w in &index.field_writes {
            add(w);
        }
        for (f, def) in index.fns.iter().enumerate() {
            if def.ir.attrs.field_writes.is_empty() || index.instances.get(f).is_some() {
                continue;
            }
            if live(ws, index, f, configured_roots) {
                def.ir.attrs.field_writes.iter().for_each(&mut add);
            }
        }
        for t in &index.types {
            let mut owners: Vec<(&str, &[(String, IrType)])> = Vec::new();
            match &t.kind {
                TypeKind::Struct { fields, .. } => owners.push((&t.name, fields)),
                TypeKind::Enum { variants, .. } => {
                    owners.extend(variants.iter().map(|(v, f)| (v.as_str(), f.as_slice())));
                }
                _ => {}
            }
            for d in t.derives.iter().filter_map(|d| d.segments.last()) {
                let d = d.name.as_str();
                if STD_DERIVES.contains(&d) {
                    continue;
                }
                for (owner, fields) in &owners {
                    for (field, ty) in *fields {
                        let value = if d == "Default" {
                            default_value(ty)
                        } else {
                            WriteValue::Unknown
                        };
                        add(&FieldWrite {
                            owner: Some(crate::ir::name(owner)),
                            field: crate::ir::name(field),
                            value,
                        });
                    }
                }
            }
        }
        FieldValues::solve(direct)
    }

    /// The least fixpoint of the writes: a `Field` value holds what that field holds.
    fn solve(direct: BTreeMap<(Option<Name>, Name), Vec<WriteValue>>) -> FieldValues {
        let mut fv = FieldValues {
            enabled: true,
            values: BTreeMap::new(),
            owners: BTreeMap::new(),
        };
        for (&(owner, field), vs) in &direct {
            fv.owners.entry(field).or_default().push(owner);
            let mut set = Some(BTreeSet::new());
            for v in vs {
                match v {
                    WriteValue::Variant(n) => {
                        if let Some(s) = set.as_mut() {
                            s.insert(*n);
                        }
                    }
                    WriteValue::Unknown => set = None,
                    WriteValue::Field(..) => {}
                }
            }
            fv.values.insert((owner, field), set);
        }
        // Each round only grows sets or makes them unknown, so this ends; real graphs have few
        // field-to-field writes (builders), each settled in a round or two.
        loop {
            let mut updates = Vec::new();
            // Many writes copy the same field (`name: other.name`): each source is looked up
            // once per round (deno: an owner-less source unions the sets of every owner of a
            // field name, thousands for `name`).
            let mut looked_up: BTreeMap<(Option<Name>, Name), Values> = BTreeMap::new();
            for (&key, vs) in &direct {
                if fv.values.get(&key).is_some_and(Option::is_none) {
                    // Already unknown: no write can change it.
                    continue;
                }
                for v in vs {
                    if let WriteValue::Field(owner, field) = *v {
                        // A field nothing writes is built where the graph does not look.
                        let from = looked_up
                            .entry((owner, field))
                            .or_insert_with(|| fv.lookup(owner, field).unwrap_or(None));
                        updates.push((key, from.clone()));
                    }
                }
            }
            let mut changed = false;
            for (key, from) in updates {
                let into = fv.values.get_mut(&key).expect("a key of direct");
                changed |= union(into, &from);
            }
            if !changed {
                break;
            }
        }
        fv
    }

    /// What `owner`'s `field` may hold: its own writes and the unattributed ones; with no owner,
    /// every owner's. `None` when nothing writes it (with an owner: nothing writes its field).
    fn lookup(&self, owner: Option<Name>, field: Name) -> Option<Values> {
        let keys: Vec<Option<Name>> = match owner {
            // An owner nothing is seen building is built where the graph does not look.
            Some(_) if !self.values.contains_key(&(owner, field)) => return None,
            Some(_) => vec![owner, None],
            None => self.owners.get(&field).cloned().unwrap_or_default(),
        };
        let mut out: Option<Values> = None;
        for o in keys {
            if let Some(v) = self.values.get(&(o, field)) {
                union(out.get_or_insert_with(|| Some(BTreeSet::new())), v);
                if out.as_ref().is_some_and(Option::is_none) {
                    // Unknown absorbs the rest.
                    break;
                }
            }
        }
        out
    }

    /// Whether no value the field can hold satisfies the condition. A field nothing is seen
    /// writing is undecided (built where the graph does not look).
    pub fn is_dead(&self, cond: &FieldCond) -> bool {
        if !self.enabled {
            return false;
        }
        match self.lookup(cond.owner, cond.field) {
            Some(Some(values)) => !cond.any_of.iter().any(|v| values.contains(v)),
            _ => false,
        }
    }
}

/// The value `#[derive(Default)]` gives a field of type `ty`.
fn default_value(ty: &IrType) -> WriteValue {
    match ty {
        IrType::Path(p) => match p.segments.last().map(|s| s.name.as_str()) {
            Some("Option") => WriteValue::Variant(crate::ir::name("None")),
            Some("bool") if p.segments.len() == 1 => WriteValue::Variant(crate::ir::name("false")),
            _ => WriteValue::Unknown,
        },
        _ => WriteValue::Unknown,
    }
}

/// Whether a function's writes count: it may run in this build (see the module docs).
fn live(ws: &Workspace, index: &Index, f: usize, configured_roots: &[String]) -> bool {
    let def = &index.fns[f];
    let trait_method = match def.owner {
        FnOwner::Trait(_) => true,
        FnOwner::Impl(i) => index.impls[i].ir_trait.is_some(),
        FnOwner::Free => false,
    };
    if trait_method {
        return true;
    }
    let package = &ws.packages[index.units[def.unit].package];
    if (package.is_member || package.report_roots)
        && !crate::roots::is_test_support(ws, index, f, configured_roots)
    {
        return true;
    }
    let name = crate::ir::name(&def.ir.name);
    index.mentions.contains(&name) || index.method_mentions.contains(&name)
}

#[cfg(test)]
mod tests {
    use crate::testutil::{analyze_app_with_dependency, analyze_files, site_lines};

    /// ignore's shape (`WalkBuilder::skip_stdout` → `Walk::skip_entry`) in a registry crate,
    /// used by a member whose `run` has `enable` in place of `// ENABLE`; the entry lines of the
    /// findings.
    fn builder_dep(enable: &str) -> Vec<u32> {
        let dep = "pub struct Builder { pub skip: Option<u32> }\n\
                   impl Builder {\n\
                       pub fn new() -> Builder { Builder { skip: None } }\n\
                       pub fn skip_stdout(&mut self, yes: bool) -> &mut Builder {\n\
                           if yes { self.skip = Some(1); } else { self.skip = None; }\n\
                           self\n\
                       }\n\
                       pub fn build(&self) -> Walk { Walk { skip: self.skip.clone() } }\n\
                   }\n\
                   pub struct Walk { skip: Option<u32> }\n\
                   impl Walk {\n\
                       pub fn skip_entry(&self) {\n\
                           if let Some(ref h) = self.skip { std::fs::metadata(\"x\").ok(); }\n\
                       }\n\
                   }\n";
        let app = "pub async fn run() {\n\
                       let mut b = walk::Builder::new();\n\
                       // ENABLE\n\
                       let w = b.build();\n\
                       w.skip_entry();\n\
                   }\n"
        .replace("// ENABLE", enable);
        site_lines(&analyze_app_with_dependency(
            "fields-builder",
            &app,
            "walk",
            dep,
        ))
    }

    #[test]
    fn a_builder_option_nothing_turns_on_leaves_its_branch_dead() {
        assert_eq!(builder_dep(""), Vec::<u32>::new());
        // Called (so mentioned): the option can be on, the branch is live.
        assert_eq!(builder_dep("b.skip_stdout(true);"), [5]);
        // Handed out mutably: anything may be written.
        assert_eq!(builder_dep("let r = &mut b.skip; *r = Some(2);"), [5]);
        // Set through `Option`'s setters.
        assert_eq!(builder_dep("b.skip.get_or_insert(3);"), [5]);
    }

    /// A member crate: `config` holds `body` (a struct `Config { itc: Option<u32>, flag: bool }`
    /// and whatever else), `run` is `async fn run(c: &Config)` with the branch under test.
    fn member(items: &str, branch: &str) -> Vec<u32> {
        let src = format!(
            "pub struct Config {{ pub itc: Option<u32>, pub flag: bool }}\n\
             pub fn config() -> Config {{ Config {{ itc: None, flag: false }} }}\n\
             {items}\n\
             pub async fn run(c: &Config) {{\n\
                 {branch}\n\
             }}\n"
        );
        let lines = site_lines(&analyze_files(&[("src/lib.rs", &src)]));
        // The branch's line, whatever `items` spans.
        let branch_line = 4 + items.lines().count().max(1) as u32;
        lines.into_iter().map(|l| l + 5 - branch_line).collect()
    }

    #[test]
    fn branches_on_fields_are_decided_by_every_live_write() {
        let read = "std::fs::read(\"x\").ok();";
        let line = 5;
        // Only `None`/`false` written: each test that needs `Some`/`true` is dead.
        for branch in [
            format!("if let Some(x) = &c.itc {{ {read} }}"),
            format!("if c.itc.is_some() {{ {read} }}"),
            format!("if c.itc.is_none() {{ }} else {{ {read} }}"),
            format!("match c.itc {{ Some(_) => {{ {read} }} None => {{}} }}"),
            format!("if c.flag {{ {read} }}"),
            format!("if !c.flag {{ }} else {{ {read} }}"),
        ] {
            assert_eq!(member("", &branch), Vec::<u32>::new(), "{branch}");
        }
        // The branches that can run are kept.
        for branch in [
            format!("if c.itc.is_none() {{ {read} }}"),
            format!("if !c.flag {{ {read} }}"),
            format!("match c.itc {{ Some(_) => {{}} None => {{ {read} }} }}"),
        ] {
            assert_eq!(member("", &branch), [line], "{branch}");
        }
    }

    #[test]
    fn a_member_or_a_derive_may_write_what_nothing_in_the_graph_calls() {
        let branch = "if let Some(x) = &c.itc { std::fs::read(\"x\").ok(); }";
        // A member's function nothing calls is public API with callers outside the graph.
        let setter = "pub fn enable(c: &mut Config) { c.itc = Some(1); }";
        assert_eq!(member(setter, branch), [5]);
        // A test kit's is not.
        let kit = "pub mod testkit { pub fn enable(c: &mut super::Config) { c.itc = Some(1); } }";
        assert_eq!(member(kit, branch), Vec::<u32>::new());
        // Deserialized: any value.
        let src = "#[derive(serde::Deserialize)] pub struct Config { pub itc: Option<u32> }\n\
                   pub fn config() -> Config { Config { itc: None } }\n\
                   pub async fn run(c: &Config) {\n\
                       if let Some(x) = &c.itc { std::fs::read(\"x\").ok(); }\n\
                   }\n";
        assert_eq!(site_lines(&analyze_files(&[("src/lib.rs", src)])), [4]);
        // Built nowhere the graph looks: undecided.
        let src = "pub struct Config { pub itc: Option<u32> }\n\
                   pub async fn run(c: &Config) {\n\
                       if let Some(x) = &c.itc { std::fs::read(\"x\").ok(); }\n\
                   }\n";
        assert_eq!(site_lines(&analyze_files(&[("src/lib.rs", src)])), [3]);
    }

    #[test]
    fn writes_outside_functions_and_in_macros_count() {
        let branch = "if let Some(x) = &c.itc { std::fs::read(\"x\").ok(); }";
        let in_static =
            "pub static ON: std::sync::LazyLock<Config> = std::sync::LazyLock::new(|| Config { itc: Some(1), flag: true });";
        assert_eq!(member(in_static, branch), [5]);
        let in_macro = "macro_rules! on { ($c:expr) => { $c.itc = Some(1) }; }\n\
                        pub fn turn_on(c: &mut Config) { on!(c); }";
        assert_eq!(member(in_macro, branch), [5]);
        // Another type's field of the same name is another field when the owner is known...
        let other = "pub struct Other { pub itc: Option<u32> }\n\
                     pub fn other(x: Option<u32>) -> Other { Other { itc: x } }";
        assert_eq!(member(other, branch), Vec::<u32>::new());
        // ... unless a value flows from it.
        let relay = format!(
            "{other}\npub fn relay(o: &Other) -> Config {{ Config {{ itc: o.itc, flag: false }} }}"
        );
        assert_eq!(member(&relay, branch), [5]);
    }

    #[test]
    fn field_to_field_values_reach_a_fixpoint() {
        use super::*;
        let n = crate::ir::name;
        let mut direct = BTreeMap::new();
        // a.f <- b.f <- a.f (a cycle), b.f <- None; c.f <- d.f, d.f <- Some.
        direct.insert(
            (Some(n("A")), n("f")),
            vec![WriteValue::Field(Some(n("B")), n("f"))],
        );
        direct.insert(
            (Some(n("B")), n("f")),
            vec![
                WriteValue::Field(Some(n("A")), n("f")),
                WriteValue::Variant(n("None")),
            ],
        );
        direct.insert(
            (Some(n("C")), n("g")),
            vec![WriteValue::Field(Some(n("D")), n("g"))],
        );
        direct.insert((Some(n("D")), n("g")), vec![WriteValue::Variant(n("Some"))]);
        let fv = FieldValues::solve(direct);
        let cond = |owner: &str, field: &str, v: &str| FieldCond {
            owner: Some(n(owner)),
            field: n(field),
            any_of: vec![n(v)].into(),
        };
        assert!(fv.is_dead(&cond("A", "f", "Some")));
        assert!(!fv.is_dead(&cond("A", "f", "None")));
        assert!(!fv.is_dead(&cond("C", "g", "Some")));
        assert!(fv.is_dead(&cond("C", "g", "None")));
        // An owner nothing builds, and a field nothing writes: undecided.
        assert!(!fv.is_dead(&cond("E", "f", "Some")));
        assert!(!fv.is_dead(&cond("A", "h", "Some")));
    }
}
