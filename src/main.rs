//! The `rulecraft` command: run scenarios, explain derived values, check files.

use clap::{Parser, Subcommand, ValueEnum};
use rulecraft_core::explain::{describe_object, describe_player};
use rulecraft_lang::loader::{
    files_with_ext, resolve, LoadError, Loader, CONTENT_EXT, RULESET_EXT, SCENARIO_EXT,
};
use rulecraft_lang::lower::content as lcontent;
use rulecraft_lang::scenario::{find, run, Report};
use serde_json::json;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

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

#[derive(Parser)]
#[command(
    name = "rulecraft",
    version,
    about = "A rules engine for games whose cards, units and buildings carry effects"
)]
struct Cli {
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
    /// Run a scenario and print how an object's characteristics (or a player's properties) were derived.
    Explain {
        /// A scenario file.
        file: PathBuf,
        /// The object (name or alias) or player to explain.
        #[arg(long)]
        object: String,
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
        /// The ruleset (name or path) to check content files against.
        #[arg(long)]
        ruleset: Option<String>,
        #[arg(long, value_enum, default_value = "text")]
        format: Format,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Test { paths, format } => test(&paths, format),
        Command::Explain {
            file,
            object,
            scenario,
            step,
            format,
        } => explain(&file, &object, scenario.as_deref(), step, format),
        Command::Check {
            paths,
            ruleset,
            format,
        } => check(&paths, ruleset.as_deref(), format),
    }
}

fn collect(paths: &[PathBuf], exts: &[&str]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_file() {
            out.push(p.clone());
        } else {
            for e in exts {
                out.extend(files_with_ext(p, e));
            }
        }
    }
    out
}

fn test(paths: &[PathBuf], format: Format) -> ExitCode {
    let mut loader = Loader::new();
    let (mut passed, mut failed) = (0, 0);
    let mut json_out = Vec::new();
    for p in paths.iter().filter(|p| !p.exists()) {
        eprintln!("{}: no such file or folder", p.display());
        failed += 1;
    }
    for file in collect(paths, &[SCENARIO_EXT]) {
        match loader.scenarios(&file) {
            Err(e) => {
                failed += 1;
                if format == Format::Text {
                    out!("FAIL {}\n{}\n", file.display(), loader.render(&e));
                } else {
                    json_out.push(json!({"file": file.display().to_string(), "passed": false, "error": loader.short(&e)}));
                }
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
                        print_report(&loader, &r);
                    } else {
                        json_out.push(report_json(&loader, &file, &r));
                    }
                }
            }
        }
    }
    if format == Format::Json {
        out!(
            "{}",
            json!({"scenarios": json_out, "passed": passed, "failed": failed, "warnings": loader.warning_lines()})
        );
    } else {
        print_warnings(&loader);
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

fn report_json(loader: &Loader, file: &Path, r: &Report) -> serde_json::Value {
    json!({
        "file": file.display().to_string(),
        "name": r.name,
        "passed": r.passed(),
        "checks": r.checked,
        "failures": r.failures.iter().map(|f| json!({
            "location": loader.map.location(f.at),
            "message": f.message,
            "explanation": f.explanation,
        })).collect::<Vec<_>>(),
    })
}

fn explain(
    file: &Path,
    object: &str,
    scenario: Option<&str>,
    step: Option<usize>,
    format: Format,
) -> ExitCode {
    let mut loader = Loader::new();
    let list = match loader.scenarios(file) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("{}", loader.render(&e));
            return ExitCode::FAILURE;
        }
    };
    let Some((env, sc)) = list
        .into_iter()
        .find(|(_, s)| scenario.is_none_or(|n| s.header.name == n))
    else {
        eprintln!(
            "{}: no scenario named `{}`",
            file.display(),
            scenario.unwrap_or("")
        );
        return ExitCode::FAILURE;
    };
    let r = run(&env, &sc, step);
    for f in &r.failures {
        eprintln!("note: {}: {}", loader.map.location(f.at), f.message);
    }
    let state = &r.state;
    let d = state.explain();
    if let Some(p) = state.player_id(object) {
        if format == Format::Json {
            out!(
                "{}",
                json!({"player": object, "properties": d.sheet.players[p.index()], "explanation": d.explanation.as_ref().map(|e| &e.players[p.index()])})
            );
        } else {
            out_raw!("{}", describe_player(state, &d, p));
        }
        return ExitCode::SUCCESS;
    }
    let o = match find(state, &r.names, object) {
        Ok(o) => o,
        Err(m) => {
            eprintln!("{}: {m}", file.display());
            return ExitCode::FAILURE;
        }
    };
    if format == Format::Json {
        let rs = &state.ruleset;
        let e = d.explanation.as_ref().expect("explain records steps");
        let chars: Vec<_> = rs
            .characteristics
            .iter()
            .enumerate()
            .map(|(i, c)| {
                json!({
                    "characteristic": c.name,
                    "value": d.sheet.objects[o.index()][i],
                    "base": e.base.objects[o.index()][i],
                    "steps": e.objects[o.index()][i],
                })
            })
            .collect();
        out!("{}", json!({"object": object, "characteristics": chars}));
    } else {
        out_raw!("{}", describe_object(state, &d, o));
    }
    ExitCode::SUCCESS
}

