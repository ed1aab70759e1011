//! Diagnostics: every error names `file:line:col`, shows the line with a caret, and says what was
//! expected (rendered by codespan-reporting).

use codespan_reporting::diagnostic::{Diagnostic as CsDiagnostic, Label};
use codespan_reporting::files::{Files, SimpleFiles};
use codespan_reporting::term::{self, termcolor::NoColor};
use std::fmt;
use std::path::{Path, PathBuf};

/// A file in a [`SourceMap`].
pub type FileId = usize;

/// A byte range in one file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Span {
    /// The file the range is in.
    pub file: FileId,
    /// The byte offset of the first byte.
    pub start: usize,
    /// The byte offset just past the last byte (`start` itself for a point, such as the end of a
    /// statement).
    pub end: usize,
}

impl Span {
    /// The bytes `start..end` of `file`.
    pub fn new(file: FileId, start: usize, end: usize) -> Self {
        Span { file, start, end }
    }
    /// From the start of `self` to the end of `other`.
    pub fn to(self, other: Span) -> Span {
        Span {
            file: self.file,
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }
}

/// An error in an input file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Where the error is: its start gives the `file:line:col`, its range the caret's width.
    pub span: Span,
    /// What is wrong and what was expected, such as "unknown zone `grave`".
    pub message: String,
    /// A hint such as "did you mean `power`?".
    pub help: Option<String>,
    /// Another place the error concerns, named by a phrase such as "the first definition".
    pub related: Option<(Span, String)>,
}

impl Diagnostic {
    /// An error at `span`, with no help and no related place.
    pub fn new(span: Span, message: impl Into<String>) -> Self {
        Diagnostic {
            span,
            message: message.into(),
            help: None,
            related: None,
        }
    }
    /// Names another place: the one-line form ends `(WHAT is at FILE:LINE:COL)`.
    pub fn with_related(mut self, span: Span, what: impl Into<String>) -> Self {
        self.related = Some((span, what.into()));
        self
    }
    /// Adds a hint, printed under the snippet as `help: ...`.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}

/// The text of every file loaded, for line and column numbers and snippets.
pub struct SourceMap {
    files: SimpleFiles<String, String>,
    paths: Vec<PathBuf>,
}

impl Default for SourceMap {
    fn default() -> Self {
        SourceMap {
            files: SimpleFiles::new(),
            paths: Vec::new(),
        }
    }
}

impl SourceMap {
    /// A map with no files.
    pub fn new() -> Self {
        Self::default()
    }
    /// Keeps a file's text under its path (as given, for messages) and returns its id.
    pub fn add(&mut self, path: &Path, text: String) -> FileId {
        self.paths.push(path.to_path_buf());
        self.files.add(path.display().to_string(), text)
    }
    /// A file's text (empty for an id not in the map).
    pub fn text(&self, file: FileId) -> &str {
        self.files
            .get(file)
            .map(|f| f.source().as_str())
            .unwrap_or("")
    }
    /// A file's path, as it was given to [`SourceMap::add`]. Panics on an id not from this map.
    pub fn path(&self, file: FileId) -> &Path {
        &self.paths[file]
    }
    /// The file with this path, if loaded.
    pub fn find(&self, path: &Path) -> Option<FileId> {
        self.paths.iter().position(|p| p == path)
    }
    /// 1-based line and column of a byte offset.
    pub fn line_col(&self, file: FileId, offset: usize) -> (usize, usize) {
        let line = self.files.line_index(file, offset).unwrap_or(0);
        let col = self.files.column_number(file, line, offset).unwrap_or(1);
        (line + 1, col)
    }
    /// `file:line:col`.
    pub fn location(&self, span: Span) -> String {
        let (file, l, c) = self.place(span);
        format!("{file}:{l}:{c}")
    }
    /// The file (as its path was given), line and column of a span's start.
    pub fn place(&self, span: Span) -> (String, usize, usize) {
        let (l, c) = self.line_col(span.file, span.start);
        (self.path(span.file).display().to_string(), l, c)
    }
    /// The message, then `(WHAT is at file:line:col)` for a related place.
    pub fn message(&self, d: &Diagnostic) -> String {
        match &d.related {
            Some((sp, what)) => format!("{} ({what} is at {})", d.message, self.location(*sp)),
            None => d.message.clone(),
        }
    }
    /// The one-line form: `file:line:col: message`.
    pub fn short(&self, d: &Diagnostic) -> String {
        format!("{}: {}", self.location(d.span), self.message(d))
    }
    /// The one-line form of a warning: `file:line:col: warning: message`.
    pub fn warning(&self, d: &Diagnostic) -> String {
        format!("{}: warning: {}", self.location(d.span), d.message)
    }

    /// The one-line form followed by the line with a caret and any help.
    pub fn render(&self, d: &Diagnostic) -> String {
        let mut labels = vec![Label::primary(
            d.span.file,
            d.span.start..d.span.end.max(d.span.start),
        )];
        if let Some((sp, what)) = &d.related {
            labels
                .push(Label::secondary(sp.file, sp.start..sp.end.max(sp.start)).with_message(what));
        }
        let mut cs = CsDiagnostic::error().with_labels(labels);
        if let Some(h) = &d.help {
            cs = cs.with_notes(vec![format!("help: {h}")]);
        }
        let mut buf = NoColor::new(Vec::new());
        let config = term::Config::default();
        let _ = term::emit(&mut buf, &config, &self.files, &cs);
        let snippet = String::from_utf8_lossy(buf.get_ref()).to_string();
        // Drop codespan's own header line ("error:" and the arrow line); ours carries the location.
        let body: Vec<&str> = snippet
            .lines()
            .skip_while(|l| l.starts_with("error"))
            .filter(|l| !l.trim_start().starts_with("┌─"))
            .collect();
        format!("{}\n{}", self.short(d), body.join("\n"))
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}..{}", self.start, self.end)
    }
}

/// "did you mean `x`?" for the closest known name, if any is close.
pub fn did_you_mean<'a>(name: &str, known: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut best: Option<(f64, &str)> = None;
    for k in known {
        let score = strsim::jaro_winkler(&name.to_lowercase(), &k.to_lowercase());
        if score > 0.8 && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, k));
        }
    }
    best.map(|(_, k)| format!("did you mean `{k}`?"))
}
