//! Part of stage 3b, *resolve*: what an edit of a workspace member changed, as far as the stored
//! resolutions of *other* functions can see ([`crate::resolve_memo`]).
//!
//! Why: a stored resolution of a member's function was valid only while that member and every
//! member it depends on had the sources they had. On deno, appending a function to
//! `ext/fs/std_fs.rs` therefore resolved again `deno_fs` and the thirteen members that depend on
//! it (5 500 functions; resolution took 0.62 s of a 3.05 s run), although none of them can name
//! the new function.
//!
//! What a function's resolution reads of *another* member `m` (resolve.rs, field_fns.rs,
//! instances.rs, index.rs):
//! - through the index: `m`'s modules, `use`s, types, impls (methods with their bodies:
//!   [`crate::field_fns`] reads constructors), traits, values and macros, and of its functions
//!   the signature, owner, module and whether there is a body;
//! - a free function's body only through [`crate::field_fns`], which reads the free functions of
//!   the module that defines the struct;
//! - names: every path segment is looked up by its name, so a free function that was added,
//!   removed or whose signature changed can change a lookup only of its own name.
//!
//! So a member's [`MemberState`] splits its lowered IR in two: its *interface* (everything but
//! its free functions and the names its code mentions, which only the graph stage reads; the
//! free functions of a module that defines a struct with fields stay in when they write a struct
//! literal, the only bodies [`crate::field_fns`] reads), and per free function (named by a
//! [`MemberKey`]) a digest of what other functions' resolutions read of it: its module, name,
//! signature and whether it has a body. Compared with the state a
//! memo file recorded, a member is [`Status::Same`] (its IR is unchanged, whatever happened to
//! its sources: a comment edit keeps it), [`Status::BodyOnly`] (interface unchanged, and the
//! names of the free functions added, removed or changed occur nowhere in the IR of the members
//! that depend on it: a byte search of its encoding, a superset of the names their lookups can
//! ask for), or [`Status::Changed`].

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::Range;

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::index::{FnOwner, Index, TypeKind};
use crate::ir::{IrExpr, IrFn, IrItemKind, IrModule, IrPath, Name, ThinVec};

/// What the loader keeps of a member for [`MemberState`]: the digest of its interface, and its
/// whole IR encoded, to search names in.
pub(crate) struct MemberShape {
    /// The digest of the whole IR.
    whole: [u8; 16],
    iface: [u8; 16],
    /// Each module's IR, encoded.
    haystack: Vec<Vec<u8>>,
}

/// A module as the interface sees it: [`IrModule`] without its free functions (but those that
/// write a struct literal in a module that defines a struct with fields), without the names it
/// mentions and the field writes of its initialisers (read by the graph stage only), and with
/// functions as [`FnView`]s. Positions are left out (other functions' resolutions do not read
/// them), so lines added above an impl keep the interface; macros keep theirs.
#[derive(Serialize)]
struct InterfaceView<'a> {
    path: &'a [String],
    file: u32,
    fns: Vec<FnView<'a>>,
    types: Vec<TypeView<'a>>,
    impls: Vec<ImplView<'a>>,
    uses: &'a [crate::ir::IrUse],
    extern_crates: &'a [(String, Option<String>)],
    foreign_fns: Vec<FnView<'a>>,
    macros: &'a [crate::ir::IrMacro],
    children: &'a [String],
    values: &'a [(String, crate::ir::IrType)],
}

/// A function as another function's resolution reads it: its name, signature and whether it
/// has a body, and what [`crate::field_fns`] reads of its body: the struct literals it writes,
/// each with the fields whose value is a path (no position: lines added above keep the view).
#[derive(Serialize)]
struct FnView<'a> {
    name: &'a str,
    sig: &'a crate::ir::IrSig,
    has_body: bool,
    literals: Vec<(IrPath, Vec<(Name, IrPath)>)>,
}

