//! Batches of effects and the turn structure they are played in (Magic: The Gathering's
//! Revised Edition era timing rules, "Batches of Effects"):
//! - each phase begins neutral; the active player decides first whether to begin a batch; when
//!   every player in turn passes in the neutral state, the phase ends;
//! - an effect added to a batch is announced as it is added (its targets chosen, its costs
//!   paid); after every addition the active player decides first whether to respond, even if she
//!   added it; the batch is complete when every player in turn has passed;
//! - it then resolves last in, first out, each effect in full before the next, and nothing is
//!   added while it resolves; a spell or ability whose targets are all illegal by then fizzles
//!   (the same target check for both);
//! - after it has resolved, the phase is neutral again.
//!
//! The phases and what may be played are the ruleset's (`turn ... { phase ... }`, `play`).

use crate::condition::eval::Ctx;
use crate::model::batch::{
    BatchItem, ItemKind, PhaseDef, PlayKind, PlayOption, PlayTiming, TargetScope,
};
use crate::model::condition::{Subject, TargetSpec};
use crate::model::decision::DecisionRequest;
use crate::model::error::ActionError;
use crate::model::ids::{ObjectId, PlayerId};
use crate::model::occurrence::{Logged, Occurrence, Responder};
use crate::model::response::{ArgExpr, Deed, ResponseDef, ResponseKind, Standing, Trigger};
use crate::model::timing::Point;
use crate::model::value::Arg;
use crate::state::{Batch, Flow, FlowStage, GameState, Mode, Run, Task};
use std::sync::Arc;

impl GameState {
    /// Starts the ruleset's turn structure with the active player's turn: from now on, whenever
    /// nothing is under way, the game asks the player who may act what to play
    /// ([`DecisionRequest::Play`]), and phases and turns follow one another until the game is
    /// over. An error if the ruleset declares no turn structure, or the game is already started.
    pub fn start_game(&mut self) -> Result<(), ActionError> {
        self.start_game_at(None)
    }

    /// [`GameState::start_game`], beginning the first turn at this phase instead of its first
    /// (a scenario set up in the middle of a turn): the phases before it do not happen.
    pub fn start_game_at(
        &mut self,
        phase: Option<crate::model::ids::EventId>,
    ) -> Result<(), ActionError> {
        if self.ruleset.turn_structure.is_none() {
            return Err(ActionError::BadOccurrence(
                "the ruleset declares no turn structure (`turn ... { phase ... }`)".into(),
            ));
        }
        if self.timing.flow.is_some() {
            return Err(ActionError::BadOccurrence(
                "the game is already started".into(),
            ));
        }
        if self.is_over() {
            return Err(ActionError::GameOver);
        }
        if self.pending.is_some() || !self.timing.tasks.is_empty() {
            return Err(ActionError::DecisionPending);
        }
        let first = match phase {
            None => 0,
            Some(e) => self
                .ruleset
                .turn_structure
                .as_ref()
                .and_then(|t| t.phases.iter().position(|p| p.event == e))
                .ok_or_else(|| {
                    ActionError::BadOccurrence("that is not a phase of the turn".into())
                })?,
        };
        let active = self.active;
        self.timing_mut().flow = Some(Flow {
            phase: first,
            stage: FlowStage::TurnBegins,
            turn: active,
            passes: 0,
            used: Vec::new(),
            handled: Vec::new(),
            settled: Vec::new(),
            announced: None,
        });
        self.run_timing()
    }

    /// Deals a game from deck lists, one per player in order, each a list of (card name,
    /// copies): the cards go to the ruleset's deck zone, each deck is shuffled by the game's
    /// random source, the first player's property is set where the ruleset says, each player
    /// draws the opening hand (each draw an occurrence), and the game starts
    /// ([`GameState::start_game`]). Checked first: an unknown card or a wrong number of decks is
    /// an error that changes nothing.
    pub fn deal(&mut self, decks: &[Vec<(String, u32)>]) -> Result<(), ActionError> {
        let Some(rules) = self.ruleset.deck.clone() else {
            return Err(ActionError::BadOccurrence(
                "the ruleset declares no `decks { zone: ...; draw: ... }`".into(),
            ));
        };
        if decks.len() != self.players.len() {
            return Err(ActionError::BadOccurrence(format!(
                "{} deck list(s) for {} players",
                decks.len(),
                self.players.len()
            )));
        }
        let cards: u32 = decks.iter().flatten().map(|(_, n)| *n).sum();
        let mut list = Vec::with_capacity(cards.min(1 << 16) as usize);
        for (p, deck) in decks.iter().enumerate() {
            for (name, n) in deck {
                let class = self.content.class_id(name).ok_or_else(|| {
                    ActionError::BadOccurrence(format!(
                        "the deck names `{name}`, which no card of the content is"
                    ))
                })?;
                for _ in 0..*n {
                    list.push(crate::model::action::NewObject::new(
                        class,
                        PlayerId(p as u8),
                        rules.zone,
                    ));
                }
            }
        }
        let backup = self.backup();
        let dealt = self.deal_cards(list, &rules);
        if dealt.is_err() {
            *self = backup;
        }
        dealt
    }

    /// Deals the cards listed: created, shuffled, the first player's property set, the opening
    /// hands drawn, the game started.
    fn deal_cards(
        &mut self,
        list: Vec<crate::model::action::NewObject>,
        rules: &crate::model::ruleset::DeckRules,
    ) -> Result<(), ActionError> {
        // Derived first (cheap before the cards), so that the cards' values are worked out from
        // that derivation as they are created, not in a full derivation.
        self.refresh();
        self.apply(crate::model::action::Action::Create(list))?;
        for p in 0..self.players.len() {
            self.apply(crate::model::action::Action::Shuffle {
                player: PlayerId(p as u8),
                zone: rules.zone,
            })?;
        }
        if let Some((prop, value)) = rules.first_player {
            let player = self.active;
            self.apply(crate::model::action::Action::SetProperty {
                player,
                prop,
                value: Some(value),
            })?;
        }
        for _ in 0..rules.hand {
            for p in 0..self.players.len() {
                self.occur(Occurrence::new(
                    rules.draw,
                    smallvec::smallvec![Arg::Player(PlayerId(p as u8))],
                ))?;
            }
        }
        self.start_game()
    }

    /// The phase in progress, once a game is started.
    fn phase_def(&self) -> Option<&PhaseDef> {
        let flow = self.timing.flow.as_ref()?;
        self.ruleset.turn_structure.as_ref()?.phases.get(flow.phase)
    }

