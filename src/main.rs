//! The `rulecraft` command: run scenarios, explain derived values, check files.
//!
//! With `--format json` each command prints one JSON document on standard output; its schema is
//! docs/json.md.

use clap::{Parser, Subcommand, ValueEnum};

/// Games allocate and free many small, short-lived blocks (occurrences, frames, options):
/// mimalloc's thread-local free lists take them at a fraction of glibc's cost, and threads
/// playing games at once share no arena.
#[global_allocator]
static GLOBAL: alloc::Mimalloc = alloc::Mimalloc;

mod alloc;
use rulecraft_core::explain::describe::{describe_object, describe_player};
use rulecraft_core::model::explain::Step;
use rulecraft_core::model::ids::CounterId;
use rulecraft_core::{
    play_game, play_many, Agent, CharId, FirstAgent, GameState, ObjectId, Plan, PlayerId,
    RandomAgent, ScriptedAgent, Start, Value,
};
use rulecraft_lang::deck::{read_deck, DECK_EXT};
use rulecraft_lang::loader::{
    files_with_ext, missing_message, project_roots, LoadError, Loader, Located, SearchDir,
    CONTENT_EXT, RULESET_EXT, SCENARIO_EXT,
};
use rulecraft_lang::scenario::{find, run, Failure, Report};
use serde_json::{json, Value as Json};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod lsp;

/// Prints a line; a closed output (a pipe into `head`) ends the program quietly instead of
/// panicking.
macro_rules! out {
    ($($t:tt)*) => {
        if writeln!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(0);
        }
    };
}

macro_rules! out_raw {
    ($($t:tt)*) => {
        if write!(std::io::stdout(), $($t)*).is_err() {
            std::process::exit(0);
        }
    };
}

/// The environment variable listing project folders to search, as `PATH` lists folders.
const PATH_VAR: &str = "RULECRAFT_PATH";