impl<'a> FnView<'a> {
    fn of(f: &'a IrFn) -> FnView<'a> {
        FnView {
            name: &f.name,
            sig: &f.sig,
            has_body: f.body.is_some(),
            literals: struct_literals(f),
        }
    }
}

/// The struct literals of `f`'s body in the order [`crate::field_fns`] visits them, each with
/// its fields whose value is a path (the only values it follows).
fn struct_literals(f: &IrFn) -> Vec<(IrPath, Vec<(Name, IrPath)>)> {
    let Some(block) = f
        .body
        .as_ref()
        .filter(|_| f.attrs.struct_literal)
        .map(crate::ir::FnBody::block)
    else {
        return Vec::new();
    };
    let mut out = Vec::new();
    block.any(&mut |e| {
        if let IrExpr::StructLit(path, values) = e {
            let paths = values
                .iter()
                .filter_map(|(name, value)| match value {
                    IrExpr::Path(p, _) => Some((*name, p.clone())),
                    _ => None,
                })
                .collect();
            out.push((path.clone(), paths));
        }
        false
    });
    out
}

#[derive(Serialize)]
enum TypeView<'a> {
    Trait {
        name: &'a str,
        methods: Vec<FnView<'a>>,
        supertraits: &'a [crate::ir::IrPath],
        generics: &'a [crate::ir::IrGeneric],
        assoc_bounds: &'a [(String, ThinVec<crate::ir::IrPath>)],
        derives: &'a [crate::ir::IrPath],
    },
    Other {
        name: &'a str,
        kind: &'a IrItemKind,
        derives: &'a [crate::ir::IrPath],
    },
}

impl<'a> TypeView<'a> {
    fn of(t: &'a crate::ir::IrTypeItem) -> TypeView<'a> {
        match &t.kind {
            IrItemKind::Trait {
                methods,
                supertraits,
                generics,
                assoc_bounds,
            } => TypeView::Trait {
                name: &t.name,
                methods: methods.iter().map(FnView::of).collect(),
                supertraits,
                generics,
                assoc_bounds,
                derives: &t.derives,
            },
            kind => TypeView::Other {
                name: &t.name,
                kind,
                derives: &t.derives,
            },
        }
    }
}

#[derive(Serialize)]
struct ImplView<'a> {
    self_ty: &'a crate::ir::IrType,
    trait_: &'a Option<crate::ir::IrPath>,
    generics: &'a [crate::ir::IrGeneric],
    fns: Vec<FnView<'a>>,
    assoc_types: &'a [(String, crate::ir::IrType)],
    assoc_consts: &'a [(String, crate::ir::IrType)],
}

impl<'a> ImplView<'a> {
    fn of(i: &'a crate::ir::IrImpl) -> ImplView<'a> {
        ImplView {
            self_ty: &i.self_ty,
            trait_: &i.trait_,
            generics: &i.generics,
            fns: i.fns.iter().map(FnView::of).collect(),
            assoc_types: &i.assoc_types,
            assoc_consts: &i.assoc_consts,
        }
    }
}

impl MemberShape {
    /// The shape of a member's lowered modules (encoded and hashed module by module, in
    /// parallel). Computed when a member is lowered; a warm run reads it back from the cache
    /// ([`MemberShape::stored`]).
    pub(crate) fn of(modules: &[IrModule]) -> MemberShape {
        let constructors: BTreeSet<&[String]> = modules
            .iter()
            .filter(|m| m.types.iter().any(|t| is_struct_with_fields(&t.kind)))
            .map(|m| m.path.as_slice())
            .collect();
        let parts: Vec<([u8; 32], [u8; 32], Vec<u8>)> = modules
            .par_iter()
            .map(|m| {
                let constructor = constructors.contains(m.path.as_slice());
                let view = InterfaceView {
                    path: &m.path,
                    file: m.file,
                    fns: m
                        .fns
                        .iter()
                        .filter(|f| constructor && f.attrs.struct_literal)
                        .map(FnView::of)
                        .collect(),
                    types: m.types.iter().map(TypeView::of).collect(),
                    impls: m.impls.iter().map(ImplView::of).collect(),
                    uses: &m.uses,
                    extern_crates: &m.extern_crates,
                    foreign_fns: m.foreign_fns.iter().map(FnView::of).collect(),
                    macros: &m.macros,
                    children: &m.children,
                    values: &m.values,
                };
                // Every name the module holds, wherever it is, for the name search.
                let whole = encode(m);
                (
                    Sha256::digest(encode(&view)).into(),
                    Sha256::digest(&whole).into(),
                    whole,
                )
            })
            .collect();
        let (mut h, mut w) = (Sha256::new(), Sha256::new());
        let mut haystack = Vec::with_capacity(parts.len());
        for (iface, whole, bytes) in parts {
            h.update(iface);
            w.update(whole);
            haystack.push(bytes);
        }
        MemberShape {
            whole: truncate(w.finalize().into()),
            iface: truncate(h.finalize().into()),
            haystack,
        }
    }

    /// A shape read back from the cache: its digests as written, and the entry's bytes, which
    /// hold every name of the IR, as the haystack.
    pub(crate) fn stored((whole, iface): ([u8; 16], [u8; 16]), bytes: Vec<u8>) -> MemberShape {
        MemberShape {
            whole,
            iface,
            haystack: vec![bytes],
        }
    }

