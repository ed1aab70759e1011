//! Running occurrences through their timing points. The work is a stack of tasks (occurrences
//! going through their points, responses going through their parts) kept in the state, so that
//! the engine can stop at any decision, hand it to the caller, and go on when it is answered; a
//! copy of the state taken there can be answered differently (AI search).

use crate::model::decision::ResponseOption;
use crate::model::occurrence::{LogEntry, Logged, Occurrence, Responder, Why};
use crate::state::{Cand, Key, Mode, Occ, Run, Stage, StepState};

use crate::condition::eval::Ctx;
use crate::model::condition::Subject;
use crate::model::decision::{Choice, DecisionRequest};
use crate::model::error::ActionError;
use crate::model::ids::{ClassId, EventId, ObjectId, PlayerId};
use crate::model::response::{ArgExpr, Deed, ResponseDef, ResponseKind, Standing};
use crate::model::timing::{Point, Responds, Taking};
use crate::model::value::{Ability, Arg, Value};
use crate::state::GameState;
/// The timing state of a game, its tasks and frames, over this game state.
use crate::state::{Frame, Task, Timing};
use std::sync::Arc;

impl GameState {
    /// The log of occurrences and what answered each, first to last.
    pub fn log(&self) -> Vec<&LogEntry> {
        self.timing.log.entries()
    }

    /// The timing state: periods open, the log.
    pub fn timing(&self) -> &Timing {
        &self.timing
    }

    /// An occurrence of an event, taken through its timing points. It stops at the first decision
    /// (see [`GameState::pending_decision`]); [`GameState::decide`] goes on from there.
    pub fn occur(&mut self, occurrence: Occurrence) -> Result<(), ActionError> {
        self.occur_together(vec![occurrence])
    }

    /// Occurrences that happen at once ("two Personalities destroyed in battle resolution"): they
    /// share their timing points, and the active player orders their responses as they happen.
    pub fn occur_together(&mut self, occurrences: Vec<Occurrence>) -> Result<(), ActionError> {
        self.start(occurrences, Mode::Plain)
    }

    /// A period begins ("your Dynasty Phase"): "before" it begins, it begins, "after" it begins.
    pub fn begin(&mut self, occurrence: Occurrence) -> Result<(), ActionError> {
        let kind = self.check_occurrence(&occurrence)?;
        if !kind.period {
            return Err(ActionError::BadOccurrence(format!(
                "`{}` is not a period: it happens, it does not begin",
                kind.name
            )));
        }
        self.start(vec![occurrence], Mode::Begin)
    }

    /// The latest period of this kind that is open ends: "before" it ends, it ends, "after" it
    /// ends (outside it).
    pub fn end(&mut self, event: EventId) -> Result<(), ActionError> {
        let Some(occ) = self.latest_open(event) else {
            return Err(ActionError::BadOccurrence(format!(
                "no `{}` has begun",
                self.ruleset
                    .events
                    .get(event.index())
                    .map_or("?", |e| &*e.name)
            )));
        };
        self.start(vec![occ], Mode::End)
    }

    /// The latest period of this kind that is open: the one that ends next.
    pub(super) fn latest_open(&self, event: EventId) -> Option<Occurrence> {
        self.timing
            .periods
            .iter()
            .rev()
            .find(|o| o.event == event)
            .cloned()
    }

    pub(super) fn check_occurrence(
        &self,
        o: &Occurrence,
    ) -> Result<&crate::model::event::EventKind, ActionError> {
        let Some(kind) = self.ruleset.events.get(o.event.index()) else {
            return Err(ActionError::BadOccurrence(format!(
                "no event kind has id {}",
                o.event.0
            )));
        };
        if self.ruleset.is_builtin(o.event) {
            // Its change is the engine action it stands for: `apply` that action.
            return Err(ActionError::BadOccurrence(format!(
                "`{}` is a built-in event: it happens through the engine's own actions (`apply`)",
                kind.name
            )));
        }
        if kind.params.len() != o.args.len() {
            return Err(ActionError::BadOccurrence(format!(
                "`{}` takes {} argument(s), got {}",
                kind.name,
                kind.params.len(),
                o.args.len()
            )));
        }
        for (p, a) in kind.params.iter().zip(&o.args) {
            let ok = p.kind.admits(a)
                && match a {
                    Arg::Object(x) => x.index() < self.objects.len(),
                    Arg::Player(x) => x.index() < self.players.len(),
                    Arg::Number(_) => true,
                    Arg::Zone(z) => z.index() < self.ruleset.zones.len(),
                    Arg::Counter(c) => c.index() < self.ruleset.counters.len(),
                    Arg::Property(q) => q.index() < self.ruleset.props.len(),
                    Arg::Class(k) => match (p.kind, self.content.classes.get(k.index())) {
                        (crate::model::event::ParamKind::Class(Some(t)), Some(c)) => {
                            c.object_type == Some(t)
                        }
                        (_, c) => c.is_some(),
                    },
                };
            if !ok {
                return Err(ActionError::BadOccurrence(format!(
                    "`{}`'s `{}` must be {}, got {:?}",
                    kind.name,
                    p.name,
                    match p.kind {
                        crate::model::event::ParamKind::Object => "an object of this game",
                        crate::model::event::ParamKind::Player => "a player of this game",
                        crate::model::event::ParamKind::Number => "a number",
                        crate::model::event::ParamKind::Zone => "a zone of this ruleset",
                        crate::model::event::ParamKind::Counter => "a counter kind of this ruleset",
                        crate::model::event::ParamKind::Property =>
                            "a player property of this ruleset",
                        crate::model::event::ParamKind::Class(_) =>
                            "an object class of this content, of the parameter's type",
                        crate::model::event::ParamKind::Any => "an object or a player of this game",
                    },
                    a
                )));
            }
        }
        Ok(kind)
    }

    pub(super) fn start(
        &mut self,
        occurrences: Vec<Occurrence>,
        mode: Mode,
    ) -> Result<(), ActionError> {
        if self.is_over() {
            return Err(ActionError::GameOver);
        }
        if self.pending.is_some() {
            return Err(ActionError::DecisionPending);
        }
        if !self.timing.tasks.is_empty() {
            return Err(ActionError::BadOccurrence(
                "an occurrence is under way: answer its decisions first".into(),
            ));
        }
        for o in &occurrences {
            self.check_occurrence(o)?;
        }
        self.push_frame(occurrences, mode, 0);
        self.run_timing()
    }

    pub(crate) fn timing_mut(&mut self) -> &mut Timing {
        &mut self.timing
    }

    pub(crate) fn push_frame(&mut self, occurrences: Vec<Occurrence>, mode: Mode, depth: u16) {
        self.push_frame_with(occurrences, mode, depth, Standing::default());
    }

