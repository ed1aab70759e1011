//! The galaxy ruleset at scale (FreeOrion's effects system): the generator gives the issue's mix
//! of objects, and the values kept after each change, whatever the attachment hierarchy makes a
//! condition read, are those of a full derivation.

#[path = "../benches/support/galaxy.rs"]
mod support;

use rulecraft_core::layers::derive;
use rulecraft_core::model::action::Action;
use rulecraft_core::{GameState, ObjectId};

fn same_as_full(s: &GameState, when: &str) {
    assert_eq!(
        format!("{:?}", s.derived().sheet),
        format!("{:?}", derive(s, false).sheet),
        "{when}: the derived values are what a full derivation gives"
    );
}

fn of_type(s: &GameState, t: &str) -> Vec<ObjectId> {
    let t = s.ruleset().type_id(t).expect("type");
    s.objects_of_type(t)
}

/// Runs the scenario of `file` whose name starts with `name` (the first where `name` is empty),
/// and checks it passes.
fn run_scenario(file: &str, name: &str) -> rulecraft_lang::scenario::Report {
    let mut loader = rulecraft_lang::loader::Loader::new();
    let list = loader.scenarios(std::path::Path::new(file)).expect("loads");
    let (env, sc) = list
        .iter()
        .find(|(_, s)| s.header.name.starts_with(name))
        .expect("the scenario");
    let r = rulecraft_lang::scenario::run(env, sc, None);
    assert!(r.passed(), "{file}: {name}");
    r
}

/// Runs every scenario of scenarios/galaxy, in file order, giving each report to `f`.
fn each_galaxy_scenario(mut f: impl FnMut(&rulecraft_lang::scenario::Report)) {
    let mut loader = rulecraft_lang::loader::Loader::new();
    let mut dir: Vec<_> = std::fs::read_dir("scenarios/galaxy")
        .expect("the galaxy scenarios")
        .map(|e| e.expect("an entry").path())
        .collect();
    dir.sort();
    for file in dir {
        for (env, sc) in loader.scenarios(&file).expect("the galaxy scenarios load") {
            f(&rulecraft_lang::scenario::run(&env, &sc, None));
        }
    }
}

#[test]
fn the_generator_gives_the_issues_mix_the_same_each_time() {
    let s = support::galaxy(1_000, 3);
    for (t, n) in [
        ("system", 1_000),
        ("planet", 1_170),
        ("building", 70),
        ("ship", 930),
        ("fleet", 930),
        ("field", 155),
    ] {
        assert_eq!(of_type(&s, t).len(), n, "{t}");
    }
    let again = support::galaxy(1_000, 3);
    assert_eq!(
        format!("{:?}", s.derived().sheet),
        format!("{:?}", again.derived().sheet)
    );
}

