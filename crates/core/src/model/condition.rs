//! Conditions and numeric expressions: one small language for "which objects an effect applies to",
//! "as long as", state-based checks, and later the scopes and activation conditions of FreeOrion's
//! effects groups.

use crate::model::ids::{CharId, CounterId, ObjectId, PlayerId, PropId, ZoneId};
use crate::model::value::Symbol;
use serde::Serialize;

/// One target a spell or a response takes: what a legal one is, and its name where the spell
/// names its targets ("target \"first\": creature you control").
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TargetSpec {
    /// Its name (`target "first": ...`), or `None` where it has none.
    pub name: Option<std::sync::Arc<str>>,
    /// What a legal target is, tested on each object or player that could be one.
    pub cond: Cond,
}

/// An object relative to the one being tested.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum ObjRef {
    /// The object being tested ("it").
    This,
    /// The object whose ability or spell created the effect.
    Source,
    /// The object the source is attached to ("enchanted creature", "equipped creature").
    Attached,
    /// The top object (latest to enter) of a zone owned by "you".
    Top(ZoneId),
    /// Inside `count`, `sum`, `exists` (and after `among`): the object the enclosing condition is
    /// tested on ("each other creature that shares a creature type with it": the creature whose
    /// value is being derived).
    Outer,
    /// The object argument of that index of the occurrence a response answers ("the bowing
    /// Personality").
    Param(u8),
}

/// A player relative to the effect.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum PlayerRef {
    /// The source's controller.
    You,
    /// Any player other than you.
    Opponent,
    /// The active player.
    Active,
    /// The owner of the object being tested; when a player is tested, that player.
    Owner,
    /// A player the spell targets: the one of that index among its targets, or (`None`) any
    /// player among them (as a value: the first).
    Target(Option<u8>),
    /// The player argument of that index of the occurrence a response answers ("the player who
    /// gains Honor").
    Param(u8),
}

/// A comparison's operator. A comparison where a side has no number is false, `!=` included.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum CmpOp {
    /// Less than (`<`).
    Lt,
    /// Less than or equal (`<=`).
    Le,
    /// Greater than (`>`).
    Gt,
    /// Greater than or equal (`>=`).
    Ge,
    /// Equal (`=` or `==`).
    Eq,
    /// Not equal (`!=`).
    Ne,
}

impl CmpOp {
    /// Whether `a` compares to `b` so.
    pub fn holds(self, a: i64, b: i64) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Gt => a > b,
            CmpOp::Ge => a >= b,
            CmpOp::Eq => a == b,
            CmpOp::Ne => a != b,
        }
    }
}

/// A numeric expression. Its value is a number or none: a part with no number, or an
/// overflow, leaves the whole with none.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub enum NumExpr {
    /// A number written in the content.
    Const(i64),
    /// The number argument of that index of the occurrence a response answers ("the gain").
    Param(u8),
    /// No number ("no maximum hand size").
    Nothing,
    /// A number characteristic of the object referred to (`power`, `source.power`).
    Char(ObjRef, CharId),
    /// A property of the player referred to (`life`, `you.life`).
    Prop(PlayerRef, PropId),
    /// How many objects satisfy the condition.
    Count(Box<Cond>),
    /// The total of a number characteristic over the objects that satisfy the condition.
    Sum(CharId, Box<Cond>),
    /// How many symbols a symbol-set characteristic holds ("multicolored": two or more colors).
    SetSize(ObjRef, CharId),
    /// How many different symbols of a characteristic the matching objects hold together ("card
    /// types among cards in all graveyards").
    Distinct(CharId, Box<Cond>),
    /// The greater of the two (`max(a, b)`).
    Max(Box<NumExpr>, Box<NumExpr>),
    /// The smaller of the two (`min(a, b)`).
    Min(Box<NumExpr>, Box<NumExpr>),
    /// How many counters of that kind are on the object (`counters(+1/+1)`).
    Counters(ObjRef, CounterId),
    /// How many counters of every kind are on the object ("has a counter").
    AllCounters(ObjRef),
    /// The sum (`+`).
    Add(Box<NumExpr>, Box<NumExpr>),
    /// The difference (`-`).
    Sub(Box<NumExpr>, Box<NumExpr>),
    /// The product (`*`).
    Mul(Box<NumExpr>, Box<NumExpr>),
    /// Divided, rounded down ("half the counters, rounded down": CR 107.1a; no number when
    /// dividing by zero).
    Div(Box<NumExpr>, Box<NumExpr>),
    /// The negation (unary `-`).
    Neg(Box<NumExpr>),
    /// A number fixed when a spell resolved, for each subject it locked (CR 608.2h, 611.2c: "+X/+0
    /// where X is its power" takes X once); no number for any other subject. Reads nothing.
    Fixed(std::sync::Arc<[(Subject, Option<i64>)]>),
    /// The number X its player announced as the spell was cast (CR 601.2b: `choose X`); 0 when
    /// none was announced (CR 107.3b). Reads no characteristic.
    Chosen,
    /// The position on a scale of the source's symbol of a characteristic, looked up the
    /// attachment hierarchy where the source lacks it; `default` where no object up the chain
    /// has it or its symbol is off the scale (FreeOrion's effects system, Non-Numeric
    /// Parameters: `SourceObject.PlanetSize`, never the target's). Used by effects that set a
    /// symbol by its position (`size_set(target, source.size else medium)`).
    SourceSymbol {
        /// The characteristic read.
        char: CharId,
        /// The scale, in order.
        scale: std::sync::Arc<[Symbol]>,
        /// The position where none is found.
        default: i64,
    },
}