    /// The turn structure goes on: nothing is under way.
    pub(super) fn advance_flow(&mut self) -> Result<(), ActionError> {
        if self.ruleset.turn_structure.is_none() {
            self.timing_mut().flow = None;
            return Ok(());
        }
        // Where the turn structure stands, read without copying its lists, nor the ruleset's
        // pointer (games on other threads share it: its count would pass between cores).
        let Some(flow) = self.timing.flow.as_ref() else {
            return Ok(());
        };
        let (phase_at, stage, flow_turn, passes) = (flow.phase, flow.stage, flow.turn, flow.passes);
        let announced = match stage {
            FlowStage::Neutral => flow.announced.clone(),
            _ => None,
        };
        let Some(ts) = self.ruleset.turn_structure.as_ref() else {
            return Ok(());
        };
        let (turn_event, phases) = (ts.turn, ts.phases.len());
        let phase = ts.phases.get(phase_at).map(|p| (p.event, p.fast));
        let phase_ends = match stage {
            FlowStage::PhaseOver => ts.phase_ends.clone(),
            _ => Vec::new(),
        };
        let active = self.active;
        let occ = |event, p: PlayerId| Occurrence::new(event, smallvec::smallvec![Arg::Player(p)]);
        match stage {
            FlowStage::TurnBegins => {
                let player = if self.timing.turns_begun == 0 {
                    active
                } else {
                    self.next_player(active)
                };
                let first = self.timing.turns_begun == 0;
                let f = self.flow_mut();
                if !first {
                    f.phase = 0;
                }
                f.used.clear();
                f.stage = FlowStage::PhaseBegins;
                self.push_frame(vec![occ(turn_event, player)], Mode::Begin, 0);
            }
            FlowStage::PhaseBegins => {
                let Some((phase_event, _)) = phase else {
                    self.flow_mut().stage = FlowStage::TurnEnds;
                    return Ok(());
                };
                let f = self.flow_mut();
                f.stage = FlowStage::Neutral;
                f.turn = active;
                f.passes = 0;
                f.handled.clear();
                f.settled.clear();
                self.push_frame(vec![occ(phase_event, active)], Mode::Begin, 0);
            }
            FlowStage::Neutral => {
                if let Some((by, option)) = announced {
                    if passes + 1 >= self.players_in_game() {
                        // No other player began a batch: what was announced happens; then the
                        // phase is neutral again, its player first.
                        let f = self.flow_mut();
                        f.announced = None;
                        f.turn = by;
                        f.passes = 0;
                        return self.play_now(by, option, false);
                    }
                }
                let fast = phase.is_some_and(|(_, fast)| fast);
                let mut turn = flow_turn;
                if fast && passes >= self.players_in_game() {
                    // No player can let a phase end without dealing with his or her mandatory
                    // phase effects and phase costs: the first such player in turn order, from
                    // the active player, is asked again.
                    match self.owing_phase_duty() {
                        Some(p) => {
                            self.flow_mut().turn = p;
                            turn = p;
                        }
                        None => {
                            self.flow_mut().stage = FlowStage::PhaseEnds;
                            return Ok(());
                        }
                    }
                } else if !fast {
                    self.flow_mut().stage = FlowStage::PhaseEnds;
                    return Ok(());
                }
                // Asked even with nothing to play: passing is the player's decision (and a
                // scenario's or a UI's moment to look).
                let options = self.legal_plays(turn, false);
                self.pending = Some(Arc::new(DecisionRequest::Play {
                    player: turn,
                    in_batch: false,
                    options,
                }));
            }
            FlowStage::PhaseEnds => {
                let event = phase.map(|(event, _)| event);
                self.flow_mut().stage = FlowStage::PhaseOver;
                if let Some(occ) = event.and_then(|e| self.latest_open(e)) {
                    self.push_frame(vec![occ], Mode::End, 0);
                }
            }
            FlowStage::PhaseOver => {
                let f = self.flow_mut();
                if phase_at + 1 < phases {
                    f.phase += 1;
                    f.stage = FlowStage::PhaseBegins;
                } else {
                    f.stage = FlowStage::TurnEnds;
                }
                if !phase_ends.is_empty() {
                    // Each player in turn order, from the active player.
                    let mut players = Vec::new();
                    let mut p = active;
                    for _ in 0..self.players.len() {
                        if !self.players[p.index()].lost {
                            players.push(p);
                        }
                        p = PlayerId(((p.index() + 1) % self.players.len()) as u8);
                    }
                    let occs: Vec<Occurrence> = phase_ends
                        .iter()
                        .flat_map(|e| players.iter().map(move |p| occ(*e, *p)))
                        .collect();
                    self.push_frame(occs, Mode::Plain, 0);
                }
            }
            FlowStage::TurnEnds => {
                self.flow_mut().stage = FlowStage::TurnBegins;
                if let Some(occ) = self.latest_open(turn_event) {
                    self.push_frame(vec![occ], Mode::End, 0);
                }
            }
        }
        Ok(())
    }

    fn flow_mut(&mut self) -> &mut Flow {
        self.timing_mut()
            .flow
            .as_mut()
            .expect("the turn structure is under way")
    }

    /// The batch at task `bi` goes on: the next player adds to it or passes; once complete, its
    /// last item resolves.
    pub(super) fn advance_batch(&mut self, bi: usize) -> Result<(), ActionError> {
        let Task::Batch(b) = &self.timing.tasks[bi] else {
            unreachable!("task {bi} is a batch")
        };
        let depth = b.depth;
        let casting = b.casting.is_some();
        match b.adding {
            Some(_) if b.items.is_empty() && !casting => {
                // Nothing was added (the effect that began it was not announced): the phase is
                // neutral again.
                self.end_batch(bi);
            }
            Some((turn, passes)) => {
                if passes >= self.players_in_game() {
                    if casting && self.batch(bi).items.is_empty() {
                        // No one interrupts: the spell is successfully cast.
                        return self.cast_succeeds(bi);
                    }
                    self.batch_mut(bi).adding = None;
                    let items = self.batch(bi).items.len();
                    self.log_at(depth, Logged::BatchComplete { items });
                    return Ok(());
                }
                let options = self.legal_plays(turn, true);
                if casting && options.is_empty() {
                    // A player with no interrupt to play passes without being asked: most
                    // castings are interrupted by no one.
                    let next = self.next_player(turn);
                    self.batch_mut(bi).adding = Some((next, passes + 1));
                    return Ok(());
                }
                self.pending = Some(Arc::new(DecisionRequest::Play {
                    player: turn,
                    in_batch: true,
                    options,
                }));
            }
            None => match self.batch_mut(bi).items.pop() {
                None if casting => {
                    let b = self.batch(bi);
                    let spell = b.casting.as_ref().map(|i| i.source);
                    let first = b.first;
                    let waiting = self.ruleset.wait_zone;
                    let countered = spell.is_some_and(|s| Some(self.obj(s).zone) != waiting);
                    if countered {
                        // Countered: its casting ends, its costs stay paid; its caster may play
                        // another.
                        let item = self.batch_mut(bi).casting.take().expect("casting");
                        let by = self.item_responder(&item);
                        self.log_at(
                            depth,
                            Logged::Fizzled {
                                by,
                                why: "it was countered: its casting ends".into(),
                            },
                        );
                        self.timing_mut().tasks.truncate(bi);
                    } else {
                        // Another batch of interrupts may begin, its caster first.
                        self.batch_mut(bi).adding = Some((first, 0));
                    }
                }
                None => self.end_batch(bi),
                Some(item) => self.resolve_item(bi, item, depth + 1)?,
            },
        }
        Ok(())
    }