    /// `push_frame`, the occurrences standing as a deed made them ("even if he cannot", "cannot
    /// be prevented").
    pub(crate) fn push_frame_with(
        &mut self,
        occurrences: Vec<Occurrence>,
        mode: Mode,
        depth: u16,
        standing: Standing,
    ) {
        // A card's `leaves_play` stands or falls with its `changes_zone` (one pass, by card).
        let b = self.builtin;
        let mut occs: Vec<Occ> = occurrences
            .into_iter()
            .enumerate()
            .map(|(k, occ)| Occ {
                began: self.incarnations(&occ),
                standing,
                negated: false,
                occ,
                alive: true,
                happened: mode == Mode::AfterOnly,
                link: k,
            })
            .collect();
        if occs.iter().any(|o| o.occ.event == b.leaves_play) {
            let mut moving: rustc_hash::FxHashMap<Arg, usize> = Default::default();
            for (k, o) in occs.iter().enumerate() {
                if let (true, Some(card)) = (o.occ.event == b.changes_zone, o.occ.args.first()) {
                    moving.entry(*card).or_insert(k);
                }
            }
            for o in occs.iter_mut().filter(|o| o.occ.event == b.leaves_play) {
                if let Some(&root) = o.occ.args.first().and_then(|card| moving.get(card)) {
                    o.link = root;
                }
            }
        }
        let frame = Frame {
            occs,
            mode,
            stage: 0,
            step: 0,
            st: StepState::Fresh,
            depth,
            snapshot: None,
            used: Vec::new(),
            action: None,
            state_checks: false,
            seen: self.next_timestamp,
            unchanged_at: u64::MAX,
        };
        let t = self.timing_mut();
        if mode != Mode::End {
            for o in &frame.occs {
                let occurrence = o.occ.clone();
                t.log.push(LogEntry {
                    depth,
                    what: if mode == Mode::AfterOnly {
                        // It has happened already (the objects have entered).
                        Logged::Happened { occurrence }
                    } else {
                        Logged::Starts { occurrence }
                    },
                });
            }
        }
        t.tasks.push(Task::Frame(Box::new(frame)));
        let top = t.tasks.len() - 1;
        if mode == Mode::Plain {
            self.fail_unchanging(top);
            let made = self.timing.made;
            self.frame_mut(top).unchanged_at = made;
        }
        if matches!(mode, Mode::Plain | Mode::Begin) {
            self.fail_prohibited(top);
        }
    }

    /// A standing prohibition ("cannot") makes an occurrence it matches fail before any step:
    /// nothing answers it, and nothing is substituted for it (CR 101.2: "cannot" beats "can"),
    /// unless the deed that made it says it happens even so.
    pub(crate) fn fail_prohibited(&mut self, fi: usize) {
        if !self.content.has_prohibitions(&self.ruleset) {
            return;
        }
        let f = self.frame(fi);
        let forbidden: Vec<(usize, Responder)> = f
            .occs
            .iter()
            .enumerate()
            .filter(|(_, o)| o.alive && !o.standing.despite_prohibitions)
            .filter_map(|(k, o)| Some((k, self.prohibition_of(&o.occ)?)))
            .collect();
        if forbidden.is_empty() {
            return;
        }
        for (k, by) in forbidden {
            self.end_occurrences(fi, &[k], |occurrence| Logged::Prohibited {
                occurrence,
                by: by.clone(),
            });
        }
    }

    /// The first prohibition that forbids an occurrence: a rule of the ruleset, or an object's
    /// (while it works where it is and has the ability, CR 113.2c), in id order.
    pub(crate) fn prohibition_of(&self, occ: &Occurrence) -> Option<Responder> {
        if !self.content.has_prohibitions(&self.ruleset) {
            return None;
        }
        let prohibits = |r: &ResponseDef| r.kind == ResponseKind::Prohibition;
        for r in &self.ruleset.rules {
            if prohibits(r)
                && listens(r, occ.event, Point::Before)
                && self.answers(r, occ, None, Some(self.orderer()), &[], &occ.args)
            {
                return Some(Responder {
                    source: None,
                    text: r.text.clone(),
                });
            }
        }
        let listening = self.content.listeners(occ.event, Point::Before);
        if !listening
            .iter()
            .any(|&(c, i)| prohibits(&self.content.class_def(c).responses[i as usize]))
        {
            return None;
        }
        let follow = self.content.responses_follow_abilities(&self.ruleset);
        let mut objs: Vec<(ObjectId, ClassId, u16)> = Vec::new();
        for &(class, ri) in listening {
            if !prohibits(&self.content.class_def(class).responses[ri as usize]) {
                continue;
            }
            self.holders(class, ri, follow, &mut objs);
        }
        objs.sort_unstable();
        objs.into_iter().find_map(|(obj, class, ri)| {
            let def = &self.content.class_def(class).responses[ri as usize];
            let works = self.source_works(obj, def)
                && (!(follow || def.granted) || self.has_response(obj, class, ri));
            let you = self.controller_now(obj);
            (works && self.answers(def, occ, Some(obj), Some(you), &[], &occ.args)).then(|| {
                Responder {
                    source: Some(obj),
                    text: def.text.clone(),
                }
            })
        })
    }

    /// Failure takes precedence over effects: an occurrence that would change nothing (putting a
    /// card into a state it is already in) does not happen, and nothing answers it.
    pub(crate) fn fail_unchanging(&mut self, fi: usize) {
        let mut failing: Vec<usize> = Vec::new();
        for (k, o) in self.frame(fi).occs.iter().enumerate() {
            if o.alive && self.changes_nothing(&o.occ) {
                failing.push(k);
            }
        }
        if !failing.is_empty() {
            self.fail(fi, &failing);
        }
    }

    /// The sum of the incarnations of the objects an occurrence is about.
    pub(super) fn incarnations(&self, occ: &Occurrence) -> u64 {
        occ.args
            .iter()
            .filter_map(|a| match a {
                Arg::Object(o) => self.get_object(*o).map(|x| u64::from(x.incarnation)),
                _ => None,
            })
            .sum()
    }

    /// A loop of responses: the top of the task stack is the same responses answering the same
    /// events, three times over. Named once, in the order they come: the occurrences (by event)
    /// and the responses that answer them.
    pub(super) fn repeating_cycle(&self) -> Option<String> {
        #[derive(PartialEq)]
        enum Sig {
            Frame(Vec<EventId>),
            Run(Option<ClassId>, Arc<str>),
            Batch,
        }
        let tasks = &self.timing.tasks;
        let sig: Vec<Sig> = tasks
            .iter()
            .rev()
            .take(3 * 64)
            .map(|t| match t {
                Task::Frame(f) => Sig::Frame(f.occs.iter().map(|o| o.occ.event).collect()),
                Task::Run(r) => Sig::Run(
                    r.source.and_then(|o| self.get_object(o)).map(|o| o.class),
                    r.def.text.clone(),
                ),
                Task::Batch(_) => Sig::Batch,
            })
            .collect();
        let k =
            (1..=64).find(|&k| sig.len() >= 3 * k && (0..2 * k).all(|i| sig[i] == sig[i + k]))?;
        let steps: Vec<String> = tasks[tasks.len() - k..]
            .iter()
            .map(|t| match t {
                Task::Frame(f) => f
                    .occs
                    .iter()
                    .map(|o| format!("`{}`", self.ruleset.event_kind(o.occ.event).name))
                    .collect::<Vec<_>>()
                    .join(", "),
                Task::Run(r) => {
                    let who = r
                        .source
                        .and_then(|o| self.get_object(o))
                        .map_or_else(|| "a rule".to_string(), |o| format!("`{}`", o.name));
                    format!("{who}'s \"{}\"", r.def.text)
                }
                Task::Batch(_) => "a batch".to_string(),
            })
            .collect();
        Some(format!(
            "a loop: these responses answer each other's occurrences without end (stopped at {} tasks deep, the same cycle three times over): {}, and again",
            tasks.len(),
            steps.join(" → ")
        ))
    }

    /// CR 400.7: an occurrence about an object that changed zones since it began (a response at
    /// its "before" point moved it) is not about the new object: it does not happen. Checked
    /// until its change is made.
    pub(super) fn fail_moved(&mut self, fi: usize) {
        if self.frame(fi).seen == self.next_timestamp {
            return;
        }
        let now = self.next_timestamp;
        self.frame_mut(fi).seen = now;
        let f = self.frame(fi);
        let moved: Vec<usize> = f
            .occs
            .iter()
            .enumerate()
            .filter(|(_, o)| o.alive && self.incarnations(&o.occ) != o.began)
            .map(|(k, _)| k)
            .collect();
        if !moved.is_empty() {
            self.end_occurrences(fi, &moved, |occurrence| Logged::Moved { occurrence });
        }
    }

