//! The playground's one call, natively: the bundled examples load from memory and pass, errors
//! read as the command line prints them, and decisions are answered by option.

use rulecraft_playground::{evaluate, EXAMPLES};
use serde_json::{json, Value};

fn example(title_part: &str) -> &'static str {
    EXAMPLES
        .iter()
        .find(|(t, _, _)| t.contains(title_part))
        .map(|(_, _, text)| *text)
        .expect("the example is bundled")
}

fn run(scenario: &str, answers: Value) -> Value {
    evaluate(
        &json!({"ruleset": {"name": "", "text": ""}, "content": "", "scenario": scenario, "answers": answers}),
    )
}

#[test]
fn every_example_loads_from_memory_and_passes() {
    for (title, _, text) in EXAMPLES {
        let r = run(text, json!([]));
        assert_eq!(r["errors"], json!([]), "{title}: {r}");
        for s in r["scenarios"].as_array().unwrap() {
            assert_eq!(s["passed"], json!(true), "{title}: {s}");
        }
    }
}

#[test]
fn an_edited_number_changes_the_derived_value() {
    let text = example("lamb").replace("power: 1\n", "power: 5\n");
    let r = run(&text, json!([]));
    let s = &r["scenarios"][0];
    assert_eq!(s["passed"], json!(false));
    let col = s["characteristics"]
        .as_array()
        .unwrap()
        .iter()
        .position(|c| c == "power")
        .unwrap();
    let lamb = s["objects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["name"] == "Lamb")
        .unwrap();
    // 5 printed, +1/+1 counter (7c), the effects ended: 6.
    assert_eq!(lamb["values"][col], json!("6"));
}

#[test]
fn a_syntax_error_reads_as_the_command_line_prints_it() {
    let text = example("lamb").replace("power: 1\n", "power: 1 +\n");
    let r = run(&text, json!([]));
    let e = &r["errors"][0];
    assert_eq!(e["file"], json!("playground.scenario"));
    assert!(
        e["rendered"]
            .as_str()
            .unwrap()
            .starts_with("playground.scenario:20:18: expected the end of the statement, found `+`"),
        "{e}"
    );
    assert!(e["rendered"].as_str().unwrap().contains('^'), "{e}");
}

#[test]
fn files_outside_memory_are_refused_unquoted() {
    let text = example("lamb").replace("ruleset: \"mtg-2020\"", "ruleset: \"/etc/passwd\"");
    let r = run(&text, json!([]));
    let m = r["errors"][0]["message"].as_str().unwrap();
    assert!(
        m.starts_with("refused: `/etc/passwd` is an absolute path"),
        "{m}"
    );
    let text = example("lamb").replace(
        "ruleset: \"mtg-2020\"",
        "ruleset: \"../rulesets/classic.rules\"",
    );
    let m = run(&text, json!([]))["errors"][0]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(m.contains("leaves the folders this loader may read"), "{m}");
}

#[test]
fn a_pending_decision_lists_its_options_and_takes_an_answer() {
    // The Honor example without its answer: the active player orders the two triggers.
    let text = example("Honor");
    let cut = text.find("    choose \"Honor Boon\"\n").unwrap();
    let text = format!("{}}}\n", &text[..cut]);
    let r = run(&text, json!([]));
    let d = &r["scenarios"][0]["decision"];
    assert_eq!(d["player"], json!("Alice"), "{r}");
    let options: Vec<&str> = d["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o.as_str().unwrap())
        .collect();
    // Honor Boon's: "Before you gain Honor: increase the gain by 1."
    let boon = options
        .iter()
        .position(|o| o.contains("increase the gain by 1"))
        .unwrap();
    let r = run(&text, json!([[boon]]));
    let s = &r["scenarios"][0];
    assert_eq!(s["decision"], json!(null), "{s}");
    let honor = s["properties"]
        .as_array()
        .unwrap()
        .iter()
        .position(|p| p == "honor")
        .unwrap();
    assert_eq!(s["players"][1]["values"][honor], json!("0"));
    assert_eq!(s["answer_error"], json!(null));
}