    /// The spell being cast was not countered: it is successfully cast and added to the batch
    /// below, and what triggers on its casting answers the ruleset's cast event.
    fn cast_succeeds(&mut self, bi: usize) -> Result<(), ActionError> {
        let item = self
            .batch_mut(bi)
            .casting
            .take()
            .expect("a spell being cast");
        self.timing_mut().tasks.truncate(bi);
        let (source, controller) = (item.source, item.controller);
        self.add_to_batch(bi, item)?;
        if let Some(e) = self.ruleset.cast_event {
            let depth = self.batch(bi - 1).depth;
            let occ = Occurrence::new(
                e,
                smallvec::smallvec![Arg::Object(source), Arg::Player(controller)],
            );
            self.push_frame(vec![occ], Mode::Plain, depth + 1);
        }
        Ok(())
    }

    /// Adds an item to the batch under task `above` (the batch at `above - 1`): the active player
    /// decides first whether to respond.
    fn add_to_batch(&mut self, above: usize, item: BatchItem) -> Result<(), ActionError> {
        let Some(bi) = above
            .checked_sub(1)
            .filter(|b| matches!(self.timing.tasks[*b], Task::Batch(_)))
        else {
            return Err(ActionError::BadOccurrence(
                "internal error: an announced effect with no batch to go into".into(),
            ));
        };
        let id = item.id;
        let by = self.item_responder(&item);
        let b = self.batch_mut(bi);
        b.items.push(item);
        b.adding = Some((b.first, 0));
        let depth = b.depth;
        self.log_at(depth, Logged::AddedToBatch { item: id, by });
        Ok(())
    }

    /// Keeps only the targets an announced effect may take.
    pub(super) fn in_scope(&self, scope: TargetScope, targets: &mut Vec<Subject>) {
        targets.retain(|t| self.admits(scope, *t));
    }

    /// Whether an announced effect of this scope may target `t`.
    fn admits(&self, scope: TargetScope, t: Subject) -> bool {
        match (scope, t) {
            (TargetScope::Only(o), Subject::Object(x)) => x == o,
            (TargetScope::Only(_), Subject::Player(_)) => false,
            (TargetScope::NotWaiting, Subject::Object(x)) => {
                Some(self.obj(x).zone) != self.ruleset.wait_zone
            }
            (TargetScope::NotWaiting, Subject::Player(_)) => true,
        }
    }

    /// Whether an effect could be announced now: each target line has a legal target in scope,
    /// and its costs can be paid.
    fn can_announce(
        &self,
        targets: &[TargetSpec],
        costs: &[Deed],
        source: ObjectId,
        player: PlayerId,
        scope: TargetScope,
    ) -> bool {
        self.targets_open(targets, source, player, scope)
            && self.costs_payable(costs, Some(source), Some(player), &[])
    }

    /// Whether each target line has a legal target in this scope.
    fn targets_open(
        &self,
        targets: &[TargetSpec],
        source: ObjectId,
        player: PlayerId,
        scope: TargetScope,
    ) -> bool {
        targets.iter().all(|t| {
            self.has_legal_target(&t.cond, Some(source), Some(player), &[], |s| {
                self.admits(scope, s)
            })
        })
    }

    /// The spell being cast, while a batch of interrupts is being built.
    fn being_cast(&self) -> Option<ObjectId> {
        match self.timing.tasks.last() {
            Some(Task::Batch(b)) => b.casting.as_ref().map(|i| i.source),
            _ => None,
        }
    }

    /// The batch is over: the phase is neutral again, the active player deciding first.
    fn end_batch(&mut self, bi: usize) {
        let active = self.active;
        self.timing_mut().tasks.truncate(bi);
        if let Some(f) = self.timing_mut().flow.as_mut() {
            f.turn = active;
            f.passes = 0;
        }
    }

    fn batch(&self, bi: usize) -> &Batch {
        match &self.timing.tasks[bi] {
            Task::Batch(b) => b,
            _ => unreachable!("task {bi} is a batch"),
        }
    }

    fn batch_mut(&mut self, bi: usize) -> &mut Batch {
        match &mut self.timing_mut().tasks[bi] {
            Task::Batch(b) => b,
            _ => unreachable!("task {bi} is a batch"),
        }
    }