/// A condition, tested on one subject (an object or a player) in a context: the effect's
/// source, "you", the spell's targets and, in a response, the occurrence answered.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub enum Cond {
    /// Always holds.
    True,
    /// Every one holds (`and`, or conditions side by side).
    And(Vec<Cond>),
    /// At least one holds (`or`).
    Or(Vec<Cond>),
    /// It does not hold (`not`).
    Not(Box<Cond>),
    /// The tested object's symbol set (or ability list) holds the symbol.
    Has(ObjRef, CharId, Symbol),
    /// The object's ability list holds an ability of this kind ("has an activated ability").
    HasKind(ObjRef, CharId, crate::model::value::AbilityKind),
    /// Both sides have a number, and they compare so (`toughness <= 0`).
    Cmp(NumExpr, CmpOp, NumExpr),
    /// The subject is an object in this zone (`in graveyard`).
    InZone(ZoneId),
    /// The subject is an object in a zone declared in play (`in play`).
    InPlay,
    /// The subject is an object the player referred to controls, as derived (`you control`;
    /// `opponent` matches any player but you).
    ControlledBy(PlayerRef),
    /// The subject is an object the player referred to owns (`you own`; `opponent` matches any
    /// player but you).
    OwnedBy(PlayerRef),
    /// The tested object is the effect's source.
    IsSource,
    /// The tested object is a target of the spell that creates the effect.
    IsTarget,
    /// The source is attached to the tested object ("enchanted", "equipped").
    IsAttached,
    /// The tested player is this player.
    IsPlayer(PlayerRef),
    /// The tested subject is a player ("each player").
    AnyPlayer,
    /// Some object satisfies the condition.
    Exists(Box<Cond>),
    /// The tested object is face down.
    FaceDown,
    /// The tested object is the top object (latest to enter) of the zone among those "you" own.
    OnTop(ZoneId),
    /// The tested object is attached to the source (an imprinted or linked card).
    Linked,
    /// The tested object is the enclosing subject (`ObjRef::Outer`): "other" in "each other
    /// creature that shares a creature type with it".
    IsOuter,
    /// The tested object and the referenced one have a symbol of the characteristic in common
    /// ("shares at least one creature type with it").
    Shares(ObjRef, CharId),
    /// The referenced object's symbols (or abilities) hold the source's choice of that index
    /// ("creatures of the chosen type").
    HasChoice(ObjRef, CharId, u8),
    /// The tested object's name characteristic is this name ("named ...").
    Named(CharId, Word),
    /// The tested subject is the spell's target of that index (a named target).
    IsTargetAt(u8),
    /// The tested subject is the argument of that index of the occurrence a response answers.
    IsParam(u8),
    /// The tested subject is an object ("attached to an object").
    AnyObject,
    /// The tested object is attached to an object that satisfies the condition (tested on that
    /// object, in the same context).
    AttachedTo(Box<Cond>),
    /// The tested object is attached to an object it could be attached to: its class's
    /// `attaches to:` holds there, tested with it as the source and its controller as "you"
    /// (CR 704.5m-n). Only in state-based checks: what it reads depends on each object's class.
    LegallyAttached,
    /// The condition tested on the object the tested object's characteristic is read from: the
    /// object itself if its type has it, else the first object up the chain of what it is
    /// attached to whose type has it (FreeOrion's attachment hierarchy: building, planet,
    /// system). False where none has it: the object is excluded. A typed ruleset's conditions
    /// read every characteristic some type lacks through one.
    Holder(CharId, Box<Cond>),
    /// The tested object's own type has the characteristic (an effect on a meter fires only on
    /// objects that have it).
    Typed(CharId),
    /// The tested object is of this object type (FreeOrion's Object Type condition: `planet`).
    OfType(crate::model::ids::TypeId),
    /// FreeOrion's effects system, Empire Affiliation: the tested object's empires against the
    /// specified empire, in one of four modes (`owned by you`, `owned by enemies of none`...).
    Affiliated(Box<Affiliation>),
    /// FreeOrion's effects system, Planet Environment and Planet Size: the tested object's
    /// symbol of an ordered characteristic is within `range` steps of `at` (around the ring for
    /// a ring); a symbol off the order matches only itself, the range ignored, and a symbol on
    /// it never matches one off it.
    Within(Box<OrderTest>),
    /// FreeOrion's effects system, Chance: holds with probability `num / den`, drawn for each
    /// (condition, source, tested object, turn) from the game's random source (see
    /// `Ctx::chance`), so the same for every derivation of one turn.
    Chance {
        /// The probability's numerator.
        num: u32,
        /// Its denominator (not 0).
        den: u32,
        /// Tells this condition from other chance conditions of the same source (its place in
        /// the content).
        salt: u64,
    },
    /// FreeOrion's effects system, Current Stockpile Value: a player property (an empire's
    /// stockpile) of one of the tested object's empires compares so with the number; objects
    /// owned by no empire have no stockpile.
    Stockpile(Box<StockpileTest>),
    /// FreeOrion's effects system, Scope Object Visible To Source Object (`source_sees`) and
    /// Source Object Visible To Scope Object (not `source_sees`).
    Visible(Box<Visibility>),
    /// FreeOrion's effects system, Direct Distance and Starlane Jumps (to Source, to Object of
    /// Class): some object in play that satisfies `of` is within the distance of the tested one.
    Near(Box<Nearness>),
}

/// Whose empires: the ruleset's ownership rules, written into each condition that reads them.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Owners {
    /// The controller characteristic: an object's empire is its controller.
    pub controller: CharId,
    /// Types whose objects are owned by the empires owning the objects of another type attached
    /// to them (a system, by its planets').
    pub through: Vec<(crate::model::ids::TypeId, crate::model::ids::TypeId)>,
    /// The objects owned by no empire (a space monster), if the ruleset says which.
    pub unowned: Option<Cond>,
}

/// The empire an Empire Affiliation condition names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum EmpireRef {
    /// The source's empires (`you`); none when the source is owned by no empire.
    Source,
    /// No empire (`none`).
    NoEmpire,
    /// The players whose property is not 0 (`owned by chosen_empire`): an empire the embedder
    /// names at run time by setting that property.
    Marked(PropId),
}

/// FreeOrion's effects system, Empire Affiliation.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Affiliation {
    /// The specified empire.
    pub empire: EmpireRef,
    /// Enemies modes: owned by empires other than the specified one.
    pub enemies: bool,
    /// Exclusive modes: not shared with (Empire: any other; Enemies: the specified) empire.
    pub exclusive: bool,
    /// The ownership rules.
    pub owners: Owners,
}

/// Planet Environment or Planet Size: `environment within 1 of terran`.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct OrderTest {
    /// The ordered symbols characteristic.
    pub char: CharId,
    /// Its symbols in order.
    pub order: std::sync::Arc<[Symbol]>,
    /// Whether the order is a ring.
    pub ring: bool,
    /// The specified symbol.
    pub at: Symbol,
    /// How many steps away still match.
    pub range: u32,
}

