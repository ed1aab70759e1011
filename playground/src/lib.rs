//! rulecraft in the browser: the language's loader (confined, every file a text in memory) and the
//! core, behind a small C ABI that takes and returns UTF-8 JSON in linear memory
//! (`web/engine.js` is the glue, `web/worker.js` runs it in a Web Worker).
//!
//! One call does everything the page shows ([`evaluate`]): it loads the ruleset, content and
//! scenario texts, runs every scenario as `rulecraft test` does, answers the decisions the person
//! took so far, and reports diagnostics, each object's derived characteristics, the log, the
//! expectations and the pending decision. It keeps no state between calls.

use rulecraft_core::explain::describe::{describe_object, describe_player};
use rulecraft_core::model::decision::DecisionRequest;
use rulecraft_core::model::ids::{CharId, PropId};
use rulecraft_core::{GameState, ObjectId, PlayerId};
use rulecraft_lang::confine::Confinement;
use rulecraft_lang::loader::{LoadError, Loader};
use rulecraft_lang::scenario::Report;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::path::Path;

include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

/// The scenario editor's file name, as messages name it.
pub const SCENARIO_FILE: &str = "playground.scenario";
/// The content editor's file name: a scenario names it as `content: "playground.cards"`.
pub const CONTENT_FILE: &str = "playground.cards";

/// The bundled rulesets and content (path and text) and the examples (title, path, text).
pub fn bundled() -> Json {
    json!({
        "files": BUNDLED.iter().map(|(p, t)| json!({"path": p, "text": t})).collect::<Vec<_>>(),
        "examples": EXAMPLES
            .iter()
            .map(|(title, p, t)| json!({"title": title, "path": p, "text": t}))
            .collect::<Vec<_>>(),
        "scenario_file": SCENARIO_FILE,
        "content_file": CONTENT_FILE,
    })
}

/// One request of the page: the editors' texts, the answers taken (per scenario, option indexes
/// in order) and what to explain.
///
/// `{"ruleset": {"name": "classic", "text": "..."}, "content": "...", "scenario": "...",
///   "answers": [[0, 2], []], "explain": {"scenario": 0, "object": 3} or {"scenario": 0, "player": 1}}`
pub fn evaluate(req: &Json) -> Json {
    let text = |k: &str| req.get(k).and_then(Json::as_str).unwrap_or("").to_string();
    // Confined to no folder at all: the loader sees only the texts given to it.
    let limits = match Confinement::new::<&Path>(&[]) {
        Ok(c) => c,
        Err(e) => return json!({"errors": [{"message": e, "rendered": e}], "scenarios": []}),
    };
    let mut loader = Loader::confined(limits);
    for (p, t) in BUNDLED {
        loader.set_text(Path::new(p), (*t).to_string());
    }
    if let Some(r) = req.get("ruleset") {
        let name = r.get("name").and_then(Json::as_str).unwrap_or("");
        // A ruleset is named by a plain name: `rulesets/NAME.rules`.
        if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || "-_.".contains(c))
        {
            let t = r.get("text").and_then(Json::as_str).unwrap_or("");
            loader.set_text(Path::new(&format!("rulesets/{name}.rules")), t.to_string());
        }
    }
    loader.set_text(Path::new(CONTENT_FILE), text("content"));
    loader.set_text(Path::new(SCENARIO_FILE), text("scenario"));
    let list = match loader.scenarios(Path::new(SCENARIO_FILE)) {
        Ok(l) => l,
        Err(e) => {
            return json!({
                "errors": [error_json(&loader, &e)],
                "warnings": loader.warning_lines(),
                "scenarios": [],
            })
        }
    };
    if list.is_empty() {
        return json!({
            "errors": [{
                "file": SCENARIO_FILE, "line": null, "column": null,
                "message": "nothing found: no scenarios in this file: expected `scenario \"NAME\" { ... }`",
                "rendered": format!("{SCENARIO_FILE}: nothing found: no scenarios in this file: expected `scenario \"NAME\" {{ ... }}`"),
            }],
            "warnings": loader.warning_lines(),
            "scenarios": [],
        });
    }
    let answers = req.get("answers").and_then(Json::as_array);
    let explain = req.get("explain");
    let mut scenarios = Vec::new();
    let mut explanation = Json::Null;
    for (i, (env, sc)) in list.iter().enumerate() {
        let mut r = loader.run(env, sc);
        let taken: Vec<usize> = answers
            .and_then(|a| a.get(i))
            .and_then(Json::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Json::as_u64)
                    .map(|n| n as usize)
                    .collect()
            })
            .unwrap_or_default();
        let answer_error = answer_all(&mut r.state, &taken);
        if let Some(x) =
            explain.filter(|x| x.get("scenario").and_then(Json::as_u64) == Some(i as u64))
        {
            explanation = explain_json(&r.state, x);
        }
        scenarios.push(report_json(&loader, &r, &taken, answer_error));
    }
    json!({
        "errors": [],
        "warnings": loader.warning_lines(),
        "scenarios": scenarios,
        "explanation": explanation,
    })
}

