//! Saving and loading a game (docs/save-format.md): a loaded game goes on exactly as the saved one
//! would have, a save loaded and saved again is the same bytes, and a bad save is a clear error.

use rulecraft_core::model::action::{Action, NewObject};
use rulecraft_core::model::decision::DecisionRequest;
use rulecraft_core::{GameState, PlayerId, SaveError, SAVE_VERSION};
use rulecraft_lang::loader::Loader;
use rulecraft_lang::scenario::{log_text, run, run_with, Report};
use std::path::{Path, PathBuf};
use std::sync::Arc;
mod common;

fn scenario_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            scenario_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "scenario") {
            out.push(p);
        }
    }
}

/// The state saved and loaded again, checking that the load derives the same values and that
/// saving the loaded state gives the same bytes.
fn round_trip(s: &GameState) -> Result<GameState, String> {
    let bytes = s.save();
    let loaded = GameState::load(s.ruleset().clone(), s.content().clone(), &bytes)
        .map_err(|e| e.to_string())?;
    if loaded.save() != bytes {
        return Err("the loaded state saves to other bytes".into());
    }
    let derived = |g: &GameState| serde_json::to_string(g.derived()).unwrap();
    if derived(&loaded) != derived(s) {
        return Err("the loaded state derives other values".into());
    }
    Ok(loaded)
}

/// What a scenario run shows: its failures, what it checked, its final values and its log.
fn outcome(r: &Report) -> String {
    let failures: Vec<String> = r.failures.iter().map(|f| f.message.clone()).collect();
    format!(
        "{failures:?}\n{}\n{}\n{:?}\n{}",
        r.checked,
        serde_json::to_string(&r.state.explain()).unwrap(),
        r.state.pending_decision(),
        log_text(&r.state)
    )
}

/// Every scenario, with a save and a load between every two steps, gives what it gives without.
#[test]
fn every_scenario_goes_on_identically_after_save_and_load() {
    let mut files = Vec::new();
    scenario_files(Path::new("scenarios"), &mut files);
    assert!(files.len() > 50, "the scenarios are found");
    let (mut steps, mut under_way, mut snapshots, mut largest) = (0, 0, 0, 0);
    for path in files {
        let mut loader = Loader::new();
        let Ok(all) = loader.scenarios(&path) else {
            continue;
        };
        for (env, sc) in all {
            let plain = run(&env, &sc, None);
            let mut between = |s: &GameState| {
                steps += 1;
                let text = String::from_utf8(s.save()).unwrap();
                largest = largest.max(text.len());
                under_way += usize::from(!text.contains("\"tasks\":[]"));
                snapshots += usize::from(text.contains("\"snapshots\":[["));
                round_trip(s)
            };
            let saved = run_with(&env, &sc, None, Some(&mut between));
            assert_eq!(
                outcome(&plain),
                outcome(&saved),
                "{}: {}",
                path.display(),
                sc.header.name
            );
        }
    }
    eprintln!(
        "{steps} steps saved, {under_way} with occurrences under way, {snapshots} with a \
         snapshot; the largest save {largest} bytes"
    );
    assert!(steps > 500, "{steps} steps saved and loaded");
    assert!(under_way > 0 && snapshots > 0);
}

fn game() -> GameState {
    common::mtg_game(&["Alice", "Bob"])
}

fn new(s: &GameState, name: &str, zone: &str) -> NewObject {
    NewObject::new(
        s.content().class_id(name).expect("class"),
        PlayerId(0),
        s.ruleset().zone_id(zone).expect("zone"),
    )
}

/// A game waiting for the active player to order two timestamps (CR 613.7).
fn pending_game() -> GameState {
    let mut s = game();
    let bears = new(&s, "Grizzly Bears", "battlefield");
    s.apply(Action::Create(vec![bears])).unwrap();
    let both = vec![
        new(&s, "Spellbook", "battlefield"),
        new(&s, "Null Profusion", "battlefield"),
    ];
    s.apply(Action::Create(both)).unwrap();
    assert!(matches!(
        s.pending_decision(),
        Some(DecisionRequest::OrderTimestamps { .. })
    ));
    s
}

/// A save, loaded, then saved again, is the same bytes.
#[test]
fn a_loaded_save_saves_to_the_same_bytes() {
    let s = pending_game();
    let bytes = s.save();
    let loaded = GameState::load(s.ruleset().clone(), s.content().clone(), &bytes).unwrap();
    assert_eq!(loaded.save(), bytes);
}