    /// The digests the cache stores ([`MemberShape::stored`]).
    pub(crate) fn digests(&self) -> ([u8; 16], [u8; 16]) {
        (self.whole, self.iface)
    }

    /// Whether any of `names` occurs in the member's IR (as bytes: a name inside a longer one
    /// counts too, which only errs towards resolving again).
    fn mentions_any(&self, names: &[&str]) -> bool {
        let finders: Vec<memchr::memmem::Finder> = names
            .iter()
            .map(|n| memchr::memmem::Finder::new(n.as_bytes()))
            .collect();
        self.haystack
            .iter()
            .any(|bytes| finders.iter().any(|f| f.find(bytes).is_some()))
    }
}

fn is_struct_with_fields(kind: &IrItemKind) -> bool {
    matches!(kind, IrItemKind::Struct { fields, .. } if !fields.is_empty())
}

fn is_struct_with_fields_in_index(kind: &TypeKind) -> bool {
    matches!(kind, TypeKind::Struct { fields, .. } if !fields.is_empty())
}

fn encode<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    // Every IR type serializes (as the IR cache does); an error would leave the bytes empty,
    // and the digests then only differ more often.
    postcard::to_allocvec(value).unwrap_or_default()
}

fn truncate(digest: [u8; 32]) -> [u8; 16] {
    let mut out = [0; 16];
    out.copy_from_slice(&digest[..16]);
    out
}

/// A member's function named so that the name survives edits elsewhere in the member: by its
/// owner, module, name, and how many functions with the same owner, module and name come before
/// it (a function added, or a `#[cfg]` twin, shifts only those of its own name).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct MemberKey {
    owner: KeyOwner,
    module: String,
    name: String,
    nth: u32,
}

/// A function's owner in a [`MemberKey`]: impls and traits by their offset in the unit.
#[derive(Serialize, Deserialize, Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum KeyOwner {
    Free,
    Foreign,
    Impl(u32),
    Trait(u32),
}

/// A member unit's id ranges in the index.
pub(crate) struct UnitRanges {
    pub(crate) fns: Range<usize>,
    pub(crate) types: Range<usize>,
    pub(crate) impls: Range<usize>,
}

/// The [`MemberKey`] of each of a member's functions, by offset, and back.
pub(crate) struct UnitKeys {
    by_offset: Vec<MemberKey>,
    offset_of: HashMap<MemberKey, u32>,
}

impl UnitKeys {
    pub(crate) fn of(index: &Index, ranges: &UnitRanges) -> UnitKeys {
        // Counted by module path, not id: two modules may share a path (a `#[path]` twin).
        let mut count: HashMap<(KeyOwner, &[String], &str), u32> = HashMap::new();
        let mut by_offset = Vec::with_capacity(ranges.fns.len());
        for f in ranges.fns.clone() {
            let def = &index.fns[f];
            let owner = match def.owner {
                FnOwner::Free if def.foreign => KeyOwner::Foreign,
                FnOwner::Free => KeyOwner::Free,
                FnOwner::Impl(i) => KeyOwner::Impl(i.wrapping_sub(ranges.impls.start) as u32),
                FnOwner::Trait(t) => KeyOwner::Trait(t.wrapping_sub(ranges.types.start) as u32),
            };
            let module = &index.modules[def.module].path;
            let nth = count
                .entry((owner, module.as_slice(), def.ir.name.as_str()))
                .or_default();
            by_offset.push(MemberKey {
                owner,
                module: module.join("::"),
                name: def.ir.name.clone(),
                nth: *nth,
            });
            *nth += 1;
        }
        let offset_of = by_offset
            .iter()
            .enumerate()
            .map(|(o, k)| (k.clone(), o as u32))
            .collect();
        UnitKeys {
            by_offset,
            offset_of,
        }
    }

    pub(crate) fn key(&self, offset: usize) -> Option<&MemberKey> {
        self.by_offset.get(offset)
    }

    pub(crate) fn offset(&self, key: &MemberKey) -> Option<usize> {
        self.offset_of.get(key).map(|&o| o as usize)
    }
}

/// A member's state as a memo file records it (see the module documentation).
#[derive(Serialize, Deserialize, Clone, Debug)]
pub(crate) struct MemberState {
    /// The whole lowered IR.
    digest: [u8; 16],
    interface: [u8; 16],
    /// The free functions outside the interface, each with the digest of what other functions'
    /// resolutions read of it (module, name, signature, whether it has a body).
    free: Vec<(MemberKey, [u8; 16])>,
}