/// An error as `rulecraft test --format json` gives it, with the text it prints (the line and
/// its caret).
fn error_json(loader: &Loader, e: &LoadError) -> Json {
    let l = loader.located(e);
    json!({
        "file": l.file,
        "line": l.line,
        "column": l.column,
        "message": l.message,
        "help": l.help,
        "rendered": loader.render(e),
    })
}

/// Answers the pending decisions with the options taken, as `rulecraft play --agent script:FILE`
/// does ([`GameState::answer`]); the first that cannot be taken stops, with why.
fn answer_all(state: &mut GameState, taken: &[usize]) -> Option<String> {
    for (n, &i) in taken.iter().enumerate() {
        let res = match state.pending_decision() {
            None => Err("no decision is pending".to_string()),
            // CR 613.7: an order of timestamps is answered by an order: the one offered.
            Some(d @ DecisionRequest::OrderTimestamps { .. }) => {
                let choice = d.choices().swap_remove(0);
                state.decide(choice).map(|_| ()).map_err(|e| e.to_string())
            }
            Some(_) => state.answer(i).map(|_| ()).map_err(|e| e.to_string()),
        };
        if let Err(e) = res {
            return Some(format!("answer {}: {e}", n + 1));
        }
    }
    None
}

/// The kind of a pending decision, in words.
fn decision_kind(d: &DecisionRequest) -> &'static str {
    match d {
        DecisionRequest::OrderTimestamps { .. } => "order timestamps",
        DecisionRequest::ChooseNext { .. } => "choose what happens next",
        DecisionRequest::React { .. } => "take a response or pass",
        DecisionRequest::OrderChoices { .. } => "choose who chooses next",
        DecisionRequest::PayCost { .. } => "pay a cost or decline",
        DecisionRequest::Play { .. } => "play or pass",
        DecisionRequest::ChooseTarget { .. } => "choose a target",
        DecisionRequest::ChooseNumber { .. } => "announce X",
    }
}

/// A scenario's result: its expectations, objects, players, log and pending decision.
fn report_json(loader: &Loader, r: &Report, taken: &[usize], answer_error: Option<String>) -> Json {
    let state = &r.state;
    let (file, line, column) = loader.map.place(r.at);
    let rs = state.ruleset();
    let player = |p: PlayerId| state.player_name(p).to_string();
    let aliases: HashMap<ObjectId, &str> = r.names.iter().map(|(k, v)| (*v, k.as_str())).collect();
    let objects: Vec<Json> = state
        .objects()
        .map(|o| {
            let values: Vec<String> = (0..rs.characteristics.len())
                .map(|c| {
                    state
                        .characteristic(o.id, CharId(c as u16))
                        .map_or(String::new(), |v| v.display_with(&player))
                })
                .collect();
            json!({
                "id": o.id.0,
                "name": &*o.name,
                "alias": aliases.get(&o.id),
                "owner": player(o.owner),
                "zone": rs.zone(o.zone).map_or("", |z| z.name.as_ref()),
                "values": values,
            })
        })
        .collect();
    let players: Vec<Json> = (0..state.players().len())
        .map(|i| {
            let values: Vec<String> = (0..rs.props.len())
                .map(|c| {
                    state
                        .property(PlayerId(i as u8), PropId(c as u16))
                        .map_or(String::new(), |v| v.display_with(&player))
                })
                .collect();
            json!({"id": i, "name": player(PlayerId(i as u8)), "values": values})
        })
        .collect();
    let decision = state.pending_decision().map(|p| {
        let options: Vec<String> = match p {
            DecisionRequest::OrderTimestamps { .. } => vec!["keep the order offered".into()],
            _ => state
                .decision_options()
                .into_iter()
                .map(|o| o.label)
                .collect(),
        };
        json!({"player": player(p.player()), "kind": decision_kind(p), "options": options})
    });
    json!({
        "name": r.name,
        "file": file,
        "line": line,
        "column": column,
        "passed": r.passed(),
        "checks": r.checked,
        "failures": r.failures.iter().map(|f| {
            let (file, line, column) = loader.map.place(f.at);
            json!({
                "file": file, "line": line, "column": column,
                "message": f.message, "explanation": f.explanation,
                "rendered": format!("{}: {}", loader.map.location(f.at), f.message),
            })
        }).collect::<Vec<_>>(),
        "characteristics": rs.characteristics.iter().map(|c| c.name.clone()).collect::<Vec<_>>(),
        "properties": rs.props.iter().map(|p| p.name.clone()).collect::<Vec<_>>(),
        "objects": objects,
        "players": players,
        "log": state.log().iter().map(|e| e.display(state)).collect::<Vec<_>>(),
        "decision": decision,
        "answered": taken,
        "answer_error": answer_error,
        "over": state.is_over(),
    })
}