/// Planets moved between systems of different star colours, buildings moved between planets,
/// fields and ships moved between systems, objects leaving: each read through the hierarchy (a building's star colour is its system's).
#[test]
fn changes_of_the_hierarchy_derive_as_a_full_derivation_does() {
    let mut s = support::galaxy_with(
        30,
        11,
        &[std::path::Path::new("tests/data/galaxy_nova.cards")],
    );
    same_as_full(&s, "generated");
    // Every meter's max value on every object, added up.
    let total = |s: &GameState| -> i64 {
        let meters: Vec<_> = ["farming", "defense", "health", "industry", "speed"]
            .iter()
            .map(|m| s.ruleset().char_id(m).expect("meter"))
            .collect();
        s.objects()
            .flat_map(|o| meters.iter().map(move |m| (o.id, *m)))
            .filter_map(|(o, m)| s.characteristic(o, m).ok().and_then(|v| v.number()))
            .sum()
    };
    let systems = of_type(&s, "system");
    let planets = of_type(&s, "planet");
    let buildings = of_type(&s, "building");
    let ships = of_type(&s, "ship");
    // A Farming Enhancer on the first planet, which then moves to a red star and to a yellow
    // one: the enhancers' max farming goes and comes back.
    let zone = s.ruleset().zone_id("galaxy").expect("galaxy");
    let class = |s: &GameState, n: &str| s.content().class_id(n).expect(n);
    let star = |s: &GameState, c: &str| {
        let colour = s.ruleset().char_id("star_colour").expect("star_colour");
        *systems
            .iter()
            .find(|x| matches!(s.characteristic(**x, colour), Ok(rulecraft_core::Value::Symbols(v)) if v.iter().any(|y| y.as_str() == c)))
            .expect("a system of that colour")
    };
    let enhancer = rulecraft_core::NewObject {
        attached_to: Some(planets[0]),
        ..rulecraft_core::NewObject::new(
            class(&s, "Farming Enhancer"),
            rulecraft_core::PlayerId(0),
            zone,
        )
    };
    s.apply(Action::Create(vec![enhancer])).expect("enters");
    let (red, yellow) = (star(&s, "red"), star(&s, "yellow"));
    s.apply(Action::Attach {
        object: planets[0],
        to: yellow,
    })
    .expect("attach");
    same_as_full(&s, "at a yellow star");
    let at_yellow = total(&s);
    s.apply(Action::Attach {
        object: planets[0],
        to: red,
    })
    .expect("attach");
    same_as_full(&s, "at a red star");
    // Each Farming Enhancer in play gives every planet at a yellow star 2 max farming.
    let enhancers = s
        .objects()
        .filter(|o| s.in_play(o.id) && &*o.name == "Farming Enhancer")
        .count() as i64;
    assert!(enhancers >= 1);
    assert_eq!(
        total(&s),
        at_yellow - 2 * enhancers,
        "the enhancers' max farming goes"
    );
    s.apply(Action::Attach {
        object: planets[0],
        to: yellow,
    })
    .expect("attach");
    same_as_full(&s, "at a yellow star again");
    assert_eq!(total(&s), at_yellow, "and comes back");
    for (i, p) in planets.iter().enumerate().take(12) {
        let to = systems[(i * 7 + 3) % systems.len()];
        s.apply(Action::Attach { object: *p, to }).expect("attach");
        same_as_full(&s, &format!("planet {i} moved"));
    }
    for (i, b) in buildings.iter().enumerate() {
        let to = planets[(i * 5 + 1) % planets.len()];
        s.apply(Action::Attach { object: *b, to }).expect("attach");
        same_as_full(&s, &format!("building {i} moved"));
    }
    let fields = of_type(&s, "field");
    for (i, f) in fields.iter().enumerate() {
        let to = systems[(i * 3 + 2) % systems.len()];
        s.apply(Action::Attach { object: *f, to }).expect("attach");
        same_as_full(&s, &format!("field {i} moved"));
    }
    let gone = s.ruleset().zone_id("gone").expect("zone gone");
    for (i, sh) in ships.iter().enumerate().take(8) {
        let to = systems[(i * 11 + 5) % systems.len()];
        s.apply(Action::Attach { object: *sh, to }).expect("attach");
        same_as_full(&s, &format!("ship {i} moved"));
        s.apply(Action::Move {
            object: *sh,
            zone: gone,
        })
        .expect("leaves");
        same_as_full(&s, &format!("ship {i} gone"));
    }
    // Every star turns red, then back: the planets' scopes read their systems' colour.
    let nova = s.content().class_id("Test Red Nova").expect("nova class");
    let zone = s.ruleset().zone_id("galaxy").expect("galaxy");
    let before = total(&s);
    let made = s
        .apply(Action::Create(vec![rulecraft_core::NewObject::new(
            nova,
            rulecraft_core::PlayerId(0),
            zone,
        )]))
        .expect("the nova enters")
        .created[0];
    same_as_full(&s, "every star red");
    assert_ne!(
        total(&s),
        before,
        "red stars take the Farming Enhancers' 2 away"
    );
    s.apply(Action::Move {
        object: made,
        zone: gone,
    })
    .expect("leaves");
    same_as_full(&s, "the stars' own colours again");
    // A system leaves: its planets' star colour is read nowhere now.
    s.apply(Action::Move {
        object: systems[0],
        zone: gone,
    })
    .expect("leaves");
    same_as_full(&s, "a system gone");
}

