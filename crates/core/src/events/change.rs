//! An occurrence's change. The changes its event kind declares are worked out from its
//! arguments as they are in the end (a response may have changed them) and made by the kernel,
//! all the frame's at once. A move or counters a ruleset's own event declares ("destroyed":
//! move the card to the discard pile) are occurrences of the built-in `changes_zone` (with
//! `leaves_play`) and `counters_placed` of their own, taken next: a move is a move, whichever
//! event made it.

use crate::kernel::Change;
use crate::model::error::ActionError;
use crate::model::event::{Amount, ParamOr, Primitive};
use crate::model::ids::{CharId, ObjectId, PlayerId, PropId, ZoneId};
use crate::model::occurrence::{Logged, Occurrence};
use crate::model::timing::Point;
use crate::model::value::Arg;
use crate::state::GameState;
use crate::state::{Mode, Task};
use std::sync::Arc;

impl GameState {
    /// The change: every occurrence of the frame still to happen makes its changes, at once.
    pub(super) fn make_changes(&mut self, fi: usize) -> Result<(), ActionError> {
        if self.frame(fi).action.is_some() {
            return self.make_resolution(fi);
        }
        // Failure comes first: something earlier may have put the card into that state already
        // (not checked again where nothing changed since the frame's own check).
        let f = self.frame(fi);
        if !(super::shortcuts() && f.unchanged_at == self.timing.made) {
            self.fail_unchanging(fi);
        }
        self.fall_together(fi);
        self.follow_moves(fi);
        let f = self.frame(fi);
        let depth = f.depth;
        // An action whose effects were negated still happens (it counts as taken), without
        // its changes.
        for k in 0..f.occs.len() {
            let o = &self.frame(fi).occs[k];
            if !(o.alive && o.negated) {
                continue;
            }
            let occurrence = o.occ.clone();
            self.frame_mut(fi).occs[k].happened = true;
            self.log_at(depth, Logged::Happened { occurrence });
        }
        // The occurrences that make their changes (by index: the frame's occurrences do not
        // change while the kernel makes them).
        let doing = |f: &crate::state::Frame, k: usize| f.occs[k].alive && !f.occs[k].negated;
        let f = self.frame(fi);
        let n = f.occs.len();
        if !(0..n).any(|k| doing(f, k)) {
            return Ok(());
        }
        let rs = self.ruleset.clone();
        let b = self.builtin;
        // A move or counters a ruleset's own event declares is an occurrence of its own, next.
        let nests = |own: bool, c: &Primitive| {
            matches!(c, Primitive::Move { .. } | Primitive::MoveTop { .. })
                || (own && matches!(c, Primitive::Counters { .. }))
        };
        // The moves and the counters first: whether an object leaves play decides the snapshot,
        // taken before any change.
        let mut moves: Vec<(ObjectId, ZoneId)> = Vec::new();
        let mut next: Vec<(ObjectId, ZoneId)> = Vec::new();
        let mut counters: Vec<Occurrence> = Vec::new();
        for k in (0..n).filter(|&k| doing(f, k)) {
            let o = &f.occs[k].occ;
            let own = !rs.is_builtin(o.event);
            for c in rs.event_kind(o.event).changes.iter() {
                if !nests(own, c) {
                    continue;
                }
                if let Primitive::MoveTop {
                    player, from, to, ..
                } = c
                {
                    if let Some(Arg::Player(p)) = o.args.get(*player as usize) {
                        if let Some(card) = self.top_card(*p, *from) {
                            next.push((card, *to));
                        }
                    }
                    continue;
                }
                match lower(c, &o.args) {
                    Some(Change::Move(m)) if own => next.extend(m),
                    Some(Change::Move(m)) => moves.extend(m),
                    Some(Change::Counters {
                        object,
                        counter,
                        count,
                    }) => counters.push(Occurrence::new(
                        b.counters_placed,
                        smallvec::smallvec![
                            Arg::Object(object),
                            Arg::Number(count),
                            Arg::Counter(counter),
                        ],
                    )),
                    _ => {}
                }
            }
        }
        let leaves = |s: &GameState, (o, z): &(ObjectId, ZoneId)| {
            s.in_play(*o) && !s.ruleset.zone_def(*z).in_play
        };
        let leaving = moves.iter().chain(&next).any(|m| leaves(self, m));
        if leaving && self.point_has_listeners(fi, Point::After) {
            self.take_snapshot(fi);
        }
        // Unattaching (state-based) before moving: objects of one round move at once. The
        // other changes in order, by occurrence.
        for k in 0..n {
            let f = self.frame(fi);
            if !doing(f, k) {
                continue;
            }
            let event = f.occs[k].occ.event;
            let own = !rs.is_builtin(event);
            for c in rs.event_kind(event).changes.iter() {
                if let Primitive::MoveTop {
                    player,
                    from,
                    empty: Some(prop),
                    ..
                } = c
                {
                    if let Some(Arg::Player(p)) =
                        self.frame(fi).occs[k].occ.args.get(*player as usize)
                    {
                        let p = *p;
                        if self.top_card(p, *from).is_none() {
                            self.make(Change::AddProperty {
                                player: p,
                                prop: *prop,
                                by: 1,
                            });
                        }
                    }
                }
                if nests(own, c) {
                    continue;
                }
                if let Primitive::StateAll { .. }
                | Primitive::ClearAll { .. }
                | Primitive::Meters { .. }
                | Primitive::SetScaled { .. }
                | Primitive::Resize { .. } = c
                {
                    let args = self.frame(fi).occs[k].occ.args.clone();
                    let changes = self.each_permanent_changes(c, &args);
                    if let Primitive::Meters { growth, .. } = c {
                        // Logged, so each current value accounts for itself.
                        let mut list = Vec::with_capacity(changes.len());
                        list.extend(changes.iter().filter_map(|ch| match ch {
                            Change::Counters {
                                object,
                                counter,
                                count,
                            } => Some((*object, *counter, *count)),
                            _ => None,
                        }));
                        self.log_at(
                            depth + 1,
                            Logged::CurrentValues {
                                capped: growth.is_none(),
                                changes: list,
                            },
                        );
                    }
                    for change in changes {
                        self.make(change);
                    }
                    continue;
                }
                if let Primitive::Take { .. } = c {
                    let args = self.frame(fi).occs[k].occ.args.clone();
                    for change in self.take_changes(c, &args) {
                        self.make(change);
                    }
                    continue;
                }
                if let Primitive::Classes { .. } = c {
                    let args = self.frame(fi).occs[k].occ.args.clone();
                    if let Some(change) = self.class_change(c, &args) {
                        self.make(change);
                    }
                    continue;
                }
                if let Some(change) = lower(c, &self.frame(fi).occs[k].occ.args) {
                    self.make(change);
                }
            }
        }
        if !moves.is_empty() {
            self.make(Change::Move(moves));
        }
        for k in 0..n {
            let f = self.frame(fi);
            if !doing(f, k) {
                continue;
            }
            let occurrence = f.occs[k].occ.clone();
            self.frame_mut(fi).occs[k].happened = true;
            self.log_at(depth, Logged::Happened { occurrence });
        }
        if next.is_empty() && counters.is_empty() {
            return self.run_state_checks();
        }
        // The moves and counters, next, before this frame's "after"; their own change runs the
        // state-based checks.
        let mut nested = self.moving(&next);
        nested.extend(counters);
        self.push_frame(nested, Mode::Plain, depth + 1);
        Ok(())
    }

