//! A response going through its parts, as a task of its own: its targets (the orderer first
//! picks who chooses when several players do), its costs (an occurrence each; one that does not
//! happen stops it), then its deeds, each occurrence going through its own points before the next
//! deed (the "CE Timing" priority rule).

use super::procedure::amount_of;
use crate::condition::eval::Ctx;
use crate::model::condition::{NumExpr, ObjRef, PlayerRef, Subject};
use crate::model::decision::DecisionRequest;
use crate::model::error::ActionError;
use crate::model::ids::{ObjectId, PlayerId};
use crate::model::occurrence::{Logged, Occurrence, Responder, Why};
use crate::model::response::{ArgExpr, Deed, Lasting, ResponseDef, ResponseKind, Standing};
use crate::model::timing::Point;
use crate::model::value::Arg;
use crate::state::GameState;
use crate::state::{ActiveDelayed, Cand, Key, Mode, Run, Task};
use std::sync::Arc;

impl GameState {
    pub(super) fn start_run(
        &mut self,
        fi: usize,
        point: Point,
        c: Cand,
        why: Why,
        step: &Arc<str>,
    ) -> Result<(), ActionError> {
        let (def, source, you, targets, bound) = self.response_of(c.key);
        let f = self.frame(fi);
        let depth = f.depth;
        let occurrence = f.occs[c.occ].occ.clone();
        self.frame_mut(fi).used.push((c.occ, c.key));
        if let Key::Delayed(id) = c.key {
            // A delayed trigger answers the first of its events and never another.
            self.timing_mut().delayed.retain(|d| d.id != id);
        }
        self.log_at(
            depth,
            Logged::Response {
                occurrence,
                point,
                step: step.clone(),
                by: Responder {
                    source,
                    text: def.text.clone(),
                },
                why,
            },
        );
        let run = Run::new(fi, c.occ, def, source, you, targets, bound, depth + 1);
        self.timing_mut().tasks.push(Task::Run(Box::new(run)));
        Ok(())
    }

    pub(super) fn advance_run(&mut self, ri: usize) -> Result<(), ActionError> {
        let Task::Run(r) = &self.timing.tasks[ri] else {
            unreachable!()
        };
        // A copy to read (its held frames stay on the stack).
        let r = r.snapshot();
        if r.awaiting_cost {
            self.run_mut(ri).awaiting_cost = false;
            if !self.timing.last_happened {
                self.abandon_run(ri, &r, "its cost was not paid");
                return Ok(());
            }
        }
        let nt = r.def.targets.len();
        let nc = r.def.costs.len();
        let nd = r.def.deeds.len();
        if r.part == 0 && r.chosen.is_none() && r.picking.is_none() {
            if let Some(range) = self.number_range(&r) {
                return self.choose_number(ri, &r, range);
            }
        }
        if r.part < nt {
            return self.choose_targets(ri, &r);
        } else if r.part < nt + nc {
            if r.part == nt && r.def.optional_costs && !r.paying {
                // Pay or decline, now or never.
                let params = self.params_of(&r);
                let costs: Vec<Occurrence> = r
                    .def
                    .costs
                    .iter()
                    .filter_map(|c| match c {
                        Deed::Occur { event, args, .. } => {
                            let v = crate::model::occurrence::args_of(
                                args.iter().map(|a| self.eval_arg(&r, a, &params)),
                            );
                            v.map(|v| Occurrence::new(*event, v))
                        }
                        _ => None,
                    })
                    .collect();
                self.pending = Some(Arc::new(DecisionRequest::PayCost {
                    player: r.you.unwrap_or(self.orderer()),
                    response: r.def.text.clone(),
                    costs,
                }));
                return Ok(());
            }
            self.run_mut(ri).part += 1;
            // Read from the run's copy: no copy of the deed.
            let deed = &r.def.costs[r.part - nt];
            if let Deed::Occur { event, args, .. } = deed {
                let params = self.params_of(&r);
                let v = crate::model::occurrence::args_of(
                    args.iter().map(|a| self.eval_arg(&r, a, &params)),
                );
                if v.is_some_and(|v| self.costs_nothing(&Occurrence::new(*event, v))) {
                    // Paid by doing nothing ({X} with X = 0).
                    return Ok(());
                }
            }
            let pushes = matches!(deed, Deed::Occur { .. } | Deed::Instead { .. });
            if pushes {
                self.run_mut(ri).awaiting_cost = true;
            }
            self.do_deed(&r, deed)?;
        } else if r.announce.is_some() {
            // Announced: its deeds wait for its resolution.
            return self.finish_announce(ri, &r);
        } else if let Some(f) = &r.firing {
            return self.fire_next(ri, &r, f.clone());
        } else if r.part < nt + nc + nd {
            self.run_mut(ri).part += 1;
            let deed = &r.def.deeds[r.part - nt - nc];
            if let Deed::Group(g) = deed {
                return self.begin_group(ri, &r, g);
            }
            self.do_deed(&r, deed)?;
        } else {
            self.end_run(ri);
        }
        Ok(())
    }

