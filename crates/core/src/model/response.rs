//! Responses as content and rulesets write them: triggered traits, Reactions, replacement
//! effects (negation, prevention, substitution), triggered rulebook effects and delayed effects,
//! each with the trigger it answers and what it does.

use crate::model::condition::TargetSpec;
use crate::model::condition::{Cond, NumExpr, ObjRef, PlayerRef};
use crate::model::ids::{EventId, ZoneId};
use crate::model::timing::{Point, Responds};
use serde::Serialize;
use std::sync::Arc;

/// What kind of response it is, which decides the step that takes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum ResponseKind {
    /// A triggered trait of a card: happens when triggered (step B in the "CE Timing" rules).
    Trait,
    /// A Reaction: a player may take it (step C).
    Reaction,
    /// Negates, prevents or substitutes the occurrence (step A).
    Replacement,
    /// A triggered rulebook effect of the ruleset ("Honor loss after a dishonorable Personality
    /// is destroyed").
    Rule,
    /// A delayed effect: "the next time ...".
    Delayed,
    /// A standing prohibition ("this Personality cannot be bowed", "you do not gain Honor"):
    /// an occurrence it matches fails before any step, so nothing answers it and nothing is
    /// substituted for it ("cannot" beats "can", CR 101.2). A static ability.
    Prohibition,
    /// A resolving spell's one-shot deeds ("deal 3 damage to any target", "create a 1/1"): they
    /// happen in order, as a response's deeds do, as the spell resolves (CR 608.2c).
    Spell,
    /// An activated ability ("{T}: ..."): its controller plays it as a play when fast effects
    /// may be played; it is announced into a batch and resolves later.
    Ability,
    /// A mana ability: played as an ability is, but it happens at once, is never in a batch and
    /// cannot be interrupted.
    ManaAbility,
}

impl ResponseKind {
    /// The kind in words, for messages ("trait", "reaction", "delayed effect").
    pub fn name(self) -> &'static str {
        match self {
            ResponseKind::Trait => "trait",
            ResponseKind::Reaction => "reaction",
            ResponseKind::Replacement => "replacement",
            ResponseKind::Rule => "rule",
            ResponseKind::Delayed => "delayed effect",
            ResponseKind::Prohibition => "prohibition",
            ResponseKind::Spell => "spell",
            ResponseKind::Ability => "ability",
            ResponseKind::ManaAbility => "mana ability",
        }
    }

    /// The step of a timing procedure that takes responses of this kind.
    pub fn responds(self) -> Responds {
        match self {
            ResponseKind::Replacement => Responds::Replacements,
            ResponseKind::Reaction | ResponseKind::Ability | ResponseKind::ManaAbility => {
                Responds::Reactions
            }
            ResponseKind::Trait
            | ResponseKind::Rule
            | ResponseKind::Delayed
            | ResponseKind::Spell => Responds::Triggered,
            ResponseKind::Prohibition => Responds::Prohibitions,
        }
    }
}

/// One event a trigger answers, with a condition on each parameter (`None`: any). An object or
/// player parameter's condition is tested on that object or player, with the response's source
/// as "this" and its controller as "you".
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Pattern {
    /// The event kind it answers.
    pub event: EventId,
    /// One per parameter of the event: the condition its argument must meet (`None`: `_`, any;
    /// only object and player parameters have one).
    pub filters: Vec<Option<Cond>>,
}

/// "Before a Personality bows", "after your Dynasty Phase ends", "the next time he straightens
/// or moves home": a timing point of one of these events.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct Trigger {
    /// The timing point it answers at: "before", "when", "after", and for a period "after ...
    /// begins" and "before ... ends".
    pub point: Point,
    /// Joined by "or": a delayed trigger answers the first of them to happen, and never another.
    pub patterns: Vec<Pattern>,
}

/// An argument of an occurrence a response makes, worked out as it happens.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum ArgExpr {
    /// The argument of that index of the occurrence answered (for a delayed effect, of the one
    /// answered when it was set up).
    Param(u8),
    /// The response's target of that index.
    Target(u8),
    /// An object named from the response's source (`this`: the source; `attached`: the object
    /// it is attached to).
    Object(ObjRef),
    /// The controller of an object ("its controller loses 2 Honor").
    ControllerOf(ObjRef),
    /// The controller of the response's target of that index (the empire of the object an
    /// effects group fires on: FreeOrion's "loose" targeting of empires).
    ControllerOfTarget(u8),
    /// A player named from the response (`you`: its controller; `opponent`; `active player`).
    Player(PlayerRef),
    /// A number, worked out as the deed happens (`2`, `event amount - 1`, `event card.force`).
    Number(NumExpr),
    /// A zone, counter kind or player property of the ruleset, by name.
    Zone(crate::model::ids::ZoneId),
    /// A counter kind of the ruleset, by name.
    Counter(crate::model::ids::CounterId),
    /// A player property of the ruleset, by name.
    Property(crate::model::ids::PropId),
    /// An object class of the content, by name (found as the deed happens: a class may be
    /// defined after the one that names it).
    Class(std::sync::Arc<str>),
}