    /// The state just before a change that takes an object out of play, for the "after"
    /// responses to look back to (last-known information).
    pub(super) fn take_snapshot(&mut self, fi: usize) {
        // Copied without the timing state, which it does not need.
        let timing = std::mem::take(&mut self.timing);
        let mut snap = self.clone();
        self.timing = timing;
        snap.refresh();
        self.frame_mut(fi).snapshot = Some(Arc::new(snap));
    }

    /// Occurrences that stand or fall together (a card's `leaves_play` with its `changes_zone`):
    /// where one of them no longer happens, none does.
    fn fall_together(&mut self, fi: usize) {
        let f = self.frame(fi);
        if f.occs.len() < 2 {
            return;
        }
        let mut dead_roots: Vec<usize> =
            f.occs.iter().filter(|o| !o.alive).map(|o| o.link).collect();
        dead_roots.sort_unstable();
        dead_roots.dedup();
        let dead: Vec<usize> = (0..f.occs.len())
            .filter(|&k| f.occs[k].alive && dead_roots.binary_search(&f.occs[k].link).is_ok())
            .collect();
        let f = self.frame_mut(fi);
        for k in dead {
            f.occs[k].alive = false;
        }
    }

    /// A card's `leaves_play` goes where its `changes_zone` goes, a response having changed its
    /// destination; sent to a zone in play, it does not leave play (its move still happens).
    fn follow_moves(&mut self, fi: usize) {
        let b = self.builtin;
        let f = self.frame(fi);
        if f.occs.len() < 2 {
            return;
        }
        let follow: Vec<(usize, crate::model::occurrence::Args, bool)> = (0..f.occs.len())
            .filter(|&k| f.occs[k].alive && f.occs[k].occ.event == b.leaves_play)
            .filter_map(|k| {
                let root = &f.occs[f.occs[k].link];
                if root.occ.event != b.changes_zone || root.occ.args == f.occs[k].occ.args {
                    return None;
                }
                let stays = match root.occ.args.get(2) {
                    Some(Arg::Zone(z)) => self.ruleset.zone_def(*z).in_play,
                    _ => false,
                };
                Some((k, root.occ.args.clone(), stays))
            })
            .collect();
        let f = self.frame_mut(fi);
        for (k, args, stays) in follow {
            f.occs[k].occ.args = args;
            if stays {
                f.occs[k].alive = false;
            }
        }
    }