    /// An item of the batch resolves: its targets are checked again, and with every one of them
    /// illegal it fizzles (goes to the zone for resolved spells, doing nothing); a spell resolves
    /// as the engine's `resolves` occurrence, an ability does its deeds.
    fn resolve_item(&mut self, bi: usize, item: BatchItem, depth: u16) -> Result<(), ActionError> {
        if self.get_object(item.source).is_none() {
            return Err(ActionError::NoSuchObject(item.source.0));
        }
        self.log_at(
            depth - 1,
            Logged::BatchResolves {
                item: item.id,
                by: self.item_responder(&item),
            },
        );
        match item.kind {
            ItemKind::Spell => {
                let action = crate::model::action::Action::ResolveTargeting {
                    spell: item.source,
                    controller: item.controller,
                    targets: item.targets,
                    choices: Vec::new(),
                };
                // Its targets are checked as it resolves (CR 608.2b: with all illegal, it does
                // not resolve), not refused here.
                let occs = vec![Occurrence::new(
                    self.builtin.resolves,
                    smallvec::smallvec![Arg::Object(item.source), Arg::Player(item.controller)],
                )];
                self.push_action(occs, action, depth, Standing::default());
            }
            ItemKind::Permanent(zone) => {
                // A permanent spell resolves into play (CR 608.3): it moves, entering as it does.
                let action = crate::model::action::Action::Move {
                    object: item.source,
                    zone,
                };
                let occs = self.occurrences_of(&action)?;
                self.push_action(occs, action, depth, Standing::default());
            }
            ItemKind::Ability(def) => {
                if def.phase.as_ref().is_some_and(|p| p.cost.is_some()) {
                    // The phase cost has resolved: the permanent's abilities are on again.
                    if let Some(f) = self.timing_mut().flow.as_mut() {
                        f.settled.push(item.source);
                    }
                }
                let illegal = self.illegal_of(
                    &def.targets,
                    Some(item.source),
                    item.controller,
                    &item.targets,
                );
                if !item.targets.is_empty() && illegal.len() == item.targets.len() {
                    self.log_at(
                        depth,
                        Logged::Fizzled {
                            by: Responder {
                                source: Some(item.source),
                                text: def.text.clone(),
                            },
                            why: "every target it chose is illegal now".into(),
                        },
                    );
                    return Ok(());
                }
                let part = def.targets.len() + def.costs.len();
                let mut run = Run::new(
                    bi,
                    0,
                    def,
                    Some(item.source),
                    Some(item.controller),
                    item.targets,
                    None,
                    depth,
                );
                run.part = part;
                run.illegal = illegal.iter().map(|i| *i as u8).collect();
                run.holds = self.ruleset.timing.after_once_resolved.then(Vec::new);
                self.timing_mut().tasks.push(Task::Run(Box::new(run)));
            }
        }
        Ok(())
    }

    fn item_responder(&self, item: &BatchItem) -> Responder {
        match &item.kind {
            ItemKind::Ability(def) => Responder {
                source: Some(item.source),
                text: def.text.clone(),
            },
            ItemKind::Spell | ItemKind::Permanent(_) => Responder {
                source: Some(item.source),
                text: self
                    .content
                    .class_def(self.obj(item.source).class)
                    .spell
                    .as_ref()
                    .map_or_else(|| self.obj(item.source).name.clone(), |s| s.text.clone()),
            },
        }
    }

    /// The plays open to a player now: in the neutral state (`in_batch` false) or adding to a
    /// batch. Each with a readable label; their order is stable (by play, then by object id).
    pub fn legal_plays(&self, player: PlayerId, in_batch: bool) -> Vec<PlayOption> {
        self.legal_plays_with(player, in_batch, true)
    }

    /// [`GameState::legal_plays`] testing every card's `cards:` condition on the card itself,
    /// none answered for another card with the same values (for tests that compare the two).
    #[doc(hidden)]
    pub fn legal_plays_in_full(&self, player: PlayerId, in_batch: bool) -> Vec<PlayOption> {
        self.legal_plays_with(player, in_batch, false)
    }