/// One thing a response does, in order.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub enum Deed {
    /// An occurrence of an event ("gain 1 Honor", "bow him"): it goes through its own timing
    /// points before the next deed (the "CE Timing" priority rule).
    Occur {
        /// The event kind that happens.
        event: EventId,
        /// Its arguments, one per parameter of the event.
        args: Vec<ArgExpr>,
        /// What prohibitions and responses can do to it.
        standing: Standing,
    },
    /// Objects of a class are created ("summon a 1/1"; a token): `count` of them, owned and
    /// controlled by `owner`, in `zone`; each that enters a zone in play is answered as entering.
    Create {
        /// The class, by name (content may define it after the response that names it; the
        /// loader checks that it exists).
        class: Arc<str>,
        /// How many.
        count: u8,
        /// Who owns them.
        owner: ArgExpr,
        /// The zone they are created in.
        zone: ZoneId,
        /// The object they enter attached to, if any (FreeOrion's Create Object: located where
        /// the object fired on is).
        #[serde(default)]
        at: Option<ArgExpr>,
    },
    /// The action answered still counts as taken (it happens: its costs stay paid, and what
    /// answers it "after" comes), but its effects do not happen: its changes are not made
    /// (L5R's "negate the action's effects", unlike preventing the action).
    Negate,
    /// The occurrence answered does not happen (negation or prevention).
    Prevent,
    /// The occurrence answered does not happen; this one happens in its place (substitution).
    Instead {
        /// The event kind that happens instead.
        event: EventId,
        /// Its arguments, one per parameter of the event.
        args: Vec<ArgExpr>,
    },
    /// Add to the size of the change answered ("increase the gain by 1", "reduce the gain by 2":
    /// a negative amount); the size does not go below zero.
    ChangeAmount(NumExpr),
    /// Change a parameter of the occurrence answered ("when another player would assign a unit
    /// to attack one of your provinces: you may assign it to a different province").
    SetParam {
        /// Index of the parameter changed.
        param: u8,
        /// Its new argument.
        to: ArgExpr,
    },
    /// A period begins (an additional phase, a duel): "before" it begins, it begins, "after" it
    /// begins, before the next deed. It stays open until the game's turn structure or an `End`
    /// deed ends it.
    Begin {
        /// The period's event kind.
        event: EventId,
        /// Its arguments, one per parameter of the event.
        args: Vec<ArgExpr>,
    },
    /// The latest period of this kind that is open ends ("the duel ends"): "before" it ends, it
    /// ends, "after" it ends. With none open, the deed does nothing (logged).
    End(EventId),
    /// Start a delayed effect ("the next time he straightens, dishonor him").
    Delayed(Arc<DelayedDef>),
    /// Start a continuous effect ("he gains +2F until end of turn"): whom it applies to is
    /// decided now, with the occurrence's arguments, and its numbers are fixed now, as a
    /// resolving spell's are (CR 608.2h).
    Effect {
        /// How long the effect lasts.
        duration: crate::model::effect::Duration,
        /// The effect: whom it applies to and what it changes.
        def: Arc<crate::model::effect::EffectDef>,
    },
    /// A non-meter effects group fires (FreeOrion's effects system, Effect Processing): its
    /// scope is fixed first, then each effect fires, in order, on each object of the scope, as
    /// the deed's one target (`target`). An object destroyed meanwhile leaves the scope.
    Group(Arc<GroupDef>),
}

/// A non-meter effects group's scope, stacking number and effects.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct GroupDef {
    /// Its scope: the objects in play that meet it, tested with the group's source as `this`
    /// (inclusive conditions joined by "or", each exclusive one cut from them).
    pub scope: Cond,
    /// Its effects' stacking number (FreeOrion's effects system, Stacking Number): 0 always
    /// fires; another fires on an object only if no effect of that number fired on it earlier
    /// this turn.
    pub stacking: u32,
    /// Its effects, in order: occurrences (or creations) whose `target` is the object fired on.
    pub effects: Vec<Deed>,
    /// For each effect, what the object fired on must have for it to fire: the characteristics
    /// it changes (a meter's current value, a planet's size); an object without one is skipped
    /// for that effect only (FreeOrion's effects system, Effect Scope).
    pub needs: Vec<Vec<crate::model::ids::CharId>>,
}

impl ResponseDef {
    /// A response that only does these deeds, with no trigger, condition, target or cost of its
    /// own: a delayed effect once it fires, or a resolving spell's one-shot deeds.
    pub fn of_deeds(
        kind: ResponseKind,
        text: Arc<str>,
        trigger: Trigger,
        deeds: Vec<Deed>,
    ) -> Self {
        ResponseDef {
            kind,
            text,
            trigger,
            condition: None,
            targets: Vec::new(),
            choosers: Vec::new(),
            costs: Vec::new(),
            optional_costs: false,
            deeds,
            zones: Vec::new(),
            during: None,
            granted: false,
            phase: None,
            priority: 0,
        }
    }
}

