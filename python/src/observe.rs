//! What a player may see, as a fixed-size vector of numbers, and the pending decision's options as
//! a padded list with a mask. The layout follows the ruleset and content (their characteristics,
//! properties, zones, counters and classes), so it is the same for every state of one game.
//!
//! A player sees (Magic's CR 400.2: hidden and public zones): every player's properties and how
//! many objects each holds in each zone; the objects in play and those waiting to resolve, with
//! their derived characteristics; and the player's own cards in the other zones but the deck zone
//! (a hand, a graveyard), counted by class.

use rulecraft_core::model::decision::DecisionRequest;
use rulecraft_core::model::event::Primitive;
use rulecraft_core::model::ruleset::CharKind;
use rulecraft_core::{CharId, Choice, GameState, PlayerId, Symbol, Value, ZoneId};

/// The kinds of decision, in the order the observation's one-hot lists them.
pub const DECISION_KINDS: [&str; 8] = [
    "order_timestamps",
    "choose_next",
    "react",
    "order_choices",
    "pay_cost",
    "play",
    "choose_target",
    "choose_number",
];

/// The kind of a pending decision, as an index of [`DECISION_KINDS`].
pub fn decision_kind(d: &DecisionRequest) -> usize {
    match d {
        DecisionRequest::OrderTimestamps { .. } => 0,
        DecisionRequest::ChooseNext { .. } => 1,
        DecisionRequest::React { .. } => 2,
        DecisionRequest::OrderChoices { .. } => 3,
        DecisionRequest::PayCost { .. } => 4,
        DecisionRequest::Play { .. } => 5,
        DecisionRequest::ChooseTarget { .. } => 6,
        DecisionRequest::ChooseNumber { .. } => 7,
    }
}

/// The legal answers to the pending decision, each with its label: the core's options
/// (`GameState::decision_options`), and for an order of timestamps (CR 613.7), which the core
/// lists as no options, the order as offered, one legal answer, so that a decision pending always
/// has at least one option.
pub fn options(state: &GameState) -> Vec<(String, Choice)> {
    let listed: Vec<(String, Choice)> = state
        .decision_options()
        .into_iter()
        .map(|o| (o.label, o.choice))
        .collect();
    if !listed.is_empty() {
        return listed;
    }
    match state.pending_decision() {
        Some(d @ DecisionRequest::OrderTimestamps { .. }) => d
            .choices()
            .into_iter()
            .take(1)
            .map(|c| ("order as offered".to_string(), c))
            .collect(),
        _ => Vec::new(),
    }
}

/// What a player sees of the objects of a zone.
#[derive(Clone, Copy, Debug)]
enum Slot {
    /// Each object, in this place of the public zones.
    Public(usize),
    /// The player's own objects, counted by class, in this place of the private zones.
    Own(usize),
    /// Only how many each player holds.
    Hidden,
}

/// Where each part of the observation lies, worked out once per game.
#[derive(Clone, Debug)]
pub struct Layout {
    players: usize,
    props: usize,
    zones: usize,
    classes: usize,
    counters: usize,
    /// Zones whose objects are seen one by one: in play, and where spells wait.
    public: Vec<ZoneId>,
    /// Zones whose own cards a player sees counted by class: not public, not the deck zone.
    private: Vec<ZoneId>,
    numbers: Vec<CharId>,
    /// Each symbols characteristic with the symbols it is read for.
    symbols: Vec<(CharId, Vec<Symbol>)>,
    controller: Option<CharId>,
    /// What a player sees of each zone's objects, by zone index.
    slots: Vec<Slot>,
    zone_names: Vec<String>,
    /// At most this many objects are seen one by one (the first by id).
    pub max_objects: usize,
    /// The option list's length: options past it are not offered.
    pub max_options: usize,
}

impl Layout {
    /// The layout for a game's ruleset and content.
    pub fn new(state: &GameState, max_objects: usize, max_options: usize) -> Layout {
        let r = state.ruleset();
        let c = state.content();
        let mut public: Vec<ZoneId> = (0..r.zones.len())
            .filter(|&z| r.zones[z].in_play)
            .map(|z| ZoneId(z as u16))
            .collect();
        if let Some(w) = r.wait_zone {
            if !public.contains(&w) {
                public.push(w);
            }
        }
        let deck = r.deck.as_ref().map(|d| d.zone);
        let private: Vec<ZoneId> = (0..r.zones.len())
            .map(|z| ZoneId(z as u16))
            .filter(|z| !public.contains(z) && Some(*z) != deck)
            .collect();
        let slots = (0..r.zones.len())
            .map(|z| {
                let z = ZoneId(z as u16);
                match (
                    public.iter().position(|p| *p == z),
                    private.iter().position(|p| *p == z),
                ) {
                    (Some(i), _) => Slot::Public(i),
                    (None, Some(k)) => Slot::Own(k),
                    (None, None) => Slot::Hidden,
                }
            })
            .collect();
        let mut numbers = Vec::new();
        let mut symbols = Vec::new();
        let mut controller = None;
        for (i, def) in r.characteristics.iter().enumerate() {
            let ch = CharId(i as u16);
            match def.kind {
                CharKind::Number => numbers.push(ch),
                CharKind::Symbols => {
                    // The symbols content prints for it and the state changes events make.
                    let mut vocab: Vec<Symbol> = Vec::new();
                    for class in &c.classes {
                        for (pc, v) in &class.printed {
                            if let (true, Value::Symbols(s)) = (*pc == ch, v) {
                                vocab.extend(s.iter().cloned());
                            }
                        }
                    }
                    for ev in &r.events {
                        for p in &ev.changes {
                            if let Primitive::State { char, symbol, .. } = p {
                                if *char == ch {
                                    vocab.push(symbol.clone());
                                }
                            }
                        }
                    }
                    vocab.sort();
                    vocab.dedup();
                    symbols.push((ch, vocab));
                }
                CharKind::Controller => controller = controller.or(Some(ch)),
                _ => {}
            }
        }
        Layout {
            players: state.players().len(),
            props: r.props.len(),
            zones: r.zones.len(),
            classes: c.classes.len(),
            counters: r.counters.len(),
            public,
            private,
            numbers,
            symbols,
            controller,
            slots,
            zone_names: r.zones.iter().map(|z| z.name.clone()).collect(),
            max_objects,
            max_options,
        }
    }

