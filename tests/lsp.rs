//! `rulecraft lsp`, driven as an editor drives it: the binary spawned, JSON-RPC messages framed by
//! `Content-Length` on its standard input and output, their parameters and results the `lsp-types`
//! types. An edit that names an unknown card gets the loader's diagnostic at that place, and the
//! edit undone clears it; hover on a card's name shows its text; go to definition leads from an
//! event and a card to where they are declared.

use lsp_types::{
    Diagnostic, DidChangeTextDocumentParams, DidOpenTextDocumentParams, GotoDefinitionResponse,
    Hover, HoverContents, Position, PublishDiagnosticsParams, TextDocumentContentChangeEvent,
    TextDocumentIdentifier, TextDocumentItem, TextDocumentPositionParams, Uri,
    VersionedTextDocumentIdentifier,
};
use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::str::FromStr;
use std::sync::mpsc::{channel, Receiver};
use std::time::{Duration, Instant};

const REPO: &str = env!("CARGO_MANIFEST_DIR");
const SCENARIO: &str = "scenarios/timing/reduced-to-zero.scenario";
/// How long any answer may take before the test gives up.
const PATIENCE: Duration = Duration::from_secs(60);

struct Client {
    child: Child,
    stdin: ChildStdin,
    incoming: Receiver<Value>,
    next_id: i64,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_rulecraft"))
            .arg("lsp")
            .current_dir(REPO)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start rulecraft lsp");
        let stdin = child.stdin.take().expect("stdin");
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, incoming) = channel();
        std::thread::spawn(move || loop {
            // Headers, then a blank line, then the body of Content-Length bytes.
            let mut length = None;
            loop {
                let mut line = String::new();
                if stdout.read_line(&mut line).unwrap_or(0) == 0 {
                    return;
                }
                let line = line.trim_end();
                if line.is_empty() {
                    break;
                }
                if let Some(n) = line.strip_prefix("Content-Length: ") {
                    length = n.parse::<usize>().ok();
                }
            }
            let mut body = vec![0; length.expect("a Content-Length header")];
            if stdout.read_exact(&mut body).is_err() {
                return;
            }
            let msg: Value = serde_json::from_slice(&body).expect("a JSON message");
            if tx.send(msg).is_err() {
                return;
            }
        });
        Client {
            child,
            stdin,
            incoming,
            next_id: 1,
        }
    }

    fn send(&mut self, msg: Value) {
        let body = msg.to_string();
        write!(self.stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// The document's whole text changes, as an editor with full sync sends it.
    fn change(&mut self, u: &Uri, version: i32, text: &str) {
        self.notify(
            "textDocument/didChange",
            json!(DidChangeTextDocumentParams {
                text_document: VersionedTextDocumentIdentifier::new(u.clone(), version),
                content_changes: vec![TextDocumentContentChangeEvent {
                    range: None,
                    range_length: None,
                    text: text.to_string(),
                }],
            }),
        );
    }

    /// Sends a request and waits for its response's result (other messages are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.next_id;
        self.next_id += 1;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        loop {
            let msg = self.incoming.recv_timeout(PATIENCE).expect("a response");
            if msg["id"] == json!(id) {
                assert!(msg.get("error").is_none(), "{method}: {msg}");
                return msg["result"].clone();
            }
        }
    }

    /// Waits for the diagnostics published for a document.
    fn diagnostics(&mut self, uri: &Uri) -> Vec<Diagnostic> {
        loop {
            let msg = self.incoming.recv_timeout(PATIENCE).expect("diagnostics");
            if msg["method"] == "textDocument/publishDiagnostics" {
                let p: PublishDiagnosticsParams =
                    serde_json::from_value(msg["params"].clone()).expect("diagnostics params");
                if p.uri == *uri {
                    return p.diagnostics;
                }
            }
        }
    }
}

fn uri(rel: &str) -> Uri {
    let p = Path::new(REPO).join(rel);
    let p = p.canonicalize().unwrap_or(p);
    Uri::from_str(&format!("file://{}", p.display())).expect("a file URI")
}

fn path_of(u: &Uri) -> PathBuf {
    PathBuf::from(u.as_str().strip_prefix("file://").expect("a file URI"))
}

/// The position of the `nth` character of the first line of `text` that contains `line`, at
/// `what` in it.
fn at(text: &str, line: &str, what: &str) -> Position {
    let (i, l) = text
        .lines()
        .enumerate()
        .find(|(_, l)| l.contains(line))
        .unwrap_or_else(|| panic!("no line with {line:?}"));
    let col = l.find(what).expect("the text in the line") + 1;
    Position::new(i as u32, col as u32)
}

fn position_params(u: &Uri, pos: Position) -> Value {
    json!(TextDocumentPositionParams::new(
        TextDocumentIdentifier::new(u.clone()),
        pos
    ))
}

/// The line (from 0) of a definition's target, and its file.
fn target(result: Value) -> (PathBuf, u32) {
    let r: GotoDefinitionResponse = serde_json::from_value(result).expect("a definition");
    let loc = match r {
        GotoDefinitionResponse::Scalar(l) => l,
        GotoDefinitionResponse::Array(v) => v.into_iter().next().expect("a location"),
        GotoDefinitionResponse::Link(v) => panic!("links: {v:?}"),
    };
    (path_of(&loc.uri), loc.range.start.line)
}