/// What prohibitions and responses can do to an occurrence a deed makes ("even if he cannot
/// straighten", "this cannot be prevented"). By default, anything.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Standing {
    /// It happens even if a prohibition forbids it ("even if he cannot"); responses still can
    /// stop it.
    pub despite_prohibitions: bool,
    /// It cannot be prevented: responses that would prevent it or substitute another for it are
    /// not offered.
    pub unpreventable: bool,
    /// Its effects cannot be negated: `negate` does nothing to it.
    pub unnegatable: bool,
    /// Its size and arguments cannot be changed: responses that would change them are not
    /// offered.
    pub fixed: bool,
}

impl Standing {
    /// Whether this deed, answering an occurrence of this standing, can do anything to it.
    pub fn allows(self, deed: &Deed) -> bool {
        match deed {
            Deed::Prevent | Deed::Instead { .. } => !self.unpreventable,
            Deed::Negate => !self.unnegatable,
            Deed::ChangeAmount(_) | Deed::SetParam { .. } => !self.fixed,
            _ => true,
        }
    }
}

/// How long a delayed trigger waits.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Lasting {
    /// "The next time" by default: this turn only.
    ThisTurn,
    /// "The next time this game".
    ThisGame,
}

/// "The next time X (or Y): do Z".
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct DelayedDef {
    /// Its rules text, shown in the log.
    pub text: Arc<str>,
    /// What it waits for.
    pub trigger: Trigger,
    /// How long it waits: this turn, or this game.
    pub lasting: Lasting,
    /// What it does when it triggers, in order.
    pub deeds: Vec<Deed>,
}

/// A response: what triggers it, whether it may happen, and what it does.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct ResponseDef {
    /// Its kind, which decides the timing step that takes it.
    pub kind: ResponseKind,
    /// The rules text, shown in requests and in the log.
    pub text: Arc<str>,
    /// The timing point and the events it answers.
    pub trigger: Trigger,
    /// It happens only if this holds, tested on its source with the occurrence's parameters.
    pub condition: Option<Cond>,
    /// Targets chosen as it begins.
    pub targets: Vec<TargetSpec>,
    /// Who chooses each target (`None`: its controller). When players other than one choose,
    /// the player who orders conflicts decides who chooses first ("CE Timing": choices by
    /// different players made by one text are ordered at step B by the active player).
    pub choosers: Vec<Option<PlayerRef>>,
    /// Occurrences that pay for it, before its deeds; if one does not happen, neither do they.
    pub costs: Vec<Deed>,
    /// Its controller may decline to pay its costs, and then it does nothing ("you may pay 1 to
    /// gain 1 life": the choice is made when it triggers, or never).
    pub optional_costs: bool,
    /// What it does, in order, once its targets are chosen and its costs paid.
    pub deeds: Vec<Deed>,
    /// Zones besides those in play where its source may be ("Reactions" in hand).
    pub zones: Vec<ZoneId>,
    /// It answers only while a period of this kind is open ("during your Dynasty Phase").
    pub during: Option<EventId>,
    /// An ability the class's effects give to other objects (`granted`): objects of the class
    /// itself do not have it.
    #[serde(default)]
    pub granted: bool,
    /// A phase effect or a phase cost: an ability whose `during:` names a phase of the turn.
    #[serde(default)]
    pub phase: Option<PhaseUse>,
    /// Its place in a step that takes responses in declared order (`priority: N`, higher
    /// first; 0 by default).
    #[serde(default)]
    pub priority: i32,
}

/// A phase effect or a phase cost (Magic: The Gathering's Revised-era "Phase Structure"):
/// played as an instant in the phase its response's `during:` names, by the player whose phase
/// it is, once that phase.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct PhaseUse {
    /// Whose phase it is played in (none: its controller's), "during the upkeep of enchanted
    /// creature's controller": that player plays it.
    pub whose: Option<ArgExpr>,
    /// The phase cannot end until it is dealt with: a mandatory phase effect (with a legal
    /// target and its source able to play it), and every phase cost.
    pub mandatory: bool,
    /// A phase cost: its costs are paid, or its penalty happens.
    pub cost: Option<PhaseCost>,
}

/// A phase cost: the permanents that bear it and the penalty for not paying. A permanent's
/// phase costs from all sources combine into one cost, paid in the latest of their phases.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct PhaseCost {
    /// The permanents that bear it, tested with this object as the source ("all artifacts");
    /// none: this object only.
    pub affects: Option<crate::model::condition::Cond>,
    /// What happens when it is declined ("the artifact is buried"), with the permanent that
    /// bears it as `this` and its controller as `you`.
    pub unpaid: Vec<Deed>,
}