#[derive(Parser)]
#[command(
    name = "rulecraft",
    version,
    about = "A rules engine for games whose cards, units and buildings carry effects",
    after_help = "A ruleset or content named by name is looked up in the project above the file \
                  (the nearest folder holding rulesets/), then in each --include folder, then in \
                  each folder of RULECRAFT_PATH (separated as in PATH)."
)]
struct Cli {
    /// A project folder (holding rulesets/ and content/) to look up rulesets and content in,
    /// after the file's own project; may be given several times.
    #[arg(short = 'I', long = "include", value_name = "DIR", global = true)]
    include: Vec<PathBuf>,
    #[command(subcommand)]
    command: Command,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum Format {
    Text,
    Json,
}

#[derive(Subcommand)]
enum Command {
    /// Run scenario files (and every .scenario file in the given folders).
    Test {
        /// Scenario files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Run a scenario and print how an object's characteristics (or a player's properties) were
    /// derived, or the log of occurrences and what answered each.
    Explain {
        /// A scenario file.
        file: PathBuf,
        /// The object (name or alias) or player to explain.
        #[arg(long, required_unless_present = "log")]
        object: Option<String>,
        /// Print the log of occurrences so far: each occurrence, the responses to it in order,
        /// and why each came when it did.
        #[arg(long)]
        log: bool,
        /// Which scenario in the file, by name (default: the first).
        #[arg(long)]
        scenario: Option<String>,
        /// Stop after this many steps (default: run them all).
        #[arg(long)]
        step: Option<usize>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Check ruleset, content and scenario files for errors without running them.
    Check {
        /// Files or folders.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The ruleset (name or path) to check content files against (default: the rulesets of
        /// the content file's project).
        #[arg(long)]
        ruleset: Option<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
    /// Play whole games between agents: one game prints its log and winner; several print a
    /// summary (wins, draws, mean turns and decisions, games a second).
    Play(PlaySetup),
    /// Run the language server on standard input and output (for editors: diagnostics as you
    /// type, a card's text on hover, go to a name's definition).
    Lsp,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let mut loader = Loader::new();
    for d in &cli.include {
        if !d.is_dir() {
            eprintln!("{}: no such folder (given with --include)", d.display());
            return ExitCode::FAILURE;
        }
    }
    loader.search = cli
        .include
        .iter()
        .map(|d| SearchDir {
            path: d.clone(),
            origin: "--include",
        })
        .chain(
            std::env::var_os(PATH_VAR)
                .iter()
                .flat_map(std::env::split_paths)
                .filter(|d| !d.as_os_str().is_empty())
                .map(|d| SearchDir {
                    path: d,
                    origin: PATH_VAR,
                }),
        )
        .collect();
    match cli.command {
        Command::Test { paths, format } => test(&mut loader, &paths, format),
        Command::Explain {
            file,
            object,
            log,
            scenario,
            step,
            format,
        } => explain(
            &mut loader,
            &file,
            object.as_deref(),
            log,
            scenario.as_deref(),
            step,
            format,
        ),
        Command::Check {
            paths,
            ruleset,
            format,
        } => check(&mut loader, &paths, ruleset.as_deref(), format),
        Command::Play(setup) => play(&mut loader, &setup),
        Command::Lsp => match lsp::serve(loader.search.clone()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("rulecraft lsp: {e}");
                ExitCode::FAILURE
            }
        },
    }
}

/// What `rulecraft play` was asked for.
#[derive(clap::Args)]
struct PlaySetup {
    /// The ruleset, by name or path.
    #[arg(long, default_value = "classic")]
    ruleset: String,
    /// The content (a file or folder), by name or path.
    #[arg(long, default_value = "classic")]
    content: String,
    /// One deck file per player (by path, or by name in the project's decks/ folder).
    #[arg(long, num_args = 1.., default_values = ["bolt", "bolt"])]
    decks: Vec<String>,
    /// The agents, one for every player or one per player, separated by commas: `random`,
    /// `first`, or `script:FILE` (option indexes, one per decision, then the game stops).
    #[arg(long, default_value = "random")]
    agents: String,
    /// The seed every game's seed (deck shuffles, random agents) is derived from.
    #[arg(long, default_value_t = 0)]
    seed: u64,
    /// How many games.
    #[arg(long, default_value_t = 1)]
    games: usize,
    /// How many threads play them.
    #[arg(long, default_value_t = 1)]
    threads: usize,
}

/// An agent as `--agents` names it.
#[derive(Clone)]
enum AgentKind {
    Random,
    First,
    Script(Vec<usize>),
}

impl AgentKind {
    fn make(&self, seed: u64, p: PlayerId) -> Box<dyn Agent + Send> {
        match self {
            // Each player's agent draws from its own source, derived from the game's seed.
            AgentKind::Random => Box::new(RandomAgent::new(
                seed ^ (u64::from(p.0) + 1).wrapping_mul(0xD1B5_4A32_D192_ED03),
            )),
            AgentKind::First => Box::new(FirstAgent),
            AgentKind::Script(s) => Box::new(ScriptedAgent::new(s.clone())),
        }
    }
}

/// A script file: option indexes separated by whitespace, `#` to the end of a line a comment.
fn read_script(path: &Path) -> Result<Vec<usize>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    let mut out = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let code = line.split('#').next().unwrap_or("");
        let mut col = 0;
        for word in code.split_inclusive(char::is_whitespace) {
            let w = word.trim_end();
            if !w.is_empty() {
                let i = w.parse().map_err(|_| {
                    format!(
                        "{}:{}:{}: expected an option index (a number from 0), found `{w}`",
                        path.display(),
                        n + 1,
                        code[..col].chars().count() + 1
                    )
                })?;
                out.push(i);
            }
            col += word.len();
        }
    }
    Ok(out)
}

/// The agents `--agents` names: one for every player, or one per player.
fn parse_agents(text: &str, players: usize) -> Result<Vec<AgentKind>, String> {
    let mut list = Vec::new();
    for a in text.split(',') {
        list.push(match a.trim() {
            "random" => AgentKind::Random,
            "first" => AgentKind::First,
            s => match s.strip_prefix("script:") {
                Some(f) => AgentKind::Script(read_script(Path::new(f))?),
                None => {
                    return Err(format!(
                        "--agents: unknown agent `{s}`: expected random, first or script:FILE"
                    ))
                }
            },
        });
    }
    match list.len() {
        1 => Ok(vec![list.remove(0); players]),
        n if n == players => Ok(list),
        n => Err(format!(
            "--agents: {n} agents for {players} players: give one for every player or one per player"
        )),
    }
}

/// The players' names, in turn order.
const PLAYER_NAMES: &[&str] = &["Ann", "Ben", "Cid", "Dee", "Eve", "Fay", "Gus", "Hal"];

fn play(loader: &mut Loader, setup: &PlaySetup) -> ExitCode {
    let here = Path::new(".").join("here");
    let fail = |msg: String| {
        eprintln!("{msg}");
        ExitCode::FAILURE
    };
    let n = setup.decks.len();
    if !(2..=PLAYER_NAMES.len()).contains(&n) {
        return fail(format!(
            "--decks: {n} deck(s): give one per player, 2 to {}",
            PLAYER_NAMES.len()
        ));
    }
    // A ruleset or content by name or path, or what was looked for under the option's name.
    let locate = |loader: &Loader, flag: &str, name: &str, folder: &str, ext: &str| {
        loader
            .locate(&here, name, folder, ext)
            .map_err(|m| format!("{flag}: {}", missing_message(name, ext, &m)))
    };
    let rpath = match locate(loader, "--ruleset", &setup.ruleset, "rulesets", RULESET_EXT) {
        Ok(p) => p,
        Err(m) => return fail(m),
    };
    let cpath = match locate(loader, "--content", &setup.content, "content", CONTENT_EXT) {
        Ok(p) => p,
        Err(m) => return fail(m),
    };
    let state = match loader.game(&rpath, &[&cpath], &PLAYER_NAMES[..n]) {
        Ok(s) => s,
        Err(e) => return fail(loader.render(&e)),
    };
    let mut lists = Vec::new();
    for d in &setup.decks {
        let path = if Path::new(d).is_file() {
            PathBuf::from(d)
        } else {
            match loader.locate(&here, d, "decks", DECK_EXT) {
                Ok(p) => p,
                Err(_) => {
                    return fail(format!(
                        "--decks: no deck `{d}`: expected a deck file, or the name of one in the project's decks/ folder"
                    ))
                }
            }
        };
        let checked = read_deck(loader, &path)
            .and_then(|deck| deck.check(state.content()).map_err(LoadError::from));
        match checked {
            Ok(list) => lists.push(list),
            Err(e) => return fail(loader.render(&e)),
        }
    }
    let agents = match parse_agents(&setup.agents, n) {
        Ok(a) => a,
        Err(m) => return fail(m),
    };
    let make = |seed: u64, p: PlayerId| agents[p.index()].make(seed, p);
    let start = Start::Decks(state, lists);
    if setup.games == 1 {
        let mut game = match start.game(setup.seed, 0) {
            Ok(g) => g,
            Err(e) => return fail(format!("error: cannot deal: {e}")),
        };
        let seed = Start::game_seed(setup.seed, 0);
        let mut list: Vec<Box<dyn Agent + Send>> =
            (0..n).map(|p| make(seed, PlayerId(p as u8))).collect();
        let result = play_game(&mut game, &mut list);
        out_raw!("{}", rulecraft_lang::scenario::log_text(&game));
        return match result {
            Ok(g) => {
                let end = match (g.finished, g.winner) {
                    (true, Some(p)) => format!("winner: {}", game.player_name(p)),
                    (true, None) => "a draw".to_string(),
                    (false, _) => "stopped unfinished after its limit of decisions".to_string(),
                };
                out!("{end} (turn {}, {} decisions)", g.turns, g.decisions);
                ExitCode::SUCCESS
            }
            Err(e) => fail(format!("error: the game stopped: {e}")),
        };
    }
    let plan = Plan::new(setup.games, setup.seed).threads(setup.threads);
    match play_many(&start, plan, make) {
        Ok(m) => {
            out!("games: {}", m.games.len());
            for (p, w) in m.wins.iter().enumerate() {
                out!("wins {}: {w}", PLAYER_NAMES[p]);
            }
            out!("draws: {}", m.draws);
            if m.unfinished > 0 {
                out!("unfinished: {}", m.unfinished);
            }
            out!("mean turns: {:.2}", m.mean_turns());
            out!("mean decisions: {:.2}", m.mean_decisions());
            out!(
                "games per second: {:.0} ({} thread(s), {:.3} s)",
                m.games_per_second(),
                plan.threads,
                m.elapsed.as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => fail(format!("error: a game stopped: {e}")),
    }
}

/// Each path's files with one of the extensions; a path that does not exist, or a folder with no
/// such files, is an error instead.
fn collect(paths: &[PathBuf], exts: &[&str]) -> (Vec<PathBuf>, Vec<Located>) {
    let mut files = Vec::new();
    let mut errors = Vec::new();
    for p in paths {
        if p.is_file() {
            files.push(p.clone());
        } else if !p.exists() {
            errors.push(Located::file(p, "no such file or folder"));
        } else {
            let found: Vec<PathBuf> = exts.iter().flat_map(|e| files_with_ext(p, e)).collect();
            if found.is_empty() {
                let kinds: Vec<String> = exts.iter().map(|e| format!(".{e}")).collect();
                errors.push(Located::file(
                    p,
                    format!(
                        "nothing found: no {} files in this folder",
                        kinds.join(", ")
                    ),
                ));
            }
            files.extend(found);
        }
    }
    (files, errors)
}

/// An error as docs/json.md's `Error`.
fn error_json(l: &Located) -> Json {
    json!({
        "file": l.file,
        "line": l.line,
        "column": l.column,
        "message": l.message,
        "help": l.help,
    })
}

/// A scenario's failure as docs/json.md's `Failure`.
fn failure_json(loader: &Loader, f: &Failure) -> Json {
    let (file, line, column) = loader.map.place(f.at);
    json!({
        "file": file,
        "line": line,
        "column": column,
        "message": f.message,
        "explanation": f.explanation,
    })
}

fn test(loader: &mut Loader, paths: &[PathBuf], format: Format) -> ExitCode {
    let (files, mut errors) = collect(paths, &[SCENARIO_EXT]);
    if format == Format::Text {
        for e in &errors {
            out!("FAIL {}\n", e.short());
        }
    }
    let (mut passed, mut failed) = (0, 0);
    let mut reports = Vec::new();
    for file in &files {
        match loader.scenarios(file) {
            Err(e) => {
                if format == Format::Text {
                    out!("FAIL {}\n{}\n", file.display(), loader.render(&e));
                }
                errors.push(loader.located(&e));
            }
            Ok(list) if list.is_empty() => {
                let e = Located::file(
                    file,
                    "nothing found: no scenarios in this file: expected `scenario \"NAME\" { ... }`",
                );
                if format == Format::Text {
                    out!("FAIL {}\n", e.short());
                }
                errors.push(e);
            }
            Ok(list) => {
                for (env, sc) in list {
                    let r = run(&env, &sc, None);
                    if r.passed() {
                        passed += 1;
                    } else {
                        failed += 1;
                    }
                    if format == Format::Text {
                        print_report(loader, &r);
                    } else {
                        reports.push(report_json(loader, file, &r));
                    }
                }
            }
        }
    }
    // Files that do not load and paths with nothing to run count as failures.
    failed += errors.len();
    if format == Format::Json {
        out!(
            "{}",
            json!({
                "scenarios": reports,
                "errors": errors.iter().map(error_json).collect::<Vec<_>>(),
                "passed": passed,
                "failed": failed,
                "warnings": loader.warning_lines(),
            })
        );
    } else {
        print_warnings(loader);
        out!("{passed} passed, {failed} failed");
    }
    if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Each warning with its line and caret, after the results.
fn print_warnings(loader: &Loader) {
    for w in &loader.warnings {
        let rendered = loader.map.render(w);
        let mut lines = rendered.lines();
        lines.next();
        out!("{}", loader.map.warning(w));
        for l in lines {
            out!("{l}");
        }
    }
}

fn print_report(loader: &Loader, r: &Report) {
    if r.passed() {
        out!("ok   {} ({} checks)", r.name, r.checked);
        return;
    }
    out!("FAIL {} ({})", r.name, loader.map.location(r.at));
    for f in &r.failures {
        out!("  {}: {}", loader.map.location(f.at), f.message);
        if let Some(x) = &f.explanation {
            for line in x.lines() {
                out!("    {line}");
            }
        }
    }
}

fn report_json(loader: &Loader, file: &Path, r: &Report) -> Json {
    let (_, line, column) = loader.map.place(r.at);
    json!({
        "file": file.display().to_string(),
        "name": r.name,
        "line": line,
        "column": column,
        "passed": r.passed(),
        "checks": r.checked,
        "failures": r.failures.iter().map(|f| failure_json(loader, f)).collect::<Vec<_>>(),
    })
}

/// Prints errors the way the format says and fails.
fn fail_with(loader: &Loader, errors: &[LoadError], plain: &[Located], format: Format) -> ExitCode {
    if format == Format::Json {
        let all: Vec<Json> = errors
            .iter()
            .map(|e| error_json(&loader.located(e)))
            .chain(plain.iter().map(error_json))
            .collect();
        out!("{}", json!({ "errors": all }));
    } else {
        for e in errors {
            eprintln!("{}", loader.render(e));
        }
        for l in plain {
            eprintln!("{}", l.short());
        }
    }
    ExitCode::FAILURE
}

#[allow(clippy::too_many_arguments)]
fn explain(
    loader: &mut Loader,
    file: &Path,
    object: Option<&str>,
    log: bool,
    scenario: Option<&str>,
    step: Option<usize>,
    format: Format,
) -> ExitCode {
    let list = match loader.scenarios(file) {
        Ok(l) => l,
        Err(e) => return fail_with(loader, &[e], &[], format),
    };
    let Some((env, sc)) = list
        .into_iter()
        .find(|(_, s)| scenario.is_none_or(|n| s.header.name == n))
    else {
        let msg = match scenario {
            Some(n) => format!("no scenario named `{n}` in this file"),
            None => "no scenarios in this file: expected `scenario \"NAME\" { ... }`".to_string(),
        };
        return fail_with(loader, &[], &[Located::file(file, msg)], format);
    };
    let r = run(&env, &sc, step);
    let state = &r.state;
    let d = state.explain();
    let log_lines: Vec<String> = state.log().iter().map(|e| e.display(state)).collect();
    let target = match object {
        None => Ok(None),
        Some(object) => match state.player_id(object) {
            Some(p) => Ok(Some(Subject::Player(p))),
            None => find(state, &r.names, object).map(|o| Some(Subject::Object(o))),
        },
    };
    let target = match target {
        Ok(t) => t,
        Err(m) => {
            let (_, line, column) = loader.map.place(sc.header.span);
            let at = Located {
                file: file.display().to_string(),
                line: Some(line),
                column: Some(column),
                message: format!("in scenario `{}`: {m}", sc.header.name),
                help: None,
            };
            return fail_with(loader, &[], &[at], format);
        }
    };
    if format == Format::Json {
        let (_, line, column) = loader.map.place(sc.header.span);
        let mut doc = json!({
            "scenario": {"name": sc.header.name, "file": file.display().to_string(), "line": line, "column": column},
            "step": step,
            "failures": r.failures.iter().map(|f| failure_json(loader, f)).collect::<Vec<_>>(),
            "errors": [],
        });
        let extra = match target {
            Some(Subject::Player(p)) => player_json(state, &d, p),
            Some(Subject::Object(o)) => object_json(state, &d, o),
            None => json!({}),
        };
        if let (Some(doc), Json::Object(extra)) = (doc.as_object_mut(), extra) {
            doc.extend(extra);
        }
        if let (Some(doc), true) = (doc.as_object_mut(), log) {
            doc.insert("log".into(), json!(log_lines));
        }
        out!("{doc}");
        return ExitCode::SUCCESS;
    }
    for f in &r.failures {
        eprintln!("note: {}: {}", loader.map.location(f.at), f.message);
    }
    let described = match target {
        Some(Subject::Player(p)) => Some(describe_player(state, &d, p)),
        Some(Subject::Object(o)) => Some(describe_object(state, &d, o)),
        None => None,
    };
    match described {
        Some(Ok(text)) => out_raw!("{text}"),
        Some(Err(e)) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        None => {}
    }
    if log {
        out!("log:");
        for l in &log_lines {
            out!("  {l}");
        }
    }
    ExitCode::SUCCESS
}

enum Subject {
    Player(PlayerId),
    Object(ObjectId),
}

/// One explained value (docs/json.md's `Value`): its name and kind, and every value as the text
/// output writes it.
fn value_json(
    state: &GameState,
    name: &str,
    kind: &str,
    value: &Value,
    base: &Value,
    steps: &[Step],
) -> Json {
    let text = |v: &Value| v.display_with(&|p: PlayerId| state.player_name(p).to_string());
    json!({
        "name": name,
        "kind": kind,
        "value": text(value),
        "base": text(base),
        "steps": steps.iter().map(|s| json!({
            "layer": s.layer,
            "layer_name": s.layer_name,
            "source": s.source,
            "text": s.text,
            "timestamp": s.timestamp,
            "before": text(&s.before),
            "after": text(&s.after),
            "why": s.reason.to_string(),
        })).collect::<Vec<_>>(),
    })
}

fn object_json(
    state: &GameState,
    d: &rulecraft_core::model::derived::Derived,
    o: ObjectId,
) -> Json {
    let rs = &state.ruleset();
    let Ok(obj) = state.object(o) else {
        return json!({"errors": [format!("no object has id {}", o.0)]});
    };
    let e = d.explanation.as_ref().expect("explain records steps");
    let chars: Vec<Json> = rs
        .characteristics
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let id = CharId(i as u16);
            value_json(
                state,
                &c.name,
                c.kind.name(),
                &d.sheet.objects[o.index()][id.index()],
                &e.base.objects[o.index()][id.index()],
                &e.objects[o.index()][id.index()],
            )
        })
        .collect();
    // Its counters by kind, in the order the ruleset declares the kinds.
    let counters: Vec<Json> = rs
        .counters
        .iter()
        .enumerate()
        .filter_map(|(i, def)| {
            let kind = CounterId(i as u16);
            let placed: Vec<Json> = obj
                .counters
                .iter()
                .filter(|c| c.kind == kind)
                .map(|c| json!({"count": c.count, "timestamp": c.timestamp.0}))
                .collect();
            (!placed.is_empty()).then(|| {
                let mut c = json!({"kind": def.name, "count": obj.counter_count(kind), "placements": placed});
                // A meter's current value accounts for itself, change by change, from the log.
                if let Some(a) = rs
                    .meter_of_counter(kind)
                    .and_then(|_| state.account(o, kind).ok())
                {
                    c["changes"] = a
                        .steps
                        .iter()
                        .map(|s| json!({"what": s.what, "by": s.by, "before": s.before, "after": s.after}))
                        .collect();
                    c["unaccounted"] = json!(a.unaccounted);
                }
                c
            })
        })
        .collect();
    json!({
        "counters": counters,
        "object": {
            "name": &*obj.name,
            "id": o.0,
            "owner": state.player_name(obj.owner),
            "zone": rs.zone(obj.zone).map_or("", |z| z.name.as_ref()),
            "timestamp": obj.timestamp.0,
            "face_down": obj.face_down,
        },
        "characteristics": chars,
    })
}

fn player_json(
    state: &GameState,
    d: &rulecraft_core::model::derived::Derived,
    p: PlayerId,
) -> Json {
    let rs = &state.ruleset();
    let e = d.explanation.as_ref().expect("explain records steps");
    let props: Vec<Json> = rs
        .props
        .iter()
        .enumerate()
        .map(|(i, prop)| {
            let mut v = value_json(
                state,
                &prop.name,
                "number",
                &d.sheet.players[p.index()][i],
                &e.base.players[p.index()][i],
                &e.players[p.index()][i],
            );
            // A set of class names accounts for itself, change by change, from the log.
            if prop.symbols {
                let steps = state
                    .account_symbols(p, rulecraft_core::model::ids::PropId(i as u16))
                    .unwrap_or_default();
                v["changes"] = steps
                    .iter()
                    .map(|s| json!({"what": s.what, "by": s.by, "symbol": s.symbol, "added": s.added}))
                    .collect();
            }
            v
        })
        .collect();
    json!({
        "player": {"name": state.player_name(p)},
        "properties": props,
    })
}

/// The rulesets a content file is checked against when none is given: those of the first
/// project (its own, then the search folders) that has any.
fn project_rulesets(loader: &Loader, file: &Path) -> Vec<PathBuf> {
    for (root, _) in project_roots(file, &loader.search) {
        let Ok(rd) = std::fs::read_dir(root.join("rulesets")) else {
            continue;
        };
        let mut list: Vec<PathBuf> = rd
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.is_file() && p.extension().is_some_and(|x| x == RULESET_EXT))
            .collect();
        if !list.is_empty() {
            list.sort();
            return list;
        }
    }
    Vec::new()
}

/// An error found checking a file: where, as the text output renders it, and the rulesets a
/// content file was checked against when it was found.
struct FileError {
    at: Located,
    rendered: String,
    rulesets: Vec<PathBuf>,
}

impl FileError {
    fn load(loader: &Loader, e: &LoadError) -> FileError {
        FileError {
            at: loader.located(e),
            rendered: loader.render(e),
            rulesets: Vec::new(),
        }
    }
    fn whole_file(file: &Path, message: String) -> FileError {
        let at = Located::file(file, message);
        FileError {
            rendered: at.short(),
            at,
            rulesets: Vec::new(),
        }
    }
}

/// One file's check: its kind, the rulesets it was checked against (content only) with whether
/// it loaded against each, and its errors.
struct Checked {
    file: PathBuf,
    kind: &'static str,
    rulesets: Vec<(PathBuf, bool)>,
    errors: Vec<FileError>,
}

/// Checks a content file against the named ruleset, or else against its project's rulesets; it
/// is right if it loads against one of them (a project may hold the rulesets of several games).
fn check_content(loader: &mut Loader, c: &mut Checked, ruleset: Option<&str>) {
    let file = c.file.clone();
    let against = match ruleset {
        Some(r) => match loader.locate(&file, r, "rulesets", RULESET_EXT) {
            Ok(p) => vec![p],
            Err(m) => {
                let msg = format!("--ruleset: {}", missing_message(r, RULESET_EXT, &m));
                c.errors.push(FileError::whole_file(&file, msg));
                return;
            }
        },
        None => project_rulesets(loader, &file),
    };
    if against.is_empty() {
        c.errors.push(FileError::whole_file(&file, format!(
            "a ruleset is needed to check content: give --ruleset NAME (no project folder holding rulesets/*.{RULESET_EXT} was found above this file or the working folder, or given with --include or {PATH_VAR})"
        )));
        return;
    }
    let mut failures: Vec<FileError> = Vec::new();
    for rp in &against {
        let res = loader.ruleset(rp, None).and_then(|env| {
            loader
                .content(&env, rp, std::slice::from_ref(&file), None)
                .map(|_| ())
        });
        c.rulesets.push((rp.clone(), res.is_ok()));
        if let Err(e) = res {
            // The same error against several rulesets is reported once, naming them all.
            let fe = FileError::load(loader, &e);
            match failures.iter_mut().find(|f| f.at == fe.at) {
                Some(f) => f.rulesets.push(rp.clone()),
                None => failures.push(FileError {
                    rulesets: vec![rp.clone()],
                    ..fe
                }),
            }
        }
    }
    if !c.rulesets.iter().any(|(_, ok)| *ok) {
        // The file was most likely written for the rulesets it got furthest with: report the
        // errors found latest in it (a card for one game fails early against another's ruleset).
        let key = |f: &FileError| (f.at.line.unwrap_or(0), f.at.column.unwrap_or(0));
        let furthest = failures.iter().map(key).max();
        failures.retain(|f| Some(key(f)) == furthest);
        c.errors.extend(failures);
    }
}

fn check(
    loader: &mut Loader,
    paths: &[PathBuf],
    ruleset: Option<&str>,
    format: Format,
) -> ExitCode {
    let (files, missing) = collect(paths, &[RULESET_EXT, CONTENT_EXT, SCENARIO_EXT]);
    let mut results = Vec::new();
    for file in files {
        let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
        let mut c = Checked {
            file: file.clone(),
            kind: "",
            rulesets: Vec::new(),
            errors: Vec::new(),
        };
        let res = match ext {
            RULESET_EXT => {
                c.kind = "ruleset";
                loader.ruleset(&file, None).map(|_| ())
            }
            SCENARIO_EXT => {
                c.kind = "scenario";
                loader.scenarios(&file).map(|_| ())
            }
            CONTENT_EXT => {
                c.kind = "content";
                check_content(loader, &mut c, ruleset);
                Ok(())
            }
            _ => {
                c.errors.push(FileError::whole_file(&file, format!(
                    "unknown kind of file: expected .{RULESET_EXT}, .{CONTENT_EXT} or .{SCENARIO_EXT}"
                )));
                Ok(())
            }
        };
        if let Err(e) = res {
            c.errors.push(FileError::load(loader, &e));
        }
        results.push(c);
    }
    let failed = results.iter().filter(|c| !c.errors.is_empty()).count() + missing.len();
    let paths = |list: &[PathBuf]| -> Vec<String> {
        list.iter().map(|p| p.display().to_string()).collect()
    };
    if format == Format::Json {
        let mut errors: Vec<Json> = missing
            .iter()
            .map(|l| {
                let mut e = error_json(l);
                e["rulesets"] = json!([]);
                e
            })
            .collect();
        for c in &results {
            for fe in &c.errors {
                let mut e = error_json(&fe.at);
                e["rulesets"] = json!(paths(&fe.rulesets));
                errors.push(e);
            }
        }
        let files: Vec<Json> = results
            .iter()
            .map(|c| {
                json!({
                    "file": c.file.display().to_string(),
                    "kind": c.kind,
                    "ok": c.errors.is_empty(),
                    "rulesets": c.rulesets.iter().map(|(p, ok)| json!({"ruleset": p.display().to_string(), "ok": ok})).collect::<Vec<_>>(),
                })
            })
            .collect();
        out!(
            "{}",
            json!({"checked": results.len(), "failed": failed, "files": files, "errors": errors, "warnings": loader.warning_lines()})
        );
    } else {
        for l in &missing {
            out!("{}\n", l.short());
        }
        for c in &results {
            for fe in &c.errors {
                out!("{}", fe.rendered.trim_end());
                if !fe.rulesets.is_empty() {
                    out!("  = checked against {}", paths(&fe.rulesets).join(", "));
                }
                out!("");
            }
            // A content file that loads against some of its project's rulesets only says which.
            let with = |loaded: bool| -> Vec<PathBuf> {
                c.rulesets
                    .iter()
                    .filter(|r| r.1 == loaded)
                    .map(|r| r.0.clone())
                    .collect()
            };
            let (ok, not) = (with(true), with(false));
            if !ok.is_empty() && !not.is_empty() {
                out!(
                    "note: {} loads against {}, not against {}\n",
                    c.file.display(),
                    paths(&ok).join(", "),
                    paths(&not).join(", ")
                );
            }
        }
        print_warnings(loader);
        out!("{} files checked, {failed} with errors", results.len());
    }
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