/// A property of the tested object's empires: Current Stockpile Value, `stockpile(food) >= 10`;
/// or, with `holds`, a property that holds symbols holding one (`available_techs has "Algae
/// Farming"`: the empire may research it).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct StockpileTest {
    /// The player property holding the stockpile.
    pub prop: PropId,
    /// Minimum (`>=`) or maximum (`<=`), or another comparison.
    pub op: CmpOp,
    /// The specified value.
    pub value: i64,
    /// The ownership rules.
    pub owners: Owners,
    /// The symbol the property must hold (the comparison is then not made).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub holds: Option<Symbol>,
}

/// Where objects are: positions on the galaxy map and starlanes.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Places {
    /// The position's number characteristics. An object is where the outermost object up its
    /// attachments that has a position is (a planet, a ship in a system: the system's place).
    pub x: CharId,
    /// The second coordinate.
    pub y: CharId,
    /// The symbols characteristic of a system naming the systems one starlane jump away.
    pub lanes: CharId,
    /// The symbols characteristic of an object outside any system naming the two systems at the
    /// ends of the starlane it is on, if the ruleset has one.
    pub on_lane: Option<CharId>,
    /// The name characteristic lanes name systems by.
    pub name: CharId,
}

/// Scope Object Visible To Source Object, Source Object Visible To Scope Object. An object sees
/// itself, the objects of its empires, and every object within the detection range of an object
/// of its empires (an object of no empire: of itself).
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Visibility {
    /// Whether the source sees the tested object (else: the tested object sees the source).
    pub source_sees: bool,
    /// The detection range's number characteristic (read through the attachment hierarchy).
    pub detection: CharId,
    /// Where objects are.
    pub places: Places,
    /// The ownership rules.
    pub owners: Owners,
}

/// How far: straight across the map, or in starlane jumps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Metric {
    /// Straight-line distance between positions.
    Direct,
    /// Starlane jumps between systems (shortest path).
    Jumps,
}

/// Direct Distance / Starlane Jumps to Source or to Object of Class.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct Nearness {
    /// Straight or by starlanes.
    pub metric: Metric,
    /// The greatest distance (0: co-located).
    pub within: i64,
    /// What the object near it must satisfy (tested on each object in play: `source`, a class).
    pub of: Cond,
    /// Where objects are.
    pub places: Places,
}

impl Cond {
    /// The characteristics and properties a galaxy condition reads of any object or player,
    /// beyond what the conditions under it read; false for other conditions.
    fn galaxy_reads(&self, controller: Option<CharId>, out: &mut Footprint) -> bool {
        let owners = |o: &Owners, out: &mut Footprint| {
            out.add_char(o.controller);
            if let Some(u) = &o.unowned {
                u.reads(controller, out);
            }
        };
        let places = |p: &Places, out: &mut Footprint| {
            for c in [Some(p.x), Some(p.y), Some(p.lanes), p.on_lane, Some(p.name)]
                .into_iter()
                .flatten()
            {
                out.add_char(c);
            }
        };
        match self {
            Cond::Affiliated(a) => {
                owners(&a.owners, out);
                if let EmpireRef::Marked(p) = a.empire {
                    out.add_prop(p);
                }
            }
            Cond::Within(t) => out.add_char(t.char),
            Cond::Chance { .. } => {}
            Cond::Stockpile(s) => {
                owners(&s.owners, out);
                out.add_prop(s.prop);
            }
            Cond::Visible(v) => {
                owners(&v.owners, out);
                places(&v.places, out);
                out.add_char(v.detection);
            }
            Cond::Near(n) => places(&n.places, out),
            _ => return false,
        }
        true
    }
}

/// A word a condition names: written, or one of the source's choices ("the chosen name").
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Word {
    /// A name written in the content.
    Lit(std::sync::Arc<str>),
    /// The source's choice of that index (`chosen`, `first_choice`: 0; `second_choice`: 1).
    Choice(u8),
}

/// What a condition is tested on.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, serde::Deserialize,
)]
pub enum Subject {
    /// This object.
    Object(ObjectId),
    /// This player.
    Player(PlayerId),
}

/// One value in a sheet: an object's characteristic or a player's property.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Cell {
    /// This object's value of this characteristic.
    Object(ObjectId, CharId),
    /// This player's value of this property.
    Player(PlayerId, PropId),
}

/// The cells an evaluation read. If none of them changes, the evaluation gives the same result:
/// the layer system uses this to test dependency only where it can exist (CR 613.8a).
/// Each read is a cell and, where only one symbol's membership was looked at (`has X`), that symbol.
pub type Reads = std::cell::RefCell<ReadLog>;

/// What an evaluation read: single cells, and what aggregates (`count`, `sum`, `exists`) read of
/// every object, by characteristic (so a count over a thousand objects is one entry, and a change
/// to any object's value there is seen).
#[derive(Debug, Default)]
pub struct ReadLog {
    /// The single cells read, each with the symbol where only whether it is held was read
    /// (`has X`).
    pub cells: Vec<(Cell, Option<Symbol>)>,
    /// What aggregates read of every object, by characteristic.
    pub every: Footprint,
}

/// A node of a condition or of a numeric expression in it: what a walk over them meets.
#[derive(Clone, Copy, Debug)]
pub enum Node<'a> {
    /// A condition.
    Cond(&'a Cond),
    /// A numeric expression.
    Num(&'a NumExpr),
}

/// Where a walk meets a node: what holds it, within the tree walked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Place {
    /// Inside an aggregate's condition (`exists`, `count`, `sum`, `count(... among ...)`): there
    /// the tested object is each object counted, and `outer` the subject around the aggregate.
    pub in_aggregate: bool,
    /// Inside an `attached to`: tested on the object the subject is attached to.
    pub on_host: bool,
}

/// What a walk does after meeting a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flow {
    /// Goes on to the nodes under it.
    Enter,
    /// Leaves out the nodes under it.
    Skip,
    /// Ends the walk.
    Stop,
}

/// The nodes directly under a node, in written order.
enum Under<'a> {
    Two(Node<'a>, Node<'a>),
    One(Node<'a>),
    /// The first of an `and` or `or`, and the others.
    List(&'a Cond, &'a [Cond]),
}