fn check(paths: &[PathBuf], ruleset: Option<&str>, format: Format) -> ExitCode {
    let mut loader = Loader::new();
    let mut errors: Vec<String> = Vec::new();
    let mut checked = 0;
    for p in paths.iter().filter(|p| !p.exists()) {
        errors.push(format!("{}: no such file or folder", p.display()));
    }
    for file in collect(paths, &[RULESET_EXT, CONTENT_EXT, SCENARIO_EXT]) {
        checked += 1;
        let ext = file.extension().and_then(|e| e.to_str()).unwrap_or("");
        let res: Result<(), LoadError> = match ext {
            e if e == RULESET_EXT => loader.ruleset(&file, None).map(|_| ()),
            e if e == SCENARIO_EXT => loader.scenarios(&file).map(|_| ()),
            e if e == CONTENT_EXT => match ruleset {
                Some(r) => match resolve(&file, r, "rulesets", RULESET_EXT) {
                    Some(rp) => loader
                        .ruleset(&rp, None)
                        .and_then(|env| loader.content(&env, &rp, std::slice::from_ref(&file), None).map(|_| ())),
                    None => Err(LoadError::Io {
                        path: PathBuf::from(r),
                        message: "no such ruleset".into(),
                        at: None,
                    }),
                },
                // Without a ruleset only the syntax can be checked.
                None => loader.parse_file(&file, None).and_then(|stmts| {
                    match stmts.iter().find(|s| !lcontent::is_class(s) && !lcontent::is_term(s)) {
                        Some(s) => {
                            let c = rulecraft_lang::lower::cursor::Cursor::new(&s.head);
                            Err(c.err("`card \"Name\" { ... }`, `object \"Name\" { ... }` or `term NAME: CONDITION`").into())
                        }
                        None => Ok(()),
                    }
                }),
            },
            _ => Err(LoadError::Io {
                path: file.clone(),
                message: format!("unknown kind of file: expected .{RULESET_EXT}, .{CONTENT_EXT} or .{SCENARIO_EXT}"),
                at: None,
            }),
        };
        if let Err(e) = res {
            errors.push(if format == Format::Json {
                loader.short(&e)
            } else {
                loader.render(&e)
            });
        }
    }
    if format == Format::Json {
        out!(
            "{}",
            json!({"checked": checked, "errors": errors, "warnings": loader.warning_lines()})
        );
    } else {
        for e in &errors {
            out!("{e}\n");
        }
        print_warnings(&loader);
        out!("{checked} files checked, {} with errors", errors.len());
    }
    if errors.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