    /// The changes `Meters` makes: for each object in play and each meter it has itself, its
    /// current value (the counters of the meter's name) grown by `growth`, not below 0, or with
    /// `growth` `None` capped by its max value (the derived characteristic).
    fn meter_changes(&self, meter: Option<CharId>, growth: Option<i64>) -> Vec<Change> {
        let table = self.meter_table(meter);
        // At most one change for each meter of each object: room for that at once (the list
        // copied at each doubling costs more than the room).
        let typed: usize = (0..self.ruleset.types.len())
            .map(|t| self.of_type(crate::model::ids::TypeId(t as u16)).len() * table[t].len())
            .sum();
        let untyped = table.last().map_or(0, |v| v.len()) * self.in_play_ids().len();
        let mut out = Vec::with_capacity(typed + untyped);
        self.each_meter_change_in(&table, growth, &mut |c| {
            out.push(c);
            true
        });
        out
    }

    /// Each change a growth or cap of current meters makes, in object order, until `f` says
    /// stop (returns false).
    fn each_meter_change(
        &self,
        meter: Option<CharId>,
        growth: Option<i64>,
        f: &mut dyn FnMut(Change) -> bool,
    ) {
        self.each_meter_change_in(&self.meter_table(meter), growth, f);
    }

    /// The meters (`meter`, or all) that objects of each type have, by type index (the last
    /// row: of no type), each with its counter.
    fn meter_table(
        &self,
        meter: Option<CharId>,
    ) -> Vec<Vec<(CharId, crate::model::ids::CounterId)>> {
        let rs = &self.ruleset;
        let meters: Vec<(CharId, crate::model::ids::CounterId)> = (0..rs.characteristics.len())
            .map(|i| CharId(i as u16))
            .filter(|ch| meter.is_none_or(|m| m == *ch))
            .filter_map(|ch| rs.meter_counter(ch).map(|k| (ch, k)))
            .collect();
        (0..=rs.types.len())
            .map(|t| {
                let t = (t < rs.types.len()).then_some(crate::model::ids::TypeId(t as u16));
                meters
                    .iter()
                    .copied()
                    .filter(|(ch, _)| self.type_has_char(t, *ch))
                    .collect()
            })
            .collect()
    }

    /// `each_meter_change`, with the meters of each type (`meter_table`).
    fn each_meter_change_in(
        &self,
        of_type: &[Vec<(CharId, crate::model::ids::CounterId)>],
        growth: Option<i64>,
        f: &mut dyn FnMut(Change) -> bool,
    ) {
        let rs = &self.ruleset;
        for &o in self.in_play_ids().iter() {
            let row = self.object_type(o).map_or(rs.types.len(), |t| t.index());
            for &(ch, k) in of_type.get(row).map_or(&[][..], |v| &v[..]) {
                let now = self.obj(o).counter_count(k).unwrap_or(0);
                let by = match growth {
                    Some(g) => g.max(-now),
                    None => match self.characteristic(o, ch).ok().and_then(|v| v.number()) {
                        Some(max) if now > max => max.max(0) - now,
                        _ => 0,
                    },
                };
                if by != 0
                    && !f(Change::Counters {
                        object: o,
                        counter: k,
                        count: by,
                    })
                {
                    return;
                }
            }
        }
    }