    /// `legal_plays`; `share`: where no effect applies (`layers::at_base`), a `cards:` condition
    /// that reads only the card's own values other than its state and controller
    /// (`Content::play_row_reads`) reads its class's printed values: it is tested once per class,
    /// for every game with the content (`Content::play_class_fits`).
    fn legal_plays_with(&self, player: PlayerId, in_batch: bool, share: bool) -> Vec<PlayOption> {
        let Some(phase) = self.phase_def() else {
            return Vec::new();
        };
        if !phase.fast || self.is_over() || player.index() >= self.players.len() {
            return Vec::new();
        }
        let main = phase.main && player == self.active && !in_batch;
        let casting = self.being_cast();
        let scope = casting.map_or(TargetScope::NotWaiting, TargetScope::Only);
        let used = &self
            .timing
            .flow
            .as_ref()
            .map(|f| &f.used[..])
            .unwrap_or(&[]);
        let sheet = &self.derived().sheet;
        let flow = self.timing.flow.as_ref();
        let handled = flow.map(|f| &f.handled[..]).unwrap_or(&[]);
        let settled = flow.map(|f| &f.settled[..]).unwrap_or(&[]);
        let phase_event = Some(phase.event);
        let cost_sources = self.phase_cost_sources();
        let mut out = Vec::new();
        // The player's cards in each zone plays are made from, listed once.
        // (Small lists kept inline: legal plays are found before every play decision.)
        let mut zones: smallvec::SmallVec<
            [(
                crate::model::ids::ZoneId,
                smallvec::SmallVec<[ObjectId; 16]>,
            ); 1],
        > = smallvec::SmallVec::new();
        // Whether each class's spell costs can be paid, where they name no object.
        let mut paid: smallvec::SmallVec<[(crate::model::ids::ClassId, bool); 4]> =
            smallvec::SmallVec::new();
        let at_base = share && crate::layers::at_base(self, self.derived());
        let state_char = self.state_char;
        let bare = self.timing.bare_plays;
        for (k, play) in self.ruleset.plays.iter().enumerate() {
            // During a casting only interrupts; an interrupt only then.
            let timely = match play.timing {
                PlayTiming::Main => main,
                PlayTiming::Fast => casting.is_none(),
                PlayTiming::Interrupt => casting.is_some(),
            };
            if !timely {
                continue;
            }
            if play.once_per_turn && used.contains(&(k as u16)) {
                continue;
            }
            // Where every value is a base value, one that is not the card's state (tapped) or
            // controller is its class's: the answer for one card of a class is the class's.
            let per_class = at_base
                && self
                    .content
                    .play_row_reads(&self.ruleset, k)
                    .is_some_and(|r| {
                        !r.iter()
                            .any(|c| Some(*c) == state_char || Some(*c) == self.controller_char)
                    });
            // The classes' answers already read in this call (a hand holds few classes).
            let read: std::cell::RefCell<
                smallvec::SmallVec<[(crate::model::ids::ClassId, bool); 4]>,
            > = Default::default();
            let fits = |o: ObjectId| {
                let Some(c) = play.cards.as_ref() else {
                    return true;
                };
                if !per_class {
                    return Ctx::new(self, sheet, Some(o), Some(player), &[])
                        .test(c, Subject::Object(o));
                }
                let class = self.obj(o).class;
                if let Some(&(_, fits)) = read.borrow().iter().find(|(k, _)| *k == class) {
                    return fits;
                }
                let fits = self.content.play_class_fits(&self.ruleset, k, class, || {
                    Ctx::new(self, sheet, Some(o), Some(player), &[]).test(c, Subject::Object(o))
                });
                read.borrow_mut().push((class, fits));
                fits
            };
            if play.unless_batch
                && self
                    .timing
                    .flow
                    .as_ref()
                    .is_some_and(|f| f.announced.is_some())
            {
                continue;
            }
            match &play.kind {
                PlayKind::Deeds(_) if play.from.is_none() => {
                    // A play of no card ("announce attack"), while its `if:` holds.
                    let holds = play.only_if.as_ref().is_none_or(|c| {
                        Ctx::new(self, sheet, None, Some(player), &[])
                            .test(c, Subject::Player(player))
                    });
                    if !holds {
                        continue;
                    }
                    out.push(PlayOption {
                        label: if bare {
                            String::new()
                        } else {
                            play.label.to_string()
                        },
                        play: k as u16,
                        card: None,
                        ability: None,
                    });
                }
                PlayKind::Cast | PlayKind::CastInto(_) | PlayKind::Deeds(_) => {
                    let Some(zone) = play.from else { continue };
                    // Where the cards' test is answered per class (`per_class`), whether any of
                    // the player's cards there could be played is asked of each class first:
                    // where none could (Bolts with no mana to pay for them, lands outside the
                    // main phase), the cards are not listed in order and tested one by one.
                    if per_class
                        && !self.any_class_playable(play, zone, player, casting, &fits, &mut paid)
                    {
                        continue;
                    }
                    let at = match zones.iter().position(|(z, _)| *z == zone) {
                        Some(at) => at,
                        None => {
                            zones.push((zone, self.cards_in_small(player, zone)));
                            zones.len() - 1
                        }
                    };
                    for &o in &zones[at].1 {
                        if !fits(o) {
                            continue;
                        }
                        if matches!(play.kind, PlayKind::Cast | PlayKind::CastInto(_)) {
                            let permanent = matches!(play.kind, PlayKind::CastInto(_));
                            // What `announcement` announces: the spell's targets and costs,
                            // then its move from the zone it is played from to where spells
                            // wait (which a card already there cannot make).
                            let class = self.content.class_def(self.obj(o).class);
                            let (targets, costs): (&[TargetSpec], &[Deed]) = match &class.spell {
                                Some(sp) => (&sp.targets, &sp.costs),
                                None if permanent => (&[], &[]),
                                None => continue,
                            };
                            if self.ruleset.wait_zone == Some(zone) {
                                continue;
                            }
                            // An interrupt targets the spell being cast: one that targets
                            // nothing is played as an instant only.
                            let aimless = casting.is_some() && targets.is_empty();
                            // Costs that name nothing of the card ("pay {R}") are payable for
                            // every card of its class alike: asked once per class.
                            let class_id = self.obj(o).class;
                            let costs_ok = match paid.iter().find(|(c, _)| *c == class_id) {
                                Some(&(_, ok)) => ok,
                                None => {
                                    let ok = self.costs_payable(costs, Some(o), Some(player), &[]);
                                    if costs.iter().all(names_no_object) {
                                        paid.push((class_id, ok));
                                    }
                                    ok
                                }
                            };
                            if aimless || !costs_ok || !self.targets_open(targets, o, player, scope)
                            {
                                continue;
                            }
                        }
                        out.push(PlayOption {
                            label: if bare {
                                String::new()
                            } else {
                                label(&[&play.label, " ", &self.obj(o).name])
                            },
                            play: k as u16,
                            card: Some(o),
                            ability: None,
                        });
                    }
                }
                PlayKind::Activate => {
                    for &o in self.in_play_ids() {
                        // Whether the permanent may play its abilities at all, found once it has
                        // one this player could play (another player's permanents are not tested).
                        let mut may: Option<bool> = None;
                        let controller = self.controller_now(o);
                        let class = self.content.class_def(self.obj(o).class);
                        for (i, def) in class.responses.iter().enumerate() {
                            let ability = matches!(
                                def.kind,
                                ResponseKind::Ability | ResponseKind::ManaAbility
                            );
                            if !ability {
                                continue;
                            }
                            // A phase effect: in its phase, by the player whose phase it is,
                            // once; any other ability: by its controller.
                            let by = match &def.phase {
                                Some(p) if p.cost.is_some() => continue,
                                Some(_) => {
                                    if phase_event != def.during || handled.contains(&(o, i as u16))
                                    {
                                        continue;
                                    }
                                    self.phase_player(o, def)
                                }
                                None => Some(controller),
                            };
                            if by != Some(player) || (def.phase.is_some() && player != self.active)
                            {
                                continue;
                            }
                            // Its costs first: most often the one that fails (a tapped land's
                            // "{T}"), and asked without the permanent's `cards:` test.
                            if !self.costs_payable(&def.costs, Some(o), Some(player), &[]) {
                                continue;
                            }
                            let may = *may.get_or_insert_with(|| {
                                // A permanent whose phase cost is due and not yet resolved
                                // plays none of its abilities.
                                fits(o)
                                    && (cost_sources.is_empty()
                                        || settled.contains(&o)
                                        || self.phase_cost_due(o, &cost_sources).is_none())
                            });
                            if !may
                                || !self.has_response(o, self.obj(o).class, i as u16)
                                || !self.targets_open(&def.targets, o, player, scope)
                            {
                                continue;
                            }
                            out.push(PlayOption {
                                label: if bare {
                                    String::new()
                                } else {
                                    label(&[&self.obj(o).name, ": ", &def.text])
                                },
                                play: k as u16,
                                card: Some(o),
                                ability: Some(i as u16),
                            });
                        }
                    }
                }
                PlayKind::PhaseCost => {
                    if cost_sources.is_empty() || player != self.active {
                        continue;
                    }
                    for &o in self.in_play_ids() {
                        if self.controller_now(o) != player
                            || !fits(o)
                            || handled.contains(&(o, u16::MAX))
                        {
                            continue;
                        }
                        let Some(parts) = self.phase_cost_due(o, &cost_sources) else {
                            continue;
                        };
                        let name = &self.obj(o).name;
                        let pay = self.phase_cost_item(&parts, true);
                        if self.can_announce(&pay.targets, &pay.costs, o, player, scope) {
                            out.push(PlayOption {
                                label: format!("{} {name}: pay", play.label),
                                play: k as u16,
                                card: Some(o),
                                ability: Some(0),
                            });
                        }
                        out.push(PlayOption {
                            label: format!("{} {name}: decline", play.label),
                            play: k as u16,
                            card: Some(o),
                            ability: Some(1),
                        });
                    }
                }
            }
        }
        out
    }