    /// CR 118.5, 601.2f: a cost whose size is zero ({X} with X = 0, {0}) is paid by doing
    /// nothing, though the occurrence would change nothing.
    pub(super) fn costs_nothing(&self, occ: &Occurrence) -> bool {
        self.ruleset
            .event_kind(occ.event)
            .amount
            .is_some_and(|a| matches!(occ.args.get(a as usize), Some(Arg::Number(0))))
    }

    /// An announced spell's `choose X: MIN..MAX`, if it has one.
    fn number_range(
        &self,
        r: &Run,
    ) -> Option<(
        crate::model::condition::NumExpr,
        crate::model::condition::NumExpr,
    )> {
        if !matches!(
            r.announce,
            Some(
                crate::model::batch::ItemKind::Spell | crate::model::batch::ItemKind::Permanent(_)
            )
        ) {
            return None;
        }
        let o = self.get_object(r.source?)?;
        self.content
            .class_def(o.class)
            .spell
            .as_ref()?
            .choose
            .clone()
    }

    /// CR 601.2b: the caster announces X before the spell's targets and costs. Offered: the
    /// values from MIN up to MAX whose costs can be paid, paid one after another (CR 601.2f),
    /// from the least up to the first that cannot be (a greater X costs more). A single value is
    /// taken without asking; with none, the spell is not cast.
    fn choose_number(
        &mut self,
        ri: usize,
        r: &Run,
        (min, max): (
            crate::model::condition::NumExpr,
            crate::model::condition::NumExpr,
        ),
    ) -> Result<(), ActionError> {
        let Some(source) = r.source else {
            return Ok(());
        };
        let player = r.you.unwrap_or(self.orderer());
        let (lo, hi) = {
            let sheet = &self.derived().sheet;
            let ctx = Ctx::new(self, sheet, r.source, r.you, &[]);
            let this = Subject::Object(source);
            (ctx.eval(&min, this), ctx.eval(&max, this))
        };
        let mut options = Vec::new();
        if let (Some(lo), Some(hi)) = (lo, hi) {
            let mut trial = self.clone();
            // At most this many values are offered, where costs do not grow with X.
            const MOST: i64 = 1000;
            let lo = lo.max(0);
            for n in lo..=hi.min(lo.saturating_add(MOST - 1)) {
                trial.note_number(source, n);
                if !trial.costs_payable(&r.def.costs, r.source, r.you, &[]) {
                    break;
                }
                options.push(n);
            }
        }
        match options.len() {
            0 => self.abandon_run(ri, r, "no number X it may announce can be paid"),
            1 => self.set_number(ri, options[0]),
            _ => {
                self.timing_mut().offered = Vec::new();
                self.pending = Some(Arc::new(DecisionRequest::ChooseNumber {
                    player,
                    response: r.def.text.clone(),
                    options,
                }));
            }
        }
        Ok(())
    }

    /// FreeOrion's effects system, Effect Scope: the scope of a non-meter effects group is
    /// fixed before any of its effects fire: the objects in play that meet its scope now, in id
    /// order (its activation was its response's condition, tested on the source).
    fn begin_group(
        &mut self,
        ri: usize,
        r: &Run,
        g: &Arc<crate::model::response::GroupDef>,
    ) -> Result<(), ActionError> {
        let scope: Vec<ObjectId> = {
            let sheet = &self.derived().sheet;
            Ctx::new(self, sheet, r.source, r.you, &[]).in_play_meeting(&g.scope)
        };
        let f = crate::state::Firing {
            group: g.clone(),
            scope: scope.into(),
            effect: 0,
            next: 0,
        };
        self.run_mut(ri).firing = Some(f.clone());
        self.fire_next(ri, r, f)
    }