    /// The changes `SetScaled` and `Resize` make: for each characteristic they set, a created
    /// effect with no end, locked to the object, whose source is the object itself (ending its
    /// earlier one on that characteristic); for `Resize`, the kept environment's counters too.
    fn scaled_changes(&self, c: &Primitive, args: &[Arg]) -> Vec<Change> {
        let object = match c {
            Primitive::SetScaled { object, .. } | Primitive::Resize { object, .. } => *object,
            _ => return Vec::new(),
        };
        let Some(Arg::Object(o)) = args.get(object as usize) else {
            return Vec::new();
        };
        let o = *o;
        if !self.in_play(o) {
            return Vec::new();
        }
        let now = |ch: CharId| -> Option<crate::model::value::Symbol> {
            match self.characteristic(o, ch).ok()? {
                crate::model::value::Value::Symbols(s) => s.iter().next().cloned(),
                _ => None,
            }
        };
        // (characteristic, new symbol) pairs, and the kept counters' change.
        let mut sets: Vec<(CharId, crate::model::value::Symbol)> = Vec::new();
        let mut kept_by: Option<(crate::model::ids::CounterId, i64)> = None;
        match c {
            Primitive::SetScaled {
                char, scale, to, ..
            } => {
                let at = super::procedure::amount_of(args, *to);
                let Some(sym) = usize::try_from(at).ok().and_then(|i| scale.get(i)) else {
                    return Vec::new();
                };
                if now(*char).as_ref() != Some(sym) && self.has_char(o, *char) {
                    sets.push((*char, sym.clone()));
                }
            }
            Primitive::Resize {
                by,
                size,
                sizes,
                environment,
                environments,
                kept,
                off_first,
                off_last,
                ..
            } => {
                if !self.has_char(o, *size) || sizes.is_empty() {
                    return Vec::new();
                }
                let last = sizes.len() - 1;
                let Some(i) = now(*size).and_then(|s| sizes.iter().position(|x| *x == s)) else {
                    return Vec::new();
                };
                let j = (i as i64)
                    .saturating_add(super::procedure::amount_of(args, *by))
                    .clamp(0, last as i64) as usize;
                if i == j {
                    return Vec::new();
                }
                sets.push((*size, sizes[j].clone()));
                let end = |k: usize| k == 0 || k == last;
                let kept_now = self.obj(o).counter_count(*kept).unwrap_or(0);
                if end(j) {
                    if !end(i) {
                        // Onto an end: the original environment is kept.
                        let at = now(*environment)
                            .and_then(|e| environments.iter().position(|x| *x == e))
                            .map_or(0, |p| p as i64 + 1);
                        kept_by = Some((*kept, at - kept_now));
                    }
                    sets.push((*environment, sizes[j].clone()));
                } else if end(i) {
                    // Off an end: the kept environment comes back, else barren or toxic.
                    let back = usize::try_from(kept_now - 1)
                        .ok()
                        .and_then(|p| environments.get(p))
                        .cloned()
                        .unwrap_or_else(|| {
                            if i == 0 {
                                off_first.clone()
                            } else {
                                off_last.clone()
                            }
                        });
                    sets.push((*environment, back));
                    kept_by = Some((*kept, -kept_now));
                }
            }
            _ => {}
        }
        let mut out = Vec::new();
        for (ch, sym) in sets {
            out.extend(self.set_for_good(o, ch, sym));
        }
        if let Some((counter, count)) = kept_by.filter(|k| k.1 != 0) {
            out.push(Change::Counters {
                object: o,
                counter,
                count,
            });
        }
        out
    }

    /// A created effect with no end that sets an object's characteristic to one symbol, locked
    /// to it, its source the object itself; its earlier such effect on that characteristic ends.
    fn set_for_good(
        &self,
        o: ObjectId,
        ch: CharId,
        sym: crate::model::value::Symbol,
    ) -> Vec<Change> {
        use crate::model::effect::{
            Change as Op_, CreatedEffect, Duration, EffectDef, Locked, Op, SymList,
        };
        use crate::model::ids::{SlotTarget, Timestamp};
        let target = SlotTarget::Char(ch);
        let Some(layer) = self
            .ruleset
            .layer_for(target, crate::model::effect::OpKind::Set, false)
        else {
            return Vec::new();
        };
        let name = &self.ruleset.characteristics[ch.index()].name;
        let text: Arc<str> = Arc::from(format!("{name} is {} for good", sym.as_str()));
        let earlier: Vec<u32> = self
            .effects
            .iter()
            .filter(|e| e.source == o && e.for_good == Some(ch))
            .map(|e| e.id)
            .collect();
        let mut set = crate::model::value::SymbolSet::default();
        set.insert(sym);
        let def = EffectDef::on_source(
            text,
            Op::new(
                target,
                Op_::SetSymbols(SymList { set, chosen: false }),
                layer,
                false,
            ),
        );
        let x = self.obj(o);
        let mut out = Vec::new();
        if !earlier.is_empty() {
            out.push(Change::EndEffects(earlier));
        }
        out.push(Change::StartEffect(Box::new(CreatedEffect {
            id: 0,
            source: o,
            source_name: x.name.clone(),
            controller: x.controller,
            timestamp: Timestamp(0),
            duration: Duration::WhileSourceInPlay,
            def: Arc::new(def),
            locked: Locked::Objects(vec![(o, x.incarnation)]),
            targets: Arc::from(Vec::new()),
            for_good: Some(ch),
        })));
        out
    }