    /// Whether a card of some class among the player's cards in `zone` passes what a play from
    /// there asks of its class alone: its `cards:` test (`fits`, answered per class), and for a
    /// cast, a spell to cast (or a permanent), a zone it can wait in, a target where an interrupt
    /// needs one, and costs that name nothing of the card (asked once per class, kept in `paid`
    /// for the cards' own tests). Costs or targets of the card itself are left to those tests.
    fn any_class_playable(
        &self,
        play: &crate::model::batch::PlayDef,
        zone: crate::model::ids::ZoneId,
        player: PlayerId,
        casting: Option<ObjectId>,
        fits: &dyn Fn(ObjectId) -> bool,
        paid: &mut smallvec::SmallVec<[(crate::model::ids::ClassId, bool); 4]>,
    ) -> bool {
        let cast = matches!(play.kind, PlayKind::Cast | PlayKind::CastInto(_));
        let permanent = matches!(play.kind, PlayKind::CastInto(_));
        if cast && self.ruleset.wait_zone == Some(zone) {
            return false;
        }
        let mut seen: smallvec::SmallVec<[crate::model::ids::ClassId; 4]> =
            smallvec::SmallVec::new();
        for &o in self.objects_in_zone(zone) {
            let x = self.obj(o);
            if x.owner != player || seen.contains(&x.class) {
                continue;
            }
            seen.push(x.class);
            if !fits(o) {
                continue;
            }
            if !cast {
                return true;
            }
            let (targets, costs): (&[TargetSpec], &[Deed]) =
                match &self.content.class_def(x.class).spell {
                    Some(sp) => (&sp.targets, &sp.costs),
                    None if permanent => (&[], &[]),
                    None => continue,
                };
            if casting.is_some() && targets.is_empty() {
                continue;
            }
            if costs.iter().all(names_no_object) {
                let ok = match paid.iter().find(|(c, _)| *c == x.class) {
                    Some(&(_, ok)) => ok,
                    None => {
                        let ok = self.costs_payable(costs, Some(o), Some(player), &[]);
                        paid.push((x.class, ok));
                        ok
                    }
                };
                if !ok {
                    continue;
                }
            }
            return true;
        }
        false
    }

    /// The first player in turn order, from the active player, who has a mandatory phase
    /// effect or a phase cost to deal with now (one that can be played now: its source in
    /// play and able to play it, a legal target for each target line).
    fn owing_phase_duty(&self) -> Option<PlayerId> {
        // Most games have no phase effect or cost in play: no play to look for.
        let any = self.in_play_ids().iter().any(|&o| {
            let class = self.content.class_def(self.obj(o).class);
            class.responses.iter().any(|d| d.phase.is_some())
        });
        if !any {
            return None;
        }
        let mut p = self.active;
        for _ in 0..self.players.len() {
            if !self.players[p.index()].lost {
                let owes = self.legal_plays(p, false).iter().any(|o| {
                    let play = &self.ruleset.plays[o.play as usize];
                    match (&play.kind, o.card, o.ability) {
                        (PlayKind::PhaseCost, _, _) => true,
                        (PlayKind::Activate, Some(c), Some(i)) => self
                            .content
                            .class_def(self.obj(c).class)
                            .responses
                            .get(i as usize)
                            .and_then(|d| d.phase.as_ref())
                            .is_some_and(|ph| ph.mandatory),
                        _ => false,
                    }
                });
                if owes {
                    return Some(p);
                }
            }
            p = PlayerId(((p.index() + 1) % self.players.len()) as u8);
        }
        None
    }

    /// The player who plays a phase effect of `o`: the one whose phase it names (`during:
    /// upkeep of ...`), or its controller.
    fn phase_player(&self, o: ObjectId, def: &ResponseDef) -> Option<PlayerId> {
        let controller = self.controller_now(o);
        match def.phase.as_ref().and_then(|p| p.whose.as_ref()) {
            None => Some(controller),
            Some(a) => match self.arg_value(a, Some(o), Some(controller), &[], &[]) {
                Some(Arg::Player(p)) => Some(p),
                _ => None,
            },
        }
    }

    /// The objects in play whose class has a phase cost, with each such response's index.
    fn phase_cost_sources(&self) -> Vec<(ObjectId, u16)> {
        // Found through the classes with a phase cost (most games have none in play), in the
        // order of the objects, then of their responses.
        let mut out = Vec::new();
        for &(class, i) in self.content.phase_cost_responses() {
            for &s in self.objects_of_class(class) {
                if self.in_play(s) && self.has_response(s, class, i) {
                    out.push((s, i));
                }
            }
        }
        out.sort_unstable();
        out
    }

    /// The phase costs permanent `o` bears (its own, and those other permanents give it),
    /// combined into one cost paid in the latest of their phases: the parts, if that phase is
    /// in progress and `o`'s controller is the active player ("your upkeep").
    fn phase_cost_due(
        &self,
        o: ObjectId,
        sources: &[(ObjectId, u16)],
    ) -> Option<Vec<Arc<ResponseDef>>> {
        let ts = self.ruleset.turn_structure.as_ref()?;
        let now = self.timing.flow.as_ref()?.phase;
        if self.controller_now(o) != self.active {
            return None;
        }
        let sheet = &self.derived().sheet;
        let mut parts = Vec::new();
        let mut latest = None;
        for &(s, i) in sources {
            let def = &self.content.class_def(self.obj(s).class).responses[i as usize];
            let Some(cost) = def.phase.as_ref().and_then(|p| p.cost.as_ref()) else {
                continue;
            };
            let bears = match &cost.affects {
                None => s == o,
                Some(c) => Ctx::new(self, sheet, Some(s), Some(self.controller_now(s)), &[])
                    .test(c, Subject::Object(o)),
            };
            if !bears {
                continue;
            }
            let at = ts.phases.iter().position(|p| Some(p.event) == def.during);
            latest = latest.max(at);
            parts.push(def.clone());
        }
        (latest == Some(now)).then_some(parts)
    }

