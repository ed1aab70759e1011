//! Where names are defined: cards and objects, events, periods and turns, terms, rulebook rules,
//! characteristics, player properties, zones and counters, in the files of a document's project
//! (and the files it names), with an open editor's text in place of the file's.

use rulecraft_lang::lexer::Tok;
use rulecraft_lang::loader::{
    files_with_ext, project_roots, Loader, SearchDir, CONTENT_EXT, RULESET_EXT, SCENARIO_EXT,
};
use rulecraft_lang::lower::scenario::header;
use rulecraft_lang::syntax::{parse, Stmt};
use rulecraft_lang::SourceMap;
use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

/// The statements that define a name, by their first word.
const DEFINING: [&str; 12] = [
    "card",
    "object",
    "event",
    "period",
    "turn",
    "term",
    "rule",
    "characteristic",
    "player",
    "zone",
    "counter",
    "ruleset",
];

/// A name's definition.
#[derive(Clone, Debug)]
pub struct Definition {
    /// What it defines: `card`, `event`, `term`, `rule` ...
    pub kind: String,
    /// The name as written (a string's text).
    pub name: String,
    /// The file.
    pub path: PathBuf,
    /// The bytes of the name.
    pub name_span: (usize, usize),
    /// The bytes of the whole statement, with its block and the comment lines just above it.
    pub whole: (usize, usize),
    /// How near the document the file is: 0 the document, 1 a file it names or its own folder,
    /// 2 elsewhere in the project.
    pub rank: u8,
}

/// The project's files and their texts: the document, the files it names, and every ruleset,
/// content and scenario file of its project, with open documents' texts in place.
pub struct Project {
    /// Each file's text.
    pub texts: HashMap<PathBuf, String>,
    /// Every definition found, nearest the document first.
    pub defs: Vec<Definition>,
}

fn key(p: &Path) -> PathBuf {
    p.canonicalize().unwrap_or_else(|_| p.to_path_buf())
}

impl Project {
    /// Reads the project of `doc` (its text `text`), `open` giving the texts of open documents.
    pub fn read(
        doc: &Path,
        text: &str,
        open: &HashMap<PathBuf, String>,
        search: &[SearchDir],
    ) -> Project {
        let doc_key = key(doc);
        let mut near: HashSet<PathBuf> = HashSet::new();
        if let Some(dir) = doc.parent() {
            for ext in [RULESET_EXT, CONTENT_EXT, SCENARIO_EXT] {
                near.extend(files_with_ext(dir, ext).iter().map(|p| key(p)));
            }
        }
        near.extend(named_files(doc, text, search).iter().map(|p| key(p)));
        let mut files: Vec<PathBuf> = near.iter().cloned().collect();
        for (root, _) in project_roots(doc, search) {
            for (folder, ext) in [
                ("rulesets", RULESET_EXT),
                ("content", CONTENT_EXT),
                ("scenarios", RULESET_EXT),
                ("scenarios", CONTENT_EXT),
            ] {
                files.extend(
                    files_with_ext(&root.join(folder), ext)
                        .iter()
                        .map(|p| key(p)),
                );
            }
        }
        files.sort();
        files.dedup();
        files.retain(|f| *f != doc_key);
        let mut texts = HashMap::new();
        texts.insert(doc_key.clone(), text.to_string());
        for f in files {
            let t = open
                .get(&f)
                .cloned()
                .or_else(|| std::fs::read_to_string(&f).ok());
            if let Some(t) = t {
                texts.insert(f, t);
            }
        }
        let mut map = SourceMap::new();
        let mut defs = Vec::new();
        for (path, t) in &texts {
            let id = map.add(path, t.clone());
            let Ok(stmts) = parse(id, t) else { continue };
            let rank = if *path == doc_key {
                0
            } else if near.contains(path) {
                1
            } else {
                2
            };
            collect(&stmts, path, t, rank, &mut defs);
        }
        defs.sort_by(|a, b| (a.rank, &a.path, a.whole).cmp(&(b.rank, &b.path, b.whole)));
        Project { texts, defs }
    }

    /// The definitions of a name, the nearest first: those of the nearest rank only.
    pub fn find(&self, name: &str) -> Vec<&Definition> {
        let all: Vec<&Definition> = self.defs.iter().filter(|d| d.name == name).collect();
        let best = all.iter().map(|d| d.rank).min();
        all.into_iter().filter(|d| Some(d.rank) == best).collect()
    }
}

/// The ruleset and content files a scenario file names (none for another kind of file).
fn named_files(doc: &Path, text: &str, search: &[SearchDir]) -> Vec<PathBuf> {
    if doc.extension().is_none_or(|e| e != SCENARIO_EXT) {
        return Vec::new();
    }
    let mut map = SourceMap::new();
    let id = map.add(doc, text.to_string());
    let Ok(stmts) = parse(id, text) else {
        return Vec::new();
    };
    let mut loader = Loader::new();
    loader.search = search.to_vec();
    let mut out = Vec::new();
    for s in &stmts {
        let Ok(h) = header(s) else { continue };
        if let Some((r, _)) = &h.ruleset {
            out.extend(loader.locate(doc, r, "rulesets", RULESET_EXT).ok());
        }
        for (c, _) in &h.content {
            if let Ok(p) = loader.locate(doc, c, "content", CONTENT_EXT) {
                out.extend(files_with_ext(&p, CONTENT_EXT));
            }
        }
    }
    out
}

fn collect(stmts: &[Stmt], path: &Path, text: &str, rank: u8, out: &mut Vec<Definition>) {
    for s in stmts {
        let kind = s.head[0].word().filter(|w| DEFINING.contains(w));
        let named = s.head.get(1).and_then(|t| match &t.tok {
            Tok::Str(n) | Tok::Word(n) => Some((n.clone(), t.span)),
            _ => None,
        });
        // `player NAME: ...` declares a property; `players: ...` and the like do not define.
        let property_ok = kind != Some("player") || s.head.get(2).is_some_and(|t| t.is_punct(":"));
        if let (Some(kind), Some((name, span)), true) = (kind, named, property_ok) {
            let whole = s.span();
            out.push(Definition {
                kind: kind.to_string(),
                name,
                path: path.to_path_buf(),
                name_span: (span.start, span.end),
                whole: (comments_above(text, whole.start), whole.end),
                rank,
            });
        }
        if let Some(b) = &s.block {
            collect(&b.stmts, path, text, rank, out);
        }
    }
}

/// The start of the comment lines just above the line holding `start` (or that line's start).
fn comments_above(text: &str, start: usize) -> usize {
    let mut line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    while line_start > 0 {
        let prev_start = text[..line_start - 1].rfind('\n').map_or(0, |i| i + 1);
        if !text[prev_start..line_start].trim_start().starts_with('#') {
            break;
        }
        line_start = prev_start;
    }
    line_start
}
