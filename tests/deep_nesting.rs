//! Nesting is bounded: a long chain of `(`, `not`, `exists(`, unary `-`, operators or `{` is an
//! error naming where the limit was passed, never a stack overflow; and what the loader accepts,
//! at the deepest it accepts (terms included), is derived, explained, cloned, printed and dropped
//! without one. `cargo test` runs this in the debug build, on a test thread's small stack; run it
//! in release with `cargo test --release --test deep_nesting`.

use rulecraft_lang::loader::Loader;
use rulecraft_lang::scenario::run;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Far past any stack: the loader must stop long before recursing this deep.
const HUGE: usize = 100_000;

const NESTED: &str = "too deeply nested: expected at most 64 levels of `(`, `not`, unary `-`, calls such as `exists(` and operators in a row";

/// A fresh folder under the system's temporary folder.
fn temp_dir() -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "rulecraft-deep-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create a temporary folder");
    d
}

/// A card whose static ability has `line` (indented 8 spaces) as its line 4.
fn card_with(line: &str) -> String {
    format!("card \"X\" {{\n    types: creature\n    static \"t\" {{\n        {line}\n        power += 1\n    }}\n}}\n")
}

/// Loads content text against mtg-2020; the one-line error, if any.
fn load_content(text: &str) -> Result<(), String> {
    let dir = temp_dir();
    let path = dir.join("deep.cards");
    std::fs::write(&path, text).expect("write");
    let mut loader = Loader::new();
    let rpath = Path::new("rulesets/mtg-2020.rules");
    let env = loader.ruleset(rpath, None).expect("mtg-2020 loads");
    let res = loader
        .content(&env, rpath, std::slice::from_ref(&path), None)
        .map(|_| ())
        .map_err(|e| loader.short(&e));
    let _ = std::fs::remove_dir_all(&dir);
    res.map_err(|m| {
        m.strip_prefix(&format!("{}:", path.display()))
            .unwrap_or(&m)
            .to_string()
    })
}

fn expect_nested(text: &str, line: usize, col: usize) {
    assert_eq!(
        load_content(text),
        Err(format!("{line}:{col}: {NESTED}")),
        "for {}...",
        &text[..text.len().min(120)]
    );
}

// Line 4 is `        affects: ...` or `        power += ...`: the chain starts at column 18.
// The 64 outer levels are accepted; the next one is the error.

#[test]
fn parentheses_in_a_condition() {
    let line = format!("affects: {}creature{}", "(".repeat(HUGE), ")".repeat(HUGE));
    expect_nested(&card_with(&line), 4, 18 + 64);
}

#[test]
fn not_chain() {
    let line = format!("affects: {}creature", "not ".repeat(HUGE));
    expect_nested(&card_with(&line), 4, 18 + 64 * 4);
}

#[test]
fn exists_chain() {
    let line = format!(
        "affects: {}creature{}",
        "exists(".repeat(HUGE),
        ")".repeat(HUGE)
    );
    expect_nested(&card_with(&line), 4, 18 + 64 * 7);
}

#[test]
fn parentheses_in_a_number() {
    let line = format!("power += {}1{}", "(".repeat(HUGE), ")".repeat(HUGE));
    expect_nested(&card_with(&line), 4, 18 + 64);
}

#[test]
fn unary_minus_chain() {
    let line = format!("power += {}1", "-".repeat(HUGE));
    expect_nested(&card_with(&line), 4, 18 + 64);
}

/// `1 + 1 + ...` is `((1 + 1) + 1) + ...`: each operator in a row is a level. The error is at the
/// operand after the 64th `+`.
#[test]
fn operator_chain() {
    let line = format!("power += 1{}", "+1".repeat(HUGE));
    expect_nested(&card_with(&line), 4, 18 + 64 * 2);
    let line = format!("power += 1{}", "*1".repeat(HUGE));
    expect_nested(&card_with(&line), 4, 18 + 64 * 2);
}

/// Line 1 opens the card's block (level 1); line K opens level K; line 65 opens the 65th.
#[test]
fn blocks() {
    let text = format!(
        "card \"X\" {{\n{}{}",
        "a {\n".repeat(HUGE),
        "}\n".repeat(HUGE + 1)
    );
    assert_eq!(
        load_content(&text),
        Err("65:3: too deeply nested: expected at most 64 levels of `{` blocks".to_string())
    );
}

/// A project folder with mtg-2020 plus `extra` terms, the card `text`, and a scenario.
fn project(extra_terms: &str, cards: &str, scenario: &str) -> PathBuf {
    let dir = temp_dir();
    let rules = std::fs::read_to_string("rulesets/mtg-2020.rules").expect("mtg-2020");
    let end = rules.rfind('}').expect("the ruleset's closing brace");
    let rules = format!("{}{extra_terms}\n}}\n", &rules[..end]);
    for (sub, name, text) in [
        ("rulesets", "deep.rules", rules.as_str()),
        ("content", "deep.cards", cards),
        ("scenarios", "deep.scenario", scenario),
    ] {
        std::fs::create_dir_all(dir.join(sub)).expect("create");
        std::fs::write(dir.join(sub).join(name), text).expect("write");
    }
    dir
}