impl MemberState {
    pub(crate) fn of(
        index: &Index,
        ranges: &UnitRanges,
        keys: &UnitKeys,
        shape: &MemberShape,
    ) -> MemberState {
        let constructors: HashSet<&[String]> = ranges
            .types
            .clone()
            .filter(|&t| is_struct_with_fields_in_index(&index.types[t].kind))
            .map(|t| index.modules[index.types[t].module].path.as_slice())
            .collect();
        let mut free = Vec::new();
        for (o, f) in ranges.fns.clone().enumerate() {
            let def = &index.fns[f];
            let module = &index.modules[def.module].path;
            if def.owner != FnOwner::Free
                || def.foreign
                || (def.ir.attrs.struct_literal && constructors.contains(module.as_slice()))
            {
                continue;
            }
            let ir = &def.ir;
            // What another function's resolution reads of this one; its position and
            // attributes only the stages after resolution, and its own resolution, read.
            let outline = truncate(
                Sha256::digest(encode(&(module, &ir.name, &ir.sig, ir.body.is_some()))).into(),
            );
            free.push((keys.by_offset[o].clone(), outline));
        }
        MemberState {
            digest: shape.whole,
            interface: shape.iface,
            free,
        }
    }
}

/// How a member compares with the state a memo file recorded.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Status {
    /// Not a member: its sources cannot change.
    Dependency,
    /// Its IR is unchanged.
    Same,
    /// Its interface is unchanged; these free functions were added, removed or changed
    /// signature, and no member that depends on it mentions their names.
    BodyOnly(HashSet<MemberKey>),
    /// Anything else, or no recorded state to compare with.
    Changed,
}

impl Status {
    /// Whether a stored reference may name this member's function `key`.
    pub(crate) fn names(&self, key: &MemberKey) -> bool {
        match self {
            Status::Same => true,
            Status::BodyOnly(changed) => !changed.contains(key),
            Status::Dependency | Status::Changed => false,
        }
    }
}

/// Each unit's [`Status`]. `closures[u]`: the members `u` depends on, itself included (empty for
/// a dependency); `old`: the states the memo file recorded, `None` without a file (then every
/// member is `Same`: there is no entry to reuse, and a reference made in this run names back).
pub(crate) fn statuses(
    closures: &[Vec<usize>],
    now: &[Option<MemberState>],
    old: Option<&[Option<MemberState>]>,
    shapes: &[Option<MemberShape>],
) -> Vec<Status> {
    let units = closures.len();
    let mut status: Vec<Status> = (0..units)
        .map(|u| {
            let Some(now) = now.get(u).and_then(Option::as_ref) else {
                return if closures[u].is_empty() {
                    Status::Dependency
                } else {
                    Status::Changed
                };
            };
            let Some(old) = old else {
                return Status::Same;
            };
            match old.get(u).and_then(Option::as_ref) {
                Some(was) if was.digest == now.digest => Status::Same,
                Some(was) if was.interface == now.interface => {
                    Status::BodyOnly(changed_free_fns(was, now))
                }
                _ => Status::Changed,
            }
        })
        .collect();
    // A changed name some dependent member mentions: that member may look it up.
    let mentioned: Vec<usize> = status
        .iter()
        .enumerate()
        .filter_map(|(u, s)| {
            let Status::BodyOnly(changed) = s else {
                return None;
            };
            let names: Vec<&str> = changed
                .iter()
                .map(|k| k.name.as_str())
                .collect::<BTreeSet<_>>()
                .into_iter()
                .collect();
            let seen = !names.is_empty()
                && (0..units).any(|w| {
                    w != u
                        && closures[w].contains(&u)
                        && shapes
                            .get(w)
                            .and_then(Option::as_ref)
                            .is_none_or(|shape| shape.mentions_any(&names))
                });
            seen.then_some(u)
        })
        .collect();
    for u in mentioned {
        status[u] = Status::Changed;
    }
    status
}

/// The free functions one of `was` and `now` has and the other has not with the same outline:
/// added, removed or re-signed.
fn changed_free_fns(was: &MemberState, now: &MemberState) -> HashSet<MemberKey> {
    let before: HashSet<&(MemberKey, [u8; 16])> = was.free.iter().collect();
    let after: HashSet<&(MemberKey, [u8; 16])> = now.free.iter().collect();
    before
        .symmetric_difference(&after)
        .map(|(key, _)| key.clone())
        .collect()
}