    /// The changes a `StateAll` or `ClearAll` makes: one for each object in play it would change
    /// (for `StateAll`, those the player controls).
    fn each_permanent_changes(&self, c: &Primitive, args: &[Arg]) -> Vec<Change> {
        if let Primitive::Meters { meter, growth } = c {
            return self.meter_changes(*meter, *growth);
        }
        if let Primitive::SetScaled { .. } | Primitive::Resize { .. } = c {
            return self.scaled_changes(c, args);
        }
        if let Primitive::ClearAll { counter } = c {
            return self
                .in_play_ids()
                .iter()
                .filter_map(|o| {
                    let n = self.obj(*o).counter_count(*counter).unwrap_or(0);
                    (n > 0).then(|| Change::Counters {
                        object: *o,
                        counter: *counter,
                        count: -n,
                    })
                })
                .collect();
        }
        let Primitive::StateAll {
            player, symbol, on, ..
        } = c
        else {
            return Vec::new();
        };
        let Some(Arg::Player(p)) = args.get(*player as usize) else {
            return Vec::new();
        };
        self.in_play_ids()
            .iter()
            .filter(|o| self.controller_now(**o) == *p)
            .filter(|o| self.obj(**o).state.contains(symbol) != *on)
            .map(|o| Change::State {
                object: *o,
                symbol: symbol.clone(),
                on: *on,
            })
            .collect()
    }

    /// The change a `Classes` makes: the class's name added to the player's symbols property,
    /// or removed from it (FreeOrion's Set Empire Tech / Building / Ship Type Availability).
    fn class_change(&self, c: &Primitive, args: &[Arg]) -> Option<Change> {
        let Primitive::Classes {
            player,
            prop,
            class,
            on,
        } = c
        else {
            return None;
        };
        let (Some(Arg::Player(p)), Some(Arg::Class(k))) =
            (args.get(*player as usize), args.get(*class as usize))
        else {
            return None;
        };
        let name = &self.content.classes.get(k.index())?.name;
        Some(Change::PropertySymbol {
            player: *p,
            prop: *prop,
            symbol: crate::model::value::Symbol::new(name),
            on: super::procedure::amount_of(args, *on) != 0,
        })
    }

    /// The changes a `Take` makes: from each property in order, as much as it holds above its
    /// least value (or 0) until the amount is made up; none if the amount is not positive or
    /// the properties hold less in all (it cannot be paid).
    fn take_changes(&self, c: &Primitive, args: &[Arg]) -> Vec<Change> {
        self.take_changes_from(c, args, &|p, prop| self.base_property(p, prop))
    }

    /// A player's base property value (0 if none).
    fn base_property(
        &self,
        p: crate::model::ids::PlayerId,
        prop: crate::model::ids::PropId,
    ) -> i64 {
        self.player_props
            .get(p.index())
            .and_then(|v| v.get(prop.index()))
            .and_then(|v| v.number())
            .unwrap_or(0)
    }

    /// [`Self::take_changes`], reading the properties' values through `now`.
    fn take_changes_from(
        &self,
        c: &Primitive,
        args: &[Arg],
        now: &dyn Fn(crate::model::ids::PlayerId, crate::model::ids::PropId) -> i64,
    ) -> Vec<Change> {
        let Primitive::Take {
            player,
            props,
            amount,
        } = c
        else {
            return Vec::new();
        };
        let Some(Arg::Player(p)) = args.get(*player as usize) else {
            return Vec::new();
        };
        let mut left = match amount {
            Amount::Const(n) => *n,
            Amount::Param(i) => match args.get(*i as usize) {
                Some(Arg::Number(n)) => *n,
                _ => return Vec::new(),
            },
        };
        if left <= 0 {
            return Vec::new();
        }
        let mut out = Vec::new();
        for prop in props {
            if left == 0 {
                break;
            }
            let least = self
                .ruleset
                .props
                .get(prop.index())
                .and_then(|d| d.min)
                .unwrap_or(0);
            let give = (now(*p, *prop) - least).clamp(0, left);
            if give > 0 {
                out.push(Change::AddProperty {
                    player: *p,
                    prop: *prop,
                    by: -give,
                });
                left -= give;
            }
        }
        if left > 0 {
            return Vec::new();
        }
        out
    }