    /// These occurrences of the frame fail: they do not happen, and nothing answers them.
    pub(super) fn fail(&mut self, fi: usize, which: &[usize]) {
        self.end_occurrences(fi, which, |occurrence| Logged::Failed { occurrence });
    }

    /// These occurrences of the frame will not happen (failed, prohibited, about a moved card):
    /// nothing answers them from now on, and the log says why with `entry`.
    fn end_occurrences(
        &mut self,
        fi: usize,
        which: &[usize],
        mut entry: impl FnMut(Occurrence) -> Logged,
    ) {
        let depth = self.frame(fi).depth;
        for &k in which {
            let o = &mut self.frame_mut(fi).occs[k];
            o.alive = false;
            let occurrence = o.occ.clone();
            self.log_at(depth, entry(occurrence));
        }
    }

    /// Who orders conflicts: the active player; between turns, the player who takes the next
    /// turn.
    pub fn orderer(&self) -> PlayerId {
        // Asked in the order of their cost: a turn has begun only where the ruleset has turns.
        let between_turns = || {
            !self
                .timing
                .periods
                .iter()
                .any(|o| self.ruleset.event_kind(o.event).turn)
                && self.ruleset.events.iter().any(|e| e.turn)
        };
        if self.timing.turns_begun > 0 && between_turns() {
            self.next_player(self.active)
        } else {
            self.active
        }
    }

    /// The kinds of responses that come in one order at this frame's points (`any order:`):
    /// those the events of all its live occurrences name.
    pub(super) fn any_order(&self, fi: usize) -> Vec<Responds> {
        let mut live = self.frame(fi).occs.iter().filter(|o| o.alive);
        let Some(first) = live.next() else {
            return Vec::new();
        };
        let kinds = &self.ruleset.event_kind(first.occ.event).any_order;
        if live.all(|o| self.ruleset.event_kind(o.occ.event).any_order == *kinds) {
            kinds.clone()
        } else {
            Vec::new()
        }
    }

    /// Whether `any_order(fi)` holds `responds`, read without copying the list, and with the
    /// first occurrence's kinds asked before the others' (at most steps they do not hold it).
    pub(super) fn any_order_has(&self, fi: usize, responds: Responds) -> bool {
        let mut live = self.frame(fi).occs.iter().filter(|o| o.alive);
        let Some(first) = live.next() else {
            return false;
        };
        let kinds = &self.ruleset.event_kind(first.occ.event).any_order;
        kinds.contains(&responds)
            && live.all(|o| self.ruleset.event_kind(o.occ.event).any_order == *kinds)
    }

    /// Who orders the responses to the frame's occurrences: the player its event names for that
    /// (a payment's payer), else the active player.
    pub(super) fn orderer_of(&self, fi: usize) -> PlayerId {
        let f = self.frame(fi);
        f.occs
            .iter()
            .find_map(|o| {
                let i = self.ruleset.event_kind(o.occ.event).ordered_by?;
                match o.occ.args.get(i as usize) {
                    Some(Arg::Player(p)) => Some(*p),
                    _ => None,
                }
            })
            .unwrap_or_else(|| self.orderer())
    }

    /// Runs the work under way until it is done or a decision is pending.
    pub(crate) fn run_timing(&mut self) -> Result<(), ActionError> {
        let mut guard: u64 = 0;
        while self.pending.is_none() {
            let Some(top) = self.timing.tasks.len().checked_sub(1) else {
                // Nothing under way: the turn structure goes on, if a game is started.
                if self.timing.flow.is_none() || self.is_over() {
                    return Ok(());
                }
                guard += 1;
                self.advance_flow()?;
                continue;
            };
            guard += 1;
            if guard > 10_000_000 {
                return Err(ActionError::BadOccurrence(
                    "occurrences keep causing each other: stopped after 10,000,000 steps".into(),
                ));
            }
            let depth = self.timing.tasks.len();
            if depth >= 256 && depth & 63 == 0 {
                if let Some(cycle) = self.repeating_cycle() {
                    return Err(ActionError::BadOccurrence(cycle));
                }
            }
            if self.timing.tasks.len() > 10_000 {
                return Err(ActionError::BadOccurrence(
                    "occurrences nested 10,000 deep: a response keeps answering its own occurrences"
                        .into(),
                ));
            }
            match &self.timing.tasks[top] {
                Task::Frame(_) => self.advance_frame(top)?,
                Task::Run(_) => {
                    self.timing_mut().made += 1;
                    self.advance_run(top)?
                }
                Task::Batch(_) => {
                    self.timing_mut().made += 1;
                    self.advance_batch(top)?
                }
            }
        }
        Ok(())
    }

    pub(crate) fn frame(&self, i: usize) -> &Frame {
        match &self.timing.tasks[i] {
            Task::Frame(f) => f,
            _ => unreachable!("task {i} is a frame"),
        }
    }

    pub(crate) fn frame_mut(&mut self, i: usize) -> &mut Frame {
        match &mut self.timing_mut().tasks[i] {
            Task::Frame(f) => f,
            _ => unreachable!("task {i} is a frame"),
        }
    }

    pub(super) fn run_mut(&mut self, i: usize) -> &mut Run {
        match &mut self.timing_mut().tasks[i] {
            Task::Run(r) => r,
            _ => unreachable!("task {i} is a run"),
        }
    }

    pub(crate) fn log_at(&mut self, depth: u16, what: Logged) {
        self.timing_mut().log.push(LogEntry { depth, what });
    }

    pub(super) fn advance_frame(&mut self, fi: usize) -> Result<(), ActionError> {
        let f = self.frame(fi);
        let stages = f.mode.stages();
        let Some(&stage) = stages.get(f.stage) else {
            return self.finish_frame(fi);
        };
        if f.mode == Mode::Plain && stage != Stage::At(Point::After) {
            self.fail_moved(fi);
        }
        match stage {
            Stage::Change => {
                self.make_changes(fi)?;
                self.frame_mut(fi).stage += 1;
                // Only a change can end the game (a player loses); it ends at once.
                if self.is_over() {
                    self.end_game();
                }
            }
            Stage::Begin => {
                let f = self.frame(fi);
                let occ = f.occs[0].occ.clone();
                let depth = f.depth;
                let turn = self.ruleset.event_kind(occ.event).turn;
                if turn {
                    let player = match occ.args.first() {
                        Some(Arg::Player(p)) => Some(*p),
                        _ => None,
                    };
                    let next = self.timing.turns_begun > 0;
                    self.make(crate::kernel::Change::TurnBegins { player, next });
                    self.timing_mut().turns_begun += 1;
                }
                self.log_at(
                    depth,
                    Logged::Period {
                        occurrence: occ.clone(),
                        begins: true,
                    },
                );
                let f = self.frame_mut(fi);
                f.occs[0].happened = true;
                f.stage += 1;
                self.timing_mut().periods.push(occ);
            }
            Stage::End => {
                let f = self.frame(fi);
                let occ = f.occs[0].occ.clone();
                let depth = f.depth;
                let turn = self.ruleset.event_kind(occ.event).turn;
                let t = self.timing_mut();
                if let Some(k) = t.periods.iter().rposition(|o| *o == occ) {
                    t.periods.remove(k);
                }
                if turn {
                    self.make(crate::kernel::Change::ThisTurnEnds);
                }
                self.make(crate::kernel::Change::PeriodEnds(occ.clone()));
                self.log_at(
                    depth,
                    Logged::Period {
                        occurrence: occ,
                        begins: false,
                    },
                );
                let f = self.frame_mut(fi);
                f.occs[0].happened = true;
                f.stage += 1;
            }
            Stage::At(point) => {
                if !(point == Point::After && self.hold_after(fi)) {
                    self.advance_point(fi, point)?;
                }
            }
        }
        Ok(())
    }