/// FreeOrion's meter accounting: every current value accounts for itself from the log, change by
/// change (growth, cap, each effect with the group that fired it), with nothing left over, at the
/// end of every galaxy scenario.
#[test]
fn every_current_value_accounts_for_itself() {
    let mut checked = 0;
    each_galaxy_scenario(|r| {
        let s = &r.state;
        let rs = s.ruleset();
        for o in s.objects().map(|o| o.id) {
            for k in 0..rs.counters.len() {
                let kind = rulecraft_core::model::ids::CounterId(k as u16);
                if rs.meter_of_counter(kind).is_none() {
                    continue;
                }
                let a = s.account(o, kind).expect("an object and a counter kind");
                assert_eq!(
                    a.unaccounted, 0,
                    "{}: {} {}",
                    r.name, o.0, rs.counters[k].name
                );
                let mut at = 0;
                for step in &a.steps {
                    assert_eq!(step.before, at, "{}: steps follow on", r.name);
                    at = step.after;
                }
                assert_eq!(at, a.count);
                checked += a.steps.len();
            }
        }
    });
    assert!(checked > 100, "only {checked} changes accounted for");
}

/// The accounting of one value, step by step: Earth's current farming in the stacking scenario
/// (max 3): grows to 1; the Farm Grant's 5 and the Farm Bureau's 2; next turn grows to 9, is
/// capped to 3, then 5 and 2 again.
#[test]
fn a_current_value_lists_each_change_with_what_made_it() {
    let r = run_scenario("scenarios/galaxy/effects-non-meter.scenario", "");
    let s = &r.state;
    let earth = r.names["earth"];
    let farming = s
        .ruleset()
        .counters
        .iter()
        .position(|c| c.name == "farming")
        .map(|i| rulecraft_core::model::ids::CounterId(i as u16))
        .expect("the farming meter's counters");
    let a = s.account(earth, farming).expect("accounts");
    let got: Vec<(String, i64, i64)> = a
        .steps
        .iter()
        .map(|st| {
            let by = st.by.clone().unwrap_or_default();
            let who = by.split(' ').take(2).collect::<Vec<_>>().join(" ");
            (
                format!("{} / {who}", st.what.split(' ').next().unwrap_or("")),
                st.before,
                st.after,
            )
        })
        .collect();
    let want = [
        ("grows / rule \"As", 0, 1),
        ("current_changes(Terran / Farm Grant", 1, 6),
        ("current_changes(Terran / Farm Bureau", 6, 8),
        ("grows / rule \"As", 8, 9),
        ("capped / rule \"As", 9, 3),
        ("current_changes(Terran / Farm Grant", 3, 8),
        ("current_changes(Terran / Farm Bureau", 8, 10),
    ];
    let want: Vec<(String, i64, i64)> = want
        .iter()
        .map(|(w, b, a)| (w.to_string(), *b, *a))
        .collect();
    assert_eq!(got, want);
    assert_eq!(a.count, 10);
    assert_eq!(a.unaccounted, 0);
}

/// An empire's set of classes accounts for itself from the log (FreeOrion's Set Empire Tech
/// Availability): each change with the occurrence and the group that made it; the firing that
/// would have changed nothing is not there; and, replayed from the log, the changes give the set
/// as it is, for every such property of every player at the end of every galaxy scenario.
#[test]
fn an_empires_set_of_classes_lists_each_change_with_what_made_it() {
    use rulecraft_core::model::value::Value;
    let r = run_scenario("scenarios/galaxy/effects-availability.scenario", "");
    let s = &r.state;
    let ann = s.player_id("Ann").expect("Ann");
    let techs = s
        .ruleset()
        .prop_id("available_techs")
        .expect("the property");
    let steps = s.account_symbols(ann, techs).expect("accounts");
    let got: Vec<(String, String, bool)> = steps
        .iter()
        .map(|st| (st.what.clone(), st.by.clone().unwrap_or_default(), st.added))
        .collect();
    let want = [
        (
            "tech_availability_set(Ann, Algae Farming, 1)",
            "Grant of Algae Farming \"Its empire may research Algae Farming.\"",
            true,
        ),
        (
            "tech_availability_set(Ann, Algae Farming, 0)",
            "Ban on Algae Farming \"Its empire may no longer research Algae Farming.\"",
            false,
        ),
    ];
    let want: Vec<(String, String, bool)> = want
        .iter()
        .map(|(w, b, a)| (w.to_string(), b.to_string(), *a))
        .collect();
    assert_eq!(got, want);
    let mut replayed = 0;
    each_galaxy_scenario(|r| {
        let s = &r.state;
        for (q, def) in s.ruleset().props.iter().enumerate() {
            if !def.symbols {
                continue;
            }
            let q = rulecraft_core::model::ids::PropId(q as u16);
            for p in 0..s.players().len() {
                let p = rulecraft_core::PlayerId(p as u8);
                let mut set = std::collections::BTreeSet::new();
                for st in s.account_symbols(p, q).expect("a player and a property") {
                    // Each change changed the set.
                    assert_eq!(set.insert(st.symbol.clone()), st.added, "{}", r.name);
                    if !st.added {
                        set.remove(&st.symbol);
                    }
                    replayed += 1;
                }
                let now: std::collections::BTreeSet<String> =
                    match s.property(p, q).expect("the property") {
                        Value::Symbols(v) => v.iter().map(|x| x.to_string()).collect(),
                        other => panic!("{}: not a set: {other}", r.name),
                    };
                assert_eq!(set, now, "{}: {}", r.name, def.name);
            }
        }
    });
    assert!(replayed >= 10, "only {replayed} changes replayed");
}

