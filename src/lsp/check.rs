//! The loader's diagnostics for one document, as the editor has it: a ruleset loaded alone, a
//! scenario with the ruleset and content it names, content against its project's rulesets.

use super::text::{position, range};
use lsp_types::{Diagnostic, DiagnosticSeverity, Position, Range};
use rulecraft_lang::loader::{
    files_with_ext, project_roots, LoadError, Loader, SearchDir, CONTENT_EXT, RULESET_EXT,
    SCENARIO_EXT,
};
use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// A loader with the open documents' texts in place of their files.
fn loader(open: &HashMap<PathBuf, String>, search: &[SearchDir]) -> Loader {
    let mut l = Loader::new();
    l.search = search.to_vec();
    for (p, t) in open {
        l.set_text(p, t.clone());
    }
    l
}

fn same_file(a: &Path, b: &Path) -> bool {
    a == b
        || a.canonicalize()
            .ok()
            .is_some_and(|x| b.canonicalize().ok() == Some(x))
}

/// The document's diagnostics: the first error the loader finds, and its warnings about the
/// document. An error in another file (a ruleset the scenario names) is shown at the document's
/// first line, naming where it is.
pub fn diagnostics(
    doc: &Path,
    text: &str,
    open: &HashMap<PathBuf, String>,
    search: &[SearchDir],
) -> Vec<Diagnostic> {
    let ext = doc.extension().and_then(|e| e.to_str()).unwrap_or("");
    let (l, res) = match ext {
        RULESET_EXT => {
            let mut l = loader(open, search);
            let r = l.ruleset(doc, None).map(|_| ());
            (l, r)
        }
        SCENARIO_EXT => {
            let mut l = loader(open, search);
            let r = l.scenarios(doc).map(|_| ());
            (l, r)
        }
        CONTENT_EXT => content(doc, open, search),
        _ => return Vec::new(),
    };
    let mut out = Vec::new();
    if let Err(e) = res {
        out.push(error(&l, &e, doc, text));
    }
    for w in &l.warnings {
        if same_file(l.map.path(w.span.file), doc) {
            out.push(Diagnostic {
                range: range(text, w.span.start, w.span.end),
                severity: Some(DiagnosticSeverity::WARNING),
                source: Some("rulecraft".into()),
                message: with_help(w.message.clone(), w.help.as_deref()),
                ..Diagnostic::default()
            });
        }
    }
    out
}

/// Content is checked against the rulesets of its project, with the other content files of its
/// folder (whose terms it may use): no error if one ruleset takes it, else the error found
/// furthest into the document (the file was most likely written for that ruleset).
fn content(
    doc: &Path,
    open: &HashMap<PathBuf, String>,
    search: &[SearchDir],
) -> (Loader, Result<(), LoadError>) {
    let rulesets: Vec<PathBuf> = project_roots(doc, search)
        .into_iter()
        .take(1)
        .flat_map(|(root, _)| files_with_ext(&root.join("rulesets"), RULESET_EXT))
        .collect();
    let mut siblings: Vec<PathBuf> = doc
        .parent()
        .map(|d| {
            std::fs::read_dir(d)
                .into_iter()
                .flatten()
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == CONTENT_EXT))
                .collect()
        })
        .unwrap_or_default();
    if !siblings.iter().any(|p| same_file(p, doc)) {
        siblings.push(doc.to_path_buf());
    }
    siblings.sort();
    let mut best: Option<(Loader, LoadError, usize)> = None;
    for rp in &rulesets {
        // With the folder's files first; an error in another file hides this one's, so then alone.
        for files in [siblings.clone(), vec![doc.to_path_buf()]] {
            let mut l = loader(open, search);
            let res = l
                .ruleset(rp, None)
                .and_then(|env| l.content(&env, rp, &files, None).map(|_| ()));
            match res {
                Ok(()) => return (l, Ok(())),
                Err(e) => {
                    let at = match &e {
                        LoadError::Diag(d) if same_file(l.map.path(d.span.file), doc) => {
                            d.span.start
                        }
                        _ => 0,
                    };
                    let elsewhere = at == 0 && files.len() > 1;
                    if !elsewhere && best.as_ref().is_none_or(|b| at > b.2) {
                        best = Some((l, e, at));
                    }
                    if !elsewhere {
                        break;
                    }
                }
            }
        }
    }
    match best {
        Some((l, e, _)) => (l, Err(e)),
        None => {
            let l = loader(open, search);
            let e = LoadError::Io {
                path: doc.to_path_buf(),
                message: "no ruleset to check this content against: no project folder holding rulesets/ above it (name one with RULECRAFT_PATH)".into(),
                at: None,
            };
            (l, Err(e))
        }
    }
}

fn with_help(message: String, help: Option<&str>) -> String {
    match help {
        Some(h) => format!("{message}\nhelp: {h}"),
        None => message,
    }
}

/// A load error as a diagnostic of the document.
fn error(l: &Loader, e: &LoadError, doc: &Path, text: &str) -> Diagnostic {
    let span = match e {
        LoadError::Diag(d) => Some(d.span),
        LoadError::Io { at, .. } => *at,
    };
    let here = span.filter(|s| same_file(l.map.path(s.file), doc));
    let (range, message) = match here {
        Some(s) => {
            let located = l.located(e);
            (
                range(text, s.start, s.end),
                with_help(located.message, located.help.as_deref()),
            )
        }
        // Elsewhere: the whole first line, the message in its one-line form.
        None => {
            let end = text.find('\n').unwrap_or(text.len());
            (
                Range::new(Position::new(0, 0), position(text, end)),
                l.short(e),
            )
        }
    };
    Diagnostic {
        range,
        severity: Some(DiagnosticSeverity::ERROR),
        source: Some("rulecraft".into()),
        message,
        ..Diagnostic::default()
    }
}