    /// `after: once resolved`: a frame reaching its "after" point while an effect resolves
    /// (the nearest run below it that holds) waits in that run until it is complete, if
    /// anything answers it there. Its occurrences have happened: for a cost, it was paid.
    fn hold_after(&mut self, fi: usize) -> bool {
        if !self.ruleset.timing.after_once_resolved {
            return false;
        }
        let f = self.frame(fi);
        let fresh = f.step == 0 && matches!(f.st, StepState::Fresh);
        if !fresh || !matches!(f.mode, Mode::Plain | Mode::AfterOnly) {
            return false;
        }
        // The run that holds first (most frames have none under them), then the listeners.
        let Some(ri) = self.timing.tasks[..fi]
            .iter()
            .rposition(|t| matches!(t, Task::Run(r) if r.holds.is_some()))
        else {
            return false;
        };
        if !self.point_has_listeners(fi, Point::After) {
            return false;
        }
        let t = self.timing_mut();
        let Some(Task::Frame(frame)) = t.tasks.pop() else {
            unreachable!("task {fi} is the frame at the top")
        };
        t.last_happened = frame.occs.iter().any(|o| o.happened);
        if let Some(Task::Run(r)) = t.tasks.get_mut(ri) {
            r.holds.get_or_insert_with(Vec::new).push(*frame);
        }
        true
    }

    /// A run is over: what it held comes now, the first to happen first.
    pub(super) fn end_run(&mut self, ri: usize) {
        let held = match self.timing_mut().tasks.get_mut(ri) {
            Some(Task::Run(r)) => r.holds.take().unwrap_or_default(),
            _ => Vec::new(),
        };
        let t = self.timing_mut();
        t.tasks.truncate(ri);
        for frame in held.into_iter().rev() {
            t.tasks.push(Task::Frame(Box::new(frame)));
        }
    }

    /// CR 104.1: the game is over, and ends at once: nothing under way goes on, no delayed
    /// effect waits, and the log says who won.
    fn end_game(&mut self) {
        let winner = self.winner().flatten();
        let t = self.timing_mut();
        t.tasks.clear();
        t.delayed.clear();
        self.log_at(0, Logged::GameOver { winner });
    }

    pub(super) fn finish_frame(&mut self, fi: usize) -> Result<(), ActionError> {
        let f = self.frame(fi);
        if f.mode == Mode::End && self.timing.delayed.iter().any(|d| !d.open_then.is_empty()) {
            // The period that was in progress has ended: its next end is a later period's.
            let ended = f.occs[0].occ.clone();
            for d in &mut self.timing_mut().delayed {
                if let Some(k) = d.open_then.iter().position(|o| *o == ended) {
                    d.open_then.remove(k);
                }
            }
        }
        let f = self.frame(fi);
        let happened = f.occs.iter().any(|o| o.happened);
        let t = self.timing_mut();
        t.tasks.truncate(fi);
        t.last_happened = happened;
        Ok(())
    }

    /// Whether anything could answer an occurrence of the frame at this point: a class's
    /// response, a rule or a delayed effect listening to its event there. Most points of most
    /// occurrences have none, and cost nothing more.
    pub(crate) fn point_has_listeners(&self, fi: usize, point: Point) -> bool {
        let f = self.frame(fi);
        f.occs.iter().filter(|o| o.alive).any(|o| {
            let e = o.occ.event;
            self.content.anything_listens(&self.ruleset, e, point)
                || self
                    .timing
                    .delayed
                    .iter()
                    .any(|d| listens(&d.def, e, point))
        })
    }

    /// The state a frame's responses are looked for in at a point: after the occurrence, the
    /// state as it happened (last-known information, its snapshot), else the state now.
    fn looked_in(&self, fi: usize, point: Point) -> &GameState {
        self.frame(fi)
            .snapshot
            .as_deref()
            .filter(|_| point == Point::After)
            .unwrap_or(self)
    }

    /// Whether anything could answer an occurrence of the frame at this point in a step that
    /// takes responses of this kind: a rule, a class's response held by an object, or a delayed
    /// effect of that kind listening to its event there. A step with none is over at once, as it
    /// would be once it found no candidate.
    fn step_has_listeners(&self, fi: usize, point: Point, responds: Responds) -> bool {
        self.frame_listened(fi, point, Some(responds), false)
    }

    /// Whether any step at this point could find a candidate: `step_has_listeners` for a
    /// response of any kind. With none, every step would be over at once, as each found none,
    /// and the point is passed in one go; but at "before" and "when" a step's end also marks a
    /// change whose size is zero as no change (`end_step`), so a frame with one goes step by
    /// step.
    fn point_may_answer(&self, fi: usize, point: Point) -> bool {
        self.frame_listened(fi, point, None, true)
    }

    /// Whether a live occurrence of the frame may be answered at this point by a response of
    /// the kind `responds` (any kind for `None`): a rule, a class's response held by an object
    /// (or any, where responses move between objects), or a delayed effect listening to its
    /// event there; with `zero`, an occurrence of size zero at "before" or "when" counts too.
    fn frame_listened(
        &self,
        fi: usize,
        point: Point,
        responds: Option<Responds>,
        zero: bool,
    ) -> bool {
        let f = self.frame(fi);
        // A class's response is held by its objects (where responses do not move between
        // objects), in the state `candidates` looks in: a class with none has no candidate.
        let look = self.looked_in(fi, point);
        let moving = self.content.responses_follow_abilities(&self.ruleset)
            && self.content.responses_move(&self.ruleset);
        let kind = |r: Responds| responds.is_none_or(|want| want == r);
        f.occs.iter().filter(|o| o.alive).any(|o| {
            let e = o.occ.event;
            let sized_zero = zero
                && matches!(point, Point::Before | Point::When)
                && self.ruleset.event_kind(e).amount.is_some_and(|a| {
                    amount_of(&o.occ.args, crate::model::event::Amount::Param(a)) == 0
                });
            sized_zero
                || self.content.listeners(e, point).iter().any(|&(class, ri)| {
                    responds.is_none_or(|want| {
                        self.content.class_def(class).responses[ri as usize]
                            .kind
                            .responds()
                            == want
                    }) && (moving || !look.objects_of_class(class).is_empty())
                })
                || self
                    .content
                    .rules_listening(&self.ruleset, e, point)
                    .iter()
                    .any(|&i| kind(self.ruleset.rules[i as usize].kind.responds()))
                || self
                    .timing
                    .delayed
                    .iter()
                    .any(|d| kind(d.def.kind.responds()) && listens(&d.def, e, point))
        })
    }

