//! Part of stage 3b, *resolve*: functions' resolutions, kept across runs.
//!
//! Why: after an edit of one workspace file, resolution was half of deno's run (2.8 of 5.6 s,
//! issue 17 asks ≤ 3 s for the whole run), and 70 % of its CPU went to functions of registry
//! crates (43 800 plain functions and 13 500 instances of their provided methods), whose sources
//! cannot change; most of the rest to members the edited one does not reach.
//!
//! What a function's resolution reads: its own body, the items of its crate and of the crates
//! that crate depends on, and the graph-wide tables of impls (a generic or `dyn` call dispatches
//! to every impl of the trait, the workspace's included; a field's fn items are read from the
//! constructors among its type's trait impls, which another crate may write; [`crate::field_fns`]).
//! It also reads the root candidates ([`crate::roots::candidates`]: a candidate is never
//! instantiated) and which instances the resolution already numbered (an existing instance is
//! named by its id, a new one is pending).
//!
//! So an entry is valid when:
//! - the *key* matches: the run key ([`crate::run_cache`]: workspace, rules, configuration,
//!   models, the analyzer's build) and a fingerprint of what members show the graph-wide tables:
//!   their types (names, fields, trait methods' signatures), their impls (headers, methods'
//!   signatures, and the bodies of impls for other crates' types, which [`crate::field_fns`] may
//!   read). A body edited, or a free function or module added, leaves it unchanged; an impl added
//!   or a signature changed does not;
//! - for an entry of a member's function (or of an instance over a member's impl or types): the
//!   member's lowered IR is unchanged, and no member it depends on changed more than free
//!   functions that no member depending on it can name ([`crate::member_changes`]), so
//!   everything its paths can name is unchanged. A dependency's sources cannot change;
//! - every function the entry names still exists and has the root-candidate bit it had;
//! - instances are stored as keys, never ids: the walk's instances are recorded in the order it
//!   met them (`met`), so a reused entry names existing instances by their ids and the others as
//!   pending, in the same order a fresh walk would (ids are assigned in frontier order after
//!   each frontier, [`crate::resolve::resolve_reachable`]).
//!
//! Ids shift between runs (members come first in the unit order, so a function added to a
//! member shifts every dependency's function ids), so an entry names functions by unit and
//! offset within the unit (a dependency unit's layout is fixed by the run key), a member's
//! function by a key that survives edits elsewhere in its member
//! ([`crate::member_changes::MemberKey`]), a member's impl or trait method by its impl's or
//! trait's offset and its name; types and impls by unit and offset (members' lists are part of
//! the fingerprint).
//!
//! `NONBLOCK_VERIFY_RESOLVE_MEMO=1` resolves every reused function again and reports on stderr
//! each one whose stored resolution differs (the check run on real applications).

use std::collections::HashMap;
use std::ops::Range;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::discover::Workspace;
use crate::index::{FnId, FnOwner, ImplId, Index, TypeId, TypeKind};
use crate::instances::{Instance, Table, PENDING};
use crate::member_changes::{MemberKey, MemberShape, MemberState, Status, UnitKeys, UnitRanges};
use crate::resolve::Resolved;
use crate::ty::{TraitRef, Ty, TyCon};

/// Bumped when the file's layout or the meaning of an entry changes.
const FORMAT: u32 = 3;

/// Memo files kept per cache directory (a few option sets used in turn keep theirs).
const KEEP: usize = 2;

/// A function named so that the name survives edits of workspace files.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
enum StableFn {
    /// (unit, offset among its functions): a dependency unit's function.
    Unit(u32, u32),
    /// (unit, key): a member's function that is no impl's or trait's method, named by a key
    /// that survives edits elsewhere in the member ([`crate::member_changes`]).
    Member(u32, MemberKey),
    /// (unit, offset among its impls, name): an impl's method.
    ImplFn(u32, u32, String),
    /// (unit, offset among its types, name): a trait's method.
    TraitFn(u32, u32, String),
}

/// A function or an instance, as an entry names it. In `bind`, a local type id is written as
/// `unit << 32 | offset` ([`Memo::stable_type`]).
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Eq, Hash)]
enum StableRef {
    Fn(StableFn),
    Instance {
        base: StableFn,
        imp: Option<(u32, u32)>,
        bind: Vec<(String, Ty)>,
    },
}

/// One function's resolution as stored: `Target::Fn(i)` names `refs[i]`.
#[derive(Serialize, Deserialize)]
struct Stored {
    /// What the bodies name, each with the root-candidate bit of its function (an instance's:
    /// its base's) when recorded.
    refs: Vec<(StableRef, bool)>,
    /// The instances the walk met, in the order it met them (indices into `refs`).
    met: Vec<u32>,
    bodies: Vec<crate::resolve::Body>,
}

/// An entry: whose resolution, its root-candidate bit, the encoded [`Stored`] (decoded only
/// when reused, on the resolving thread), and the members whose code it read (each read with
/// every member it depends on: [`Memo::closure_ok`]).
#[derive(Serialize, Deserialize)]
pub(crate) struct Entry(StableRef, bool, serde_bytes::ByteBuf, Vec<u32>);

#[derive(Serialize, Deserialize)]
struct File {
    format: u32,
    key: String,
    /// [`Layout::counts`] when written.
    layout: Vec<(u32, u32, u32)>,
    /// Per unit, a member's state when written ([`crate::member_changes`]).
    members: Vec<Option<MemberState>>,
    entries: Vec<Entry>,
}

/// What a stored reference names in this run.
enum Current {
    Fn(FnId),
    Instance(Instance),
}

/// Each unit's id ranges in the index: ids are assigned unit after unit.
struct Layout {
    fns: Vec<Range<usize>>,
    types: Vec<Range<usize>>,
    impls: Vec<Range<usize>>,
}

impl Layout {
    /// `None` when some unit's ids are not contiguous (offsets would not name them).
    fn of(index: &Index) -> Option<Layout> {
        let units = index.units.len();
        Some(Layout {
            fns: ranges(units, index.fns.iter().map(|f| f.unit))?,
            types: ranges(units, index.types.iter().map(|t| t.unit))?,
            impls: ranges(units, index.impls.iter().map(|i| i.unit))?,
        })
    }

