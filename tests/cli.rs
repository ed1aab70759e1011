//! The `rulecraft` command itself: exit statuses, what `test` and `check` print, looking up
//! rulesets and content with `--include` and `RULECRAFT_PATH`, and the JSON output against its
//! schema in docs/json.md.

use serde_json::Value as Json;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::atomic::{AtomicUsize, Ordering};

const REPO: &str = env!("CARGO_MANIFEST_DIR");

/// Runs `rulecraft ARGS` in `dir` with no `RULECRAFT_PATH` unless `env` gives one.
fn rulecraft_in(dir: &Path, args: &[&str], env: Option<&str>) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_rulecraft"));
    c.args(args).current_dir(dir).env_remove("RULECRAFT_PATH");
    if let Some(v) = env {
        c.env("RULECRAFT_PATH", v);
    }
    c.output().expect("run rulecraft")
}

fn rulecraft(args: &[&str]) -> Output {
    rulecraft_in(Path::new(REPO), args, None)
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Json {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}{}", stdout(o), stderr(o)))
}

/// `rulecraft explain FILE --object OBJECT --format json`, read as JSON.
fn explain_json(file: &str, object: &str) -> Json {
    json(&rulecraft(&[
        "explain", file, "--object", object, "--format", "json",
    ]))
}

/// A fresh folder under the system's temporary folder.
fn temp_dir(tag: &str) -> PathBuf {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let d = std::env::temp_dir().join(format!(
        "rulecraft-cli-{tag}-{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("create a temporary folder");
    d
}

fn scenario_count() -> usize {
    let mut n = 0;
    let mut stack = vec![Path::new(REPO).join("scenarios")];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).expect("scenarios/") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "scenario") {
                let text = std::fs::read_to_string(&p).expect("read");
                n += text.lines().filter(|l| l.starts_with("scenario ")).count();
            }
        }
    }
    n
}

#[test]
fn test_passes_the_bundled_scenarios_and_exits_0() {
    let o = rulecraft(&["test", "scenarios/"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let n = scenario_count();
    assert!(n >= 19);
    assert!(
        stdout(&o).ends_with(&format!("\n{n} passed, 0 failed\n")),
        "{}",
        stdout(&o)
    );
    let j = json(&rulecraft(&["test", "scenarios/", "--format", "json"]));
    assert_eq!(j["passed"], n);
    assert_eq!(j["failed"], 0);
    assert_eq!(j["errors"], serde_json::json!([]));
}

/// Every wrong expectation of tests/failing/ fails through the command too, with the messages
/// pinned there, and the command exits 1.
#[test]
fn test_fails_every_wrong_expectation_and_exits_1() {
    let files: Vec<PathBuf> = std::fs::read_dir(Path::new(REPO).join("tests/failing"))
        .expect("tests/failing")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "scenario"))
        .collect();
    let o = rulecraft(&["test", "tests/failing"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).ends_with(&format!("\n0 passed, {} failed\n", files.len())),
        "{}",
        stdout(&o)
    );
    let j = json(&rulecraft(&["test", "tests/failing", "--format", "json"]));
    assert_eq!(j["passed"], 0);
    assert_eq!(j["failed"], files.len());
    let mut seen = 0;
    for sc in j["scenarios"].as_array().expect("scenarios") {
        assert_eq!(sc["passed"], false);
        let file = sc["file"].as_str().expect("file");
        let expected = std::fs::read_to_string(Path::new(REPO).join(format!("{file}.expected")))
            .expect("the .expected file");
        let actual: Vec<String> = sc["failures"]
            .as_array()
            .expect("failures")
            .iter()
            .map(|f| {
                format!(
                    "{}:{}:{}: {}",
                    f["file"].as_str().expect("file"),
                    f["line"],
                    f["column"],
                    f["message"].as_str().expect("message")
                )
            })
            .collect();
        assert_eq!(actual, expected.lines().collect::<Vec<_>>(), "{file}");
        seen += 1;
    }
    assert_eq!(seen, files.len());
}