    pub(super) fn advance_point(&mut self, fi: usize, point: Point) -> Result<(), ActionError> {
        // The step's parts are read out, not the ruleset's pointer copied: games on other
        // threads share that pointer, and its count would pass between cores at every point.
        let f = self.frame(fi);
        if f.step == 0
            && matches!(f.st, StepState::Fresh)
            && (!self.point_has_listeners(fi, point)
                || (super::shortcuts() && !self.point_may_answer(fi, point)))
        {
            let f = self.frame_mut(fi);
            f.stage += 1;
            return Ok(());
        }
        let f = self.frame(fi);
        let si = f.step;
        let Some(step) = self.ruleset.timing.steps.get(si) else {
            let f = self.frame_mut(fi);
            f.stage += 1;
            f.step = 0;
            f.st = StepState::Fresh;
            return Ok(());
        };
        let (responds, taking) = (step.responds, step.taking);
        let name = |s: &Self| s.ruleset.timing.steps[si].name.clone();
        if !f.occs.iter().any(|o| o.alive) {
            let f = self.frame_mut(fi);
            f.stage = f.mode.stages().len();
            return Ok(());
        }
        match &f.st {
            StepState::Fresh => {
                // A step nothing of its kind listens to (and that takes in no later step's
                // responses, `any order:`) finds no candidate: it is over at once.
                if super::shortcuts()
                    && !self.step_has_listeners(fi, point, responds)
                    && !self.any_order_has(fi, responds)
                {
                    self.end_step(fi, point);
                    // The next step at once (as many calls deep as the ruleset has steps).
                    return self.advance_point(fi, point);
                }
                let st = match taking {
                    Taking::Ordered | Taking::EachPlayerInTurn | Taking::Declared => {
                        let mut cands = self.candidates(fi, point, responds, None);
                        // `any order:` the orderer's own responses of the later steps it names
                        // come in the same order, which the orderer chooses.
                        if self.any_order_has(fi, responds) {
                            let joined = self.any_order(fi);
                            let who = self.orderer_of(fi);
                            let steps = &self.ruleset.timing.steps;
                            for later in &steps[si + 1..] {
                                if later.responds != responds && joined.contains(&later.responds) {
                                    for c in self.candidates(fi, point, later.responds, Some(who)) {
                                        if !cands.contains(&c) {
                                            cands.push(c);
                                        }
                                    }
                                }
                            }
                        }
                        if cands.is_empty() && super::shortcuts() {
                            // No candidate: the step is over now, as its next turn would find.
                            self.end_step(fi, point);
                            return Ok(());
                        }
                        StepState::Ordered(cands)
                    }
                    Taking::ActionRound => StepState::Round {
                        turn: self.orderer(),
                        passes: 0,
                    },
                };
                self.frame_mut(fi).st = st;
            }
            StepState::Ordered(cands) => {
                let valid: Vec<Cand> = cands
                    .iter()
                    .copied()
                    .filter(|c| self.still_valid(fi, point, *c))
                    .collect();
                // A delayed effect happens once and is gone: one still listed here means the
                // procedure itself is broken, which is an error, not an abort.
                let gone = |id| !self.timing.delayed.iter().any(|d| d.id == id);
                if valid
                    .iter()
                    .any(|c| matches!(c.key, Key::Delayed(id) if gone(id)))
                {
                    return Err(ActionError::BadOccurrence(
                        "internal error: a delayed effect that has happened is offered again"
                            .into(),
                    ));
                }
                if valid.is_empty() {
                    self.end_step(fi, point);
                    return Ok(());
                }
                // Responses joined from a later step (`any order:`) stay optional: the orderer
                // may take them or leave them.
                let optional = |c: &Cand| self.response_of(c.key).0.kind.responds() != responds;
                // Player by player: only the first player in turn order who has any.
                let (valid, player) = if taking == Taking::EachPlayerInTurn {
                    self.first_players(fi, valid)
                } else {
                    (valid, self.orderer_of(fi))
                };
                // In declared order no one chooses: the first by the declared rule happens.
                let declared = (taking == Taking::Declared)
                    .then(|| valid.iter().copied().min_by_key(|c| self.declared_key(*c)))
                    .flatten();
                match (valid.len(), declared) {
                    (0, _) => self.end_step(fi, point),
                    (_, Some(c)) => {
                        self.drop_cand(fi, c);
                        let step = name(self);
                        self.start_run(fi, point, c, Why::Only, &step)?;
                    }
                    (1, None) if !optional(&valid[0]) => {
                        self.drop_cand(fi, valid[0]);
                        let step = name(self);
                        self.start_run(fi, point, valid[0], Why::Only, &step)?;
                    }
                    _ => {
                        let options = self.options(fi, &valid);
                        let step = name(self);
                        let request = if valid.iter().all(optional) {
                            DecisionRequest::React {
                                player,
                                step,
                                options,
                            }
                        } else {
                            DecisionRequest::ChooseNext {
                                player,
                                step,
                                options,
                            }
                        };
                        self.timing_mut().offered = valid;
                        self.pending = Some(Arc::new(request));
                    }
                }
            }
            &StepState::Round { turn, passes } => {
                if passes >= self.players_in_game() {
                    self.end_step(fi, point);
                    return Ok(());
                }
                let mine = self.candidates(fi, point, responds, Some(turn));
                if mine.is_empty() {
                    // A player with no Reaction to take passes without being asked.
                    let next = self.next_player(turn);
                    self.frame_mut(fi).st = StepState::Round {
                        turn: next,
                        passes: passes + 1,
                    };
                } else {
                    let options = self.options(fi, &mine);
                    self.timing_mut().offered = mine;
                    self.pending = Some(Arc::new(DecisionRequest::React {
                        player: turn,
                        step: name(self),
                        options,
                    }));
                }
            }
        }
        Ok(())
    }

    /// The responses of the first player, in turn order from the orderer, who has any, and that
    /// player (a rulebook rule or a delayed effect with no controller is the orderer's).
    fn first_players(&self, fi: usize, valid: Vec<Cand>) -> (Vec<Cand>, PlayerId) {
        let orderer = self.orderer_of(fi);
        let whose = |c: &Cand| self.response_of(c.key).2.unwrap_or(orderer);
        let mut p = orderer;
        for _ in 0..self.players.len() {
            if valid.iter().any(|c| whose(c) == p) {
                return (valid.into_iter().filter(|c| whose(c) == p).collect(), p);
            }
            p = self.next_player(p);
        }
        (valid, orderer)
    }

    /// The place of a response in a step taken in declared order (`Taking::Declared`): rules
    /// in the order written, then objects' responses by higher priority, older timestamp, id,
    /// then their place in the class; delayed effects last, by when they were set up.
    fn declared_key(&self, c: Cand) -> (u8, i64, u64, u32, u32, usize) {
        match c.key {
            Key::Rule(i) => (0, 0, 0, 0, i as u32, c.occ),
            Key::Object(o, class, i) => {
                let p = self.content.class_def(class).responses[i as usize].priority;
                let ts = self.get_object(o).map_or(u64::MAX, |x| x.timestamp.0);
                (1, -(p as i64), ts, o.0, i as u32, c.occ)
            }
            Key::Delayed(id) => (2, 0, 0, 0, id, c.occ),
        }
    }

    pub(super) fn drop_cand(&mut self, fi: usize, c: Cand) {
        if let StepState::Ordered(cands) = &mut self.frame_mut(fi).st {
            cands.retain(|x| *x != c);
        }
    }

    /// The step is over. At "before" and "when", a change whose size is now zero is no longer a
    /// change of its kind: no Reactions to it, no later triggers.
    pub(super) fn end_step(&mut self, fi: usize, point: Point) {
        let mut zero = Vec::new();
        if matches!(point, Point::Before | Point::When) {
            let f = self.frame(fi);
            for (k, o) in f.occs.iter().enumerate() {
                let kind = self.ruleset.event_kind(o.occ.event);
                if let Some(a) = kind.amount {
                    if o.alive && amount_of(&o.occ.args, crate::model::event::Amount::Param(a)) == 0
                    {
                        zero.push(k);
                    }
                }
            }
        }
        let depth = self.frame(fi).depth;
        let f = self.frame_mut(fi);
        f.step += 1;
        f.st = StepState::Fresh;
        let mut logged = Vec::new();
        for k in zero {
            f.occs[k].alive = false;
            logged.push(f.occs[k].occ.clone());
        }
        for occurrence in logged {
            self.log_at(depth, Logged::Zero { occurrence });
        }
    }