    /// Per unit: its functions (dependency units only: a member's change with every fn added),
    /// types and impls.
    fn counts(&self, mutable: &[bool]) -> Vec<(u32, u32, u32)> {
        (0..self.fns.len())
            .map(|u| {
                (
                    if mutable[u] {
                        0
                    } else {
                        self.fns[u].len() as u32
                    },
                    self.types[u].len() as u32,
                    self.impls[u].len() as u32,
                )
            })
            .collect()
    }
}

fn ranges(units: usize, owners: impl Iterator<Item = usize>) -> Option<Vec<Range<usize>>> {
    let mut out = vec![0..0; units];
    let mut seen = vec![false; units];
    let mut current = None;
    for (id, unit) in owners.enumerate() {
        if current != Some(unit) {
            if *seen.get(unit)? {
                return None;
            }
            seen[unit] = true;
            out[unit] = id..id;
            current = Some(unit);
        }
        out[unit].end = id + 1;
    }
    Some(out)
}

/// The most recently written memo file, read, checked and decoded on a thread of its own while
/// the index is built: its name needs the key, and the key ([`Memo::open`]) needs the index, so
/// without this the read waited for both, on one core (deno, one edit: 0.2 s). The file is used
/// only when it is the one the key names; otherwise [`Memo::open`] reads that one itself, so
/// what is read does not depend on this.
pub(crate) struct Prefetch(std::thread::JoinHandle<Option<(PathBuf, File)>>);

impl Prefetch {
    /// Starts reading; `None` without a cache directory or when no thread can be started.
    pub(crate) fn start(ws: &Workspace) -> Option<Prefetch> {
        let dir = ws.cache_dir.clone()?;
        std::thread::Builder::new()
            .name("nonblock-memo-read".into())
            .spawn(move || {
                let newest = crate::cache::newest_first(&dir, "resolve-")
                    .into_iter()
                    .next()?;
                let file = read_file(&newest)?;
                Some((newest, file))
            })
            .ok()
            .map(Prefetch)
    }

    /// The file read, when it is `path` (a thread that panicked read nothing).
    fn take(self, path: &std::path::Path) -> Option<File> {
        let (read, file) = self.0.join().ok()??;
        (read == path).then_some(file)
    }
}

fn read_file(path: &std::path::Path) -> Option<File> {
    let bytes = std::fs::read(path).ok()?;
    postcard::from_bytes(crate::cache::unframed(&bytes)?).ok()
}

/// The memo of one run: the entries read, and how to name this run's ids stably.
pub(crate) struct Memo {
    path: PathBuf,
    dir: PathBuf,
    key: String,
    mutable: Vec<bool>,
    /// Per unit: a member's state in this run; `None` for dependencies, and for members whose
    /// sources were not recorded (their functions have no stable name).
    states: Vec<Option<MemberState>>,
    /// Per unit: its [`Status`] against the file's states.
    status: Vec<Status>,
    /// Per unit: no member it depends on (itself included) is [`Status::Changed`], so what its
    /// functions' paths and types can name is as it was.
    closure_ok: Vec<bool>,
    /// Per member unit with a state: its functions' keys.
    keys: Vec<Option<UnitKeys>>,
    layout: Layout,
    entries: Vec<Entry>,
    by_fn: HashMap<FnId, usize>,
    by_instance: HashMap<Instance, usize>,
    verify: bool,
    mismatches: AtomicUsize,
}

/// What [`Memo::resolve`] did for one function.
pub(crate) enum Outcome {
    /// Entry `.0` was reused.
    Reused(usize, Resolved),
    /// Resolved afresh; `.1`: the entry to store for it, when it may be stored.
    Fresh(Resolved, Option<Entry>),
}

impl Memo {
    /// The memo for this run's index, reading its entries when a file with the same key exists.
    /// `None` without a cache directory, or when the index's ids cannot be named stably.
    /// `shapes`: per unit, a member's [`MemberShape`] when its sources were recorded;
    /// `prefetch`: the newest file, when its reading was started ([`Prefetch`]).
    pub(crate) fn open(
        ws: &Workspace,
        index: &Index,
        run_key: &str,
        shapes: &[Option<MemberShape>],
        prefetch: Option<Prefetch>,
    ) -> Option<Memo> {
        if usize::BITS < 64 {
            return None;
        }
        let dir = ws.cache_dir.clone()?;
        let mutable: Vec<bool> = ws
            .units
            .iter()
            .map(|u| crate::cache::is_mutable(ws, u))
            .collect();
        if mutable.len() != index.units.len() {
            return None;
        }
        let layout = Layout::of(index)?;
        let ranges = |u: usize| UnitRanges {
            fns: layout.fns[u].clone(),
            types: layout.types[u].clone(),
            impls: layout.impls[u].clone(),
        };
        let keyed: Vec<Option<(UnitKeys, MemberState)>> = (0..ws.units.len())
            .into_par_iter()
            .map(|u| {
                let shape = shapes.get(u)?.as_ref().filter(|_| mutable[u])?;
                let keys = UnitKeys::of(index, &ranges(u));
                let state = MemberState::of(index, &ranges(u), &keys, shape);
                Some((keys, state))
            })
            .collect();
        let (keys, states): (Vec<_>, Vec<_>) = keyed.into_iter().map(Option::unzip).unzip();
        let mut memo = Memo {
            path: PathBuf::new(),
            dir,
            key: String::new(),
            mutable,
            states,
            status: Vec::new(),
            closure_ok: Vec::new(),
            keys,
            layout,
            entries: Vec::new(),
            by_fn: HashMap::new(),
            by_instance: HashMap::new(),
            verify: std::env::var_os("NONBLOCK_VERIFY_RESOLVE_MEMO").is_some(),
            mismatches: AtomicUsize::new(0),
        };
        let mut h = Sha256::new();
        h.update(FORMAT.to_le_bytes());
        h.update(run_key.as_bytes());
        h.update(memo.workspace_fingerprint(index));
        memo.key = crate::rules::hex(&h.finalize()[..16]);
        memo.path = memo.dir.join(format!("resolve-{}.bin", memo.key));
        let file = memo.read(prefetch.and_then(|p| p.take(&memo.path)));
        let closures = member_closures(ws, &memo.mutable);
        memo.status = crate::member_changes::statuses(
            &closures,
            &memo.states,
            file.as_ref().map(|f| f.members.as_slice()),
            shapes,
        );
        memo.closure_ok = closures
            .iter()
            .map(|c| c.iter().all(|&w| memo.status[w] != Status::Changed))
            .collect();
        memo.entries = file.map(|f| f.entries).unwrap_or_default();
        for (i, Entry(stable, _, _, _)) in memo.entries.iter().enumerate() {
            match memo.current(index, stable) {
                Some(Current::Fn(f)) => {
                    memo.by_fn.insert(f, i);
                }
                Some(Current::Instance(key)) => {
                    memo.by_instance.insert(key, i);
                }
                None => {}
            }
        }
        Some(memo)
    }

