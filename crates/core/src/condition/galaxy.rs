//! The conditions of FreeOrion's effects system that read more than the tested object:
//! affiliation with empires, ordered symbols (the environment wheel, planet sizes), chance,
//! stockpiles, visibility, and distances on the map and along starlanes.

use crate::condition::eval::Ctx;
use crate::condition::places::{
    grid_within, square, within_distance, Detection, EmpireTable, Empires, Kept, Maps, NearIndex,
    Placed, Systems,
};
use crate::model::condition::{
    this_object, Affiliation, Cond, EmpireRef, Footprint, Metric, Nearness, OrderTest, Owners,
    Places, StockpileTest, Subject, Visibility,
};
use crate::model::ids::{ObjectId, PlayerId};
use crate::model::value::Value;
use rustc_hash::FxHashMap;
use std::cell::RefCell;
use std::rc::Rc;

impl Ctx<'_> {
    /// Tests one of the conditions of this file on `this` (false for any other condition).
    pub(crate) fn test_galaxy(&self, cond: &Cond, this: Subject) -> bool {
        let Some(o) = this_object(this) else {
            return false;
        };
        if let Cond::Within(t) = cond {
            return self.within_order(o, t);
        }
        // What it reads of other objects counts as read of every object.
        let each = self.aggregate(cond, None);
        let maps = self.shared_maps();
        match cond {
            Cond::Affiliated(a) => each.affiliated(o, a),
            Cond::Chance { num, den, salt } => self.chance(o, *num, *den, *salt),
            Cond::Stockpile(s) => each.stockpile(o, s),
            Cond::Visible(v) => each.visible(o, v, cond, &maps),
            // What the condition measures from is the same for every object tested here,
            // unless its condition says `outer`: found once (an index by place). Where its
            // condition names no source ("within 2 jumps of a Research Lab"), the same for
            // every source too: found once in the derivation's indexes (by "you" where it reads
            // who that is).
            Cond::Near(n) => {
                let key = &**n as *const Nearness as usize;
                let found = self.near.borrow().near.get(&key).cloned();
                if found.is_none() && n.of.refers_outer() {
                    return each.near(o, n, &each.near_index(n, &maps));
                }
                let index = found.unwrap_or_else(|| {
                    let i = if n.of.names_source() {
                        Rc::new(each.near_index(n, &maps))
                    } else {
                        let you = self.you.filter(|_| n.of.may_read_you());
                        self.kept(
                            &maps,
                            |m| &mut m.near,
                            (key, you),
                            cond,
                            || each.near_index(n, &maps),
                        )
                    };
                    self.near.borrow_mut().near.insert(key, i.clone());
                    i
                });
                each.near(o, n, &index)
            }
            _ => false,
        }
    }

    /// The map's indexes this context uses: the derivation's, shared by every source, else its
    /// own.
    fn shared_maps(&self) -> Rc<RefCell<Maps>> {
        match self.counts {
            Some(c) => c.maps.get_or_init(Default::default).clone(),
            None => self
                .near
                .borrow_mut()
                .maps
                .get_or_insert_with(Default::default)
                .clone(),
        }
    }

    /// For `Cond::narrow`: the objects a distance from the source (straight across the map, or
    /// in starlane jumps), or a source of no empire seeing by its own range, may hold for: those
    /// placed within the distance of the source; for jumps, those in the systems within the
    /// jumps, and every object on a starlane. `None` for any other condition.
    pub(crate) fn placed_near(&self, cond: &Cond) -> Option<Vec<ObjectId>> {
        if let Cond::Near(n) = cond {
            if n.metric == Metric::Jumps && matches!(n.of, Cond::IsSource) {
                return self.jumps_near(n);
            }
        }
        let s = self.source?;
        match cond {
            Cond::Near(n) if n.metric == Metric::Direct && matches!(n.of, Cond::IsSource) => {
                Some(self.placed_around(s, &n.places, n.within))
            }
            // The source sees itself, wherever it is.
            Cond::Visible(v) if v.source_sees => {
                if !self.empires(s, &v.owners).is_empty() {
                    return None;
                }
                let mut list = match self.range(s, v) {
                    Some((_, r)) => self.placed_around(s, &v.places, r),
                    None => Vec::new(),
                };
                if let Err(i) = list.binary_search(&s) {
                    list.insert(i, s);
                }
                Some(list)
            }
            _ => None,
        }
    }

    /// The objects in play placed within `d` of where the source `s` is, in id order (none where
    /// it has no place): through the derivation's grid of every object in play, found once.
    fn placed_around(&self, s: ObjectId, places: &Places, d: i64) -> Vec<ObjectId> {
        let Some(at) = self.position(s, places).filter(|_| d >= 0) else {
            return Vec::new();
        };
        let maps = self.shared_maps();
        let placed = self.kept_reading(
            &maps,
            |m| &mut m.placed,
            (places.x, places.y),
            || chars(&[places.x, places.y]),
            || {
                let ids = self.state.in_play_ids();
                let mut points = Vec::with_capacity(ids.len());
                points.extend(
                    ids.iter()
                        .filter_map(|o| Some((*o, self.position(*o, places)?))),
                );
                Placed::new(&points)
            },
        );
        placed.within(at, d)
    }

    /// `placed_near` for `within N jumps of source`: the systems N jumps or fewer from where the
    /// source is, what is attached to them (down the hierarchy), every object that names a
    /// starlane it is on, and what is at the source's position (0 jumps).
    fn jumps_near(&self, n: &Nearness) -> Option<Vec<ObjectId>> {
        let s = self.source?;
        if n.within < 0 {
            return Some(Vec::new());
        }
        let maps = self.shared_maps();
        let systems = self.lanes(&n.places, &maps);
        let from = self.lane_ends(s, &n.places, &systems);
        let mut level: Vec<ObjectId> = systems.jumps_from(&from, n.within).into_keys().collect();
        level.retain(|o| self.state.in_play(*o));
        level.sort_unstable();
        let mut list = level.clone();
        for _ in 0..=self.state.objects.len() {
            if level.is_empty() {
                break;
            }
            level = self.state.attached_to_any(&level);
            list.extend_from_slice(&level);
        }
        if let Some(l) = n.places.on_lane {
            let on = self.kept_reading(
                &maps,
                |m| &mut m.on_lanes,
                l,
                || chars(&[l]),
                || {
                    self.state
                        .in_play_ids()
                        .iter()
                        .copied()
                        .filter(|o| {
                            self.state.holder(*o, l).is_some_and(
                                |h| matches!(self.value(h, l), Value::Symbols(v) if !v.is_empty()),
                            )
                        })
                        .collect()
                },
            );
            list.extend_from_slice(&on);
        }
        // Co-located with the source: 0 jumps.
        list.extend(self.placed_around(s, &n.places, 0));
        list.sort_unstable();
        list.dedup();
        list.retain(|o| self.state.in_play(*o));
        Some(list)
    }

    /// The index `select` picks of `maps` under `key`, built by `build` the first time and kept
    /// with what `cond` reads (it is dropped when an effect writes that). No index is borrowed
    /// while `build` runs: it may ask for another.
    fn kept<K: std::hash::Hash + Eq, V>(
        &self,
        maps: &RefCell<Maps>,
        select: fn(&mut Maps) -> &mut Kept<K, V>,
        key: K,
        cond: &Cond,
        build: impl FnOnce() -> V,
    ) -> Rc<V> {
        let read = || {
            let mut f = Footprint::default();
            cond.reads(self.state.controller_char, &mut f);
            f
        };
        self.kept_reading(maps, select, key, read, build)
    }

    /// `kept`, with what the index reads given by `read` (the characteristics `chars`): an index
    /// of places is not dropped when a detection range changes.
    fn kept_reading<K: std::hash::Hash + Eq, V>(
        &self,
        maps: &RefCell<Maps>,
        select: fn(&mut Maps) -> &mut Kept<K, V>,
        key: K,
        read: impl FnOnce() -> Footprint,
        build: impl FnOnce() -> V,
    ) -> Rc<V> {
        if let Some((_, found)) = select(&mut maps.borrow_mut()).get(&key) {
            return found.clone();
        }
        let found = Rc::new(build());
        let f = read();
        select(&mut maps.borrow_mut()).insert(key, (f, found.clone()));
        found
    }

    /// The empires that own `o`: none for an object the ruleset says is unowned; for a type
    /// owned through another, the empires owning the objects of that type attached to it
    /// (FreeOrion's effects system, Empire Affiliation: "systems containing planets owned by two
    /// or more empires are owned by all empires that own planets in the system"); else its
    /// controller.
    pub(crate) fn empires(&self, o: ObjectId, ow: &Owners) -> Empires {
        // Found once per derivation, where it is shared.
        let Some(shared) = self.counts.map(|c| c.maps.get_or_init(Default::default)) else {
            return self.empires_now(o, ow);
        };
        let rule = {
            let mut maps = shared.borrow_mut();
            let rule = maps.rule(ow);
            if let Some(e) = maps.empires[rule].get(o.index()) {
                return e;
            }
            rule
        };
        let e = self.empires_now(o, ow);
        let mut maps = shared.borrow_mut();
        if maps.empires[rule].is_empty() {
            maps.empires[rule] =
                EmpireTable::new(self.state.objects.len(), self.state.players.len());
            let mut f = Footprint::default();
            f.add_char(ow.controller);
            if let Some(u) = &ow.unowned {
                u.reads(self.state.controller_char, &mut f);
            }
            maps.empires_read.union(&f);
        }
        maps.empires[rule].set(o.index(), e);
        e
    }

    /// For `Cond::narrow`: of `list`, the objects an empire of the source owns (by `empires`,
    /// found once per derivation). All of `list` where the source has no empire ("owned by you"
    /// is then "owned by no empire").
    pub(crate) fn owned_by_source(&self, list: Vec<ObjectId>, ow: &Owners) -> Vec<ObjectId> {
        let Some(s) = self.source else { return list };
        let mine = self.empires(s, ow);
        if mine.is_empty() {
            return list;
        }
        list.into_iter()
            .filter(|o| self.empires(*o, ow).iter().any(|p| mine.contains(&p)))
            .collect()
    }

    /// `empires`, worked out.
    fn empires_now(&self, o: ObjectId, ow: &Owners) -> Empires {
        let mut out = Empires::new();
        let unowned = |x: ObjectId| {
            ow.unowned
                .as_ref()
                .is_some_and(|u| self.test(u, Subject::Object(x)))
        };
        let controller = |x: ObjectId| match self.value(x, ow.controller) {
            Value::Player(p) => *p,
            _ => None,
        };
        if unowned(o) {
            return out;
        }
        let t = self.state.object_type(o);
        if let Some((_, member)) = ow.through.iter().find(|(a, _)| Some(*a) == t) {
            for a in self.state.attached_to_any(&[o]) {
                if self.state.in_play(a)
                    && self.state.object_type(a) == Some(*member)
                    && !unowned(a)
                {
                    if let Some(p) = controller(a) {
                        out.push(p);
                    }
                }
            }
            return out;
        }
        if let Some(p) = controller(o) {
            out.push(p);
        }
        out
    }

    /// FreeOrion's effects system, Empire Affiliation, in its four modes; with the empire "none"
    /// (or the source's, when the source is owned by no empire), Empire modes apply to objects
    /// owned by no empire and Enemies modes to objects owned by any.
    fn affiliated(&self, o: ObjectId, a: &Affiliation) -> bool {
        let theirs = self.empires(o, &a.owners);
        let named: Option<Empires> = match a.empire {
            EmpireRef::NoEmpire => None,
            EmpireRef::Source => self
                .source
                .map(|s| self.empires(s, &a.owners))
                .filter(|e| !e.is_empty()),
            EmpireRef::Marked(p) => Some(
                (0..self.state.players.len())
                    .map(|i| PlayerId(i as u8))
                    .filter(|pl| self.prop_value(*pl, p).number().is_some_and(|n| n != 0))
                    .collect(),
            ),
        };
        let Some(named) = named else {
            return theirs.is_empty() != a.enemies;
        };
        let its = theirs.iter().any(|p| named.contains(&p));
        let others = theirs.iter().any(|p| !named.contains(&p));
        match (a.enemies, a.exclusive) {
            (false, false) => its,
            (false, true) => its && !others,
            (true, false) => others,
            (true, true) => others && !its,
        }
    }

    /// FreeOrion's effects system, Planet Environment and Planet Size: some symbol `o` holds is
    /// within the range of the specified one along the order (around the ring); a specified
    /// symbol off the order matches exactly, its range ignored; one on it never matches an
    /// object's symbol off it.
    fn within_order(&self, o: ObjectId, t: &OrderTest) -> bool {
        let Value::Symbols(set) = self.value(o, t.char) else {
            return false;
        };
        let Some(i) = t.order.iter().position(|s| *s == t.at) else {
            return set.contains(&t.at);
        };
        let n = t.order.len();
        t.order.iter().enumerate().any(|(j, s)| {
            let d = i.abs_diff(j);
            let d = if t.ring { d.min(n - d) } else { d };
            d <= t.range as usize && set.contains(s)
        })
    }

    /// FreeOrion's effects system, Chance: a number drawn uniformly from 0 to 1 for this
    /// condition, source and object is below the probability. It is drawn by hashing the game's
    /// random source (where its draws have got to), the turn, the source, the object and the
    /// condition, so every derivation of a turn draws the same and the same seed gives the same
    /// game; a new turn draws anew.
    fn chance(&self, o: ObjectId, num: u32, den: u32, salt: u64) -> bool {
        if den == 0 {
            return false;
        }
        let mut r = self.state.random;
        let mut key = r.next_u64();
        for part in [
            u64::from(self.state.turn()),
            self.source.map_or(u64::MAX, |s| s.index() as u64),
            o.index() as u64,
            salt,
        ] {
            key = mix(key ^ part);
        }
        // key / 2^64 < num / den, without bias.
        (u128::from(key) * u128::from(den)) >> 64 < u128::from(num)
    }

    /// FreeOrion's effects system, Current Stockpile Value: some empire of `o` has a stockpile
    /// that compares so; an object owned by no empire has none. With `holds`: some empire of `o`
    /// has the symbol in that property (a tech it may research, a class it may build).
    fn stockpile(&self, o: ObjectId, s: &StockpileTest) -> bool {
        self.empires(o, &s.owners)
            .iter()
            .any(|p| match (&s.holds, self.prop_value(p, s.prop)) {
                (Some(sym), Value::Symbols(set)) => set.contains(sym),
                (Some(_), _) => false,
                (None, v) => v.number().is_some_and(|v| s.op.holds(v, s.value)),
            })
    }

    /// The object whose position `o` is at: the outermost object up its attachments that has a
    /// position (a ship in a system, a planet, a building: the system's).
    fn placed_at(&self, o: ObjectId, p: &Places) -> Option<ObjectId> {
        let mut found = None;
        let mut at = Some(o);
        for _ in 0..=self.state.objects.len() {
            let Some(x) = at else { break };
            if self.state.has_char(x, p.x) {
                found = Some(x);
            }
            at = self.state.attached_of(x);
        }
        found
    }

    /// `o`'s position on the galaxy map, if it has one: found once per derivation (or context).
    fn position(&self, o: ObjectId, p: &Places) -> Option<(i64, i64)> {
        let maps = self.shared_maps();
        let key = (p.x, p.y);
        if let Some((_, _, known)) = maps.borrow().positions.iter().find(|(k, _, _)| *k == key) {
            if let Some(Some(at)) = known.get(o.index()) {
                return *at;
            }
        }
        let at = self.position_now(o, p);
        let mut maps = maps.borrow_mut();
        let i = match maps.positions.iter().position(|(k, _, _)| *k == key) {
            Some(i) => i,
            None => {
                let n = self.state.objects.len();
                maps.positions
                    .push((key, chars(&[p.x, p.y]), vec![None; n]));
                maps.positions.len() - 1
            }
        };
        if let Some(slot) = maps.positions[i].2.get_mut(o.index()) {
            *slot = Some(at);
        }
        at
    }

    /// `position`, worked out.
    fn position_now(&self, o: ObjectId, p: &Places) -> Option<(i64, i64)> {
        let at = self.placed_at(o, p)?;
        Some((self.value(at, p.x).number()?, self.value(at, p.y).number()?))
    }

    /// The systems `o` is at or next to, each with its jumps from `o`: its system (the outermost
    /// object up its attachments with starlanes), 0; else, on a starlane, the systems at its
    /// ends, 1 each (FreeOrion's effects system, Starlane Jumps to Source).
    fn lane_ends(&self, o: ObjectId, p: &Places, systems: &Systems) -> Vec<(ObjectId, i64)> {
        let mut system = None;
        let mut at = Some(o);
        for _ in 0..=self.state.objects.len() {
            let Some(x) = at else { break };
            if self.state.has_char(x, p.lanes) {
                system = Some(x);
            }
            at = self.state.attached_of(x);
        }
        if let Some(s) = system {
            return vec![(s, 0)];
        }
        let Some(h) = p
            .on_lane
            .and_then(|l| self.state.holder(o, l).map(|h| (h, l)))
        else {
            return Vec::new();
        };
        let Value::Symbols(set) = self.value(h.0, h.1) else {
            return Vec::new();
        };
        set.iter()
            .flat_map(|s| systems.named(s.as_str()))
            .map(|s| (s, 1))
            .collect()
    }

    /// The systems in play with their starlanes, found once in `maps`.
    fn lanes(&self, p: &Places, maps: &RefCell<Maps>) -> Rc<Systems> {
        self.kept_reading(
            maps,
            |m| &mut m.lanes,
            (p.lanes, p.name),
            || chars(&[p.lanes, p.name]),
            || self.systems(p),
        )
    }

    /// The systems in play with their starlanes, each lane both ways.
    fn systems(&self, p: &Places) -> Systems {
        let mut by_name: FxHashMap<std::sync::Arc<str>, Vec<ObjectId>> = FxHashMap::default();
        let ids: Vec<ObjectId> = self
            .state
            .in_play_ids()
            .iter()
            .copied()
            .filter(|o| self.state.has_char(*o, p.lanes))
            .collect();
        for o in &ids {
            if let Value::Text(t) = self.value(*o, p.name) {
                by_name.entry(t.clone()).or_default().push(*o);
            }
        }
        let mut next: FxHashMap<ObjectId, Vec<ObjectId>> = FxHashMap::default();
        for o in &ids {
            if let Value::Symbols(set) = self.value(*o, p.lanes) {
                for s in set.iter() {
                    for t in by_name.get(s.as_str()).into_iter().flatten() {
                        if t != o {
                            next.entry(*o).or_default().push(*t);
                            next.entry(*t).or_default().push(*o);
                        }
                    }
                }
            }
        }
        Systems { by_name, next }
    }

    /// What a distance condition measures from: the objects in play satisfying its `of`, their
    /// positions in squares of the distance's side (a position within the distance of a point
    /// is in the point's square or one next to it), and for starlane jumps the lanes with the
    /// systems those objects are at or next to.
    pub(crate) fn near_index(&self, n: &Nearness, maps: &RefCell<Maps>) -> NearIndex {
        let cell = n.within.max(1);
        let mut index = NearIndex {
            cell,
            any: false,
            grid: FxHashMap::default(),
            systems: None,
            reach: FxHashMap::default(),
        };
        if n.within < 0 {
            return index;
        }
        let candidates = self.in_play_meeting(&n.of);
        index.any = !candidates.is_empty();
        for c in &candidates {
            if let Some(at) = self.position(*c, &n.places) {
                index.grid.entry(square(at, cell)).or_default().push(at);
            }
        }
        if n.metric == Metric::Jumps && index.any {
            let systems = self.lanes(&n.places, maps);
            let mut ends: FxHashMap<ObjectId, i64> = FxHashMap::default();
            for c in &candidates {
                for (e, k) in self.lane_ends(*c, &n.places, &systems) {
                    let least = ends.entry(e).or_insert(k);
                    *least = (*least).min(k);
                }
            }
            // The fewest jumps from those objects to each system, up to the distance: found
            // once, as jumps are the same both ways.
            let mut from: Vec<(ObjectId, i64)> = ends.into_iter().collect();
            from.sort_unstable();
            index.reach = systems.jumps_from(&from, n.within);
            index.systems = Some(systems);
        }
        index
    }

    /// FreeOrion's effects system, Direct Distance and Starlane Jumps to Source or to Object of
    /// Class: an object in play satisfying `of` is within the distance of `o` (0: co-located),
    /// found through `index` (`near_index`).
    fn near(&self, o: ObjectId, n: &Nearness, index: &NearIndex) -> bool {
        if n.within < 0 || !index.any {
            return false;
        }
        let here = self.position(o, &n.places);
        let within = |a: (i64, i64), d: i64| grid_within(&index.grid, index.cell, a, d);
        match n.metric {
            Metric::Direct => here.is_some_and(|a| within(a, n.within)),
            Metric::Jumps => {
                if here.is_some_and(|a| within(a, 0)) {
                    return true;
                }
                let Some(systems) = &index.systems else {
                    return false;
                };
                self.lane_ends(o, &n.places, systems)
                    .iter()
                    .any(|(e, j)| index.reach.get(e).is_some_and(|k| j + k <= n.within))
            }
        }
    }

    /// FreeOrion's effects system, Scope Object Visible To Source Object (the source sees the
    /// tested object) and Source Object Visible To Scope Object (the tested object sees the
    /// source).
    fn visible(&self, o: ObjectId, v: &Visibility, cond: &Cond, maps: &RefCell<Maps>) -> bool {
        let Some(s) = self.source else { return false };
        let (viewer, seen) = if v.source_sees { (s, o) } else { (o, s) };
        self.sees(viewer, seen, v, cond, maps)
    }

    /// The detection ranges of the objects in play of `empire` (`detection`), found once in
    /// `maps` for every empire at once (one look at each object's empires and range).
    fn detection(
        &self,
        empire: PlayerId,
        v: &Visibility,
        cond: &Cond,
        maps: &RefCell<Maps>,
    ) -> Option<Rc<Detection>> {
        // Equal rules and characteristics share one index, whichever condition asks.
        let rule = maps.borrow_mut().rule(&v.owners);
        let key = (rule, v.detection, v.places.x, v.places.y);
        let all = self.kept(
            maps,
            |m| &mut m.detection,
            key,
            cond,
            || {
                let mut each: Vec<Vec<((i64, i64), i64)>> =
                    vec![Vec::new(); self.state.players.len()];
                for d in self.state.in_play_ids() {
                    let owners = self.empires(*d, &v.owners);
                    if owners.is_empty() {
                        continue;
                    }
                    if let Some(r) = self.range(*d, v) {
                        for p in owners.iter() {
                            if let Some(list) = each.get_mut(p.index()) {
                                list.push(r);
                            }
                        }
                    }
                }
                each.into_iter()
                    .map(|l| Rc::new(Detection::new(l)))
                    .collect::<Vec<_>>()
            },
        );
        all.get(empire.index()).cloned()
    }

    /// Where `d` is and how far it detects, if it has both.
    fn range(&self, d: ObjectId, v: &Visibility) -> Option<((i64, i64), i64)> {
        let range = self
            .state
            .holder(d, v.detection)
            .and_then(|h| self.value(h, v.detection).number())?;
        Some((self.position(d, &v.places)?, range))
    }

    /// Whether `viewer` sees `seen`: itself; an object of one of its empires; an object within
    /// the detection range of an object of its empires (of itself, for an object of no empire).
    fn sees(
        &self,
        viewer: ObjectId,
        seen: ObjectId,
        v: &Visibility,
        cond: &Cond,
        maps: &RefCell<Maps>,
    ) -> bool {
        if viewer == seen {
            return true;
        }
        let mine = self.empires(viewer, &v.owners);
        if self
            .empires(seen, &v.owners)
            .iter()
            .any(|p| mine.contains(&p))
        {
            return true;
        }
        let Some(there) = self.position(seen, &v.places) else {
            return false;
        };
        if mine.is_empty() {
            return self
                .range(viewer, v)
                .is_some_and(|(at, r)| within_distance(at, there, r));
        }
        mine.iter().any(|p| {
            self.detection(p, v, cond, maps)
                .is_some_and(|d| d.covers(there))
        })
    }
}

/// A footprint of these characteristics.
fn chars(list: &[crate::model::ids::CharId]) -> Footprint {
    let mut f = Footprint::default();
    list.iter().for_each(|c| f.add_char(*c));
    f
}

/// SplitMix64's finalizer: spreads every bit of the input over the output.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}