/// A game saved at a pending decision and loaded, answered either way, goes on as the original.
#[test]
fn a_loaded_decision_answers_as_the_original() {
    let s = pending_game();
    let loaded = GameState::load(s.ruleset().clone(), s.content().clone(), &s.save()).unwrap();
    assert_eq!(loaded.pending_decision(), s.pending_decision());
    let Some(DecisionRequest::OrderTimestamps { objects, .. }) = s.pending_decision() else {
        unreachable!()
    };
    let orders = [
        objects.clone(),
        objects.iter().rev().copied().collect::<Vec<_>>(),
    ];
    let mut results = Vec::new();
    for order in orders {
        let mut a = s.clone();
        let mut b = loaded.clone();
        let ra = a.decide(rulecraft_core::Choice::Order(order.clone()));
        let rb = b.decide(rulecraft_core::Choice::Order(order));
        assert_eq!(format!("{ra:?}"), format!("{rb:?}"));
        let ea = serde_json::to_string(&a.explain()).unwrap();
        assert_eq!(ea, serde_json::to_string(&b.explain()).unwrap());
        assert_eq!(a.save(), b.save());
        results.push(ea);
    }
    assert_ne!(
        results[0], results[1],
        "the two orders give different values"
    );
}

fn load(s: &GameState, bytes: &[u8]) -> Result<GameState, SaveError> {
    GameState::load(s.ruleset().clone(), s.content().clone(), bytes)
}

#[test]
fn a_truncated_save_is_an_error() {
    let s = pending_game();
    let bytes = s.save();
    for cut in [bytes.len() / 2, bytes.len() - 1, 30] {
        match load(&s, &bytes[..cut]) {
            Err(SaveError::Corrupt(m)) => assert!(m.contains("EOF"), "{m}"),
            other => panic!("cut at {cut}: {:?}", other.map(|_| ())),
        }
    }
    assert_eq!(load(&s, b"").err(), Some(SaveError::NotASave));
    assert_eq!(
        load(&s, b"{\"players\": []}").err(),
        Some(SaveError::NotASave)
    );
}

#[test]
fn a_corrupted_save_is_an_error() {
    let s = pending_game();
    let text = String::from_utf8(s.save()).unwrap();
    // An object's zone that the ruleset does not have.
    let bad = text.replacen("\"zone\":", "\"zone\":999,\"was\":", 1);
    match load(&s, bad.as_bytes()) {
        Err(SaveError::Corrupt(m)) => assert!(m.contains("zone 999 does not exist"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // An object id past the objects saved.
    let bad = text.replacen("\"attached_to\":null", "\"attached_to\":4000", 1);
    match load(&s, bad.as_bytes()) {
        Err(SaveError::Corrupt(m)) => assert!(m.contains("object 4000 does not exist"), "{m}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    // One byte changed anywhere either loads nothing or loads a state: never a panic.
    let bytes = text.as_bytes();
    for i in (0..bytes.len()).step_by(bytes.len() / 300 + 1) {
        let mut b = bytes.to_vec();
        b[i] = b[i].wrapping_add(1);
        if let Ok(g) = load(&s, &b) {
            let _ = g.derived();
        }
    }
}

#[test]
fn a_save_of_another_version_is_an_error() {
    let s = pending_game();
    let text = String::from_utf8(s.save()).unwrap();
    let other = text.replacen(&format!("\"version\":{SAVE_VERSION}"), "\"version\":7", 1);
    assert_eq!(
        load(&s, other.as_bytes()).err(),
        Some(SaveError::Version {
            found: 7,
            supported: SAVE_VERSION
        })
    );
}

#[test]
fn a_save_for_another_ruleset_or_content_is_an_error() {
    let s = pending_game();
    let bytes = s.save();
    let other = Loader::new()
        .game(
            Path::new("rulesets/mtg-2017.rules"),
            &[Path::new("content/mtg")],
            &["Alice", "Bob"],
        )
        .unwrap();
    assert!(matches!(
        GameState::load(other.ruleset().clone(), s.content().clone(), &bytes),
        Err(SaveError::OtherRuleset { .. })
    ));
    let mut content = (**s.content()).clone();
    content.classes.pop();
    assert!(matches!(
        GameState::load(s.ruleset().clone(), Arc::new(content), &bytes),
        Err(SaveError::OtherContent { .. })
    ));
}
