//! Issue 14, no lock while playing: one loaded ruleset and its content serve games on several
//! threads at once, and each thread derives what a single thread derives.

use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::content::Content;
use rulecraft_core::model::ruleset::Ruleset;
use rulecraft_core::model::value::{Ability, Value};
use rulecraft_core::{GameState, ObjectId, PlayerId, Symbol};
use rulecraft_lang::loader::Loader;
use rulecraft_lang::scenario::run;
use std::path::Path;
use std::sync::Arc;
mod common;

/// A game, its ruleset and its content may be shared by threads and outlive the loader.
const _: fn() = || {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<GameState>();
    shared::<Ruleset>();
    shared::<Content>();
    shared::<Arc<Ruleset>>();
    shared::<Arc<Content>>();
    shared::<Symbol>();
};

fn enter(s: &mut GameState, name: &str, zone: &str, choices: &[&str]) -> ObjectId {
    let class = s.content().class_id(name).expect(name);
    let zone = s.ruleset().zone_id(zone).expect(zone);
    let mut n = NewObject::new(class, PlayerId(0), zone);
    // Symbols made here, apart from the loaded ones: they compare by their text.
    n.choices = choices.iter().map(|c| Symbol::new(c)).collect();
    s.apply(Action::Create(vec![n])).expect("enters").created[0]
}

/// Plays one game from `start`: permanents whose effects name symbols (a chosen creature type,
/// abilities given per color, keywords granted), a text change made as a spell resolves (CR 612:
/// islandwalk becomes forestwalk) and a counter; after each action, every derived value.
fn play(start: &GameState) -> Vec<String> {
    let mut s = start.clone();
    let mut seen = Vec::new();
    let mut note = |s: &GameState| seen.push(format!("{:?}", s.derived().sheet));
    let horse = enter(&mut s, "Zodiac Horse", "battlefield", &[]);
    note(&s);
    let gharial = enter(&mut s, "Grayscaled Gharial", "battlefield", &[]);
    note(&s);
    for name in [
        "Skeletal Changeling",
        "Empty-Shrine Kannushi",
        "Lord of Atlantis",
        "Glorious Anthem",
    ] {
        enter(&mut s, name, "battlefield", &[]);
        note(&s);
    }
    enter(&mut s, "Engineered Plague", "battlefield", &["horse"]);
    note(&s);
    let bend = enter(&mut s, "Mind Bend", "graveyard", &[]);
    s.apply(Action::Resolve {
        spell: bend,
        controller: PlayerId(0),
        targets: vec![horse],
        choices: ["island", "forest"].map(Symbol::new).to_vec(),
    })
    .expect("Mind Bend resolves");
    note(&s);
    let plus = s.ruleset().counter_id("+1/+1").expect("+1/+1 counters");
    s.apply(Action::AddCounters {
        object: gharial,
        counter: plus,
        count: 1,
    })
    .expect("a counter");
    note(&s);
    let value = |o: ObjectId, c: &str| {
        let c = s.ruleset().char_id(c).expect(c);
        s.characteristic(o, c).expect("a value").to_string()
    };
    // The Horse: 3/3, Glorious Anthem +1/+1 (creatures), the Plague -1/-1 (the chosen type,
    // horse); its islandwalk became forestwalk. The Gharial: 1/1, the Anthem and a counter.
    seen.push(format!(
        "horse {} {}; gharial {}",
        value(horse, "power"),
        value(horse, "abilities"),
        value(gharial, "power")
    ));
    seen
}

fn load() -> GameState {
    common::mtg_game(&["Alice", "Bob"])
}

#[test]
fn two_threads_play_from_one_loaded_ruleset_and_derive_alike() {
    let start = load();
    let alone = play(&start);
    assert_eq!(
        alone.last().map(String::as_str),
        Some("horse 3 forestwalk; gharial 3")
    );
    let both: Vec<Vec<String>> = std::thread::scope(|sc| {
        let games: Vec<_> = (0..2)
            .map(|_| {
                sc.spawn(|| {
                    let game = start.clone();
                    assert!(Arc::ptr_eq(game.ruleset(), start.ruleset()));
                    assert!(Arc::ptr_eq(game.content(), start.content()));
                    play(&game)
                })
            })
            .collect();
        games
            .into_iter()
            .map(|g| g.join().expect("no panic"))
            .collect()
    });
    for seen in both {
        assert_eq!(seen, alone);
    }
}

/// Scenarios whose derivations make symbols as they play (text changes, an ability per color),
/// run on two threads from one loaded environment, pass on both.
#[test]
fn two_threads_run_scenarios_from_one_load() {
    let mut loader = Loader::new();
    let mut all = Vec::new();
    for f in [
        "scenarios/layers/3-mind-bend.scenario",
        "scenarios/layers/dependency-text-and-templates.scenario",
        "scenarios/rules/chosen-type-engineered-plague.scenario",
    ] {
        all.extend(loader.scenarios(Path::new(f)).expect("loads"));
    }
    assert!(all.len() >= 4);
    let outcome = |i: usize| {
        let (env, sc) = &all[i];
        let r = run(env, sc, None);
        let failures: Vec<String> = r.failures.iter().map(|f| f.message.clone()).collect();
        (
            r.name,
            r.checked,
            failures,
            format!("{:?}", r.state.derived().sheet),
        )
    };
    let alone: Vec<_> = (0..all.len()).map(outcome).collect();
    for (name, checked, failures, _) in &alone {
        assert!(*checked > 0 && failures.is_empty(), "{name}: {failures:?}");
    }
    std::thread::scope(|sc| {
        let runs: Vec<_> = (0..2)
            .map(|_| sc.spawn(|| (0..all.len()).map(outcome).collect::<Vec<_>>()))
            .collect();
        for r in runs {
            assert_eq!(r.join().expect("no panic"), alone);
        }
    });
}

/// A ruleset and its content loaded together share one allocation per text of a symbol (printed
/// values, an effect's abilities), so comparing them in play is one pointer test.
#[test]
fn symbols_loaded_together_share_their_text() {
    let mut s = load();
    let horse = enter(&mut s, "Zodiac Horse", "battlefield", &[]);
    let gharial = enter(&mut s, "Grayscaled Gharial", "battlefield", &[]);
    enter(&mut s, "Lord of Atlantis", "battlefield", &[]);
    // The second Lord has islandwalk from the first ("other Merfolk ... have islandwalk").
    let lord = enter(&mut s, "Lord of Atlantis", "battlefield", &[]);
    let symbol = |o: ObjectId, ch: &str, text: &str| -> Symbol {
        let ch = s.ruleset().char_id(ch).expect(ch);
        match s.characteristic(o, ch).expect("a value") {
            Value::Symbols(set) => set.iter().find(|x| x.as_str() == text).cloned(),
            Value::Abilities(list) => list.iter().find_map(|a| match a {
                Ability::Keyword(k) if k.as_str() == text => Some(k.clone()),
                _ => None,
            }),
            _ => None,
        }
        .expect(text)
    };
    let creature = symbol(horse, "types", "creature");
    assert!(creature.shares(&symbol(gharial, "types", "creature")));
    assert!(creature.shares(&symbol(lord, "types", "creature")));
    let islandwalk = symbol(horse, "abilities", "islandwalk");
    assert!(islandwalk.shares(&symbol(gharial, "abilities", "islandwalk")));
    assert!(islandwalk.shares(&symbol(lord, "abilities", "islandwalk")));
}