    /// This key's file (`prefetched`, when that is the file already read).
    fn read(&self, prefetched: Option<File>) -> Option<File> {
        let file = match prefetched {
            Some(file) => file,
            None => read_file(&self.path)?,
        };
        (file.format == FORMAT
            && file.key == self.key
            && file.layout == self.layout.counts(&self.mutable)
            && file.members.len() == self.mutable.len())
        .then_some(file)
    }

    /// Resolves function `f` ([`crate::resolve`]'s `resolve_in` is `fresh`), reusing its entry
    /// when it has a valid one.
    pub(crate) fn resolve(
        &self,
        index: &Index,
        table: &Table,
        candidate: &[bool],
        f: FnId,
        fresh: impl Fn() -> Resolved,
    ) -> Outcome {
        if let Some((entry, reused)) = self.reuse(index, table, candidate, f) {
            if self.verify {
                let again = fresh();
                let (old, new) = (
                    format!("{:?}", (&reused.bodies, &reused.pending)),
                    format!("{:?}", (&again.bodies, &again.pending)),
                );
                if old != new {
                    self.mismatches.fetch_add(1, Ordering::Relaxed);
                    eprintln!(
                        "nonblock: resolve memo mismatch in {}:\n  stored: {old}\n  fresh:  {new}",
                        index.fn_display(base_of(table, f))
                    );
                }
            }
            return Outcome::Reused(entry, reused);
        }
        let resolved = fresh();
        let entry = self.record(index, table, candidate, f, &resolved);
        Outcome::Fresh(resolved, entry)
    }

    fn reuse(
        &self,
        index: &Index,
        table: &Table,
        candidate: &[bool],
        f: FnId,
    ) -> Option<(usize, Resolved)> {
        let entry = match table.instance(f) {
            Some(key) => *self.by_instance.get(key)?,
            None => *self.by_fn.get(&f)?,
        };
        let Entry(_, own_candidate, bytes, read) = &self.entries[entry];
        let base = base_of(table, f);
        if is_candidate(candidate, base) != *own_candidate {
            return None;
        }
        // The walked body is the one stored: its member's IR is unchanged.
        let own_unit = index.fns[base].unit;
        if self.mutable[own_unit] && self.status[own_unit] != Status::Same {
            return None;
        }
        for &u in read {
            if !*self.closure_ok.get(u as usize)? {
                return None;
            }
        }
        let stored: Stored = postcard::from_bytes(bytes).ok()?;
        let mut current = Vec::with_capacity(stored.refs.len());
        for (stable, was_candidate) in &stored.refs {
            let now = self.current(index, stable)?;
            let base = match &now {
                Current::Fn(g) => *g,
                Current::Instance(key) => key.base,
            };
            if is_candidate(candidate, base) != *was_candidate {
                return None;
            }
            current.push(now);
        }
        // The instances the walk met: existing ones by id, the others pending, in order.
        let mut ids: Vec<Option<FnId>> = current
            .iter()
            .map(|c| match c {
                Current::Fn(g) => Some(*g),
                Current::Instance(_) => None,
            })
            .collect();
        let mut pending = Vec::new();
        for &m in &stored.met {
            let m = m as usize;
            let Some(Current::Instance(key)) = current.get(m) else {
                return None;
            };
            if ids[m].is_none() {
                ids[m] = Some(table.get(key).unwrap_or_else(|| {
                    pending.push(key.clone());
                    PENDING + pending.len() - 1
                }));
            }
        }
        // An instance named without being met (the function's own id) exists already.
        for (i, c) in current.iter().enumerate() {
            if let (None, Current::Instance(key)) = (ids[i], c) {
                ids[i] = Some(table.get(key)?);
            }
        }
        let mut bodies = stored.bodies;
        for b in &mut bodies {
            b.owner = f;
            crate::resolve::map_fn_ids(&mut b.calls, &mut |i| ids.get(i).copied().flatten())?;
        }
        Some((
            entry,
            Resolved {
                bodies,
                pending,
                met: Vec::new(),
            },
        ))
    }

    /// The entry for `f`'s fresh resolution, when `f` may be stored and everything it names
    /// has a stable name.
    fn record(
        &self,
        index: &Index,
        table: &Table,
        candidate: &[bool],
        f: FnId,
        resolved: &Resolved,
    ) -> Option<Entry> {
        let own = match table.instance(f) {
            Some(key) => self.stable_instance(index, key)?,
            None => StableRef::Fn(self.stable_fn(index, f)?),
        };
        let read = self.members_read(&own)?;
        let mut refs: Vec<(StableRef, bool)> = Vec::new();
        let mut ref_of: HashMap<FnId, usize> = HashMap::new();
        let mut ref_of_instance: HashMap<&Instance, usize> = HashMap::new();
        let intern = |refs: &mut Vec<(StableRef, bool)>, stable: StableRef, base: FnId| {
            refs.push((stable, is_candidate(candidate, base)));
            refs.len() - 1
        };
        let mut met = Vec::with_capacity(resolved.met.len());
        for key in &resolved.met {
            let stable = self.stable_instance(index, key)?;
            let i = intern(&mut refs, stable, key.base);
            ref_of_instance.insert(key, i);
            met.push(i as u32);
        }
        let mut bodies = resolved.bodies.clone();
        for b in &mut bodies {
            if b.owner != f {
                return None;
            }
            crate::resolve::map_fn_ids(&mut b.calls, &mut |g| {
                if let Some(&i) = ref_of.get(&g) {
                    return Some(i);
                }
                let i = if g >= PENDING {
                    *ref_of_instance.get(resolved.pending.get(g - PENDING)?)?
                } else if let Some(key) = table.instance(g) {
                    match ref_of_instance.get(key) {
                        Some(&i) => i,
                        None => intern(&mut refs, self.stable_instance(index, key)?, key.base),
                    }
                } else {
                    intern(&mut refs, StableRef::Fn(self.stable_fn(index, g)?), g)
                };
                ref_of.insert(g, i);
                Some(i)
            })?;
        }
        let stored = Stored { refs, met, bodies };
        let bytes = postcard::to_allocvec(&stored).ok()?;
        Some(Entry(
            own,
            is_candidate(candidate, base_of(table, f)),
            serde_bytes::ByteBuf::from(bytes),
            read,
        ))
    }