    /// Whether costs paid one after another could all be paid: each would change something,
    /// with the players' properties as the costs before it left them ({1}{R} from a pool of one
    /// red cannot be paid, though each part alone could). Other changes are judged on the
    /// state as it is.
    pub(super) fn pays_all(&self, occs: &[Occurrence]) -> bool {
        let mut spent: Vec<(crate::model::ids::PlayerId, crate::model::ids::PropId, i64)> =
            Vec::new();
        let mut payable = true;
        for o in occs {
            if !payable {
                break;
            }
            let kind = self.ruleset.event_kind(o.event);
            if kind.changes.is_empty() {
                continue;
            }
            let mut all_nothing = true;
            for c in &kind.changes {
                let now = |p, prop| {
                    self.base_property(p, prop)
                        + spent
                            .iter()
                            .filter(|(q, r, _)| *q == p && *r == prop)
                            .map(|x| x.2)
                            .sum::<i64>()
                };
                let changes: Vec<(Change, i64)> = match c {
                    Primitive::Take { .. } => self.take_changes_from(c, &o.args, &now),
                    Primitive::Property { .. } => lower(c, &o.args).into_iter().collect(),
                    _ => {
                        if !self.primitive_changes_nothing(c, &o.args) {
                            all_nothing = false;
                        }
                        continue;
                    }
                }
                .into_iter()
                .map(|ch| {
                    let v = match &ch {
                        Change::AddProperty { player, prop, .. } => now(*player, *prop),
                        _ => 0,
                    };
                    (ch, v)
                })
                .collect();
                for (ch, value) in changes {
                    let Change::AddProperty { player, prop, by } = ch else {
                        continue;
                    };
                    if by == 0 {
                        continue;
                    }
                    let least = self.ruleset.props.get(prop.index()).and_then(|d| d.min);
                    if least.is_some_and(|m| by < 0 && value + by < m) {
                        payable = false;
                        continue;
                    }
                    all_nothing = false;
                    spent.push((player, prop, by));
                }
            }
            if all_nothing {
                payable = false;
            }
        }
        payable
    }

    /// The top card of a player's zone: the latest put there.
    pub(crate) fn top_card(
        &self,
        player: crate::model::ids::PlayerId,
        zone: ZoneId,
    ) -> Option<ObjectId> {
        self.objects()
            .filter(|o| o.owner == player && o.zone == zone)
            .max_by_key(|o| o.timestamp)
            .map(|o| o.id)
    }

    /// Objects changing zones at once, as occurrences: `changes_zone` for each, and `leaves_play`
    /// for each that goes from play to a zone not in play.
    pub(super) fn moving(&self, moves: &[(ObjectId, ZoneId)]) -> Vec<Occurrence> {
        let b = self.builtin;
        let mut occs = Vec::with_capacity(moves.len() * 2);
        for &(o, z) in moves {
            let args: crate::model::occurrence::Args =
                smallvec::smallvec![Arg::Object(o), Arg::Zone(self.obj(o).zone), Arg::Zone(z)];
            let leaves = self.in_play(o) && !self.ruleset.zone_def(z).in_play;
            occs.push(Occurrence::new(b.changes_zone, args.clone()));
            if leaves {
                occs.push(Occurrence::new(b.leaves_play, args));
            }
        }
        occs
    }

    /// Whether every change the occurrence makes would leave the state as it is (an event with no
    /// changes never fails).
    pub(super) fn changes_nothing(&self, o: &Occurrence) -> bool {
        self.event_changes_nothing(o.event, &o.args)
    }

    /// `changes_nothing` of an occurrence of `event` with these arguments, not built.
    pub(super) fn event_changes_nothing(
        &self,
        event: crate::model::ids::EventId,
        args: &[Arg],
    ) -> bool {
        let kind = self.ruleset.event_kind(event);
        if kind.changes.is_empty() {
            return false;
        }
        kind.changes
            .iter()
            .all(|c| self.primitive_changes_nothing(c, args))
    }