/// The layer-by-layer explanation of an object's characteristics or a player's properties, as
/// `rulecraft explain` prints it.
fn explain_json(state: &GameState, x: &Json) -> Json {
    let d = state.explain();
    let text = if let Some(o) = x.get("object").and_then(Json::as_u64) {
        describe_object(state, &d, ObjectId(o as u32))
    } else if let Some(p) = x.get("player").and_then(Json::as_u64) {
        match u8::try_from(p) {
            Ok(p) => describe_player(state, &d, PlayerId(p)),
            Err(_) => return json!({"error": format!("no player has id {p}")}),
        }
    } else {
        return json!({"error": "nothing to explain: expected an object or a player"});
    };
    match text {
        Ok(t) => json!({"text": t}),
        Err(e) => json!({"error": e.to_string()}),
    }
}

/// The C ABI: the page writes a request's UTF-8 JSON into memory from [`alloc`], calls a function
/// with its pointer and length, and reads the answer at [`out_ptr`] for [`out_len`] bytes.
pub mod abi {
    use super::*;
    use std::cell::RefCell;

    thread_local! {
        static OUT: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    }

    fn answer(j: Json) -> usize {
        let bytes = j.to_string().into_bytes();
        let n = bytes.len();
        OUT.with(|o| *o.borrow_mut() = bytes);
        n
    }

    /// `len` bytes for the page to write a request into.
    #[no_mangle]
    pub extern "C" fn alloc(len: usize) -> *mut u8 {
        let mut v = Vec::<u8>::with_capacity(len.max(1));
        let p = v.as_mut_ptr();
        std::mem::forget(v);
        p
    }

    /// Frees what [`alloc`] gave.
    ///
    /// # Safety
    /// `ptr` and `len` are a pointer [`alloc`] returned and the length it was given.
    #[no_mangle]
    pub unsafe extern "C" fn dealloc(ptr: *mut u8, len: usize) {
        drop(Vec::from_raw_parts(ptr, 0, len.max(1)));
    }

    /// The answer of the last call.
    #[no_mangle]
    pub extern "C" fn out_ptr() -> *const u8 {
        OUT.with(|o| o.borrow().as_ptr())
    }

    /// The answer's length in bytes.
    #[no_mangle]
    pub extern "C" fn out_len() -> usize {
        OUT.with(|o| o.borrow().len())
    }

    /// [`bundled`]; returns the answer's length.
    #[no_mangle]
    pub extern "C" fn rc_bundled() -> usize {
        answer(bundled())
    }

    /// [`evaluate`] of the request at `ptr`; returns the answer's length.
    ///
    /// # Safety
    /// `ptr` points at `len` bytes the page wrote (from [`alloc`]).
    #[no_mangle]
    pub unsafe extern "C" fn rc_evaluate(ptr: *const u8, len: usize) -> usize {
        let bytes = std::slice::from_raw_parts(ptr, len);
        let req = match serde_json::from_slice::<Json>(bytes) {
            Ok(j) => j,
            Err(e) => return answer(json!({"errors": [{"message": format!("bad request: {e}")}]})),
        };
        answer(evaluate(&req))
    }
}