    /// Writes the entries this run reused (`used`, indices) and those it recorded, when that
    /// changes the file, on a thread of its own (deno, one edit: 0.15 s of encoding and hashing
    /// the rest of the run need not wait for). Returns how many mismatches the verification found
    /// (0 without it), and the write to wait for before the run ends ([`Saving::wait`]).
    pub(crate) fn save(self, mut used: Vec<usize>, recorded: Vec<Entry>) -> (usize, Saving) {
        let mismatches = self.mismatches.load(Ordering::Relaxed);
        used.sort_unstable();
        used.dedup();
        if recorded.is_empty() && used.len() == self.entries.len() {
            return (mismatches, Saving::default());
        }
        let write = move || {
            let mut entries: Vec<Option<Entry>> = self.entries.into_iter().map(Some).collect();
            let file = File {
                format: FORMAT,
                key: self.key,
                layout: self.layout.counts(&self.mutable),
                members: self.states,
                entries: used
                    .into_iter()
                    .filter_map(|i| entries[i].take())
                    .chain(recorded)
                    .collect(),
            };
            if let Ok(payload) = postcard::to_allocvec(&file) {
                crate::cache::write_atomically(&self.path, &crate::cache::framed(&payload));
                crate::cache::keep_newest(&self.dir, "resolve-", KEEP);
            }
        };
        // Without a thread the memo is not written: the next run resolves afresh.
        let handle = std::thread::Builder::new()
            .name("nonblock-memo-write".into())
            .spawn(write)
            .ok();
        (mismatches, Saving(handle))
    }
    /// The members whose code the resolution of `stable` reads: the units it names (its own,
    /// an impl's, the bound types') are read with everything they depend on. `None` when one of
    /// them has no state (its sources were not recorded).
    fn members_read(&self, stable: &StableRef) -> Option<Vec<u32>> {
        let mut units = Vec::new();
        let fn_unit = |f: &StableFn| match f {
            StableFn::Unit(u, _)
            | StableFn::Member(u, _)
            | StableFn::ImplFn(u, _, _)
            | StableFn::TraitFn(u, _, _) => *u,
        };
        match stable {
            StableRef::Fn(f) => units.push(fn_unit(f)),
            StableRef::Instance { base, imp, bind } => {
                units.push(fn_unit(base));
                units.extend(imp.map(|(u, _)| u));
                for (_, t) in bind {
                    map_ty(t, &mut |id| {
                        units.push((id >> 32) as u32);
                        Some(id)
                    });
                }
            }
        }
        units.sort_unstable();
        units.dedup();
        let mut read = Vec::new();
        for u in units {
            if *self.mutable.get(u as usize)? {
                self.states.get(u as usize)?.as_ref()?;
                read.push(u);
            }
        }
        Some(read)
    }

    fn stable_fn(&self, index: &Index, f: FnId) -> Option<StableFn> {
        let def = index.fns.get(f)?;
        let unit = def.unit;
        if !self.mutable[unit] {
            return Some(StableFn::Unit(
                unit as u32,
                (f - self.layout.fns[unit].start) as u32,
            ));
        }
        let name = &def.ir.name;
        let member = || {
            let keys = self.keys.get(unit)?.as_ref()?;
            let key = keys.key(f - self.layout.fns[unit].start)?;
            Some(StableFn::Member(unit as u32, key.clone()))
        };
        match def.owner {
            FnOwner::Impl(i) if index.impls[i].fns.get(name.as_str()) == Some(&f) => {
                let (u, o) = self.stable_impl(index, i);
                Some(StableFn::ImplFn(u, o, name.clone()))
            }
            FnOwner::Trait(t) => match &index.types[t].kind {
                TypeKind::Trait { methods, .. } if methods.get(name.as_str()) == Some(&f) => {
                    let id = self.stable_type(index, t);
                    Some(StableFn::TraitFn(
                        (id >> 32) as u32,
                        id as u32,
                        name.clone(),
                    ))
                }
                _ => member(),
            },
            _ => member(),
        }
    }

    fn stable_impl(&self, index: &Index, i: ImplId) -> (u32, u32) {
        let unit = index.impls[i].unit;
        (unit as u32, (i - self.layout.impls[unit].start) as u32)
    }

    /// A local type id as `unit << 32 | offset`.
    fn stable_type(&self, index: &Index, t: TypeId) -> usize {
        let unit = index.types[t].unit;
        (unit << 32) | (t - self.layout.types[unit].start)
    }

    fn stable_instance(&self, index: &Index, key: &Instance) -> Option<StableRef> {
        let base = self.stable_fn(index, key.base)?;
        let mut bind = Vec::with_capacity(key.bind.len());
        for (name, t) in &key.bind {
            bind.push((
                name.clone(),
                map_ty(t, &mut |id| Some(self.stable_type(index, id)))?,
            ));
        }
        Some(StableRef::Instance {
            base,
            imp: key.imp.map(|i| self.stable_impl(index, i)),
            bind,
        })
    }

    fn current(&self, index: &Index, stable: &StableRef) -> Option<Current> {
        match stable {
            StableRef::Fn(f) => self.current_fn(index, f).map(Current::Fn),
            StableRef::Instance { base, imp, bind } => {
                let mut key = Instance {
                    base: self.current_fn(index, base)?,
                    imp: None,
                    bind: Vec::with_capacity(bind.len()),
                };
                if let Some((u, o)) = imp {
                    key.imp = Some(offset(&self.layout.impls, *u, *o)?);
                }
                for (name, t) in bind {
                    let t = map_ty(t, &mut |id| {
                        offset(&self.layout.types, (id >> 32) as u32, id as u32)
                    })?;
                    key.bind.push((name.clone(), t));
                }
                Some(Current::Instance(key))
            }
        }
    }