    fn global_len(&self) -> usize {
        3 + DECISION_KINDS.len()
    }
    fn player_len(&self) -> usize {
        1 + self.props + self.zones
    }
    /// The numbers describing one object seen one by one.
    pub fn object_len(&self) -> usize {
        1 + self.public.len()
            + 2
            + self.classes
            + self.numbers.len()
            + self.symbols.iter().map(|(_, v)| v.len()).sum::<usize>()
            + self.counters
            + 1
    }
    /// The observation's length.
    pub fn len(&self) -> usize {
        self.global_len()
            + self.players * self.player_len()
            + self.private.len() * self.classes
            + self.max_objects * self.object_len()
    }

    /// The names of the observation's parts, each with its offset and length: what a model reads.
    pub fn parts(&self) -> Vec<(String, usize, usize)> {
        let mut out = Vec::new();
        let mut at = 0;
        let mut part = |name: String, n: usize| {
            out.push((name, at, n));
            at += n;
        };
        part("global".into(), self.global_len());
        for i in 0..self.players {
            let who = if i == 0 { " (the observer)" } else { "" };
            part(format!("player {i}{who}"), self.player_len());
        }
        for z in &self.private {
            let zone = self.zone_names.get(z.index()).map_or("?", |n| n.as_str());
            part(format!("own cards by class: {zone}"), self.classes);
        }
        part(
            format!("objects ({} x {})", self.max_objects, self.object_len()),
            self.max_objects * self.object_len(),
        );
        out
    }

    /// What `me` sees of `state`, written into `out` (resized to [`Layout::len`]). Players are
    /// listed from `me` on in turn order.
    pub fn observe(&self, state: &GameState, me: PlayerId, out: &mut Vec<f32>) {
        out.clear();
        out.resize(self.len(), 0.0);
        let n = self.players.max(1);
        let seat = |p: PlayerId| (p.index() + n - me.index() % n) % n;
        let num = |v: &Value| match v {
            Value::Number(Some(x)) => *x as f32,
            _ => 0.0,
        };
        // Global: the turn, whether `me` is active, whether `me` decides, the decision's kind.
        out[0] = state.turn() as f32;
        out[1] = f32::from(state.active() == me);
        if let (Some(d), false) = (state.pending_decision(), state.is_over()) {
            out[2] = f32::from(d.player() == me);
            out[3 + decision_kind(d)] = 1.0;
        }
        let players_at = self.global_len();
        // Each player: lost, properties, objects held in each zone.
        let d = state.derived();
        for (p, player) in state.players().iter().enumerate().take(self.players) {
            let base = players_at + seat(PlayerId(p as u8)) * self.player_len();
            out[base] = f32::from(player.lost);
            if let Some(row) = d.sheet.players.get(p) {
                for (q, v) in row.iter().enumerate().take(self.props) {
                    out[base + 1 + q] = num(v);
                }
            }
        }
        let zone_base = 1 + self.props;
        let private_at = players_at + self.players * self.player_len();
        let mut at = private_at + self.private.len() * self.classes;
        let mut seen = 0;
        for o in state.objects() {
            let owner = o.owner.index();
            let zone = o.zone.index();
            if owner < self.players && zone < self.zones {
                out[players_at + seat(o.owner) * self.player_len() + zone_base + zone] += 1.0;
            }
            let slot = self.slots.get(zone).copied().unwrap_or(Slot::Hidden);
            let public = match slot {
                Slot::Public(z) => z,
                Slot::Own(k) => {
                    if o.owner == me && o.class.index() < self.classes {
                        out[private_at + k * self.classes + o.class.index()] += 1.0;
                    }
                    continue;
                }
                Slot::Hidden => continue,
            };
            if seen == self.max_objects {
                continue;
            }
            seen += 1;
            let mut i = at;
            out[i] = 1.0;
            i += 1;
            out[i + public] = 1.0;
            i += self.public.len();
            out[i] = f32::from(o.owner == me);
            let row = d.sheet.objects.get_row(o.id.index());
            let value = |c: CharId| row.and_then(|r| r.get(c.index()));
            let controller = match self.controller.and_then(value) {
                Some(Value::Player(Some(p))) => *p,
                _ => o.controller,
            };
            out[i + 1] = f32::from(controller == me);
            i += 2;
            if o.class.index() < self.classes {
                out[i + o.class.index()] = 1.0;
            }
            i += self.classes;
            for c in &self.numbers {
                out[i] = value(*c).map_or(0.0, num);
                i += 1;
            }
            for (c, vocab) in &self.symbols {
                if let Some(Value::Symbols(s)) = value(*c) {
                    for (k, sym) in vocab.iter().enumerate() {
                        out[i + k] = f32::from(s.contains(sym));
                    }
                }
                i += vocab.len();
            }
            for cp in &o.counters {
                if cp.kind.index() < self.counters {
                    out[i + cp.kind.index()] += cp.count as f32;
                }
            }
            i += self.counters;
            out[i] = f32::from(o.attached_to.is_some());
            at += self.object_len();
        }
    }
}