/// A stack that keeps its first `N` entries in place and the others on the heap: a walk over the
/// trees most content has allocates nothing.
struct Stack<T, const N: usize> {
    near: [T; N],
    len: usize,
    far: Vec<T>,
}

impl<T: Copy, const N: usize> Stack<T, N> {
    /// An empty stack (`fill` only fills the room).
    fn new(fill: T) -> Self {
        Stack {
            near: [fill; N],
            len: 0,
            far: Vec::new(),
        }
    }
    fn push(&mut self, t: T) {
        if self.len < N {
            self.near[self.len] = t;
            self.len += 1;
        } else {
            self.far.push(t);
        }
    }
    fn pop(&mut self) -> Option<T> {
        if let Some(t) = self.far.pop() {
            return Some(t);
        }
        self.len = self.len.checked_sub(1)?;
        Some(self.near[self.len])
    }
}

impl<'a> Node<'a> {
    /// Walks this node and every node under it, in written order, each before the nodes under it:
    /// `enter` says at each whether to go under it, and `leave` is told of each node `enter` let
    /// the walk go under, once the nodes under it are done (inner aggregates before those holding
    /// them). The nodes still to visit are kept in a list, not in calls, so the deepest trees the
    /// loader accepts need no more stack than a leaf, and each node is met once. True if `enter`
    /// stopped the walk.
    pub fn walk(
        self,
        enter: impl FnMut(Node<'a>, Place) -> Flow,
        leave: impl FnMut(Node<'a>),
    ) -> bool {
        self.visit::<true>(enter, leave)
    }

    /// Whether this node or a node under it satisfies `f`, told where each is (stopping at the
    /// first that does).
    pub fn any(self, mut f: impl FnMut(Node<'a>, Place) -> bool) -> bool {
        self.visit::<false>(
            |n, at| if f(n, at) { Flow::Stop } else { Flow::Enter },
            |_| {},
        )
    }

    /// `walk`, telling `leave` of nodes only where `LEAVE`.
    fn visit<const LEAVE: bool>(
        self,
        mut enter: impl FnMut(Node<'a>, Place) -> Flow,
        mut leave: impl FnMut(Node<'a>),
    ) -> bool {
        #[derive(Clone, Copy)]
        enum Task<'a> {
            Enter(Node<'a>, Place),
            /// The conditions of an `and` or `or` still to enter, in order.
            Rest(&'a [Cond], Place),
            Leave(Node<'a>),
        }
        let mut stack = Stack::<Task, 8>::new(Task::Leave(self));
        let mut next = Some((self, Place::default()));
        loop {
            let (node, at) = match next.take() {
                Some(n) => n,
                None => match stack.pop() {
                    None => return false,
                    Some(Task::Enter(n, at)) => (n, at),
                    Some(Task::Rest(cs, at)) => match cs.split_first() {
                        Some((c, rest)) => {
                            if !rest.is_empty() {
                                stack.push(Task::Rest(rest, at));
                            }
                            (Node::Cond(c), at)
                        }
                        None => continue,
                    },
                    Some(Task::Leave(n)) => {
                        leave(n);
                        continue;
                    }
                },
            };
            match enter(node, at) {
                Flow::Enter => {}
                Flow::Skip => continue,
                Flow::Stop => return true,
            }
            let Some(under) = node.under() else {
                if LEAVE {
                    leave(node);
                }
                continue;
            };
            if LEAVE {
                stack.push(Task::Leave(node));
            }
            let inner = match node {
                Node::Cond(Cond::AttachedTo(_)) => Place {
                    on_host: true,
                    ..at
                },
                // Read on another object, found by attachments: what it reads counts as read
                // of every object.
                Node::Cond(Cond::Holder(..)) => Place {
                    in_aggregate: true,
                    ..at
                },
                // Tested on every object in play, for one near the tested object.
                Node::Cond(Cond::Near(_)) => Place {
                    in_aggregate: true,
                    ..at
                },
                n if n.is_aggregate() => Place {
                    in_aggregate: true,
                    ..at
                },
                _ => at,
            };
            // The first node under it comes next; the others wait their turn on the stack.
            next = Some(match under {
                Under::Two(a, b) => {
                    stack.push(Task::Enter(b, inner));
                    (a, inner)
                }
                Under::One(a) => (a, inner),
                Under::List(c, rest) => {
                    if !rest.is_empty() {
                        stack.push(Task::Rest(rest, inner));
                    }
                    (Node::Cond(c), inner)
                }
            });
        }
    }

    /// The nodes directly under this one; `None` for none.
    fn under(self) -> Option<Under<'a>> {
        Some(match self {
            Node::Cond(Cond::And(cs) | Cond::Or(cs)) => {
                let (c, rest) = cs.split_first()?;
                Under::List(c, rest)
            }
            Node::Cond(
                Cond::Not(c) | Cond::Exists(c) | Cond::AttachedTo(c) | Cond::Holder(_, c),
            )
            | Node::Num(NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c)) => {
                Under::One(Node::Cond(c))
            }
            Node::Cond(Cond::Near(n)) => Under::One(Node::Cond(&n.of)),
            Node::Cond(Cond::Cmp(a, _, b)) => Under::Two(Node::Num(a), Node::Num(b)),
            Node::Num(
                NumExpr::Add(a, b)
                | NumExpr::Sub(a, b)
                | NumExpr::Mul(a, b)
                | NumExpr::Div(a, b)
                | NumExpr::Max(a, b)
                | NumExpr::Min(a, b),
            ) => Under::Two(Node::Num(a), Node::Num(b)),
            Node::Num(NumExpr::Neg(a)) => Under::One(Node::Num(a)),
            _ => return None,
        })
    }

    /// Whether this node is an aggregate over every object: its condition is tested on each.
    pub fn is_aggregate(self) -> bool {
        matches!(
            self,
            Node::Cond(Cond::Exists(_))
                | Node::Num(NumExpr::Count(_) | NumExpr::Sum(..) | NumExpr::Distinct(..))
        )
    }

    /// The object whose values this node reads (a symbol, a number, counters), or whose symbols
    /// the tested object's are compared with (`shares`).
    fn object(self) -> Option<ObjRef> {
        match self {
            Node::Cond(
                Cond::Has(r, ..)
                | Cond::HasKind(r, ..)
                | Cond::HasChoice(r, ..)
                | Cond::Shares(r, _),
            )
            | Node::Num(
                NumExpr::Char(r, _)
                | NumExpr::SetSize(r, _)
                | NumExpr::Counters(r, _)
                | NumExpr::AllCounters(r),
            ) => Some(*r),
            _ => None,
        }
    }

    /// The player this node tests the subject against, or reads a property of.
    fn player(self) -> Option<PlayerRef> {
        match self {
            Node::Cond(Cond::ControlledBy(r) | Cond::OwnedBy(r) | Cond::IsPlayer(r))
            | Node::Num(NumExpr::Prop(r, _)) => Some(*r),
            _ => None,
        }
    }

    /// Whether this node, not counting those under it, reads more than the tested object's own
    /// values and the fixed context: another object's values, every object's (aggregates), a
    /// player's property, the subject around it (`outer`).
    fn reads_beyond_subject(self) -> bool {
        match self {
            Node::Cond(
                Cond::Exists(_)
                | Cond::OnTop(_)
                | Cond::IsOuter
                | Cond::AttachedTo(_)
                | Cond::Holder(..)
                | Cond::LegallyAttached
                | Cond::Affiliated(_)
                | Cond::Chance { .. }
                | Cond::Stockpile(_)
                | Cond::Visible(_)
                | Cond::Near(_),
            )
            | Node::Num(
                NumExpr::Prop(..)
                | NumExpr::Count(_)
                | NumExpr::Sum(..)
                | NumExpr::Distinct(..)
                | NumExpr::SourceSymbol { .. },
            ) => true,
            n => n.object().is_some_and(|r| r != ObjRef::This),
        }
    }

    fn uses_targets(self) -> bool {
        self.any(|n, _| {
            matches!(n, Node::Cond(Cond::IsTarget | Cond::IsTargetAt(_)))
                || matches!(n.player(), Some(PlayerRef::Target(_)))
        })
    }

    fn reads_occurrence(self) -> bool {
        self.any(|n, _| {
            matches!(
                n,
                Node::Cond(Cond::IsParam(_)) | Node::Num(NumExpr::Param(_))
            ) || matches!(n.object(), Some(ObjRef::Param(_)))
                || matches!(n.player(), Some(PlayerRef::Param(_)))
        })
    }

    fn refers_outer(self) -> bool {
        self.visit::<false>(
            |n, _| {
                if matches!(n, Node::Cond(Cond::IsOuter)) || n.object() == Some(ObjRef::Outer) {
                    Flow::Stop
                } else if n.is_aggregate() {
                    // Inside, `outer` is this level's own subject.
                    Flow::Skip
                } else {
                    Flow::Enter
                }
            },
            |_| {},
        )
    }

    fn reads_counters(self) -> bool {
        self.any(|n, _| {
            matches!(
                n,
                Node::Num(NumExpr::Counters(..) | NumExpr::AllCounters(_))
            )
        })
    }

    fn is_local(self) -> bool {
        !self.any(|n, _| n.reads_beyond_subject())
    }

    fn names_source(self) -> bool {
        self.any(|n, _| match n {
            // A choice is the source's.
            Node::Cond(
                Cond::IsSource
                | Cond::IsAttached
                | Cond::Linked
                | Cond::HasChoice(..)
                | Cond::Named(_, Word::Choice(_))
                | Cond::Chance { .. }
                | Cond::Visible(_),
            )
            | Node::Num(NumExpr::SourceSymbol { .. }) => true,
            Node::Cond(Cond::Affiliated(a)) => a.empire == EmpireRef::Source,
            n => n.object().is_some_and(names_source),
        })
    }

    fn refers_to_others(self) -> bool {
        self.any(|n, _| match n {
            Node::Cond(
                Cond::OnTop(_)
                | Cond::IsOuter
                | Cond::Shares(..)
                | Cond::AttachedTo(_)
                | Cond::Holder(..)
                | Cond::LegallyAttached
                | Cond::Affiliated(_)
                | Cond::Chance { .. }
                | Cond::Stockpile(_)
                | Cond::Visible(_)
                | Cond::Near(_),
            )
            | Node::Num(NumExpr::SourceSymbol { .. }) => true,
            n => n.object().is_some_and(|r| r != ObjRef::This),
        })
    }

    fn reads(self, controller: Option<CharId>, out: &mut Footprint) {
        self.visit::<false>(
            |n, _| {
                match n {
                    // What each class's `attaches to:` reads is not known here; `legally
                    // attached` is allowed only in state-based checks, which test every object
                    // after every change.
                    Node::Cond(Cond::LegallyAttached | Cond::ControlledBy(_)) => {
                        if let Some(c) = controller {
                            out.add_char(c);
                        }
                    }
                    Node::Cond(Cond::Has(_, ch, sym)) => out.add_name(*ch, sym.clone()),
                    // The symbol a choice names is not known here: any change to the
                    // characteristic.
                    Node::Cond(
                        Cond::HasChoice(_, ch, _)
                        | Cond::Shares(_, ch)
                        | Cond::Named(ch, _)
                        | Cond::HasKind(_, ch, _),
                    )
                    | Node::Num(
                        NumExpr::Char(_, ch)
                        | NumExpr::SetSize(_, ch)
                        | NumExpr::Sum(ch, _)
                        | NumExpr::Distinct(ch, _)
                        | NumExpr::SourceSymbol { char: ch, .. },
                    ) => out.add_char(*ch),
                    Node::Num(NumExpr::Prop(_, p)) => out.add_prop(*p),
                    Node::Cond(c) => {
                        c.galaxy_reads(controller, out);
                    }
                    _ => {}
                }
                Flow::Enter
            },
            |_| {},
        );
    }

    fn aggregates(self, out: &mut Vec<Aggregate<'a>>) {
        self.walk(
            |_, _| Flow::Enter,
            |n| match n {
                Node::Cond(c @ Cond::Exists(_)) => out.push(Aggregate::Exists(c)),
                Node::Num(e) if e.is_aggregate() => out.push(Aggregate::Number(e)),
                _ => {}
            },
        );
    }
}

impl Cond {
    /// Whether this condition, or a condition or expression in it, satisfies `f` (see
    /// `Node::walk`).
    pub fn any_node<'a>(&'a self, f: impl FnMut(Node<'a>, Place) -> bool) -> bool {
        Node::Cond(self).any(f)
    }

    /// Whether the condition refers to the spell's targets.
    pub fn uses_targets(&self) -> bool {
        Node::Cond(self).uses_targets()
    }

    /// Whether the condition reads the occurrence a response answers (`event PARAM`): it has a
    /// value only while that response runs.
    pub fn reads_occurrence(&self) -> bool {
        Node::Cond(self).reads_occurrence()
    }

    /// Whether the condition, at its own level, refers to `outer`: the subject of the condition
    /// around it. (Inside a nested `exists` or `count`, `outer` is this level's own subject.)
    pub fn refers_outer(&self) -> bool {
        Node::Cond(self).refers_outer()
    }

    /// Whether the condition reads how many counters an object has.
    pub fn reads_counters(&self) -> bool {
        Node::Cond(self).reads_counters()
    }

    /// Whether the condition, tested on an object, reads only that object's values (besides the
    /// fixed context: "you", which objects are the source and targets, zones and owners).
    pub fn is_local(&self) -> bool {
        Node::Cond(self).is_local()
    }

    /// Whether the condition, tested on an object, reads only that object's values and those of
    /// the object it is attached to: `attached to` a local test, and `legally attached` where
    /// `attachments_local` (every class's `attaches to:` is local, `Content::attachments_read_locally`).
    pub fn is_local_or_host(&self, attachments_local: bool) -> bool {
        !self.any_node(|n, at| match n {
            // Tested on the host; inside, only a local test.
            Node::Cond(Cond::AttachedTo(_)) => at.on_host,
            Node::Cond(Cond::LegallyAttached) => at.on_host || !attachments_local,
            n => n.reads_beyond_subject(),
        })
    }

    /// The characteristics of the tested object this condition reads, where it reads nothing
    /// else (no zone, holder, player, source, counter or aggregate): its answer for an object is
    /// then a function of those values alone, the same for two objects whose values are the
    /// same. `None` where it may read anything else.
    pub fn row_reads(&self) -> Option<Vec<CharId>> {
        let mut chars: Vec<CharId> = Vec::new();
        let other = self.any_node(|n, _| {
            let c = match n {
                Node::Cond(
                    Cond::True | Cond::And(_) | Cond::Or(_) | Cond::Not(_) | Cond::Cmp(..),
                ) => return false,
                Node::Num(e) if e.is_arithmetic() => return false,
                Node::Cond(Cond::Has(ObjRef::This, c, _) | Cond::HasKind(ObjRef::This, c, _))
                | Node::Num(NumExpr::Char(ObjRef::This, c)) => *c,
                _ => return true,
            };
            if !chars.contains(&c) {
                chars.push(c);
            }
            false
        });
        (!other).then_some(chars)
    }

    /// Whether the condition refers to the effect's source (so its answers depend on which object
    /// the source is).
    pub fn names_source(&self) -> bool {
        Node::Cond(self).names_source()
    }

    /// Whether the condition reads another object than the one tested, other than through
    /// aggregates (`source.colors has red`, `on top of graveyard`).
    pub fn refers_to_others(&self) -> bool {
        Node::Cond(self).refers_to_others()
    }

    /// Whether the condition's answers may depend on who "you" are: anything but tests of the
    /// tested object's own values, type, zone and holders (`Holder`) is taken to (a superset),
    /// so that objects found for one player are found once for all.
    pub fn may_read_you(&self) -> bool {
        self.any_node(|n, _| {
            !matches!(
                n,
                Node::Cond(
                    Cond::True
                        | Cond::And(_)
                        | Cond::Or(_)
                        | Cond::Not(_)
                        | Cond::Has(ObjRef::This, ..)
                        | Cond::HasKind(ObjRef::This, ..)
                        | Cond::Cmp(..)
                        | Cond::InZone(_)
                        | Cond::InPlay
                        | Cond::OfType(_)
                        | Cond::Typed(_)
                        | Cond::Holder(..)
                        | Cond::Named(_, Word::Lit(_))
                ) | Node::Num(
                    NumExpr::Const(_)
                        | NumExpr::Nothing
                        | NumExpr::Char(ObjRef::This, _)
                        | NumExpr::Counters(ObjRef::This, _)
                        | NumExpr::Add(..)
                        | NumExpr::Sub(..)
                        | NumExpr::Mul(..)
                        | NumExpr::Neg(_)
                        | NumExpr::Max(..)
                        | NumExpr::Min(..)
                )
            )
        })
    }

    /// Adds every characteristic and property this condition reads; `controller` is the ruleset's
    /// controller characteristic, read by "you control".
    pub fn reads(&self, controller: Option<CharId>, out: &mut Footprint) {
        Node::Cond(self).reads(controller, out)
    }

    /// The aggregates in this condition, inner ones before the ones that hold them.
    pub fn aggregates<'a>(&'a self, out: &mut Vec<Aggregate<'a>>) {
        Node::Cond(self).aggregates(out)
    }
}

impl NumExpr {
    /// Whether this expression, or an expression or condition in it, satisfies `f` (see
    /// `Node::walk`).
    pub fn any_node<'a>(&'a self, f: impl FnMut(Node<'a>, Place) -> bool) -> bool {
        Node::Num(self).any(f)
    }

    /// Whether the expression refers to the spell's targets.
    pub fn uses_targets(&self) -> bool {
        Node::Num(self).uses_targets()
    }

    /// Whether the expression reads the occurrence a response answers (see
    /// `Cond::reads_occurrence`).
    pub fn reads_occurrence(&self) -> bool {
        Node::Num(self).reads_occurrence()
    }

    /// Whether the expression, at its own level, refers to `outer` (see `Cond::refers_outer`).
    pub fn refers_outer(&self) -> bool {
        Node::Num(self).refers_outer()
    }

    /// Whether the expression reads how many counters an object has.
    pub fn reads_counters(&self) -> bool {
        Node::Num(self).reads_counters()
    }

    /// Whether the expression reads no value at all (a number written in the content).
    pub fn is_constant(&self) -> bool {
        !self.any_node(|n, _| !matches!(n, Node::Num(e) if e.is_arithmetic()))
    }

    /// Whether this node is a number written in the content or combines the numbers under it
    /// (`+ - * /`, the greater or smaller), reading nothing itself.
    pub fn is_arithmetic(&self) -> bool {
        matches!(
            self,
            NumExpr::Const(_)
                | NumExpr::Nothing
                | NumExpr::Add(..)
                | NumExpr::Sub(..)
                | NumExpr::Mul(..)
                | NumExpr::Div(..)
                | NumExpr::Max(..)
                | NumExpr::Min(..)
                | NumExpr::Neg(_)
        )
    }

    /// Whether the expression, for a tested object, reads only that object's values (no aggregate,
    /// no other object, no player's property).
    pub fn is_local(&self) -> bool {
        Node::Num(self).is_local()
    }

    /// Whether the expression refers to the effect's source.
    pub fn names_source(&self) -> bool {
        Node::Num(self).names_source()
    }

    /// Whether the expression reads another object than the one tested, other than through
    /// aggregates: the source, the object it is attached to, the top of a zone.
    pub fn refers_to_others(&self) -> bool {
        Node::Num(self).refers_to_others()
    }

    /// Adds every characteristic and property this expression reads.
    pub fn reads(&self, controller: Option<CharId>, out: &mut Footprint) {
        Node::Num(self).reads(controller, out)
    }

    /// Whether this node is an aggregate over every object.
    pub fn is_aggregate(&self) -> bool {
        Node::Num(self).is_aggregate()
    }

    /// The aggregates in this expression, inner ones before the ones that hold them.
    pub fn aggregates<'a>(&'a self, out: &mut Vec<Aggregate<'a>>) {
        Node::Num(self).aggregates(out)
    }
}

/// Whether a reference's object depends on which object the source is (`outer` and the tested
/// object do not).
fn names_source(r: ObjRef) -> bool {
    !matches!(r, ObjRef::This | ObjRef::Outer)
}

pub(crate) fn this_object(s: Subject) -> Option<ObjectId> {
    match s {
        Subject::Object(o) => Some(o),
        Subject::Player(_) => None,
    }
}

/// A set of characteristics and player properties: what an effect reads or writes, used to prune
/// the dependency checks of CR 613.8 to pairs that can interact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Footprint {
    chars: Vec<u64>,
    props: Vec<u64>,
    /// Characteristics read only for whether they hold a symbol (`has X`), with the symbol.
    names: Vec<(CharId, Symbol)>,
    /// The characteristics in `names`.
    named: Vec<u64>,
}

impl Footprint {
    fn set(bits: &mut Vec<u64>, i: usize) {
        if bits.len() <= i / 64 {
            bits.resize(i / 64 + 1, 0);
        }
        bits[i / 64] |= 1 << (i % 64);
    }
    /// Adds a read or write of the characteristic `c`, of any part of its value.
    pub fn add_char(&mut self, c: CharId) {
        Self::set(&mut self.chars, c.index());
    }
    /// Adds a read or write of the player property `p`.
    pub fn add_prop(&mut self, p: PropId) {
        Self::set(&mut self.props, p.index());
    }
    /// A read of whether characteristic `c` holds `sym`, and nothing else about it.
    pub fn add_name(&mut self, c: CharId, sym: Symbol) {
        if !self.names.iter().any(|(x, s)| *x == c && *s == sym) {
            Self::set(&mut self.named, c.index());
            self.names.push((c, sym));
        }
    }
    /// Whether `c` is read other than for whether it holds some symbols.
    pub fn reads_any(&self, c: CharId) -> bool {
        Self::test(&self.chars, c.index())
    }
    /// The symbols `c` is read for, where it is read only for them.
    pub fn names_of(&self, c: CharId) -> impl Iterator<Item = &Symbol> {
        self.names
            .iter()
            .filter(move |(x, _)| *x == c)
            .map(|(_, s)| s)
    }
    fn test(bits: &[u64], i: usize) -> bool {
        bits.get(i / 64).is_some_and(|b| b & (1 << (i % 64)) != 0)
    }
    /// Adds everything `other` reads or writes.
    pub fn union(&mut self, other: &Footprint) {
        for n in &other.names {
            self.add_name(n.0, n.1.clone());
        }
        for (bits, o) in [
            (&mut self.chars, &other.chars),
            (&mut self.props, &other.props),
        ] {
            if bits.len() < o.len() {
                bits.resize(o.len(), 0);
            }
            for (a, b) in bits.iter_mut().zip(o) {
                *a |= b;
            }
        }
    }
    /// Whether both touch a common characteristic or property (reads for symbols count as reads).
    pub fn intersects(&self, other: &Footprint) -> bool {
        let any = |a: &[u64], b: &[u64]| a.iter().zip(b).any(|(x, y)| x & y != 0);
        any(&self.chars, &other.chars)
            || any(&self.chars, &other.named)
            || any(&self.named, &other.chars)
            || any(&self.named, &other.named)
            || any(&self.props, &other.props)
    }
    /// Adds what `other` reads or writes, a read of some symbols counted as a read of the whole
    /// characteristic: a superset, for a quick test of many footprints at once.
    pub fn absorb_coarse(&mut self, other: &Footprint) {
        let or = |into: &mut Vec<u64>, from: &[u64]| {
            if into.len() < from.len() {
                into.resize(from.len(), 0);
            }
            into.iter_mut().zip(from).for_each(|(a, b)| *a |= b);
        };
        or(&mut self.chars, &other.chars);
        or(&mut self.chars, &other.named);
        or(&mut self.props, &other.props);
    }
    /// Whether it reads and writes nothing.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty() && self.chars.iter().chain(&self.props).all(|b| *b == 0)
    }
    /// Whether it reads or writes `c` in any way, reads for symbols included.
    pub fn has_char(&self, c: CharId) -> bool {
        Self::test(&self.chars, c.index()) || Self::test(&self.named, c.index())
    }
    /// Whether it reads or writes any player property.
    pub fn has_any_prop(&self) -> bool {
        self.props.iter().any(|b| *b != 0)
    }
    /// Whether it reads or writes the player property `p`.
    pub fn has_prop(&self, p: PropId) -> bool {
        self.props
            .get(p.index() / 64)
            .is_some_and(|b| b & (1 << (p.index() % 64)) != 0)
    }
}

/// An aggregate in a condition or expression: a value that depends on every object, the same for
/// every subject tested (`count`, `sum`, `exists`...). Kept by the address of its node.
#[derive(Clone, Copy, Debug)]
pub enum Aggregate<'a> {
    /// `count(C)`, `sum(CHAR of C)`, `count(CHAR among C)`: the `NumExpr` node.
    Number(&'a NumExpr),
    /// `exists(C)`: the `Cond` node; its value is how many objects satisfy `C`.
    Exists(&'a Cond),
}

impl<'a> Aggregate<'a> {
    /// Whether its value is the same for every subject: its condition does not say `outer`.
    pub fn is_closed(self) -> bool {
        !self.condition().refers_outer()
    }

    /// The key overrides use: the address of the node.
    pub fn key(self) -> usize {
        match self {
            Aggregate::Number(e) => e as *const NumExpr as usize,
            Aggregate::Exists(c) => c as *const Cond as usize,
        }
    }

    /// The condition each object is tested with.
    pub fn condition(self) -> &'a Cond {
        match self {
            Aggregate::Number(NumExpr::Count(c) | NumExpr::Sum(_, c) | NumExpr::Distinct(_, c)) => {
                c
            }
            Aggregate::Exists(Cond::Exists(c)) => c,
            _ => {
                static TRUE: Cond = Cond::True;
                &TRUE
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn has(r: ObjRef) -> Cond {
        Cond::Has(r, CharId(0), Symbol::new("goblin"))
    }

    fn count(c: Cond) -> NumExpr {
        NumExpr::Count(Box::new(c))
    }

    /// A chain of `levels` nestings of every kind (`not`, `and`, `exists`, `attached to`, a
    /// comparison of a negated `count`) around `inner`, and how many aggregates it holds.
    fn chain(levels: usize, inner: Cond) -> (Cond, usize) {
        let mut c = inner;
        let mut aggregates = 0;
        for i in 0..levels {
            c = match i % 5 {
                0 => Cond::Not(Box::new(c)),
                1 => Cond::And(vec![Cond::InPlay, c]),
                2 => Cond::Exists(Box::new(c)),
                3 => Cond::AttachedTo(Box::new(c)),
                _ => Cond::Cmp(
                    NumExpr::Neg(Box::new(count(c))),
                    CmpOp::Lt,
                    NumExpr::Const(0),
                ),
            };
            aggregates += matches!(i % 5, 2 | 4) as usize;
        }
        (c, aggregates)
    }

    /// Takes a chain apart a level at a time: dropping it whole recurses as deep as it goes.
    fn dismantle(mut c: Cond) {
        loop {
            c = match c {
                Cond::Not(x) | Cond::Exists(x) | Cond::AttachedTo(x) => *x,
                Cond::And(mut v) => match v.pop() {
                    Some(x) => x,
                    None => return,
                },
                Cond::Cmp(NumExpr::Neg(e), ..) => match *e {
                    NumExpr::Count(x) => *x,
                    _ => return,
                },
                _ => return,
            }
        }
    }

    /// Far deeper than the loader accepts (512 levels): every walk goes to the bottom without
    /// a call per level, so a test thread's stack is enough.
    #[test]
    fn walks_need_no_stack_per_level() {
        let (c, aggregates) = chain(200_000, Cond::And(vec![Cond::IsOuter, Cond::IsTarget]));
        assert!(c.uses_targets());
        assert!(c.refers_to_others());
        assert!(!c.refers_outer(), "`outer` is under aggregates");
        assert!(!c.reads_counters() && !c.names_source() && !c.reads_occurrence());
        assert!(!c.is_local() && !c.is_local_or_host(true));
        let mut f = Footprint::default();
        c.reads(None, &mut f);
        assert!(f.is_empty());
        let mut a = Vec::new();
        c.aggregates(&mut a);
        assert_eq!(a.len(), aggregates);
        dismantle(c);
    }

    /// Inside `exists` or `count`, `outer` names this level's subject, not the one around it.
    #[test]
    fn refers_outer_looks_at_its_own_level() {
        assert!(Cond::Not(Box::new(has(ObjRef::Outer))).refers_outer());
        assert!(!Cond::Exists(Box::new(Cond::IsOuter)).refers_outer());
        let outer_power = NumExpr::Char(ObjRef::Outer, CharId(1));
        assert!(NumExpr::Add(Box::new(NumExpr::Const(1)), Box::new(outer_power)).refers_outer());
        assert!(!count(has(ObjRef::Outer)).refers_outer());
        let c = Cond::Cmp(count(Cond::IsOuter), CmpOp::Gt, NumExpr::Const(0));
        assert!(!c.refers_outer());
    }

    /// The aggregates come inner first, then the one holding them, in written order.
    #[test]
    fn aggregates_come_inner_first() {
        let c = Cond::And(vec![
            Cond::Exists(Box::new(Cond::Cmp(
                count(has(ObjRef::This)),
                CmpOp::Gt,
                NumExpr::Const(0),
            ))),
            Cond::Exists(Box::new(Cond::InPlay)),
        ]);
        let Cond::And(parts) = &c else { unreachable!() };
        let Cond::Exists(first) = &parts[0] else {
            unreachable!()
        };
        let Cond::Cmp(inner, ..) = &**first else {
            unreachable!()
        };
        let mut a = Vec::new();
        c.aggregates(&mut a);
        let keys: Vec<usize> = a.iter().map(|x| x.key()).collect();
        assert_eq!(
            keys,
            vec![
                Aggregate::Number(inner).key(),
                Aggregate::Exists(&parts[0]).key(),
                Aggregate::Exists(&parts[1]).key(),
            ]
        );
    }

    /// `attached to C` reads the host, where C is a local test; a host's host is beyond it.
    #[test]
    fn local_or_host_goes_one_attachment_deep() {
        let on_host = Cond::AttachedTo(Box::new(has(ObjRef::This)));
        assert!(!on_host.is_local());
        assert!(on_host.is_local_or_host(false));
        assert!(Cond::Not(Box::new(on_host.clone())).is_local_or_host(false));
        assert!(!Cond::AttachedTo(Box::new(on_host)).is_local_or_host(true));
        assert!(Cond::LegallyAttached.is_local_or_host(true));
        assert!(!Cond::LegallyAttached.is_local_or_host(false));
        assert!(!Cond::AttachedTo(Box::new(Cond::LegallyAttached)).is_local_or_host(true));
        let counted = Cond::AttachedTo(Box::new(Cond::Exists(Box::new(Cond::InPlay))));
        assert!(!counted.is_local_or_host(true));
    }
}
