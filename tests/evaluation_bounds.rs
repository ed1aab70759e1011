//! Issue 8, item 3: no input makes loading or one step take more than polynomial time. Aggregates
//! nested inside aggregates are worked out once per evaluation (once per enclosing subject where
//! they say `outer`), so deep nesting costs the sum of its levels, not their product. Each case
//! runs on a thread and must finish within a time no exponential evaluation could meet.

use rulecraft_lang::loader::Loader;
use rulecraft_lang::scenario::run;
use std::sync::mpsc;
use std::time::Duration;

/// Writes a scenario (with its ruleset named by absolute path) and runs it within `secs` seconds;
/// returns its failures.
fn run_within(name: &str, text: String, secs: u64) -> Vec<String> {
    let ruleset = concat!(env!("CARGO_MANIFEST_DIR"), "/rulesets/mtg-2020.rules");
    let text = text.replace("RULESET", ruleset);
    let dir = std::env::temp_dir().join(format!("rulecraft-bounds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temporary folder");
    let path = dir.join(format!("{name}.scenario"));
    std::fs::write(&path, text).expect("scenario written");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut loader = Loader::new();
        let out: Vec<String> = match loader.scenarios(&path) {
            Err(e) => vec![loader.short(&e)],
            Ok(list) => list
                .into_iter()
                .flat_map(|(env, sc)| {
                    let r = run(&env, &sc, None);
                    assert!(r.checked > 0);
                    r.failures
                        .into_iter()
                        .map(|f| format!("{}: {}", loader.map.location(f.at), f.message))
                        .collect::<Vec<_>>()
                })
                .collect(),
        };
        let _ = tx.send(out);
    });
    rx.recv_timeout(Duration::from_secs(secs))
        .unwrap_or_else(|_| panic!("`{name}` did not finish within {secs} s"))
}

/// `exists(exists(...(inner)...))`, `depth` deep.
fn nest(depth: usize, inner: &str) -> String {
    let mut c = inner.to_string();
    for _ in 0..depth {
        c = format!("exists({c})");
    }
    c
}

/// A watcher whose static ability gives it +10/+0 as long as `cond` holds, `pawns` 2/2 creatures,
/// then a 1/6 creature entering.
fn watcher_scenario(cond: &str, pawns: usize) -> String {
    let mut setup = String::new();
    for i in 0..pawns {
        setup.push_str(&format!("        \"Pawn\" as pawn{i} for A\n"));
    }
    format!(
        r#"scenario "deep" {{
    ruleset: "RULESET"
    players: A, B
    card "Watcher" {{
        types: creature
        power: 1
        toughness: 1
        static "As long as COND, Watcher gets +10/+0." {{
            as long as: {cond}
            power += 10
        }}
    }}
    card "Pawn" {{
        types: creature
        power: 2
        toughness: 2
    }}
    card "Wall" {{
        types: creature
        power: 1
        toughness: 6
    }}
    setup {{
        "Watcher" for A
{setup}    }}
    # No creature has toughness 6 or more: the condition holds.
    expect "Watcher" power = 11
    enter "Wall" as wall for B
    # Now one does: every level of the nesting is false.
    expect "Watcher" power = 1
}}
"#
    )
}

/// The issue's case: `not exists(exists(... exists(toughness > 5) ...))` nested deep on a few
/// objects (13 deep on 5 objects took 18.5 s; 20 deep is 5^20 tests without sharing).
#[test]
fn deep_nesting_on_few_objects_is_linear() {
    let cond = format!("not {}", nest(20, "toughness > 5"));
    let fails = run_within("deep-few", watcher_scenario(&cond, 4), 20);
    assert!(fails.is_empty(), "{fails:?}");
}

/// The issue's second case: shallower nesting on many objects (5 deep on 31 objects took 19.6 s).
#[test]
fn nesting_on_many_objects_is_linear() {
    let cond = format!("not {}", nest(7, "toughness > 5"));
    let fails = run_within("deep-many", watcher_scenario(&cond, 30), 20);
    assert!(fails.is_empty(), "{fails:?}");
}

/// Nesting whose every level says `outer` (each value depends on the subject around it): each
/// level is worked out once per object around it, not once per chain of objects (12 levels on 13
/// creatures would be 12^12 tests). "A chain of 12 creatures, each different from the one before,
/// the last with toughness 6 or more": none before the Wall, then the pawns lead to it.
#[test]
fn nesting_that_says_outer_at_every_level_is_polynomial() {
    let mut cond = "creature and not outer and toughness > 5".to_string();
    for _ in 0..11 {
        cond = format!("creature and not outer and exists({cond})");
    }
    let cond = format!("exists(creature and exists({cond}))");
    let text = watcher_scenario(&cond, 12)
        .replace(
            "    # No creature has toughness 6 or more: the condition holds.\n    expect \"Watcher\" power = 11\n",
            "    # No creature has toughness 6 or more: no chain ends well.\n    expect \"Watcher\" power = 1\n",
        )
        .replace(
            "    # Now one does: every level of the nesting is false.\n    expect \"Watcher\" power = 1\n",
            "    # The chain of pawns ends at the Wall.\n    expect \"Watcher\" power = 11\n",
        );
    let fails = run_within("outer-chain", text, 20);
    assert!(fails.is_empty(), "{fails:?}");
}

/// A nested aggregate that says `outer` has a value per subject around it, not one for all:
/// "some creature such that no other creature has toughness 6 or more". With no Wall any creature
/// will do; with one Wall the Wall will do (though for the Watcher, tested first, the answer is
/// no); with two Walls no creature will.
#[test]
fn a_nested_aggregate_that_says_outer_has_a_value_per_subject() {
    let cond = "exists(creature and no(creature and not outer and toughness > 5))";
    let text = watcher_scenario(cond, 2)
        .replace(
            "    # Now one does: every level of the nesting is false.\n    expect \"Watcher\" power = 1\n",
            "    # The Wall is the creature.\n    expect \"Watcher\" power = 11\n    enter \"Wall\" as second_wall for B\n    # Each Wall has the other.\n    expect \"Watcher\" power = 1\n",
        );
    let fails = run_within("outer-key", text, 20);
    assert!(fails.is_empty(), "{fails:?}");
}