    /// The next firing of a group under way: each effect in order, on each object of its scope
    /// in turn. An object no longer in play (destroyed) has left the scope; one that lacks what
    /// the effect changes is skipped for that effect only; with a nonzero stacking number, one
    /// an effect of that number already fired on this turn is skipped (FreeOrion's effects
    /// system, Stacking Number). The firing is an occurrence of its own, before the next.
    fn fire_next(
        &mut self,
        ri: usize,
        r: &Run,
        mut f: crate::state::Firing,
    ) -> Result<(), ActionError> {
        let turn = self.turn;
        while f.effect < f.group.effects.len() {
            let Some(&o) = f.scope.get(f.next) else {
                f.effect += 1;
                f.next = 0;
                continue;
            };
            f.next += 1;
            if !self.in_play(o) {
                continue;
            }
            let needs = f.group.needs.get(f.effect).map(|v| &v[..]).unwrap_or(&[]);
            if needs.iter().any(|ch| !self.has_char(o, *ch)) {
                continue;
            }
            let n = f.group.stacking;
            if n != 0 {
                let t = self.timing_mut();
                if t.stacked.0 != turn {
                    t.stacked = (turn, Default::default());
                }
                // A max meter effect of the number applies to it this turn (they fire first).
                let by_meters = self
                    .derived()
                    .stacked
                    .as_ref()
                    .is_some_and(|s| s.contains(&(n, Subject::Object(o))));
                let t = self.timing_mut();
                if by_meters || t.stacked.1.contains(&(o, n)) {
                    self.log_at(
                        r.depth,
                        Logged::Fizzled {
                            by: r.responder(),
                            why: format!(
                                "an effect of stacking number {n} already fired on {} this turn",
                                self.obj(o).name
                            ),
                        },
                    );
                    continue;
                }
                self.timing_mut().stacked.1.insert((o, n));
            }
            // The group's deeds are shared: the one firing is read from them, not copied.
            let group = f.group.clone();
            let effect = f.effect;
            self.run_mut(ri).firing = Some(f);
            let mut on = r.clone();
            on.targets = vec![Subject::Object(o)];
            // The object fired on is the deed's one target for the firing.
            self.run_mut(ri).targets = on.targets.clone();
            return self.do_deed(&on, &group.effects[effect]);
        }
        self.run_mut(ri).firing = None;
        Ok(())
    }

    /// A run that cannot go on (no target, no payable X, its cost unpaid) ends, logged with why.
    fn abandon_run(&mut self, ri: usize, r: &Run, why: &str) {
        self.log_at(
            r.depth,
            Logged::Fizzled {
                by: r.responder(),
                why: why.into(),
            },
        );
        self.end_run(ri);
    }

    /// Keeps the number announced for this spell, for its costs and its deeds.
    fn note_number(&mut self, spell: ObjectId, n: i64) {
        let chosen = &mut self.timing_mut().chosen;
        chosen.retain(|(o, _)| *o != spell);
        chosen.push((spell, n));
    }

    /// The announcing run's X is `n`.
    pub(super) fn set_number(&mut self, ri: usize, n: i64) {
        if let Some(s) = self.run_mut(ri).source {
            self.note_number(s, n);
        }
        self.run_mut(ri).chosen = Some(n);
    }

    /// Who chooses a response's target of that index.
    pub(super) fn chooser_of(&self, r: &Run, i: usize, params: &[Arg]) -> PlayerId {
        let fallback = r.you.unwrap_or(self.orderer());
        let Some(Some(p)) = r.def.choosers.get(i) else {
            return fallback;
        };
        let sheet = &self.derived().sheet;
        let ctx = Ctx::new(self, sheet, r.source, r.you, &r.targets).with_params(params);
        let this = match r.source {
            Some(s) => Subject::Object(s),
            None => Subject::Player(fallback),
        };
        ctx.player(*p, this).unwrap_or(fallback)
    }