    /// The item that handles a combined phase cost: paying it (its parts' costs, paid as it is
    /// announced) or declining it (their penalties, as it resolves). Its `this` is the
    /// permanent that bears the cost, its `you` that permanent's controller.
    fn phase_cost_item(&self, parts: &[Arc<ResponseDef>], pay: bool) -> ResponseDef {
        use crate::model::response::{PhaseCost, PhaseUse};
        let texts: Vec<&str> = parts.iter().map(|d| &*d.text).collect();
        let mut def = ResponseDef::of_deeds(
            ResponseKind::Ability,
            Arc::from(format!(
                "{} the phase cost: {}",
                if pay { "Pay" } else { "Decline" },
                texts.join(" ")
            )),
            Trigger {
                point: Point::After,
                patterns: Vec::new(),
            },
            Vec::new(),
        );
        for d in parts {
            let Some(cost) = d.phase.as_ref().and_then(|p| p.cost.as_ref()) else {
                continue;
            };
            if pay {
                def.costs.extend(d.costs.iter().cloned());
            } else {
                def.deeds.extend(cost.unpaid.iter().cloned());
            }
        }
        def.phase = Some(PhaseUse {
            whose: None,
            mandatory: true,
            cost: Some(PhaseCost::default()),
        });
        def
    }

    /// A card's spell as it is announced: its targets, its costs, then its move to the zone
    /// where spells wait.
    /// A permanent spell (`permanent`) with no `spell` is announced with no target and no cost.
    fn announcement(
        &self,
        card: ObjectId,
        from: Option<crate::model::ids::ZoneId>,
        permanent: bool,
    ) -> Option<ResponseDef> {
        let class = self.content.class_def(self.obj(card).class);
        let sp = class.spell.as_ref();
        if sp.is_none() && !permanent {
            return None;
        }
        let mut def = ResponseDef::of_deeds(
            ResponseKind::Spell,
            sp.map_or_else(|| Arc::from(class.name.as_str()), |s| s.text.clone()),
            Trigger {
                point: Point::After,
                patterns: Vec::new(),
            },
            Vec::new(),
        );
        if let Some(sp) = sp {
            def.targets = sp.targets.clone();
            def.costs = sp.costs.clone();
        }
        if let (Some(wait), Some(from)) = (self.ruleset.wait_zone, from) {
            def.costs.push(Deed::Occur {
                event: self.builtin.changes_zone,
                args: vec![
                    ArgExpr::Object(crate::model::condition::ObjRef::This),
                    ArgExpr::Zone(from),
                    ArgExpr::Zone(wait),
                ],
                standing: Standing::default(),
            });
        }
        Some(def)
    }

    /// A player makes a play the pending decision offered. One announced `unless a batch
    /// begins` waits for the other players, each in turn, to begin a batch or pass.
    pub(super) fn make_play(
        &mut self,
        player: PlayerId,
        option: PlayOption,
    ) -> Result<(), ActionError> {
        let play = self
            .ruleset
            .plays
            .get(option.play as usize)
            .ok_or(ActionError::BadChoice("no such play".into()))?;
        if play.unless_batch && self.timing.tasks.is_empty() {
            self.log_at(
                0,
                Logged::Played {
                    player,
                    label: self.option_label(&option).into(),
                },
            );
            let next = self.next_player(player);
            let f = self.flow_mut();
            f.announced = Some((player, option));
            f.turn = next;
            f.passes = 0;
            return Ok(());
        }
        self.play_now(player, option, true)
    }

    /// A play happens: announced into a batch, or its deeds done at once.
    fn play_now(
        &mut self,
        player: PlayerId,
        option: PlayOption,
        log: bool,
    ) -> Result<(), ActionError> {
        let rs = self.ruleset.clone();
        let play = &rs.plays[option.play as usize];
        let card = option.card;
        if card.is_none() && !matches!(play.kind, PlayKind::Deeds(_)) {
            return Err(ActionError::BadChoice("a play names its card".into()));
        }
        let top = self.timing.tasks.len();
        let in_batch = top > 0;
        let depth = match self.timing.tasks.last() {
            Some(Task::Batch(b)) => b.depth,
            _ => 0,
        };
        if play.once_per_turn {
            self.flow_mut().used.push(option.play);
        }
        if log {
            self.log_at(
                depth,
                Logged::Played {
                    player,
                    label: self.option_label(&option).into(),
                },
            );
        }
        let batched = |kind: &PlayKind, def: &ResponseDef| match kind {
            PlayKind::Cast | PlayKind::CastInto(_) | PlayKind::PhaseCost => true,
            PlayKind::Activate => def.kind == ResponseKind::Ability,
            PlayKind::Deeds(_) => false,
        };
        let (def, announce) = match &play.kind {
            PlayKind::Cast | PlayKind::CastInto(_) => {
                let card = card.ok_or(ActionError::BadChoice("a play names its card".into()))?;
                let into = match play.kind {
                    PlayKind::CastInto(zone) => Some(zone),
                    _ => None,
                };
                // The same for every card of its class: made once (`Content::play_def`).
                let class = self.obj(card).class;
                let def = self
                    .content
                    .play_def(&rs, option.play as usize, class, || {
                        self.announcement(card, play.from, into.is_some())
                    })
                    .ok_or(ActionError::NotASpell(self.obj(card).name.to_string()))?;
                (def, Some(into.map_or(ItemKind::Spell, ItemKind::Permanent)))
            }
            PlayKind::Activate => {
                let i = option.ability.unwrap_or(0) as usize;
                let card = card.ok_or(ActionError::BadChoice("a play names its card".into()))?;
                let def = self.content.class_def(self.obj(card).class).responses[i].clone();
                if def.phase.is_some() {
                    // A phase effect: once a phase.
                    self.flow_mut().handled.push((card, i as u16));
                }
                let announce = batched(&play.kind, &def).then(|| ItemKind::Ability(def.clone()));
                (def, announce)
            }
            PlayKind::PhaseCost => {
                let card = card.ok_or(ActionError::BadChoice("a play names its card".into()))?;
                let sources = self.phase_cost_sources();
                let parts = self.phase_cost_due(card, &sources).unwrap_or_default();
                let def = Arc::new(self.phase_cost_item(&parts, option.ability == Some(0)));
                self.flow_mut().handled.push((card, u16::MAX));
                (def.clone(), Some(ItemKind::Ability(def)))
            }
            PlayKind::Deeds(deeds) => {
                let make = || {
                    ResponseDef::of_deeds(
                        ResponseKind::Spell,
                        play.label.clone(),
                        Trigger {
                            point: Point::After,
                            patterns: Vec::new(),
                        },
                        deeds.clone(),
                    )
                };
                // The play's alone, whatever the card: made once (kept as its first class's).
                let kept = card.and_then(|c| self.get_object(c)).and_then(|o| {
                    self.content
                        .play_def(&rs, option.play as usize, o.class, || Some(make()))
                });
                (kept.unwrap_or_else(|| Arc::new(make())), None)
            }
        };
        if announce.is_some() && !in_batch {
            if let Some((by, announced)) =
                self.timing.flow.as_ref().and_then(|f| f.announced.clone())
            {
                // A batch begun: what was announced is aborted, and may be announced again.
                self.flow_mut().announced = None;
                self.log_at(
                    depth,
                    Logged::Fizzled {
                        by: Responder {
                            source: None,
                            text: self.option_label(&announced).into(),
                        },
                        why: format!(
                            "{} began a batch: {}'s announcement is aborted",
                            self.player_name(player),
                            self.player_name(by)
                        ),
                    },
                );
            }
            // It begins a batch: the active player decides first once it is added.
            let active = self.active;
            self.timing_mut().tasks.push(Task::Batch(Box::new(Batch {
                items: Vec::new(),
                first: active,
                adding: Some((active, 0)),
                depth,
                casting: None,
            })));
        }
        if announce.is_none() {
            // Done at once: the same player decides again.
            if let Some(f) = self.timing_mut().flow.as_mut() {
                if !in_batch {
                    f.turn = player;
                    f.passes = 0;
                }
            }
        }
        let frame = self.timing.tasks.len().saturating_sub(1);
        let mut run = Run::new(
            frame,
            0,
            def,
            card,
            Some(player),
            Vec::new(),
            None,
            depth + 1,
        );
        // A mana ability cannot be interrupted: what its costs trigger comes after the mana is
        // added (`after: once resolved`).
        if run.def.kind == ResponseKind::ManaAbility && matches!(play.kind, PlayKind::Activate) {
            run.holds = self.ruleset.timing.after_once_resolved.then(Vec::new);
        }
        run.announce = announce;
        run.scope = Some(
            self.being_cast()
                .map_or(TargetScope::NotWaiting, TargetScope::Only),
        );
        self.timing_mut().tasks.push(Task::Run(Box::new(run)));
        Ok(())
    }