    pub(super) fn options(&self, fi: usize, cands: &[Cand]) -> Vec<ResponseOption> {
        let f = self.frame(fi);
        cands
            .iter()
            .map(|c| {
                let (def, source, ..) = self.response_of(c.key);
                ResponseOption {
                    source,
                    text: def.text.clone(),
                    answering: f.occs[c.occ].occ.clone(),
                }
            })
            .collect()
    }

    /// A response by key: its definition, source, "you", targets so far and bound arguments.
    #[allow(clippy::type_complexity)]
    pub(super) fn response_of(
        &self,
        key: Key,
    ) -> (
        Arc<ResponseDef>,
        Option<ObjectId>,
        Option<PlayerId>,
        Vec<Subject>,
        Option<Vec<Arg>>,
    ) {
        match key {
            Key::Object(o, class, i) => {
                let def = self.content.class_def(class).responses[i as usize].clone();
                (def, Some(o), Some(self.controller_now(o)), Vec::new(), None)
            }
            Key::Rule(i) => (
                self.ruleset.rules[i as usize].clone(),
                None,
                Some(self.orderer()),
                Vec::new(),
                None,
            ),
            Key::Delayed(id) => {
                let d = self
                    .timing
                    .delayed
                    .iter()
                    .find(|d| d.id == id)
                    .expect("a delayed effect offered is waiting");
                (
                    d.def.clone(),
                    d.source,
                    d.you,
                    d.targets.clone(),
                    Some(d.bound.clone()),
                )
            }
        }
    }

    pub(super) fn controller_now(&self, o: ObjectId) -> PlayerId {
        match self.controller_char {
            Some(c) if self.controller_written => {
                match self.derived().sheet.objects[o.index()][c.index()] {
                    crate::model::value::Value::Player(Some(p)) => p,
                    _ => self.obj(o).controller,
                }
            }
            // No layer changes control: the derived controller is the base one.
            _ => self.obj(o).controller,
        }
    }

    /// The responses of one kind that answer an occurrence of the frame at this point (of one
    /// player's, for an action round), in a fixed order: by occurrence, then ruleset rules,
    /// then objects by id, then delayed effects by when they were set up.
    pub(super) fn candidates(
        &self,
        fi: usize,
        point: Point,
        responds: Responds,
        player: Option<PlayerId>,
    ) -> Vec<Cand> {
        let f = self.frame(fi);
        let look = self.looked_in(fi, point);
        let follow = self.content.responses_follow_abilities(&self.ruleset);
        let mut out = Vec::new();
        for (k, o) in f.occs.iter().enumerate() {
            if !o.alive {
                continue;
            }
            for &i in self
                .content
                .rules_listening(&self.ruleset, o.occ.event, point)
            {
                let r = &self.ruleset.rules[i as usize];
                if r.kind.responds() == responds
                    && can_touch(r, o)
                    && (player.is_none() || player == Some(self.orderer()))
                    && look.answers(r, &o.occ, None, Some(self.orderer()), &[], &o.occ.args)
                {
                    out.push(Cand {
                        occ: k,
                        key: Key::Rule(i),
                    });
                }
            }
            // The objects of each listening class, and (where abilities can change) the objects
            // an effect gave that class's response.
            let mut objs: Vec<(ObjectId, ClassId, u16)> = Vec::new();
            for &(class, ri) in self.content.listeners(o.occ.event, point) {
                let def = &self.content.class_def(class).responses[ri as usize];
                if def.kind.responds() != responds {
                    continue;
                }
                look.holders(class, ri, follow, &mut objs);
            }
            objs.sort_unstable();
            for (obj, class, ri) in objs {
                let key = Key::Object(obj, class, ri);
                if f.used.contains(&(k, key)) {
                    continue;
                }
                let def = &self.content.class_def(class).responses[ri as usize];
                if !can_touch(def, o) {
                    continue;
                }
                // CR 113.2c: an object answers with a response only while it has it as an
                // ability (an effect may have removed it); after it left play, as it last was
                // there (CR 603.10a).
                if (follow || def.granted) && !look.has_response(obj, class, ri) {
                    continue;
                }
                // "After this card bows": a trigger about its own object answers no other, and
                // needs no derived value to say so.
                if !names_source_only(def, &o.occ, obj) {
                    continue;
                }
                if !look.source_works(obj, def) {
                    continue;
                }
                let you = look.controller_now(obj);
                if player.is_some_and(|p| p != you) {
                    continue;
                }
                if look.answers(def, &o.occ, Some(obj), Some(you), &[], &o.occ.args)
                    && self.can_begin(def, Some(obj), Some(you), &o.occ.args)
                {
                    out.push(Cand { occ: k, key });
                }
            }
            for d in &self.timing.delayed {
                // "Next" excludes the period in progress: its end is not the next end.
                let in_progress = f.mode == Mode::End && d.open_then.contains(&o.occ);
                if d.def.kind.responds() != responds
                    || in_progress
                    || !can_touch(&d.def, o)
                    || !listens(&d.def, o.occ.event, point)
                {
                    continue;
                }
                if player.is_some_and(|p| Some(p) != d.you) {
                    continue;
                }
                if look.answers(&d.def, &o.occ, d.source, d.you, &d.targets, &d.bound) {
                    out.push(Cand {
                        occ: k,
                        key: Key::Delayed(d.id),
                    });
                }
            }
        }
        out
    }

    /// The objects of a class, in id order.
    pub(crate) fn objects_of_class(&self, class: crate::model::ids::ClassId) -> &[ObjectId] {
        self.by_class
            .get(&class)
            .map_or(&[], |v: &Vec<ObjectId>| v.as_slice())
    }

    /// The objects that may answer with a class's response: those of the class, and (where
    /// abilities can change) those an effect gave it. Added to `out` as (object, class, index).
    pub(super) fn holders(
        &self,
        class: ClassId,
        ri: u16,
        follow: bool,
        out: &mut Vec<(ObjectId, ClassId, u16)>,
    ) {
        out.extend(self.objects_of_class(class).iter().map(|&o| (o, class, ri)));
        if follow && self.content.responses_move(&self.ruleset) {
            out.extend(
                self.object_ids()
                    .filter(|&o| self.obj(o).class != class && self.has_response(o, class, ri))
                    .map(|o| (o, class, ri)),
            );
        }
    }

    /// Whether an object has a class's response as an ability in its derived abilities (CR
    /// 113.2c). With no abilities characteristic, objects have their class's responses, except
    /// those only granted.
    pub(super) fn has_response(&self, o: ObjectId, class: ClassId, index: u16) -> bool {
        let Some(ac) = self.abilities_char else {
            return self.obj(o).class == class
                && !self.content.class_def(class).responses[index as usize].granted;
        };
        match &self.derived().sheet.objects[o.index()][ac.index()] {
            Value::Abilities(list) => list.iter().any(|a| {
                matches!(a, Ability::Response { class: c, index: i, .. } if *c == class && *i == index)
            }),
            _ => false,
        }
    }

    /// Whether a response's source is where it works: in play, or in a zone it names.
    pub(super) fn source_works(&self, o: ObjectId, def: &ResponseDef) -> bool {
        let z = self.obj(o).zone;
        self.ruleset.zone_def(z).in_play || def.zones.contains(&z)
    }