    /// Whether a declared change, worked out from these arguments, would leave the state as it
    /// is: `would_change_nothing` of its `lower`ing (a change that cannot be worked out changes
    /// nothing), without building the change where it is a state or a move.
    fn primitive_changes_nothing(&self, c: &Primitive, args: &[Arg]) -> bool {
        let object = |i: &u8| match args.get(*i as usize) {
            Some(Arg::Object(o)) => self.get_object(*o),
            _ => None,
        };
        match c {
            Primitive::State {
                object: o,
                symbol,
                on,
                ..
            } => object(o).is_none_or(|x| x.state.contains(symbol) == *on),
            // The first change found is enough.
            Primitive::Meters { meter, growth } => {
                let mut none = true;
                self.each_meter_change(*meter, *growth, &mut |_| {
                    none = false;
                    false
                });
                none
            }
            Primitive::StateAll { .. }
            | Primitive::ClearAll { .. }
            | Primitive::SetScaled { .. }
            | Primitive::Resize { .. } => self.each_permanent_changes(c, args).is_empty(),
            Primitive::Take { .. } => self.take_changes(c, args).is_empty(),
            Primitive::Classes { .. } => self
                .class_change(c, args)
                .is_none_or(|c| self.would_change_nothing(&c)),
            Primitive::MoveTop {
                player,
                from,
                empty,
                ..
            } => {
                let Some(Arg::Player(p)) = args.get(*player as usize) else {
                    return true;
                };
                empty.is_none() && self.top_card(*p, *from).is_none()
            }
            Primitive::Move { object: o, zone } => {
                let Some(z) = zone_arg(zone, args) else {
                    return true;
                };
                object(o).is_none_or(|x| z.index() >= self.ruleset.zones.len() || x.zone == z)
            }
            _ => lower(c, args).is_none_or(|c| self.would_change_nothing(&c)),
        }
    }

    /// Whether a change would leave the state as it is: failure takes precedence over effects.
    fn would_change_nothing(&self, c: &Change) -> bool {
        // Without writing the error out: a cost that cannot be paid is asked about often.
        if let Change::AddProperty { player, prop, by } = c {
            return *by == 0
                || self.check_player(*player).is_err()
                || self.below_minimum(*player, *prop, *by).is_some();
        }
        if self.check_change(c).is_err() {
            return true;
        }
        match c {
            Change::State { object, symbol, on } => self.obj(*object).state.contains(symbol) == *on,
            Change::AddProperty { by, .. } => *by == 0,
            Change::PropertySymbol {
                player,
                prop,
                symbol,
                on,
            } => !matches!(
                self.player_props[player.index()].get(prop.index()),
                Some(crate::model::value::Value::Symbols(set)) if set.contains(symbol) != *on
            ),
            Change::Counters { count, .. } => *count == 0,
            Change::Move(m) => m.iter().all(|(o, z)| self.obj(*o).zone == *z),
            Change::Face { object, down } => self.obj(*object).face_down == *down,
            Change::EndEffectsOf { source } => !self.effects.iter().any(|e| e.source == *source),
            Change::EndEffects(ids) => !self.effects.iter().any(|e| ids.contains(&e.id)),
            // CR 701.3b: attaching to the object it is already attached to does nothing.
            Change::Attach { object, to } => self.obj(*object).attached_to == Some(*to),
            Change::Unattach { object } => self.obj(*object).attached_to.is_none(),
            Change::Loses(p) => self.players[p.index()].lost,
            // Fewer than two cards have one order only.
            // Fewer than two cards: no order to change.
            Change::Shuffle { player, zone } => {
                self.objects_in_zone(*zone)
                    .iter()
                    .filter(|o| self.obj(**o).owner == *player)
                    .take(2)
                    .count()
                    < 2
            }
            _ => false,
        }
    }

    /// The ids a change names are this game's.
    pub(crate) fn check_change(&self, c: &Change) -> Result<(), ActionError> {
        let object = |o: &ObjectId| self.check_object(*o);
        match c {
            Change::State { object: o, .. }
            | Change::Counters { object: o, .. }
            | Change::Unattach { object: o }
            | Change::Face { object: o, .. }
            | Change::EndEffectsOf { source: o } => object(o),
            Change::Attach { object: a, to: b }
            | Change::Merge {
                object: a, into: b, ..
            } => object(a).and(object(b)),
            Change::Move(m) => m.iter().try_for_each(|(o, z)| self.check_move(*o, *z)),
            Change::Shuffle { player, zone } => {
                self.check_player(*player)?;
                self.check_zone(*zone)
            }
            Change::Loses(p) | Change::PropertySymbol { player: p, .. } => self.check_player(*p),
            Change::AddProperty { player, prop, by } => {
                self.check_player(*player)?;
                match self.below_minimum(*player, *prop, *by) {
                    Some((now, m)) => Err(ActionError::BadOccurrence(format!(
                        "{} has {now} {}, and it cannot go below {m}",
                        self.player_name(*player),
                        self.ruleset.props[prop.index()].name
                    ))),
                    None => Ok(()),
                }
            }
            _ => Ok(()),
        }
    }

    /// Where adding `by` would take a player's property below its minimum (`at least`): its
    /// value now and the minimum.
    fn below_minimum(&self, player: PlayerId, prop: PropId, by: i64) -> Option<(i64, i64)> {
        let m = self.ruleset.props.get(prop.index()).and_then(|d| d.min)?;
        let now = self
            .player_props
            .get(player.index())
            .and_then(|v| v.get(prop.index()))
            .and_then(|v| v.number())
            .unwrap_or(0);
        (by < 0 && now + by < m).then_some((now, m))
    }