    fn current_fn(&self, index: &Index, f: &StableFn) -> Option<FnId> {
        match f {
            StableFn::Unit(u, o) => {
                if self.mutable.get(*u as usize).is_none_or(|m| *m) {
                    return None;
                }
                offset(&self.layout.fns, *u, *o)
            }
            StableFn::Member(u, key) => {
                if !self.status.get(*u as usize)?.names(key) {
                    return None;
                }
                let o = self.keys.get(*u as usize)?.as_ref()?.offset(key)?;
                offset(&self.layout.fns, *u, o as u32)
            }
            StableFn::ImplFn(u, o, name) => {
                let i = offset(&self.layout.impls, *u, *o)?;
                index.impls[i].fns.get(name.as_str()).copied()
            }
            StableFn::TraitFn(u, o, name) => {
                let t = offset(&self.layout.types, *u, *o)?;
                match &index.types[t].kind {
                    TypeKind::Trait { methods, .. } => methods.get(name.as_str()).copied(),
                    _ => None,
                }
            }
        }
    }

    /// What the workspace's own units show the graph-wide tables a dependency's resolution
    /// reads (see the module documentation).
    fn workspace_fingerprint(&self, index: &Index) -> [u8; 32] {
        let mut h = Sha256::new();
        let stable_ty = |t: &Ty| map_ty(t, &mut |id| Some(self.stable_type(index, id)));
        let sig = |f: FnId| {
            let d = &index.fns[f];
            format!("{:?} {}", d.ir.sig, d.ir.body.is_some())
        };
        for (u, unit) in index.units.iter().enumerate() {
            if !self.mutable[u] {
                continue;
            }
            h.update(format!("unit {u} {}\n", unit.crate_name));
            for t in self.layout.types[u].clone() {
                let def = &index.types[t];
                let kind = match &def.kind {
                    TypeKind::Trait {
                        methods,
                        supertraits,
                        generics,
                        assoc_bounds,
                    } => {
                        let mut ms: Vec<String> = methods
                            .iter()
                            .map(|(n, &f)| format!("{n} {}", sig(f)))
                            .collect();
                        ms.sort();
                        format!("trait {supertraits:?} {generics:?} {assoc_bounds:?} {ms:?}")
                    }
                    other => format!("{other:?}"),
                };
                h.update(format!(
                    "type {:?} {} {:?} {kind}\n",
                    index.modules[def.module].path, def.name, def.derives
                ));
            }
            for i in self.layout.impls[u].clone() {
                let imp = &index.impls[i];
                // Only impls for other crates' types are constructors `field_fns` may read
                // from outside the crates a stored resolution depends on.
                let own_type = local_type(&imp.self_ty).is_some_and(|t| index.types[t].unit == u);
                let mut fns: Vec<String> = imp
                    .fns
                    .iter()
                    .map(|(n, &f)| {
                        let body = match (&index.fns[f].ir.body, own_type) {
                            (Some(b), false) => crate::rules::hex(&Sha256::digest(b.bytes())),
                            _ => String::new(),
                        };
                        format!("{n} {} {body}", sig(f))
                    })
                    .collect();
                fns.sort();
                h.update(format!(
                    "impl {:?} {:?} {:?} {:?} {:?} {:?} {:?} {:?} {fns:?}\n",
                    index.modules[imp.module].path,
                    imp.ir_self,
                    imp.ir_trait,
                    imp.generics,
                    imp.assoc_types,
                    imp.assoc_consts,
                    stable_ty(&imp.self_ty),
                    imp.trait_ref.as_ref().map(|r| match r {
                        TraitRef::Local(t) => TraitRef::Local(self.stable_type(index, *t)),
                        other => other.clone(),
                    }),
                ));
            }
        }
        h.finalize().into()
    }
}

/// A memo being written ([`Memo::save`]).
/// `Default`: nothing being written.
#[must_use = "the run must wait for the memo's write before it ends"]
#[derive(Default)]
pub(crate) struct Saving(Option<std::thread::JoinHandle<()>>);

impl Saving {
    /// Waits until the file is written (or the write failed: the memo is a cache, and the
    /// write is atomic, so a failed one leaves the previous file or none).
    pub(crate) fn wait(self) {
        if let Some(handle) = self.0 {
            let _ = handle.join();
        }
    }
}

/// Per unit: for a member, the members it depends on (transitively), itself included; empty
/// for a dependency.
fn member_closures(ws: &Workspace, mutable: &[bool]) -> Vec<Vec<usize>> {
    (0..ws.units.len())
        .map(|unit| {
            if !mutable[unit] {
                return Vec::new();
            }
            let mut seen = vec![false; ws.units.len()];
            let mut stack = vec![unit];
            seen[unit] = true;
            while let Some(u) = stack.pop() {
                for dep in ws.units[u].deps.values() {
                    if let crate::discover::DepTarget::Unit(v) = dep {
                        if !std::mem::replace(&mut seen[*v], true) {
                            stack.push(*v);
                        }
                    }
                }
            }
            (0..ws.units.len())
                .filter(|&u| seen[u] && mutable[u])
                .collect()
        })
        .collect()
}

/// The function whose IR `f` runs: `f`, or an instance's base.
fn base_of(table: &Table, f: FnId) -> FnId {
    table.instance(f).map_or(f, |i| i.base)
}

fn is_candidate(candidate: &[bool], f: FnId) -> bool {
    candidate.get(f).copied().unwrap_or(false)
}

/// The id at `offset` of `unit`'s range, when there is one.
fn offset(ranges: &[Range<usize>], unit: u32, offset: u32) -> Option<usize> {
    let r = ranges.get(unit as usize)?;
    let id = r.start + offset as usize;
    (id < r.end).then_some(id)
}

/// The local type a self type names, behind references.
fn local_type(t: &Ty) -> Option<TypeId> {
    match t {
        Ty::Adt(TyCon::Local(id), _) => Some(*id),
        Ty::Ref(inner) => local_type(inner),
        _ => None,
    }
}