    /// Whether the response's trigger and condition answer this occurrence.
    pub(super) fn answers(
        &self,
        def: &ResponseDef,
        occ: &Occurrence,
        source: Option<ObjectId>,
        you: Option<PlayerId>,
        targets: &[Subject],
        params: &[Arg],
    ) -> bool {
        let sheet = &self.derived().sheet;
        // A pattern with no filter (`burns(_)`) matches by its event alone, with no context.
        let matched = def.trigger.patterns.iter().any(|p| {
            p.event == occ.event && {
                p.filters.iter().all(Option::is_none) || {
                    let ctx = Ctx::new(self, sheet, source, you, targets).with_params(params);
                    p.filters.iter().enumerate().all(|(i, c)| {
                        let Some(c) = c else { return true };
                        match occ.args.get(i) {
                            Some(Arg::Object(o)) => ctx.test(c, Subject::Object(*o)),
                            Some(Arg::Player(p)) => ctx.test(c, Subject::Player(*p)),
                            _ => false,
                        }
                    })
                }
            }
        });
        if !matched {
            return false;
        }
        if let Some(e) = def.during {
            if !self.timing.periods.iter().any(|o| o.event == e) {
                return false;
            }
        }
        let ctx = Ctx::new(self, sheet, source, you, targets).with_params(&occ.args);
        let this = match source {
            Some(s) => Subject::Object(s),
            None => Subject::Player(you.unwrap_or(self.active)),
        };
        def.condition.as_ref().is_none_or(|c| ctx.test(c, this))
    }

    /// Whether the response could begin: each of its targets has a legal choice.
    pub(super) fn can_begin(
        &self,
        def: &ResponseDef,
        source: Option<ObjectId>,
        you: Option<PlayerId>,
        params: &[Arg],
    ) -> bool {
        let targets_ok = def
            .targets
            .iter()
            .all(|t| self.has_legal_target(&t.cond, source, you, params, |_| true));
        targets_ok && self.costs_payable(&def.costs, source, you, params)
    }

    /// Whether some player or object that `keep` admits is a legal target for `cond`, found
    /// without listing them all (what `legal_targets` would list first comes first).
    pub(super) fn has_legal_target(
        &self,
        cond: &crate::model::condition::Cond,
        source: Option<ObjectId>,
        you: Option<PlayerId>,
        params: &[Arg],
        keep: impl Fn(Subject) -> bool,
    ) -> bool {
        let sheet = &self.derived().sheet;
        let ctx = Ctx::new(self, sheet, source, you, &[]).with_params(params);
        let mut players = (0..self.players.len()).map(|p| Subject::Player(PlayerId(p as u8)));
        // The objects are listed only where no player is a legal target.
        players.any(|s| keep(s) && ctx.test(cond, s))
            || self
                .target_objects(cond, &ctx)
                .map(Subject::Object)
                .any(|s| keep(s) && ctx.test(cond, s))
    }