fn line_of(file: &str, needle: &str) -> u32 {
    let text = std::fs::read_to_string(Path::new(REPO).join(file)).expect("read");
    text.lines()
        .position(|l| l.contains(needle))
        .expect("the line") as u32
}

#[test]
fn diagnostics_as_you_type_hover_and_definition() {
    let mut c = Client::start();
    let init = c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    assert_eq!(init["capabilities"]["hoverProvider"], json!(true));
    assert_eq!(init["capabilities"]["definitionProvider"], json!(true));
    c.notify("initialized", json!({}));

    let u = uri(SCENARIO);
    let saved = std::fs::read_to_string(Path::new(REPO).join(SCENARIO)).expect("the scenario");
    // Opened with an edit not saved: a card the content does not have.
    let typo = saved.replacen("\"Honor Tax\" for Alice", "\"Honor Taks\" for Alice", 1);
    assert_ne!(typo, saved);
    let clock = Instant::now();
    c.notify(
        "textDocument/didOpen",
        json!(DidOpenTextDocumentParams {
            text_document: TextDocumentItem::new(u.clone(), "rulecraft".into(), 1, typo.clone()),
        }),
    );
    let diags = c.diagnostics(&u);
    let first_check = clock.elapsed();
    assert_eq!(diags.len(), 1, "{diags:?}");
    let d = &diags[0];
    assert!(d.message.contains("Honor Taks"), "{}", d.message);
    assert!(
        d.message.contains("Honor Tax"),
        "a did-you-mean: {}",
        d.message
    );
    assert_eq!(
        d.range.start,
        at(&typo, "\"Honor Taks\" for", "\"Honor Taks\"").with_col(-1)
    );
    assert_eq!(d.severity, Some(lsp_types::DiagnosticSeverity::ERROR));

    // The edit undone, as typed: the diagnostic goes.
    let clock = Instant::now();
    c.change(&u, 2, &saved);
    assert_eq!(c.diagnostics(&u), Vec::new());
    let recheck = clock.elapsed();

    // Hover on a card's name in the set-up: its text.
    let clock = Instant::now();
    let hover = c.request(
        "textDocument/hover",
        position_params(&u, at(&saved, "\"Honor Tax\" for Alice", "Tax")),
    );
    let hover_time = clock.elapsed();
    let h: Hover = serde_json::from_value(hover).expect("a hover");
    let HoverContents::Markup(m) = h.contents else {
        panic!("markdown expected: {:?}", h.contents)
    };
    assert!(m.value.contains("card \"Honor Tax\" {"), "{}", m.value);
    assert!(
        m.value
            .contains("Before any player gains Honor: reduce the gain by 2."),
        "{}",
        m.value
    );

    // Go to definition: an event to its declaration in the ruleset, a card to its content file.
    let clock = Instant::now();
    let (file, line) = target(c.request(
        "textDocument/definition",
        position_params(&u, at(&saved, "do gains_honor(Bob, 1)", "honor")),
    ));
    let definition_time = clock.elapsed();
    assert!(file.ends_with("rulesets/honor.rules"), "{}", file.display());
    assert_eq!(line, line_of("rulesets/honor.rules", "event gains_honor("));
    let (file, line) = target(c.request(
        "textDocument/definition",
        position_params(&u, at(&saved, "\"Honor Boon\" for Bob", "Boon")),
    ));
    assert!(
        file.ends_with("content/honor/personalities.cards"),
        "{}",
        file.display()
    );
    assert_eq!(
        line,
        line_of("content/honor/personalities.cards", "card \"Honor Boon\"")
    );

    eprintln!(
        "lsp: first diagnostics {first_check:?}, after an edit {recheck:?}, hover {hover_time:?}, definition {definition_time:?}"
    );
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    let status = c.child.wait().expect("the server exits");
    assert!(status.success());
}

#[test]
fn content_is_checked_against_its_projects_rulesets_as_typed() {
    let mut c = Client::start();
    c.request(
        "initialize",
        json!({"processId": null, "rootUri": null, "capabilities": {}}),
    );
    c.notify("initialized", json!({}));
    let file = "content/honor/personalities.cards";
    let u = uri(file);
    let saved = std::fs::read_to_string(Path::new(REPO).join(file)).expect("the content");
    c.notify(
        "textDocument/didOpen",
        json!(DidOpenTextDocumentParams {
            text_document: TextDocumentItem::new(u.clone(), "rulecraft".into(), 1, saved.clone()),
        }),
    );
    assert_eq!(c.diagnostics(&u), Vec::new());
    // `force` is the honor ruleset's; misspelt, it is unknown to every ruleset of the project.
    let typo = saved.replacen("    force: 2", "    forse: 2", 1);
    c.change(&u, 2, &typo);
    let diags = c.diagnostics(&u);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(diags[0].message.contains("forse"), "{}", diags[0].message);
    assert_eq!(
        diags[0].range.start,
        at(&typo, "forse: 2", "forse").with_col(-1)
    );
    c.request("shutdown", Value::Null);
    c.notify("exit", Value::Null);
    assert!(c.child.wait().expect("the server exits").success());
}

trait Col {
    fn with_col(self, delta: i32) -> Position;
}

impl Col for Position {
    fn with_col(self, delta: i32) -> Position {
        Position::new(self.line, (self.character as i32 + delta) as u32)
    }
}