/// The whole text output of a failure: the failing scenario, the check's place and message, and
/// the explanation of the actual value (Glorious Anthem in layer 7c), then the summary.
#[test]
fn a_failure_prints_its_place_message_and_explanation() {
    let o = rulecraft(&["test", "tests/failing/wrong-number.scenario"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "FAIL Wrong number (tests/failing/wrong-number.scenario:2:10)\n  \
         tests/failing/wrong-number.scenario:10:18: `bears` power: expected 2, actually 3\n    \
         power = 3\n        base: 2\n        \
         layer 7c (modifying): Glorious Anthem \"Creatures you control get +1/+1.\": 2 -> 3\n            \
         why here: timestamp 2: the first effect in this layer to change this value\n\
         0 passed, 1 failed\n"
    );
}

#[test]
fn test_with_nothing_to_run_says_so_and_exits_1() {
    let empty = temp_dir("empty");
    let o = rulecraft(&["test", empty.to_str().expect("utf-8 path")]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        format!(
            "FAIL {}: nothing found: no .scenario files in this folder\n\n0 passed, 1 failed\n",
            empty.display()
        )
    );
    std::fs::write(empty.join("none.scenario"), "# no scenario here\n").expect("write");
    let o = rulecraft(&["test", empty.join("none.scenario").to_str().expect("utf-8")]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("nothing found: no scenarios in this file"));
    let o = rulecraft(&["test", "no/such/folder"]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "FAIL no/such/folder: no such file or folder\n\n0 passed, 1 failed\n"
    );
    let _ = std::fs::remove_dir_all(&empty);
}

/// Content checked without `--ruleset` is checked against the project's rulesets (mtg-2017 and
/// mtg-2020 here); a file that fails against both reports its error once, naming both.
#[test]
fn check_without_a_ruleset_uses_the_projects_rulesets() {
    // Each error names the rulesets it was found against; only the errors found furthest into
    // the file are reported (the rulesets it was most likely written for).
    for (file, error, against) in [
        (
            "tests/bad/whole-number.cards",
            "tests/bad/whole-number.cards:3:12: expected a whole number, found `2.5`: numbers are integers",
            "rulesets/classic.rules, rulesets/galaxy.rules, rulesets/honor.rules, rulesets/mtg-2017.rules, rulesets/mtg-2020.rules",
        ),
        (
            "tests/bad/unknown-characteristic.cards",
            "tests/bad/unknown-characteristic.cards:3:5: unknown characteristic or ability `powr`: did you mean `power`?",
            "rulesets/classic.rules, rulesets/mtg-2017.rules, rulesets/mtg-2020.rules",
        ),
        (
            "tests/bad/missing-colon.cards",
            "tests/bad/missing-colon.cards:3:11: expected `:`, found number `2`",
            "rulesets/classic.rules, rulesets/mtg-2017.rules, rulesets/mtg-2020.rules",
        ),
    ] {
        let o = rulecraft(&["check", file]);
        assert_eq!(o.status.code(), Some(1), "{file}");
        let out = stdout(&o);
        assert!(out.contains(&format!("{error}\n")), "{out}");
        assert!(
            out.contains(&format!("\n  = checked against {against}\n")),
            "{out}"
        );
        assert!(out.ends_with("\n1 files checked, 1 with errors\n"), "{out}");
    }
    let o = rulecraft(&["check", "content/"]);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// With no project above the file and none given, a ruleset is needed; `--include` gives one.
#[test]
fn check_outside_a_project_needs_a_ruleset() {
    let dir = temp_dir("outside");
    std::fs::copy(
        Path::new(REPO).join("tests/bad/whole-number.cards"),
        dir.join("x.cards"),
    )
    .expect("copy");
    let o = rulecraft_in(&dir, &["check", "x.cards"], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "x.cards: a ruleset is needed to check content: give --ruleset NAME (no project folder \
         holding rulesets/*.rules was found above this file or the working folder, or given with \
         --include or RULECRAFT_PATH)\n\n1 files checked, 1 with errors\n"
    );
    let o = rulecraft_in(&dir, &["check", "x.cards", "--include", REPO], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).starts_with(
            "x.cards:3:12: expected a whole number, found `2.5`: numbers are integers\n"
        ),
        "{}",
        stdout(&o)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A project with two rulesets, one of which has no `toughness`: content that prints toughness
/// loads against the other, and the text says which.
#[test]
fn check_says_which_rulesets_content_loads_against() {
    let dir = temp_dir("two-rulesets");
    std::fs::create_dir_all(dir.join("rulesets")).expect("create");
    std::fs::create_dir_all(dir.join("content")).expect("create");
    std::fs::write(
        dir.join("rulesets/a.rules"),
        "ruleset \"a\" {\n    characteristic power: number\n    zone battlefield: in play\n}\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("rulesets/b.rules"),
        "ruleset \"b\" {\n    characteristic power: number\n    characteristic toughness: number\n    zone battlefield: in play\n}\n",
    )
    .expect("write");
    std::fs::write(
        dir.join("content/c.cards"),
        "card \"C\" {\n    power: 1\n    toughness: 1\n}\n",
    )
    .expect("write");
    let o = rulecraft_in(&dir, &["check", "content/c.cards"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert_eq!(
        stdout(&o),
        "note: content/c.cards loads against rulesets/b.rules, not against rulesets/a.rules\n\n\
         1 files checked, 0 with errors\n"
    );
    let j = json(&rulecraft_in(
        &dir,
        &["check", "content/c.cards", "--format", "json"],
        None,
    ));
    assert_eq!(
        j["files"][0]["rulesets"],
        serde_json::json!([
            {"ruleset": "rulesets/a.rules", "ok": false},
            {"ruleset": "rulesets/b.rules", "ok": true},
        ])
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// A scenario kept in a user's own folder finds the project's rulesets and content through
/// `--include` or `RULECRAFT_PATH`; without them the error says where it looked.
#[test]
fn include_folders_and_rulecraft_path() {
    let dir = temp_dir("user");
    std::fs::copy(
        Path::new(REPO).join("scenarios/layers/7c-glorious-anthem.scenario"),
        dir.join("anthem.scenario"),
    )
    .expect("copy");
    let o = rulecraft_in(&dir, &["test", "anthem.scenario"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).starts_with(
        "FAIL anthem.scenario\nanthem.scenario:5:14: no ruleset `mtg-2020`: no project folder (one \
         holding rulesets/) above this file or the working folder; name one with --include DIR or \
         RULECRAFT_PATH, or give a path to a .rules file\n"
    ), "{}", stdout(&o));

    let o = rulecraft_in(&dir, &["test", "anthem.scenario", "-I", REPO], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let n = std::fs::read_to_string(dir.join("anthem.scenario"))
        .expect("read")
        .lines()
        .filter(|l| l.starts_with("scenario "))
        .count();
    assert!(n >= 2);
    assert!(stdout(&o).ends_with(&format!("\n{n} passed, 0 failed\n")));

    let nowhere = dir.join("nowhere");
    let path = std::env::join_paths([nowhere.as_path(), Path::new(REPO)]).expect("join");
    let o = rulecraft_in(&dir, &["test", "anthem.scenario"], path.to_str());
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));

    let o = rulecraft_in(
        &dir,
        &["test", "anthem.scenario", "--format", "json"],
        nowhere.to_str(),
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        json(&o)["errors"][0]["message"],
        format!(
            "no ruleset `mtg-2020`: looked for {}/rulesets/mtg-2020.rules (RULECRAFT_PATH); name \
             another project folder with --include DIR or RULECRAFT_PATH, or give a path to a \
             .rules file",
            nowhere.display()
        )
    );

    let o = rulecraft_in(&dir, &["test", "anthem.scenario", "-I", "missing"], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "missing: no such folder (given with --include)\n"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `explain --format json` says what the text says: for every characteristic, the text's
/// `NAME = VALUE` line and its `base:` line.
#[test]
fn explain_json_says_what_the_text_says() {
    let args = [
        "explain",
        "scenarios/layers/7b-snakeform-humble.scenario",
        "--object",
        "Ancient Ooze",
    ];
    let text = stdout(&rulecraft(&args));
    let j = json(&rulecraft(&[&args[..], &["--format", "json"]].concat()));
    assert_eq!(
        text.lines().next(),
        Some(
            format!(
                "{} (object #{}, owner {}, in {}, timestamp {})",
                j["object"]["name"].as_str().expect("name"),
                j["object"]["id"],
                j["object"]["owner"].as_str().expect("owner"),
                j["object"]["zone"].as_str().expect("zone"),
                j["object"]["timestamp"]
            )
            .as_str()
        )
    );
    let chars = j["characteristics"].as_array().expect("characteristics");
    assert!(chars.len() >= 10);
    for c in chars {
        let s = |k: &str| c[k].as_str().expect("a string").to_string();
        let line = format!("  {} = {}", s("name"), s("value"));
        let base = format!("    base: {}", s("base"));
        let at = text
            .lines()
            .position(|l| l == line)
            .unwrap_or_else(|| panic!("no line `{line}` in\n{text}"));
        assert_eq!(text.lines().nth(at + 1), Some(base.as_str()));
        for (i, st) in c["steps"].as_array().expect("steps").iter().enumerate() {
            let t = |k: &str| st[k].as_str().expect("a string").to_string();
            let step = format!(
                "    layer {} ({}): {} \"{}\": {} -> {}",
                t("layer"),
                t("layer_name"),
                t("source"),
                t("text"),
                t("before"),
                t("after")
            );
            assert_eq!(text.lines().nth(at + 2 + 2 * i), Some(step.as_str()));
            let why = format!("        why here: {}", t("why"));
            assert_eq!(text.lines().nth(at + 3 + 2 * i), Some(why.as_str()));
        }
    }
}

/// Splits a command line written in docs/json.md: words, and "quoted words".
fn words(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quoted = false;
    for ch in s.chars() {
        match ch {
            '"' => quoted = !quoted,
            ' ' if !quoted => {
                if !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
            }
            _ => cur.push(ch),
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Every example in docs/json.md is the real output of its command.
#[test]
fn json_examples_are_real_output() {
    let doc = std::fs::read_to_string(Path::new(REPO).join("docs/json.md")).expect("docs/json.md");
    let mut checked = 0;
    let mut command: Option<Vec<String>> = None;
    let mut block: Option<String> = None;
    for line in doc.lines() {
        if let Some(b) = block.as_mut() {
            if line == "```" {
                let documented: Json = serde_json::from_str(b).expect("the example is JSON");
                let args = command.take().expect("a command before the example");
                assert_eq!(args[0], "rulecraft");
                let argv: Vec<&str> = args[1..].iter().map(|s| s.as_str()).collect();
                let real = json(&rulecraft(&argv));
                assert_eq!(real, documented, "`{}`", args.join(" "));
                checked += 1;
                block = None;
            } else {
                b.push_str(line);
                b.push('\n');
            }
        } else if line == "```json" {
            block = Some(String::new());
        } else if let Some(rest) = line.strip_prefix("`rulecraft ") {
            let cmd = rest.split('`').next().expect("a command");
            command = Some(words(&format!("rulecraft {cmd}")));
        }
    }
    assert_eq!(checked, 5, "examples checked in docs/json.md");
}

/// The error documents of every command: file, line, column, message.
#[test]
fn json_errors_name_file_line_and_column() {
    let o = rulecraft(&[
        "explain",
        "tests/bad/unknown-ruleset.scenario",
        "--object",
        "x",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = &json(&o)["errors"][0];
    assert_eq!(e["file"], "tests/bad/unknown-ruleset.scenario");
    assert_eq!(e["line"], 2);
    assert_eq!(e["column"], 14);
    assert!(e["message"]
        .as_str()
        .expect("message")
        .starts_with("no ruleset `mtg-2021`"));
    assert_eq!(stderr(&o), "");

    let o = rulecraft(&[
        "check",
        "tests/bad/class-defined-twice.cards",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let e = &json(&o)["errors"][0];
    assert_eq!(e["line"], 8);
    assert_eq!(e["column"], 6);
    assert_eq!(
        e["message"],
        "object class `Grizzly Bears` is defined twice in this file (the first definition is at \
         tests/bad/class-defined-twice.cards:2:6)"
    );
}

/// `explain --log` prints the log of occurrences after the steps run: the "CE Timing" example of
/// simultaneous destructions, ordered by the active player.
#[test]
fn explain_prints_the_log_of_occurrences() {
    let file = "scenarios/timing/step-b-order.scenario";
    let o = rulecraft(&["explain", file, "--log"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "log:");
    let chosen = lines
        .iter()
        .position(|l| l.contains("(chosen by Bob among 2)"))
        .unwrap_or_else(|| panic!("the active player's choice is logged:\n{out}"));
    let only = lines
        .iter()
        .position(|l| l.contains("(the only one)"))
        .unwrap_or_else(|| panic!("the second response is logged:\n{out}"));
    assert!(chosen < only, "{out}");
    // Only the first step ran: the destructions have started, nothing has happened yet.
    let o = rulecraft(&["explain", file, "--log", "--step", "3", "--format", "json"]);
    let log = json(&o)["log"].as_array().expect("a log").clone();
    assert!(
        log.iter().all(|l| !l
            .as_str()
            .unwrap_or("")
            .contains("destroyed(Doomed Samurai): happens")),
        "{log:?}"
    );
    assert!(!log.is_empty());
}

/// The Python package builds the classic ruleset's content into the module, file by file
/// (python/src/load.rs): every content file of the folder is there, so `Game()` plays the same
/// cards as `rulecraft play`.
#[test]
fn the_python_packages_built_in_classic_content_lists_every_file() {
    let load = std::fs::read_to_string("python/src/load.rs").expect("python/src/load.rs");
    let mut files: Vec<_> = std::fs::read_dir("content/classic")
        .expect("content/classic")
        .map(|e| {
            e.expect("an entry")
                .file_name()
                .to_string_lossy()
                .to_string()
        })
        .filter(|n| n.ends_with(".cards"))
        .collect();
    files.sort();
    assert!(!files.is_empty());
    for f in files {
        assert!(
            load.contains(&format!("include_str!(\"../../content/classic/{f}\")")),
            "python/src/load.rs does not build in content/classic/{f}"
        );
    }
}

/// `explain --format json` accounts for a meter's current value change by change, and for an
/// empire's set of classes, as the text form and the library's accounting do (FreeOrion's meter
/// accounting; tests/galaxy.rs checks these steps against the scenarios' rules).
#[test]
fn explain_json_accounts_for_current_meters_and_sets_of_classes() {
    let j = explain_json("scenarios/galaxy/effects-non-meter.scenario", "earth");
    let farming = j["counters"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["kind"] == "farming"))
        .expect("Earth's farming counters");
    let steps: Vec<(i64, i64)> = farming["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["before"].as_i64().unwrap_or(-1),
                c["after"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    // Grows to 1; the Farm Grant's 5 and the Farm Bureau's 2; grows to 9, capped to 3 (max 3);
    // 5 and 2 again.
    assert_eq!(
        steps,
        [(0, 1), (1, 6), (6, 8), (8, 9), (9, 3), (3, 8), (8, 10)]
    );
    assert_eq!(
        farming["changes"][1]["what"],
        "current_changes(Terran Planet, farming, 5)"
    );
    assert_eq!(farming["count"], 10);
    assert_eq!(farming["unaccounted"], 0);

    let j = explain_json("scenarios/galaxy/effects-availability.scenario", "Ann");
    let techs = j["properties"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "available_techs"))
        .expect("Ann's available techs");
    let changes: Vec<(String, bool)> = techs["changes"]
        .as_array()
        .expect("changes")
        .iter()
        .map(|c| {
            (
                c["symbol"].as_str().unwrap_or("").to_string(),
                c["added"] == true,
            )
        })
        .collect();
    assert_eq!(
        changes[..2],
        [
            ("Algae Farming".to_string(), true),
            ("Algae Farming".to_string(), false)
        ]
    );
    assert_eq!(
        techs["changes"][0]["what"],
        "tech_availability_set(Ann, Algae Farming, 1)"
    );
    // A property of numbers has no changes listed.
    let food = j["properties"]
        .as_array()
        .and_then(|ps| ps.iter().find(|p| p["name"] == "food"))
        .expect("Ann's food");
    assert!(food.get("changes").is_none());
}