    /// An announced spell or ability has its targets and costs. A spell is now being cast:
    /// batches of interrupts may come, its caster first, before it is added to the batch below;
    /// an ability, or an interrupt announced during a casting, is added at once.
    pub(super) fn finish_announce(&mut self, ri: usize, r: &Run) -> Result<(), ActionError> {
        let kind = r.announce.clone().expect("an announced run");
        self.timing_mut().tasks.truncate(ri);
        let id = self.timing.next_item;
        self.timing_mut().next_item += 1;
        let item = BatchItem {
            id,
            source: r.source.expect("an announced effect has a source"),
            controller: r.you.expect("an announced effect has a controller"),
            targets: r.targets.clone(),
            kind,
        };
        let in_casting = ri.checked_sub(1).is_some_and(
            |b| matches!(&self.timing.tasks[b], Task::Batch(b) if b.casting.is_some()),
        );
        if matches!(item.kind, ItemKind::Spell | ItemKind::Permanent(_)) && !in_casting {
            let by = self.item_responder(&item);
            self.log_at(r.depth - 1, Logged::BeingCast { item: id, by });
            let caster = item.controller;
            self.timing_mut().tasks.push(Task::Batch(Box::new(Batch {
                items: Vec::new(),
                first: caster,
                adding: Some((caster, 0)),
                depth: r.depth,
                casting: Some(item),
            })));
            return Ok(());
        }
        self.add_to_batch(ri, item)
    }
}

/// Whether a cost's arguments name no object and no occurrence: what it asks is the same for
/// every card that has it (a number, "you", the active player, a zone or property).
fn names_no_object(cost: &Deed) -> bool {
    use crate::model::condition::PlayerRef;
    match cost {
        Deed::Occur { args, .. } => args.iter().all(|a| match a {
            ArgExpr::Player(PlayerRef::You | PlayerRef::Active)
            | ArgExpr::Zone(_)
            | ArgExpr::Counter(_)
            | ArgExpr::Property(_)
            | ArgExpr::Class(_) => true,
            // A number written out is asked without walking the expression.
            ArgExpr::Number(n) => {
                matches!(n, crate::model::condition::NumExpr::Const(_)) || n.is_constant()
            }
            _ => false,
        }),
        _ => false,
    }
}

impl GameState {
    /// A legal play's label ("cast Lightning Bolt", "Mountain: {T}: Add {R}."): the one it was
    /// listed with, else (listed without, `Timing::bare_plays`) written from its play now.
    pub(crate) fn option_label(&self, o: &PlayOption) -> String {
        if !o.label.is_empty() {
            return o.label.clone();
        }
        let Some(play) = self.ruleset.plays.get(o.play as usize) else {
            return String::new();
        };
        let Some(card) = o.card.and_then(|c| self.get_object(c)) else {
            return play.label.to_string();
        };
        match &play.kind {
            PlayKind::Activate => {
                let text = o.ability.and_then(|i| {
                    self.content
                        .class_def(card.class)
                        .responses
                        .get(i as usize)
                        .map(|d| d.text.clone())
                });
                label(&[&card.name, ": ", text.as_deref().unwrap_or("")])
            }
            PlayKind::PhaseCost => format!(
                "{} {}: {}",
                play.label,
                card.name,
                if o.ability == Some(0) {
                    "pay"
                } else {
                    "decline"
                }
            ),
            _ => label(&[&play.label, " ", &card.name]),
        }
    }

    /// The pending play decision's options with their labels written (after plays were listed
    /// without them).
    pub(crate) fn label_pending_plays(&mut self) {
        let bare = matches!(self.pending.as_deref(), Some(DecisionRequest::Play { options, .. })
            if options.iter().any(|o| o.label.is_empty()));
        if !bare {
            return;
        }
        let mut req = self.pending.as_deref().cloned();
        if let Some(DecisionRequest::Play { options, .. }) = req.as_mut() {
            for o in options.iter_mut() {
                o.label = self.option_label(o);
            }
        }
        self.pending = req.map(Arc::new);
    }
}

/// A play's label from its parts, written out without the formatting machinery (labels are made
/// for every legal play before each play decision).
fn label(parts: &[&str]) -> String {
    let mut s = String::with_capacity(parts.iter().map(|p| p.len()).sum());
    for p in parts {
        s.push_str(p);
    }
    s
}