    /// The next target: when players other than one still have to choose, the player who orders
    /// conflicts picks who chooses next; then that player picks among the legal targets (a
    /// single legal one is taken without asking). With none, the response does nothing.
    pub(super) fn choose_targets(&mut self, ri: usize, r: &Run) -> Result<(), ActionError> {
        let nt = r.def.targets.len();
        let params = self.params_of(r);
        if r.picked.len() != nt {
            self.run_mut(ri).picked = vec![None; nt];
        }
        let picked = &self.run_mut(ri).picked.clone();
        let next = match r.picking {
            Some(i) => i,
            None => {
                let remaining: Vec<usize> = (0..nt).filter(|i| picked[*i].is_none()).collect();
                let choosers: Vec<PlayerId> = remaining
                    .iter()
                    .map(|i| self.chooser_of(r, *i, &params))
                    .collect();
                if choosers.iter().any(|c| *c != choosers[0]) {
                    let player = self.orderer();
                    self.timing_mut().offered = Vec::new();
                    self.timing_mut().offered_targets = remaining;
                    self.pending = Some(Arc::new(DecisionRequest::OrderChoices {
                        player,
                        response: r.def.text.clone(),
                        choosers,
                    }));
                    return Ok(());
                }
                remaining[0]
            }
        };
        let so_far: Vec<Subject> = picked.iter().flatten().copied().collect();
        let mut options =
            self.legal_targets(&r.def.targets[next].cond, r.source, r.you, &so_far, &params);
        if let Some(scope) = r.scope {
            self.in_scope(scope, &mut options);
        }
        match options.len() {
            0 => self.abandon_run(ri, r, "it has no legal target"),
            1 => self.set_target(ri, next, options[0]),
            _ => {
                let player = self.chooser_of(r, next, &params);
                self.run_mut(ri).picking = Some(next);
                self.timing_mut().offered = Vec::new();
                self.pending = Some(Arc::new(DecisionRequest::ChooseTarget {
                    player,
                    response: r.def.text.clone(),
                    options,
                }));
            }
        }
        Ok(())
    }

    pub(super) fn set_target(&mut self, ri: usize, i: usize, t: Subject) {
        let run = self.run_mut(ri);
        run.picked[i] = Some(t);
        run.picking = None;
        run.part += 1;
        if run.part == run.picked.len() {
            run.targets = run.picked.iter().flatten().copied().collect();
        }
    }

    /// The arguments a response's expressions read: the occurrence it answers, as it is now, or
    /// for a delayed effect those it was set up with.
    pub(super) fn params_of(&self, r: &Run) -> crate::model::occurrence::Args {
        match &r.bound {
            Some(b) => b.as_slice().into(),
            // A batch item answers no occurrence.
            None => self
                .answered(r)
                .map(|o| o.occ.args.clone())
                .unwrap_or_default(),
        }
    }

    pub(super) fn eval_arg(&self, r: &Run, a: &ArgExpr, params: &[Arg]) -> Option<Arg> {
        if let ArgExpr::Target(i) = a {
            if r.illegal.contains(i) {
                // CR 608.2b: a resolving spell does nothing to a target no longer legal.
                return None;
            }
        }
        // After an object left play, what the response names is looked up as it was just before
        // (last-known information).
        let look = match self.timing.tasks.get(r.frame) {
            Some(Task::Frame(f)) => f.snapshot.as_deref().unwrap_or(self),
            _ => self,
        };
        look.arg_value(a, r.source, r.you, &r.targets, params)
    }

