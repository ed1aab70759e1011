//! A generator of galaxies for the galaxy ruleset (FreeOrion's effects system): `systems` star
//! systems with the mix the issue gives per 1,000 systems (about 1,170 planets, 930 ships, 930
//! fleets, 155 fields, 70 buildings), each object of a class of its type taken in turn from the
//! content, placed by the hierarchy (a planet attached to its system, a building to a planet,
//! a ship and a fleet to a system or, one in ten, to nothing: between systems), owned by the
//! players in turn; besides, each player's empire object with one of each tech (the classes of
//! type `special`) attached to it. The classes are those of `content/galaxy/basic.cards` and
//! `content/galaxy/classes.cards`. Deterministic: the same arguments give the same galaxy.

use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::decision::{Choice, DecisionRequest};
use rulecraft_core::{ClassId, GameState, ObjectId, PlayerId};
use rulecraft_lang::loader::Loader;
use std::path::Path;

/// How many objects of each type a galaxy of `systems` systems has (the mix).
pub fn mix(systems: usize) -> [(&'static str, usize); 6] {
    let per = |n: usize| (systems * n + 500) / 1000;
    [
        ("system", systems),
        ("planet", per(1170)),
        ("building", per(70)),
        ("ship", per(930)),
        ("fleet", per(930)),
        ("field", per(155)),
    ]
}

/// The galaxy ruleset and content (and `extra` content files) with `players` empires and
/// nothing in play.
pub fn empty(players: &[&str], extra: &[&Path]) -> GameState {
    let mut content = vec![
        Path::new("content/galaxy/basic.cards"),
        Path::new("content/galaxy/classes.cards"),
    ];
    content.extend_from_slice(extra);
    Loader::new()
        .game(Path::new("rulesets/galaxy.rules"), &content, players)
        .expect("the galaxy ruleset and content load")
}

/// SplitMix64: a small seeded source, so the same seed gives the same galaxy.
struct Mix(u64);
impl Mix {
    fn next(&mut self, n: usize) -> usize {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        ((z ^ (z >> 31)) % n.max(1) as u64) as usize
    }
}

/// The content of techs whose effects groups do not alter meters (they fire as each turn
/// begins): `galaxy_fire.cards`, next to this file.
#[allow(dead_code)] // used by the benchmark, not by every test that includes this file
pub const FIRING: &str = "benches/support/galaxy_fire.cards";

/// The same galaxy with each empire holding the techs of [`FIRING`] too: non-meter effects
/// groups with sources, for one turn's processing.
#[allow(dead_code)] // used by the benchmark, not by every test that includes this file
pub fn galaxy_firing(systems: usize, seed: u64) -> GameState {
    galaxy_with(systems, seed, &[Path::new(FIRING)])
}

/// One turn of the galaxy: `turn` begins for the first empire, and with it, by the ruleset's
/// rule, current meters grow and are capped, then the non-meter effects groups fire.
#[allow(dead_code)] // used by the benchmark, not by every test that includes this file
pub fn turn(s: &mut GameState) {
    let turn = s.ruleset().event_id("turn").expect("event turn");
    s.begin(rulecraft_core::Occurrence::new(
        turn,
        vec![rulecraft_core::Arg::Player(PlayerId(0))],
    ))
    .expect("the turn begins");
    assert!(
        s.pending_decision().is_none(),
        "the turn asks no decision: {:?}",
        s.pending_decision()
    );
}

/// A galaxy of `systems` systems, its derived values worked out.
#[allow(dead_code)] // used by the tests, not by every program that includes this file
pub fn galaxy(systems: usize, seed: u64) -> GameState {
    galaxy_with(systems, seed, &[])
}

/// The same with `extra` content loaded too (its classes are placed with the others, but for
/// those named `Test ...`).
pub fn galaxy_with(systems: usize, seed: u64, extra: &[&Path]) -> GameState {
    let mut s = empty(&["Ann", "Ben", "Cid", "Dee"], extra);
    let zone = s.ruleset().zone_id("galaxy").expect("zone galaxy");
    let players = s.players().len();
    let classes = |s: &GameState, t: &str| -> Vec<ClassId> {
        let ty = s.ruleset().type_id(t).expect("type");
        s.content()
            .classes
            .iter()
            .enumerate()
            .filter(|(_, c)| c.object_type == Some(ty) && !c.name.starts_with("Test "))
            .map(|(i, _)| ClassId(i as u32))
            .collect()
    };
    let mut rng = Mix(seed);
    let mut made: Vec<(&str, Vec<ObjectId>)> = Vec::new();
    for (t, n) in mix(systems) {
        let of = classes(&s, t);
        assert!(!of.is_empty(), "the content has no class of type {t}");
        let under: Vec<ObjectId> = match t {
            "planet" | "ship" | "fleet" | "field" => made[0].1.clone(),
            "building" => made[1].1.clone(),
            _ => Vec::new(),
        };
        let mut list = Vec::with_capacity(n);
        for i in 0..n {
            let mut o = NewObject::new(of[rng.next(of.len())], PlayerId((i % players) as u8), zone);
            let adrift = matches!(t, "ship" | "fleet") && rng.next(10) == 0;
            if !under.is_empty() && !adrift {
                o.attached_to = Some(under[rng.next(under.len())]);
            }
            list.push(o);
        }
        let ids = enter(&mut s, list);
        made.push((t, ids));
    }
    // Each empire, and its techs.
    let empire = classes(&s, "empire");
    let techs = classes(&s, "special");
    for p in 0..players {
        let e = enter(
            &mut s,
            vec![NewObject::new(empire[0], PlayerId(p as u8), zone)],
        )[0];
        let list = techs
            .iter()
            .map(|t| {
                let mut o = NewObject::new(*t, PlayerId(p as u8), zone);
                o.attached_to = Some(e);
                o
            })
            .collect();
        enter(&mut s, list);
    }
    let _ = s.derived();
    s
}

/// How many effects groups have a source in play: each object's class's groups (its static
/// abilities), counted once per object.
#[allow(dead_code)] // used by the benchmark, not by every test that includes this file
pub fn groups_with_sources(s: &GameState) -> usize {
    s.objects()
        .filter(|o| s.in_play(o.id))
        .map(|o| {
            s.content().classes[o.class.index()]
                .statics
                .iter()
                .map(|d| d.text.clone())
                .collect::<std::collections::BTreeSet<_>>()
                .len()
        })
        .sum()
}

/// Enters the objects at once, answering the timestamp order in the order given.
fn enter(s: &mut GameState, list: Vec<NewObject>) -> Vec<ObjectId> {
    let out = s.apply(Action::Create(list)).expect("objects enter");
    if let Some(DecisionRequest::OrderTimestamps { objects, .. }) = s.pending_decision() {
        let order = objects.clone();
        s.decide(Choice::Order(order)).expect("order");
    }
    out.created
}