/// `t` with every local type id (of a type or a trait) mapped by `f`; `None` when `f` fails.
fn map_ty(t: &Ty, f: &mut impl FnMut(usize) -> Option<usize>) -> Option<Ty> {
    let trait_ref = |r: &TraitRef, f: &mut dyn FnMut(usize) -> Option<usize>| match r {
        TraitRef::Local(id) => f(*id).map(TraitRef::Local),
        other => Some(other.clone()),
    };
    Some(match t {
        Ty::Adt(con, args) => {
            let con = match con {
                TyCon::Local(id) => TyCon::Local(f(*id)?),
                other => other.clone(),
            };
            let args = args.iter().map(|a| map_ty(a, f)).collect::<Option<_>>()?;
            Ty::Adt(con, args)
        }
        Ty::Ref(inner) => Ty::Ref(Box::new(map_ty(inner, f)?)),
        Ty::Param {
            name,
            bounds,
            bound_args,
        } => Ty::Param {
            name: name.clone(),
            bounds: bounds
                .iter()
                .map(|b| trait_ref(b, f))
                .collect::<Option<_>>()?,
            bound_args: bound_args
                .iter()
                .map(|args| args.iter().map(|a| map_ty(a, f)).collect::<Option<_>>())
                .collect::<Option<_>>()?,
        },
        Ty::Dyn(bounds) => Ty::Dyn(
            bounds
                .iter()
                .map(|b| trait_ref(b, f))
                .collect::<Option<_>>()?,
        ),
        Ty::Tuple(items) => Ty::Tuple(items.iter().map(|a| map_ty(a, f)).collect::<Option<_>>()?),
        Ty::Slice(inner) => Ty::Slice(Box::new(map_ty(inner, f)?)),
        Ty::Str => Ty::Str,
        Ty::Unknown => Ty::Unknown,
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Instant;

    use crate::config::Config;
    use crate::discover::{DepTarget, SourceKind, Workspace};
    use crate::testutil::{add_crate, Scratch};
    use crate::{Report, RuleDb};

    /// A member `app` (its `src/lib.rs` is `app`) depending on a registry crate `dep`, with a
    /// cache directory: what a real run with a warm target directory sees.
    fn app_and_dependency(name: &str, app: &str, dep: &str) -> (Workspace, Scratch) {
        crate::testutil::app_with_dependency(name, app, "dep", dep, true)
    }

    fn run(ws: &Workspace) -> Report {
        crate::run_cache::analyze(
            ws,
            &RuleDb::builtin(),
            &Config::default(),
            &crate::progress::Silent,
            Instant::now(),
            BTreeMap::new(),
            false,
        )
    }

    /// The same workspace analysed without any cache: the reference a reusing run must equal.
    fn cold(ws: &Workspace) -> String {
        let mut uncached = ws.clone();
        uncached.cache_dir = None;
        run(&uncached).without_timings().to_json()
    }

    fn append(scratch: &Scratch, text: &str) {
        let path = scratch.0.join("src/lib.rs");
        let mut src = std::fs::read_to_string(&path).unwrap();
        src.push_str(text);
        std::fs::write(path, src).unwrap();
    }

    const DEP: &str = "pub trait Store {\n\
                           fn path(&self) -> String;\n\
                           fn load(&self) -> String { std::fs::read_to_string(self.path()).unwrap() }\n\
                       }\n\
                       pub struct Disk;\n\
                       impl Store for Disk { fn path(&self) -> String { String::from(\"x\") } }\n\
                       pub fn open() -> String { Disk.load() }\n\
                       pub fn helper() -> String { open() }\n\
                       pub fn pause() { std::thread::sleep(std::time::Duration::from_millis(1)); }\n";

    #[test]
    fn an_edited_member_reuses_its_dependencys_resolutions_and_reports_as_a_cold_run() {
        let app = "pub async fn handler() {\n    dep::helper();\n}\n";
        let (ws, scratch) = app_and_dependency("memo-reuse", app, DEP);
        let first = run(&ws);
        assert_eq!(first.cache.resolutions_reused, 0, "nothing stored yet");
        assert_eq!(first.findings.len(), 1, "{:?}", first.findings);

        append(&scratch, "pub async fn added() {\n    dep::pause();\n}\n");
        let edited = run(&ws);
        assert!(!edited.cache.report_reused);
        // helper, open, and the instance of `Store::load` for `Disk`.
        assert!(
            edited.cache.resolutions_reused >= 3,
            "reused {}",
            edited.cache.resolutions_reused
        );
        assert_eq!(edited.findings.len(), 2, "the added root's finding too");
        assert_eq!(edited.without_timings().to_json(), cold(&ws));
    }

    #[test]
    fn a_new_workspace_impl_a_dependency_dispatches_to_is_not_hidden_by_stored_resolutions() {
        let dep = "pub trait Source { fn read(&self) -> String; }\n\
                   pub fn read_all(s: &dyn Source) -> String { s.read() }\n";
        // Both types exist before the edit: only the impl is new.
        let app = "pub struct Mem;\n\
                   pub struct Disk;\n\
                   impl dep::Source for Mem { fn read(&self) -> String { String::new() } }\n\
                   pub async fn handler(s: &dyn dep::Source) {\n    dep::read_all(s);\n}\n";
        let (ws, scratch) = app_and_dependency("memo-impl", app, dep);
        assert!(run(&ws).findings.is_empty());
        append(
            &scratch,
            "impl dep::Source for Disk {\n    fn read(&self) -> String { std::fs::read_to_string(\"x\").unwrap() }\n}\n",
        );
        let edited = run(&ws);
        assert_eq!(edited.cache.resolutions_reused, 0, "another key");
        assert_eq!(edited.findings.len(), 1, "read_all reaches Disk::read");
        assert_eq!(edited.without_timings().to_json(), cold(&ws));
    }

    /// [`app_and_dependency`] with `handler` calling `dep::helper`, analysed once: its memo file.
    fn warm_app(name: &str) -> (Workspace, Scratch, std::path::PathBuf) {
        let app = "pub async fn handler() {\n    dep::helper();\n}\n";
        let (ws, scratch) = app_and_dependency(name, app, DEP);
        run(&ws);
        let dir = ws.cache_dir.clone().unwrap();
        let file =
            crate::testutil::cache_file(&dir, |n| n.starts_with("resolve-")).expect("a memo file");
        (ws, scratch, file)
    }

    #[test]
    fn a_damaged_memo_is_ignored_and_rewritten() {
        let (ws, scratch, file) = warm_app("memo-damaged");
        let good = std::fs::read(&file).unwrap();
        std::fs::write(&file, &good[..good.len() / 2]).unwrap();
        append(&scratch, "pub fn edited() {}\n");
        let damaged = run(&ws);
        assert_eq!(damaged.cache.resolutions_reused, 0);
        assert_eq!(damaged.without_timings().to_json(), cold(&ws));
        append(&scratch, "pub fn edited_again() {}\n");
        assert!(run(&ws).cache.resolutions_reused >= 3, "rewritten whole");
    }

    /// The memo file is read ahead while the index is built ([`super::Prefetch`]), guessing the
    /// newest file: when a newer file has another key (another configuration's run, a damaged
    /// write), the file the key names is still the one read.
    #[test]
    fn a_newer_memo_file_of_another_key_does_not_replace_this_keys() {
        let (ws, scratch, ours) = warm_app("memo-prefetch");
        let dir = ws.cache_dir.clone().unwrap();
        // A whole file of another key, written after this key's: the newest, and the one read
        // ahead. (Taken for this key's, its entries would be refused, and none reused.)
        let mut file = super::read_file(&ours).expect("this key's file decodes");
        file.key = "0123456789abcdef0123456789abcdef".into();
        let other = dir.join(format!("resolve-{}.bin", file.key));
        std::thread::sleep(std::time::Duration::from_millis(20));
        let payload = postcard::to_allocvec(&file).unwrap();
        std::fs::write(&other, crate::cache::framed(&payload)).unwrap();
        assert_eq!(
            crate::cache::newest_first(&dir, "resolve-").first(),
            Some(&other),
            "the other key's file is the newest"
        );
        assert!(ours.exists());
        append(&scratch, "pub fn edited() {}\n");
        let edited = run(&ws);
        assert!(edited.cache.resolutions_reused >= 3, "{:?}", edited.cache);
        assert_eq!(edited.without_timings().to_json(), cold(&ws));
    }

    #[test]
    fn ids_are_named_by_unit_and_offset_and_named_back() {
        let app = "pub struct Mem;\n\
                   impl dep::Store for Mem { fn path(&self) -> String { String::new() } }\n\
                   pub fn free() {}\n";
        let (ws, _scratch) = app_and_dependency("memo-names", app, DEP);
        let loads: Vec<_> = (0..ws.units.len())
            .map(|u| crate::load::load_unit(&ws, u).loaded)
            .collect();
        let shape = || Some(crate::member_changes::MemberShape::of(&loads[0].modules));
        let shapes = [shape(), None];
        let index = crate::index::Index::build(&ws, loads);
        // Without the member's inputs, its free functions have no name; with them, all do.
        let unrecorded =
            super::Memo::open(&ws, &index, "key", &[None, None], None).expect("a memo");
        let recorded = super::Memo::open(&ws, &index, "key", &shapes, None).expect("a memo");
        for f in 0..index.fns.len() {
            let def = &index.fns[f];
            let stable = recorded.stable_fn(&index, f).expect("a name");
            assert_eq!(recorded.current_fn(&index, &stable), Some(f), "{stable:?}");
            match unrecorded.stable_fn(&index, f) {
                Some(other) => {
                    assert!(!matches!(other, super::StableFn::Member(..)));
                    assert_eq!(unrecorded.current_fn(&index, &other), Some(f), "{other:?}");
                }
                None => {
                    assert!(
                        recorded.mutable[def.unit],
                        "a dependency's function has a name"
                    );
                    assert_eq!(def.owner, crate::index::FnOwner::Free, "{}", def.ir.name);
                }
            }
            if let super::StableFn::Member(..) = stable {
                assert_eq!(
                    unrecorded.current_fn(&index, &stable),
                    None,
                    "another digest"
                );
            }
        }
    }

    /// `app` (a member) depending on `core_lib` (a member) depending on `dep` (a registry crate).
    fn two_members_and_dependency(
        name: &str,
        app: &str,
        core: &str,
        dep: &str,
    ) -> (Workspace, Scratch) {
        let (mut ws, scratch) = app_and_dependency(name, app, dep);
        let core_unit = add_crate(&mut ws, &scratch, "core_lib", core, SourceKind::Workspace);
        ws.units[core_unit]
            .deps
            .insert("dep".into(), DepTarget::Unit(1));
        ws.units[0]
            .deps
            .insert("core_lib".into(), DepTarget::Unit(core_unit));
        (ws, scratch)
    }

    #[test]
    fn a_member_the_edited_one_does_not_depend_on_keeps_its_resolutions() {
        let app = "pub async fn handler() {\n    core_lib::run();\n}\n";
        let core = "pub fn run() {\n    step();\n}\nfn step() {\n    dep::helper();\n}\n";
        let (ws, scratch) = two_members_and_dependency("memo-members", app, core, DEP);
        let first = run(&ws);
        assert_eq!(first.findings.len(), 1, "{:?}", first.findings);
        append(&scratch, "pub fn edited() {}\n");
        let edited = run(&ws);
        // The dependency's helper, open and instance, and core_lib's run and step.
        assert!(
            edited.cache.resolutions_reused >= 5,
            "reused {}",
            edited.cache.resolutions_reused
        );
        assert_eq!(edited.without_timings().to_json(), cold(&ws));
    }

    #[test]
    fn an_edited_member_and_those_depending_on_it_are_resolved_again() {
        let app = "pub async fn handler() {\n    core_lib::run();\n}\n";
        let core = "pub fn run() {\n    step();\n}\nfn step() {}\n";
        let (ws, scratch) = two_members_and_dependency("memo-member-edit", app, core, DEP);
        assert!(run(&ws).findings.is_empty());
        // `step` now blocks: `run` (core_lib) and `handler` (app) must see it.
        std::fs::write(
            scratch.0.join("core_lib/src/lib.rs"),
            "pub fn run() {\n    step();\n}\nfn step() {\n    dep::pause();\n}\n",
        )
        .unwrap();
        let edited = run(&ws);
        assert_eq!(edited.findings.len(), 1, "{:?}", edited.findings);
        assert_eq!(edited.without_timings().to_json(), cold(&ws));
    }

    fn edit_core(scratch: &Scratch, src: &str) {
        std::fs::write(scratch.0.join("core_lib/src/lib.rs"), src).unwrap();
    }

    /// core_lib rewritten to `src` and analysed: the report, which equals a cold run's.
    fn run_with_core(ws: &Workspace, scratch: &Scratch, src: &str) -> Report {
        edit_core(scratch, src);
        let report = run(ws);
        assert_eq!(report.without_timings().to_json(), cold(ws));
        report
    }

    /// core_lib edited from `before` to `after` keeps app's `handler`'s resolution: one more is
    /// reused than when the same edit also adds a function named `handler` (a name app's code
    /// holds, so app is resolved again). core_lib's own functions are resolved again both times.
    fn assert_edit_keeps_app(ws: &Workspace, scratch: &Scratch, before: &str, after: &str) {
        let kept = run_with_core(ws, scratch, after);
        edit_core(scratch, before);
        run(ws);
        let mentioned = run_with_core(ws, scratch, &format!("{after}pub fn handler() {{}}\n"));
        assert_eq!(
            kept.cache.resolutions_reused,
            mentioned.cache.resolutions_reused + 1,
            "{:?} {:?}",
            kept.cache,
            mentioned.cache
        );
    }

    #[test]
    fn a_function_added_to_a_member_keeps_the_resolutions_of_the_members_depending_on_it() {
        let app = "pub async fn handler() {\n    core_lib::run();\n}\n";
        let core = "pub fn run() {\n    step();\n}\nfn step() {\n    dep::helper();\n}\n";
        let (ws, scratch) = two_members_and_dependency("memo-added-fn", app, core, DEP);
        assert_eq!(run(&ws).findings.len(), 1);
        // A name no member depending on core_lib mentions.
        let added = format!("{core}pub fn added() -> u32 {{\n    7\n}}\n");
        assert_edit_keeps_app(&ws, &scratch, core, &added);
    }

    #[test]
    fn lines_added_in_a_members_body_keep_the_members_depending_on_it_though_items_below_moved() {
        let core = |extra: &str| {
            format!(
                "pub fn run() {{\n{extra}    step();\n}}\nfn step() {{\n    dep::helper();\n}}\n\
                 pub struct Thing;\nimpl Thing {{\n    pub fn go(&self) {{\n        step();\n    }}\n}}\n"
            )
        };
        let app = "pub async fn handler() {\n    core_lib::run();\n    core_lib::Thing.go();\n}\n";
        let (ws, scratch) = two_members_and_dependency("memo-moved", app, &core(""), DEP);
        assert!(!run(&ws).findings.is_empty());
        // `step` and the impl below the edit move down two lines.
        let moved = core("    let _a = 1;\n    let _b = 2;\n");
        assert_edit_keeps_app(&ws, &scratch, &core(""), &moved);
    }

    #[test]
    fn a_function_added_under_a_name_a_depending_member_mentions_is_looked_up_again() {
        // `later` does not exist yet: the call stays unresolved until it does.
        let app = "pub async fn handler() {\n    core_lib::later();\n}\n";
        let core = "pub fn run() {}\n";
        let (ws, scratch) = two_members_and_dependency("memo-added-name", app, core, DEP);
        assert!(run(&ws).findings.is_empty());
        let later = format!("{core}pub fn later() {{\n    dep::pause();\n}}\n");
        let edited = run_with_core(&ws, &scratch, &later);
        assert_eq!(edited.findings.len(), 1, "{:?}", edited.findings);
    }

    #[test]
    fn a_changed_signature_is_read_again_by_the_members_calling_it() {
        let core = |ret: &str| {
            format!(
                "pub struct A;\nimpl A {{ pub fn go(&self) {{}} }}\n\
                 pub struct B;\nimpl B {{ pub fn go(&self) {{ dep::pause(); }} }}\n\
                 pub fn make() -> {ret} {{\n    {ret}\n}}\n"
            )
        };
        let app = "pub async fn handler() {\n    core_lib::make().go();\n}\n";
        let (ws, scratch) = two_members_and_dependency("memo-signature", app, &core("A"), DEP);
        assert!(run(&ws).findings.is_empty());
        let edited = run_with_core(&ws, &scratch, &core("B"));
        assert_eq!(edited.findings.len(), 1, "{:?}", edited.findings);
    }

    #[test]
    fn a_constructor_edited_in_a_member_is_read_again_by_calls_through_its_field() {
        let core = |stored: &str| {
            format!(
                "pub struct Hooks {{\n    pub run: fn(),\n}}\n\
                 pub fn hooks() -> Hooks {{\n    Hooks {{ run: {stored} }}\n}}\n\
                 pub fn quiet() {{}}\n\
                 pub fn loud() {{\n    dep::pause();\n}}\n"
            )
        };
        let app = "pub async fn handler() {\n    let h = core_lib::hooks();\n    (h.run)();\n}\n";
        let (ws, scratch) =
            two_members_and_dependency("memo-constructor", app, &core("quiet"), DEP);
        assert!(run(&ws).findings.is_empty());
        let edited = run_with_core(&ws, &scratch, &core("loud"));
        assert_eq!(edited.findings.len(), 1, "{:?}", edited.findings);
    }

    #[test]
    fn a_member_whose_import_changed_is_read_again_by_those_depending_on_it() {
        // Only a `use` changes: every method keeps its stable name, yet `app`'s call now
        // resolves to the other type's method.
        let core = |which: &str| {
            format!(
                "pub mod a {{ pub struct Thing; impl Thing {{ pub fn go(&self) {{}} }} }}\n\
                 pub mod b {{ pub struct Thing; impl Thing {{ pub fn go(&self) {{ dep::pause(); }} }} }}\n\
                 pub use {which}::Thing;\n"
            )
        };
        // A method: its entry is named by its impl, not by a digest of its crate.
        let app = "pub struct Handler;\n\
                   impl Handler {\n    pub async fn handle(&self) {\n        core_lib::Thing.go();\n    }\n}\n";
        let (ws, scratch) = two_members_and_dependency("memo-import", app, &core("a"), DEP);
        assert!(run(&ws).findings.is_empty());
        std::fs::write(scratch.0.join("core_lib/src/lib.rs"), core("b")).unwrap();
        let edited = run(&ws);
        assert_eq!(edited.findings.len(), 1, "{:?}", edited.findings);
        assert_eq!(edited.without_timings().to_json(), cold(&ws));
    }
}