    /// An argument's value for a response with this source, "you", targets and occurrence. The
    /// derived values are worked out only for an argument that reads them: a parameter, a
    /// target, "you", `this`, a constant or a class does not (a cost is asked about at every
    /// listing of the legal plays), nor does a controller where no layer changes control (CR
    /// 613.1b: the derived controller is then the base one), so a change just made is not
    /// derived for an argument that cannot see it.
    pub(super) fn arg_value(
        &self,
        a: &ArgExpr,
        source: Option<ObjectId>,
        you: Option<PlayerId>,
        targets: &[Subject],
        params: &[Arg],
    ) -> Option<Arg> {
        let ctx =
            || Ctx::new(self, &self.derived().sheet, source, you, targets).with_params(params);
        let this = match source {
            Some(s) => Subject::Object(s),
            None => Subject::Player(you.unwrap_or(self.active)),
        };
        let base_controller = |o: ObjectId| self.get_object(o).map(|x| Arg::Player(x.controller));
        match a {
            ArgExpr::Param(i) => params.get(*i as usize).copied(),
            ArgExpr::Target(i) => match targets.get(*i as usize) {
                Some(Subject::Object(o)) => Some(Arg::Object(*o)),
                Some(Subject::Player(p)) => Some(Arg::Player(*p)),
                None => None,
            },
            ArgExpr::Object(ObjRef::This | ObjRef::Source) => source.map(Arg::Object),
            ArgExpr::Object(o) => ctx().object_ref(*o, this).map(Arg::Object),
            ArgExpr::ControllerOf(ObjRef::This | ObjRef::Source) if !self.controller_written => {
                source.and_then(base_controller)
            }
            ArgExpr::ControllerOf(o) => {
                let ctx = ctx();
                ctx.object_ref(*o, this)
                    .and_then(|x| ctx.controller_of(x))
                    .map(Arg::Player)
            }
            ArgExpr::Player(PlayerRef::You) => you.map(Arg::Player),
            ArgExpr::Player(p) => ctx().player(*p, this).map(Arg::Player),
            ArgExpr::ControllerOfTarget(i) => match targets.get(*i as usize) {
                Some(Subject::Object(o)) if !self.controller_written => base_controller(*o),
                Some(Subject::Object(o)) => ctx().controller_of(*o).map(Arg::Player),
                _ => None,
            },
            ArgExpr::Number(NumExpr::Const(n)) => Some(Arg::Number(*n)),
            ArgExpr::Number(e) => ctx().eval(e, this).map(Arg::Number),
            ArgExpr::Zone(z) => Some(Arg::Zone(*z)),
            ArgExpr::Counter(k) => Some(Arg::Counter(*k)),
            ArgExpr::Property(q) => Some(Arg::Property(*q)),
            ArgExpr::Class(name) => self.content.class_id(name).map(Arg::Class),
        }
    }

    /// The occurrence a response answers no longer happens (negated, prevented, substituted):
    /// it and its frame's depth, if it was still to happen.
    pub(super) fn end_answered(&mut self, r: &Run) -> Option<(Occurrence, u16)> {
        // A batch item's resolution answers no occurrence.
        self.answered(r)?;
        let f = self.frame_mut(r.frame);
        let occ = &mut f.occs[r.occ];
        if !occ.alive {
            return None;
        }
        occ.alive = false;
        Some((occ.occ.clone(), f.depth))
    }

    /// The occurrence a response answers, while its frame is under way.
    pub(super) fn answered(&self, r: &Run) -> Option<&crate::state::Occ> {
        match self.timing.tasks.get(r.frame) {
            Some(crate::state::Task::Frame(f)) => f.occs.get(r.occ),
            _ => None,
        }
    }