const BEARS: &str = "card \"Bears\" {\n    types: creature\n    power: 2\n    toughness: 2\n}\n";

/// Runs the scenario of a project; every load error or failure as text.
fn run_project(dir: &Path) -> Vec<String> {
    let mut loader = Loader::new();
    let file = dir.join("scenarios/deep.scenario");
    let list = match loader.scenarios(&file) {
        Ok(l) => l,
        Err(e) => return vec![loader.short(&e)],
    };
    let mut out = Vec::new();
    for (env, sc) in &list {
        // Every walk of the deep trees: Debug, Clone and Drop of the content, then derivation,
        // explanation, and cloning the state.
        let copy = sc.content.clone();
        assert!(!format!("{copy:?}").is_empty());
        drop(copy);
        let r = run(env, sc, None);
        let _ = r.state.explain();
        drop(r.state.clone());
        out.extend(
            r.failures
                .iter()
                .map(|f| format!("{}: {}", loader.map.location(f.at), f.message)),
        );
    }
    out
}

/// 63 levels of each kind on one line (the innermost operand is the 64th): accepted, derived and
/// explained. 62 `not`s leave `creature`, and `-` 62 times leaves 1, so the Bears get +1+1+1.
#[test]
fn the_deepest_accepted_line_runs() {
    let cards = format!(
        "{BEARS}card \"Deep\" {{\n    types: enchantment\n    static \"deep\" {{\n        affects: {}creature{} and {}creature and {}creature{}\n        power += {}1 + {}1{} + 1{}\n    }}\n}}\n",
        "(".repeat(63),
        ")".repeat(63),
        "not ".repeat(62),
        "exists(".repeat(62),
        ")".repeat(62),
        "-".repeat(62),
        "(".repeat(62),
        ")".repeat(62),
        " + 0".repeat(60),
    );
    let scenario = "scenario \"deep\" {\n    ruleset: deep\n    content: deep\n    players: A, B\n    setup {\n        \"Bears\" for A\n        \"Deep\" for A\n    }\n    expect \"Bears\" power = 5\n}\n";
    let dir = project("", &cards, scenario);
    assert_eq!(run_project(&dir), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Terms are put in where they are named, so a chain of terms builds a deeper tree than one line
/// can: t1 is 62 `not`s of `creature` (depth 2), t2 62 more of t1, and so on. t8 (depth 498)
/// is accepted and runs (as `affects:`, `as long as:` and inside `count`); t9 (depth 560) is refused where it is defined.
#[test]
fn a_chain_of_terms_is_bounded() {
    let mut terms = String::from("    term t0: creature\n");
    for i in 1..=8 {
        terms.push_str(&format!("    term t{i}: {}t{}\n", "not ".repeat(62), i - 1));
    }
    // Two effects that read and write power, so that dependency analysis walks the trees too.
    let cards = format!(
        "{BEARS}card \"Deep\" {{\n    types: enchantment\n    static \"deep\" {{\n        affects: t8 and power >= 0\n        as long as: not t8\n        power += count(t8)\n    }}\n}}\ncard \"Pump\" {{\n    types: enchantment\n    static \"pump\" {{\n        affects: t8 and power <= 9\n        power += 1\n    }}\n}}\n"
    );
    let scenario = "scenario \"deep\" {\n    ruleset: deep\n    content: deep\n    players: A, B\n    setup {\n        \"Bears\" for A\n        \"Deep\" for A\n        \"Pump\" for A\n    }\n    expect \"Bears\" power = 4\n}\n";
    let dir = project(&terms, &cards, scenario);
    assert_eq!(run_project(&dir), Vec::<String>::new());
    let _ = std::fs::remove_dir_all(&dir);

    let rules_lines = std::fs::read_to_string("rulesets/mtg-2020.rules")
        .expect("mtg-2020")
        .lines()
        .count();
    terms.push_str(&format!("    term t9: {}t8\n", "not ".repeat(62)));
    let dir = project(&terms, &cards, scenario);
    let errors = run_project(&dir);
    // The ruleset's last line (its `}`) is replaced by the terms: t9 is line rules_lines + 9.
    let expected = format!(
        "{}:{}:14: too deeply nested once its terms are put in: expected at most 512 levels",
        dir.join("rulesets/deep.rules").display(),
        rules_lines + 9
    );
    assert_eq!(errors, vec![expected]);
    let _ = std::fs::remove_dir_all(&dir);
}