/// A characteristic set for good does not pile up effects: the object's earlier one on that
/// characteristic ends as the next starts (each effect marked with what it sets), after a
/// planet's size and environment changed turn after turn.
#[test]
fn a_characteristic_set_for_good_keeps_one_effect() {
    let r = run_scenario(
        "scenarios/galaxy/effects-planets.scenario",
        "Modify Planet Size: past huge",
    );
    let s = &r.state;
    let earth = r.names["earth"];
    let mut sets: Vec<_> = s
        .effects()
        .filter(|e| e.source == earth)
        .map(|e| e.for_good.expect("set for good"))
        .collect();
    // Size and environment, each set three times over the scenario's three turns.
    assert_eq!(sets.len(), 2, "{sets:?}");
    sets.dedup();
    assert_eq!(sets.len(), 2);
}

/// The map's indexes a derivation shares between sources (starlanes, detection ranges, objects
/// by place, each object's empires) and the narrowing of scopes by place give what a derivation
/// that shares nothing and visits the objects in another order gives: on a generated galaxy
/// with positions and starlanes, and again after a turn whose effects set sizes, environments
/// and star colours and destroy monsters.
#[test]
fn shared_map_indexes_give_what_a_derivation_sharing_nothing_gives() {
    let mut s = support::galaxy_changing(120, 5);
    let same = |s: &GameState, when: &str| {
        let shared = format!("{:?}", derive(s, false).sheet);
        for seed in [1, 2] {
            assert_eq!(
                shared,
                format!(
                    "{:?}",
                    rulecraft_core::layers::derive_permuted(s, seed).sheet
                ),
                "{when}, order {seed}"
            );
        }
    };
    same(&s, "generated");
    for turn in 0..3 {
        support::turn(&mut s);
        same(&s, &format!("after turn {turn}"));
        same_as_full(&s, &format!("after turn {turn}"));
    }
}

/// Every recomputation while turns with changes are processed (sizes, environments and star
/// colours set, objects created and destroyed, all under stacking numbers and scopes that read
/// other objects) gives what a full derivation gives; and some of them are replays, not full
/// derivations.
#[test]
fn recomputations_during_turns_with_changes_equal_full_derivations() {
    let mut s = support::galaxy_changing(60, 11);
    let _ = s.derived();
    let before = rulecraft_core::layers::recomputation_outcomes();
    rulecraft_core::layers::verify_recomputation(true);
    for t in 0..3 {
        support::turn(&mut s);
        // The kept indexes (objects in play, by zone, attachments, each object's type and host)
        // are those the objects give, after objects were created and destroyed.
        assert!(s.indexes_hold(), "turn {t}: the kept indexes");
    }
    rulecraft_core::layers::verify_recomputation(false);
    let after = rulecraft_core::layers::recomputation_outcomes();
    assert!(
        after[0] > before[0],
        "no recomputation was replayed to the end: {before:?} -> {after:?}"
    );
}