    /// A frame of the state-based checks is under way (rounds of them nest: more than 1,000 at
    /// once is a loop).
    pub(crate) fn state_check_rounds(&self) -> usize {
        self.timing
            .tasks
            .iter()
            .filter(|t| matches!(t, Task::Frame(f) if f.state_checks))
            .count()
    }
}

/// A declared change, worked out from an occurrence's arguments; `None` where an argument it
/// names is missing or of another kind.
/// The zone a move names: written in the event, or one of its arguments.
fn zone_arg(zone: &ParamOr<ZoneId>, args: &[Arg]) -> Option<ZoneId> {
    match zone {
        ParamOr::Const(z) => Some(*z),
        ParamOr::Param(i) => match args.get(*i as usize) {
            Some(Arg::Zone(z)) => Some(*z),
            _ => None,
        },
    }
}

pub(crate) fn lower(c: &Primitive, args: &[Arg]) -> Option<Change> {
    let object = |i: &u8| match args.get(*i as usize) {
        Some(Arg::Object(o)) => Some(*o),
        _ => None,
    };
    let player = |i: &u8| match args.get(*i as usize) {
        Some(Arg::Player(p)) => Some(*p),
        _ => None,
    };
    let number = |a: &Amount| match a {
        Amount::Const(n) => Some(*n),
        Amount::Param(i) => match args.get(*i as usize) {
            Some(Arg::Number(n)) => Some(*n),
            _ => None,
        },
    };
    Some(match c {
        // Worked out against the state (which card is on top): `make_changes` does it.
        Primitive::MoveTop { .. }
        | Primitive::StateAll { .. }
        | Primitive::ClearAll { .. }
        | Primitive::Meters { .. }
        | Primitive::SetScaled { .. }
        | Primitive::Resize { .. }
        | Primitive::Classes { .. }
        | Primitive::Take { .. } => return None,
        Primitive::State {
            object: o,
            symbol,
            on,
            ..
        } => Change::State {
            object: object(o)?,
            symbol: symbol.clone(),
            on: *on,
        },
        Primitive::Property {
            player,
            prop,
            amount,
            negative,
        } => {
            let Some(Arg::Player(p)) = args.get(*player as usize) else {
                return None;
            };
            let n = number(amount)?;
            Change::AddProperty {
                player: *p,
                prop: *prop,
                by: if *negative { -n } else { n },
            }
        }
        Primitive::Move { object: o, zone } => {
            Change::Move(vec![(object(o)?, zone_arg(zone, args)?)])
        }
        Primitive::Counters {
            object: o,
            counter,
            amount,
        } => {
            let counter = match counter {
                ParamOr::Const(c) => *c,
                ParamOr::Param(i) => match args.get(*i as usize) {
                    Some(Arg::Counter(c)) => *c,
                    _ => return None,
                },
            };
            Change::Counters {
                object: object(o)?,
                counter,
                count: number(amount)?,
            }
        }
        Primitive::Attach { object: o, to } => Change::Attach {
            object: object(o)?,
            to: object(to)?,
        },
        Primitive::Unattach { object: o } => Change::Unattach { object: object(o)? },
        Primitive::Face { object: o, down } => Change::Face {
            object: object(o)?,
            down: *down,
        },
        Primitive::Merge {
            object: o,
            into,
            under,
        } => Change::Merge {
            object: object(o)?,
            into: object(into)?,
            under: number(&Amount::Param(*under))? != 0,
        },
        Primitive::EndEffects { source } => Change::EndEffectsOf {
            source: object(source)?,
        },
        Primitive::EndEffect { effect } => {
            Change::EndEffects(vec![u32::try_from(number(&Amount::Param(*effect))?).ok()?])
        }
        Primitive::SetProperty {
            player: p,
            prop,
            value,
        } => {
            let Some(Arg::Property(prop)) = args.get(*prop as usize) else {
                return None;
            };
            Change::SetProperty {
                player: player(p)?,
                prop: *prop,
                value: Some(number(&Amount::Param(*value))?),
            }
        }
        Primitive::EndTurn => Change::EndTurn,
        Primitive::Lose { player: p } => Change::Loses(player(p)?),
        Primitive::Shuffle { player: p, zone } => match args.get(*zone as usize) {
            Some(Arg::Zone(z)) => Change::Shuffle {
                player: player(p)?,
                zone: *z,
            },
            _ => return None,
        },
    })
}