    pub(super) fn do_deed(&mut self, r: &Run, deed: &Deed) -> Result<(), ActionError> {
        let params = self.params_of(r);
        let eval_args =
            |s: &GameState, args: &[ArgExpr]| -> Option<crate::model::occurrence::Args> {
                crate::model::occurrence::args_of(args.iter().map(|a| s.eval_arg(r, a, &params)))
            };
        // "Cannot be prevented", "cannot be negated", "cannot be changed": a deed the answered
        // occurrence stands against does nothing to it.
        if let Some(o) = self.answered(r) {
            if !o.standing.allows(deed) {
                let what = match deed {
                    Deed::Negate => "negate",
                    Deed::ChangeAmount(_) | Deed::SetParam { .. } => "change",
                    _ => "prevent",
                };
                let (occurrence, depth) = (o.occ.clone(), self.frame(r.frame).depth);
                self.log_at(
                    depth,
                    Logged::Immune {
                        occurrence,
                        by: r.responder(),
                        what: what.into(),
                    },
                );
                return Ok(());
            }
        }
        match deed {
            Deed::Occur {
                event,
                args,
                standing,
            } => match eval_args(self, args) {
                Some(args) => {
                    self.push_occurrence(r, Occurrence::new(*event, args), r.depth, *standing)
                }
                None => self.names_nothing(r, *event),
            },
            Deed::Create {
                class,
                count,
                owner,
                zone,
                at,
            } => {
                let at = match at.as_ref().map(|a| self.eval_arg(r, a, &params)) {
                    Some(Some(Arg::Object(o))) => Some(o),
                    _ => None,
                };
                let owner = match self.eval_arg(r, owner, &params) {
                    Some(Arg::Player(p)) => Some(p),
                    _ => None,
                };
                let (Some(class_id), Some(owner)) = (self.content.class_id(class), owner) else {
                    self.log_at(
                        r.depth,
                        Logged::Fizzled {
                            by: r.responder(),
                            why: format!("`{class}` cannot be created: no such class, or no owner"),
                        },
                    );
                    return Ok(());
                };
                let list = (0..*count)
                    .map(|_| crate::model::action::NewObject {
                        attached_to: at,
                        ..crate::model::action::NewObject::new(class_id, owner, *zone)
                    })
                    .collect();
                // Answered as entering, as any object created is; before the next deed.
                self.create_entering(list, r.depth);
                // The state-based checks the new objects cause come first (as for `Create`).
                self.run_state_checks()?;
            }
            Deed::Negate => {
                if let Some(o) = self.answered(r).filter(|o| o.alive) {
                    let occurrence = o.occ.clone();
                    let (fi, k, depth) = (r.frame, r.occ, self.frame(r.frame).depth);
                    self.frame_mut(fi).occs[k].negated = true;
                    self.log_at(
                        depth,
                        Logged::Negated {
                            occurrence,
                            by: r.responder(),
                        },
                    );
                }
            }
            Deed::Prevent => {
                if let Some((occurrence, depth)) = self.end_answered(r) {
                    self.log_at(
                        depth,
                        Logged::Prevented {
                            occurrence,
                            by: r.responder(),
                        },
                    );
                }
            }
            Deed::Instead { event, args } => {
                let Some(args) = eval_args(self, args) else {
                    return Ok(());
                };
                let with = Occurrence::new(*event, args);
                if let Some((occurrence, depth)) = self.end_answered(r) {
                    self.log_at(
                        depth,
                        Logged::Substituted {
                            occurrence,
                            by: r.responder(),
                            with: with.clone(),
                        },
                    );
                    self.push_occurrence(r, with, r.depth, Standing::default());
                }
            }
            Deed::ChangeAmount(e) => {
                let Some(Arg::Number(by)) = self.eval_arg(r, &ArgExpr::Number(e.clone()), &params)
                else {
                    return Ok(());
                };
                let f = self.frame(r.frame);
                let occ = &f.occs[r.occ];
                let Some(a) = self.ruleset.event_kind(occ.occ.event).amount else {
                    return Ok(());
                };
                let from = amount_of(&occ.occ.args, crate::model::event::Amount::Param(a));
                let to = (from + by).max(0);
                let depth = f.depth;
                let f = self.frame_mut(r.frame);
                let before = f.occs[r.occ].occ.clone();
                f.occs[r.occ].occ.args[a as usize] = Arg::Number(to);
                self.log_at(
                    depth,
                    Logged::Amount {
                        occurrence: before,
                        from,
                        to,
                        by: r.responder(),
                    },
                );
            }
            Deed::SetParam { param, to } => {
                let Some(v) = self.eval_arg(r, to, &params) else {
                    return Ok(());
                };
                let f = self.frame(r.frame);
                let depth = f.depth;
                let before = f.occs[r.occ].occ.clone();
                let name = self.ruleset.event_kind(before.event).params[*param as usize]
                    .name
                    .clone();
                self.frame_mut(r.frame).occs[r.occ].occ.args[*param as usize] = v;
                self.log_at(
                    depth,
                    Logged::Param {
                        occurrence: before,
                        param: name,
                        to: v,
                        by: r.responder(),
                    },
                );
            }
            Deed::Begin { event, args } => match eval_args(self, args) {
                Some(args) => {
                    self.push_frame(vec![Occurrence::new(*event, args)], Mode::Begin, r.depth)
                }
                None => self.names_nothing(r, *event),
            },
            Deed::End(event) => match self.latest_open(*event) {
                Some(occ) => self.push_frame(vec![occ], Mode::End, r.depth),
                None => self.log_at(
                    r.depth,
                    Logged::Fizzled {
                        by: r.responder(),
                        why: format!("no `{}` is open", self.ruleset.event_kind(*event).name),
                    },
                ),
            },
            Deed::Effect { duration, def } => self.start_response_effect(r, duration, def, &params),
            // A group fires through its run (`begin_group`), never as another deed's part.
            Deed::Group(_) => {}
            Deed::Delayed(def) => {
                let t = self.timing_mut();
                let id = t.next_delayed;
                t.next_delayed += 1;
                let resp = Arc::new(ResponseDef::of_deeds(
                    ResponseKind::Delayed,
                    def.text.clone(),
                    def.trigger.clone(),
                    def.deeds.clone(),
                ));
                let turn = match def.lasting {
                    Lasting::ThisTurn => Some(self.turn),
                    Lasting::ThisGame => None,
                };
                let d = ActiveDelayed {
                    id,
                    def: resp,
                    source: r.source,
                    you: r.you,
                    targets: r.targets.clone(),
                    bound: params.to_vec(),
                    turn,
                    open_then: self.timing.periods.clone(),
                };
                self.timing_mut().delayed.push(d);
                self.log_at(
                    r.depth,
                    Logged::Delayed {
                        by: r.responder(),
                        text: def.text.clone(),
                    },
                );
            }
        }
        Ok(())
    }