    /// The objects a target condition may hold for, in id order: only those it narrows to (the
    /// objects in play, for "creature or player"), else every object.
    fn target_objects<'s>(
        &'s self,
        cond: &crate::model::condition::Cond,
        ctx: &Ctx,
    ) -> Box<dyn Iterator<Item = ObjectId> + 's> {
        match cond.narrow(ctx) {
            Some(mut list) => {
                list.sort_unstable();
                list.dedup();
                Box::new(list.into_iter())
            }
            None => Box::new(self.object_ids()),
        }
    }

    /// Whether a response's costs can be paid: a cost that names no target and would change
    /// nothing (bowing a bowed card, paying more than the pool holds) cannot be paid.
    pub(super) fn costs_payable(
        &self,
        costs: &[Deed],
        source: Option<ObjectId>,
        you: Option<PlayerId>,
        params: &[Arg],
    ) -> bool {
        let each = costs.iter().all(|c| match c {
            Deed::Occur { event, args, .. }
                if !args.iter().any(|a| matches!(a, ArgExpr::Target(_))) =>
            {
                // The arguments worked out into a list on the stack; no occurrence is built.
                let mut v = crate::model::occurrence::Args::new();
                for a in args {
                    match self.arg_value(a, source, you, &[], params) {
                        Some(x) => v.push(x),
                        None => return false,
                    }
                }
                let sized_zero = self
                    .ruleset
                    .event_kind(*event)
                    .amount
                    .is_some_and(|a| matches!(v.get(a as usize), Some(Arg::Number(0))));
                sized_zero || !self.event_changes_nothing(*event, &v)
            }
            _ => true,
        });
        if !each || costs.len() < 2 {
            return each;
        }
        // Paid one after another: together too ({1}{R} from one red cannot be paid).
        let occs: Vec<Occurrence> = costs
            .iter()
            .filter_map(|c| match c {
                Deed::Occur { event, args, .. }
                    if !args.iter().any(|a| matches!(a, ArgExpr::Target(_))) =>
                {
                    let v = crate::model::occurrence::args_of(
                        args.iter()
                            .map(|a| self.arg_value(a, source, you, &[], params)),
                    );
                    v.map(|v| Occurrence::new(*event, v))
                }
                _ => None,
            })
            .filter(|o| !self.costs_nothing(o))
            .collect();
        self.pays_all(&occs)
    }

    pub(super) fn legal_targets(
        &self,
        cond: &crate::model::condition::Cond,
        source: Option<ObjectId>,
        you: Option<PlayerId>,
        targets: &[Subject],
        params: &[Arg],
    ) -> Vec<Subject> {
        let sheet = &self.derived().sheet;
        let ctx = Ctx::new(self, sheet, source, you, targets).with_params(params);
        let players = (0..self.players.len()).map(|p| Subject::Player(PlayerId(p as u8)));
        players
            .chain(self.target_objects(cond, &ctx).map(Subject::Object))
            .filter(|s| ctx.test(cond, *s))
            .collect()
    }

    /// Whether a response found at the start of a step can still happen: its occurrence still
    /// exists, it has not answered it yet, its source is still where it works.
    pub(super) fn still_valid(&self, fi: usize, point: Point, c: Cand) -> bool {
        let f = self.frame(fi);
        if !f.occs[c.occ].alive || f.used.contains(&(c.occ, c.key)) {
            return false;
        }
        match c.key {
            Key::Object(o, class, i) => {
                let look = self.looked_in(fi, point);
                let def = &self.content.class_def(class).responses[i as usize];
                look.source_works(o, def)
            }
            Key::Rule(_) => true,
            Key::Delayed(id) => self.timing.delayed.iter().any(|d| d.id == id),
        }
    }

    /// The response option `i` of `n` the pending decision offered: the frame it answers, the
    /// point it is at, the response. The decision is answered.
    pub(super) fn picked(
        &mut self,
        top: Option<usize>,
        i: usize,
        n: usize,
    ) -> Result<(usize, Point, Cand), ActionError> {
        if i >= n {
            return Err(bad_pick(i, n));
        }
        let fi = top.expect("a frame is under way");
        let f = self.frame(fi);
        let Stage::At(point) = f.mode.stages()[f.stage] else {
            unreachable!("a response is offered at a timing point")
        };
        let c = self.timing.offered[i];
        self.pending = None;
        Ok((fi, point, c))
    }

    /// Answers a decision of the timing procedure. Checked before anything changes.
    pub(crate) fn decide_timing(&mut self, choice: Choice) -> Result<(), ActionError> {
        let Some(req) = self.pending.clone() else {
            return Err(ActionError::NoDecisionPending);
        };
        let top = self.timing.tasks.len().checked_sub(1);
        match (&*req, choice) {
            (DecisionRequest::ChooseNext { options, step, .. }, Choice::Pick(i)) => {
                let (fi, point, c) = self.picked(top, i, options.len())?;
                let player = req.player();
                self.drop_cand(fi, c);
                self.start_run(
                    fi,
                    point,
                    c,
                    Why::Chosen {
                        by: player,
                        among: options.len(),
                    },
                    step,
                )?;
            }
            (DecisionRequest::React { options, step, .. }, Choice::Pick(i)) => {
                let (fi, point, c) = self.picked(top, i, options.len())?;
                let player = req.player();
                if let StepState::Ordered(_) = self.frame(fi).st {
                    // A response joined from a later step (`any order:`).
                    self.drop_cand(fi, c);
                } else {
                    self.frame_mut(fi).st = StepState::Round {
                        turn: self.next_player(player),
                        passes: 0,
                    };
                }
                self.start_run(fi, point, c, Why::Taken { by: player }, step)?;
            }
            (DecisionRequest::React { step, .. }, Choice::Pass) => {
                let fi = top.expect("a frame is under way");
                let player = req.player();
                self.pending = None;
                let depth = self.frame(fi).depth;
                match self.frame(fi).st {
                    StepState::Round { passes, .. } => {
                        self.frame_mut(fi).st = StepState::Round {
                            turn: self.next_player(player),
                            passes: passes + 1,
                        };
                    }
                    _ => {
                        // The orderer leaves the optional responses joined from a later step:
                        // they may still be taken there.
                        let f = self.frame(fi);
                        let Stage::At(point) = f.mode.stages()[f.stage] else {
                            unreachable!("a response is offered at a timing point")
                        };
                        self.end_step(fi, point);
                    }
                }
                self.log_at(
                    depth,
                    Logged::Passed {
                        player,
                        step: step.clone(),
                    },
                );
            }
            (DecisionRequest::Play { options, .. }, Choice::Pick(i)) => {
                let Some(option) = options.get(i).cloned() else {
                    return Err(bad_pick(i, options.len()));
                };
                let player = req.player();
                self.pending = None;
                self.make_play(player, option)?;
            }
            (DecisionRequest::Play { in_batch, .. }, Choice::Pass) => {
                let player = req.player();
                self.pending = None;
                let next = self.next_player(player);
                let depth = match self.timing.tasks.last() {
                    Some(Task::Batch(b)) => {
                        let depth = b.depth;
                        if let Some(Task::Batch(b)) = self.timing_mut().tasks.last_mut() {
                            if let Some((_, passes)) = b.adding {
                                b.adding = Some((next, passes + 1));
                            }
                        }
                        depth
                    }
                    _ => {
                        if let Some(f) = self.timing_mut().flow.as_mut() {
                            f.turn = next;
                            f.passes += 1;
                        }
                        0
                    }
                };
                // The two names made once per thread, not at each pass (a game passes about 80
                // times; one text shared by threads would pass its count between cores).
                thread_local! {
                    static NAMES: [Arc<str>; 2] = [Arc::from("batch"), Arc::from("neutral")];
                }
                let step: Arc<str> = NAMES.with(|n| n[usize::from(!*in_batch)].clone());
                self.log_at(depth, Logged::Passed { player, step });
            }
            (DecisionRequest::ChooseTarget { options, .. }, Choice::Target(t)) => {
                if !options.contains(&t) {
                    return Err(ActionError::BadChoice(
                        "that is not one of the legal targets offered".into(),
                    ));
                }
                let ri = top.expect("a response is under way");
                self.pending = None;
                let i = match &self.timing.tasks[ri] {
                    Task::Run(r) => r.picking.expect("a target is being chosen"),
                    _ => unreachable!("a response is under way"),
                };
                self.set_target(ri, i, t);
            }
            (DecisionRequest::ChooseNumber { options, .. }, Choice::Number(n)) => {
                if !options.contains(&n) {
                    return Err(ActionError::BadChoice(format!(
                        "X = {n} is not one of the values offered"
                    )));
                }
                let ri = top.expect("a spell is being announced");
                self.pending = None;
                self.set_number(ri, n);
            }
            (DecisionRequest::PayCost { .. }, Choice::Pick(0)) => {
                let ri = top.expect("a response is under way");
                self.pending = None;
                self.run_mut(ri).paying = true;
            }
            (DecisionRequest::PayCost { player, .. }, Choice::Pass) => {
                let ri = top.expect("a response is under way");
                self.pending = None;
                let r = match &self.timing.tasks[ri] {
                    Task::Run(r) => (**r).clone(),
                    _ => unreachable!("a response is under way"),
                };
                self.log_at(
                    r.depth,
                    Logged::Fizzled {
                        by: r.responder(),
                        why: format!("{} declines to pay its cost", self.player_name(*player)),
                    },
                );
                self.timing_mut().tasks.truncate(ri);
            }
            (DecisionRequest::OrderChoices { choosers, .. }, Choice::Pick(i)) => {
                if i >= choosers.len() {
                    return Err(bad_pick(i, choosers.len()));
                }
                let ri = top.expect("a response is under way");
                let next = self.timing.offered_targets[i];
                self.pending = None;
                self.run_mut(ri).picking = Some(next);
            }
            (req, c) => {
                return Err(ActionError::BadChoice(format!(
                    "{c:?} does not answer this request: expected {}",
                    match req {
                        DecisionRequest::OrderTimestamps { .. } => "an order of the objects",
                        DecisionRequest::ChooseNext { .. } => "one of the options (Pick)",
                        DecisionRequest::React { .. } => "one of the options (Pick) or Pass",
                        DecisionRequest::ChooseTarget { .. } => "one of the targets (Target)",
                        DecisionRequest::ChooseNumber { .. } => "one of the numbers (Number)",
                        DecisionRequest::OrderChoices { .. } => "one of the players (Pick)",
                        DecisionRequest::PayCost { .. } => "Pick(0) to pay, or Pass",
                        DecisionRequest::Play { .. } => "one of the plays (Pick) or Pass",
                    }
                )));
            }
        }
        self.run_timing()
    }
}

/// False when every pattern of the trigger that names the occurrence's event says `this` for an
/// argument that is another object: the response cannot answer it.
pub(super) fn names_source_only(def: &ResponseDef, occ: &Occurrence, source: ObjectId) -> bool {
    def.trigger.patterns.iter().any(|p| {
        p.event == occ.event
            && p.filters.iter().enumerate().all(|(i, f)| match f {
                Some(crate::model::condition::Cond::IsSource) => {
                    occ.args.get(i) == Some(&Arg::Object(source))
                }
                _ => true,
            })
    })
}

/// Whether a response's trigger names this event at this point.
pub(super) fn listens(r: &ResponseDef, e: EventId, point: Point) -> bool {
    r.trigger.point == point && r.trigger.patterns.iter().any(|p| p.event == e)
}

pub(super) fn bad_pick(i: usize, n: usize) -> ActionError {
    ActionError::BadChoice(format!(
        "option {i} is not offered: the request has {n} option(s)"
    ))
}

pub(super) fn amount_of(args: &[Arg], a: crate::model::event::Amount) -> i64 {
    match a {
        crate::model::event::Amount::Const(n) => n,
        crate::model::event::Amount::Param(i) => match args.get(i as usize) {
            Some(Arg::Number(n)) => *n,
            _ => 0,
        },
    }
}

/// Whether a response could do anything to an occurrence, as the occurrence stands ("cannot be
/// prevented": a response that only prevents it is not offered).
fn can_touch(def: &ResponseDef, o: &Occ) -> bool {
    o.standing == Standing::default()
        || def.deeds.is_empty()
        || def.deeds.iter().any(|d| o.standing.allows(d))
}