    /// A deed's occurrence names an object or player that is not there now (a target no longer
    /// legal, an object gone): it does not happen, which a cost counts as not paid.
    fn names_nothing(&mut self, r: &Run, event: crate::model::ids::EventId) {
        self.timing_mut().last_happened = false;
        self.log_at(
            r.depth,
            Logged::Fizzled {
                by: r.responder(),
                why: format!(
                    "`{}` names no object or player now",
                    self.ruleset.event_kind(event).name
                ),
            },
        );
    }

    /// An occurrence a deed makes, before the next deed. A built-in event is the engine action
    /// it stands for (`counters_placed`, `changes_zone`, ...), taken as any action is; one that
    /// cannot be taken now does nothing (logged).
    fn push_occurrence(&mut self, r: &Run, occ: Occurrence, depth: u16, standing: Standing) {
        if !self.ruleset.is_builtin(occ.event) {
            return self.push_frame_with(vec![occ], Mode::Plain, depth, standing);
        }
        let made = self
            .action_of_builtin(occ.event, &occ.args)
            .and_then(|a| Ok((self.occurrences_of(&a)?, a)));
        match made {
            Ok((occs, action)) => self.push_action(occs, action, depth, standing),
            Err(e) => {
                self.timing_mut().last_happened = false;
                self.log_at(
                    depth,
                    Logged::Fizzled {
                        by: r.responder(),
                        why: e.to_string(),
                    },
                );
            }
        }
    }

    /// A response's continuous effect starts: its subjects are locked now, looked up as they were
    /// just before an object left play where the response answers that (last-known
    /// information), and its numbers are fixed now.
    pub(super) fn start_response_effect(
        &mut self,
        r: &Run,
        duration: &crate::model::effect::Duration,
        def: &Arc<crate::model::effect::EffectDef>,
        params: &[Arg],
    ) {
        use crate::model::effect::CreatedEffect;
        let Some(source) = r.source else {
            self.log_at(
                r.depth,
                Logged::Fizzled {
                    by: r.responder(),
                    why: "a rule has no source to start an effect from".into(),
                },
            );
            return;
        };
        let you = r.you.unwrap_or(self.orderer());
        let (subs, fixed) = {
            let look = match self.timing.tasks.get(r.frame) {
                Some(Task::Frame(f)) => f.snapshot.as_deref().unwrap_or(self),
                _ => self,
            };
            let sheet = &look.derived().sheet;
            let ctx =
                Ctx::new(look, sheet, Some(source), Some(you), &r.targets).with_params(params);
            let subs = crate::layers::subjects(&ctx, &def.affects);
            let fixed = crate::action::apply::fix_numbers(&ctx, def, &subs);
            (subs, fixed)
        };
        let locked = self.locked(&def.affects, &subs);
        let duration = crate::action::apply::duration_for(
            duration,
            you,
            || {
                r.targets.iter().find_map(|t| match t {
                    Subject::Object(o) => Some(self.controller_now(*o)),
                    Subject::Player(_) => None,
                })
            },
            &self.timing.periods,
        );
        let source_name = self.obj(source).name.clone();
        // Its id and timestamp are given as it starts.
        self.make(crate::kernel::Change::StartEffect(Box::new(
            CreatedEffect {
                id: 0,
                source,
                source_name,
                controller: you,
                timestamp: crate::model::ids::Timestamp(0),
                duration,
                def: fixed,
                locked,
                targets: Arc::from(&r.targets[..]),
                for_good: None,
            },
        )));
        self.log_at(
            r.depth,
            Logged::EffectStarts {
                by: r.responder(),
                subjects: subs.len(),
            },
        );
    }
}
