//! Finding and loading files: a scenario names its ruleset and content by name (looked up under the
//! project root's `rulesets/` and `content/`) or by a path relative to the scenario file.

use crate::confine::{Confinement, Guard};
use crate::diagnostics::{Diagnostic, SourceMap, Span};
use crate::lower::scenario::{self as lsc, Scenario, StepKind};
use crate::lower::{content as lcontent, ruleset as lruleset, Env, SymbolNote};
use crate::syntax::{parse, Stmt};
use crate::warnings::unnamed_symbols;
use rulecraft_core::model::content::Content;
use rulecraft_core::GameState;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// An error loading files: a diagnostic in a file, or a file that could not be read.
#[derive(Debug)]
pub enum LoadError {
    /// An error in a file's text: bad syntax, an unknown name, a ruleset or content it names that
    /// is not found.
    Diag(Diagnostic),
    /// A file that could not be read.
    Io {
        /// The file.
        path: PathBuf,
        /// Why it could not be read, from the operating system.
        message: String,
        /// Where another file names it (a scenario's `ruleset:` line), if one does.
        at: Option<Span>,
    },
}

impl From<Diagnostic> for LoadError {
    fn from(d: Diagnostic) -> Self {
        LoadError::Diag(d)
    }
}

/// Loads files once each and keeps their text for diagnostics.
#[derive(Default)]
pub struct Loader {
    /// The text of every file read, to turn spans into `file:line:col` and snippets.
    pub map: SourceMap,
    rulesets: HashMap<PathBuf, Arc<Env>>,
    contents: HashMap<(PathBuf, Vec<PathBuf>), Library>,
    /// Warnings about what was loaded (each once, in the order found): input that loads but
    /// probably does not say what was meant (`crate::warnings`).
    pub warnings: Vec<Diagnostic>,
    /// Project folders searched, after the file's own project, for rulesets and content named by
    /// name (`--include`, `RULECRAFT_PATH`), as a compiler searches include paths.
    pub search: Vec<SearchDir>,
    /// Confined mode: where files may be read from and how much ([`crate::confine`]).
    confine: Option<Guard>,
    /// Texts used instead of files on disk, by full path ([`Loader::set_text`]).
    overlay: HashMap<PathBuf, String>,
}

/// Content files loaded against a ruleset: their classes, the ruleset's environment with the
/// terms the files declare, and the symbols their conditions name (for warnings).
#[derive(Clone)]
struct Library {
    content: Arc<Content>,
    env: Arc<Env>,
    notes: Vec<SymbolNote>,
}

/// A project folder (one holding `rulesets/` or `content/`) to search, and who named it.
#[derive(Clone, Debug)]
pub struct SearchDir {
    /// The folder.
    pub path: PathBuf,
    /// `--include` or `RULECRAFT_PATH`, for messages.
    pub origin: &'static str,
}

/// An error's place and text: the file as its path was given, the line and column (none for an
/// error about a whole file), the message (with any related place), and any help.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Located {
    /// The file, as its path was given.
    pub file: String,
    /// The line, counted from 1.
    pub line: Option<usize>,
    /// The column, counted from 1 in characters.
    pub column: Option<usize>,
    /// What is wrong, ending `(WHAT is at FILE:LINE:COL)` when the error names another place.
    pub message: String,
    /// A hint such as "did you mean `power`?".
    pub help: Option<String>,
}

impl Located {
    /// An error about a whole file or folder.
    pub fn file(path: &Path, message: impl Into<String>) -> Located {
        Located {
            file: path.display().to_string(),
            line: None,
            column: None,
            message: message.into(),
            help: None,
        }
    }
    /// `file:line:col: message`, or `file: message`.
    pub fn short(&self) -> String {
        match (self.line, self.column) {
            (Some(l), Some(c)) => format!("{}:{l}:{c}: {}", self.file, self.message),
            _ => format!("{}: {}", self.file, self.message),
        }
    }
}

/// A ruleset or content named by a file that was not found: where it was looked for.
#[derive(Clone, Debug)]
pub enum Missing {
    /// Written as a path, which does not exist.
    Path,
    /// Written as a name: each place looked, with why it was looked at.
    Name(Vec<String>),
}

/// The extension of ruleset files (`.rules`).
pub const RULESET_EXT: &str = "rules";
/// The extension of content files (`.cards`).
pub const CONTENT_EXT: &str = "cards";
/// The extension of scenario files (`.scenario`).
pub const SCENARIO_EXT: &str = "scenario";

impl Loader {
    /// A loader with nothing loaded, no warnings and no search folders.
    pub fn new() -> Self {
        Self::default()
    }

    /// A loader for other people's text: it reads only under the confinement's folders, within its
    /// limits (`crate::confine`).
    pub fn confined(limits: Confinement) -> Loader {
        Loader {
            confine: Some(Guard::new(limits)),
            ..Loader::default()
        }
    }

    /// The confinement, for a confined loader.
    pub fn confinement(&self) -> Option<&Confinement> {
        self.confine.as_ref().map(|g| g.limits())
    }

    /// Uses `text` as the file's text instead of what is on disk (an editor's unsaved buffer),
    /// until [`Loader::forget_text`]. Files already loaded are not loaded again: use a new loader.
    pub fn set_text(&mut self, path: &Path, text: String) {
        self.overlay.insert(full_path(path), text);
    }

    /// Reads the file from disk again.
    pub fn forget_text(&mut self, path: &Path) {
        self.overlay.remove(&full_path(path));
    }

    /// Runs a scenario; a confined loader stops it past the confinement's limits
    /// ([`Confinement::run`]).
    pub fn run(&self, env: &Env, sc: &Scenario) -> crate::scenario::Report {
        match &self.confine {
            Some(g) => g.limits().run(env, sc),
            None => crate::scenario::run(env, sc, None),
        }
    }

    /// A file's bytes: the text set for it, or the file on disk if a confined loader may read it.
    pub(crate) fn read_source(
        &mut self,
        path: &Path,
        at: Option<Span>,
    ) -> Result<Vec<u8>, LoadError> {
        if !self.overlay.is_empty() {
            if let Some(t) = self.overlay.get(&full_path(path)) {
                return Ok(t.clone().into_bytes());
            }
        }
        let read = match &mut self.confine {
            Some(g) => g.read(path),
            None => std::fs::read(path).map_err(|e| e.to_string()),
        };
        read.map_err(|message| LoadError::Io {
            path: path.to_path_buf(),
            message,
            at,
        })
    }

    /// For a confined loader, whether `from` may name a file as `written`, found at `found`.
    fn admit(
        &self,
        from: &Path,
        written: &str,
        at: Span,
        found: Option<&Path>,
    ) -> Result<(), Diagnostic> {
        // A text set in memory is one the caller gave this loader: inside its confinement.
        let found = found.filter(|f| !self.view().holds(f));
        match &self.confine {
            Some(g) => g.admit(from, written, at, found),
            None => Ok(()),
        }
    }

    /// Renders an error for the terminal: `file:line:col: message`, the line and a caret.
    pub fn render(&self, e: &LoadError) -> String {
        match e {
            LoadError::Diag(d) => self.map.render(d),
            LoadError::Io { path, message, at } => match at {
                Some(sp) => format!(
                    "{}: cannot read {}: {message}",
                    self.map.location(*sp),
                    path.display()
                ),
                None => format!("{}: cannot read: {message}", path.display()),
            },
        }
    }

    /// Keeps warnings not kept before.
    fn warn(&mut self, list: Vec<Diagnostic>) {
        for w in list {
            if !self.warnings.contains(&w) {
                self.warnings.push(w);
            }
        }
    }

    /// The warnings in their one-line form: `file:line:col: warning: message`.
    pub fn warning_lines(&self) -> Vec<String> {
        self.warnings.iter().map(|w| self.map.warning(w)).collect()
    }

    /// The one-line form of an error.
    pub fn short(&self, e: &LoadError) -> String {
        match e {
            LoadError::Diag(d) => self.map.short(d),
            other => self.render(other),
        }
    }

    /// An error's parts, for structured output.
    pub fn located(&self, e: &LoadError) -> Located {
        match e {
            LoadError::Diag(d) => {
                let (file, line, column) = self.map.place(d.span);
                Located {
                    file,
                    line: Some(line),
                    column: Some(column),
                    message: self.map.message(d),
                    help: d.help.clone(),
                }
            }
            LoadError::Io { path, message, at } => match at {
                Some(sp) => {
                    let (file, line, column) = self.map.place(*sp);
                    Located {
                        file,
                        line: Some(line),
                        column: Some(column),
                        message: format!("cannot read {}: {message}", path.display()),
                        help: None,
                    }
                }
                None => Located::file(path, format!("cannot read: {message}")),
            },
        }
    }

    /// Parses a file into statements.
    pub fn parse_file(&mut self, path: &Path, at: Option<Span>) -> Result<Vec<Stmt>, LoadError> {
        let bytes = self.read_source(path, at)?;
        // A byte-order mark says the file is UTF-8; it is no part of the text.
        const BOM: &[u8] = "\u{feff}".as_bytes();
        let skipped = if bytes.starts_with(BOM) { BOM.len() } else { 0 };
        let bytes = &bytes[skipped..];
        let text = match std::str::from_utf8(bytes) {
            Ok(t) => t.to_string(),
            Err(e) => {
                // The text up to the bad byte is kept, so the error names its line and column.
                // In the lossy text the bad bytes are one U+FFFD, three bytes long.
                let off = e.valid_up_to();
                let id = self
                    .map
                    .add(path, String::from_utf8_lossy(bytes).into_owned());
                return Err(Diagnostic::new(
                    Span::new(id, off, off + '\u{fffd}'.len_utf8()),
                    format!(
                        "not UTF-8 text: the byte 0x{:02X} at byte offset {} is not valid UTF-8; save the file as UTF-8",
                        bytes[off],
                        skipped + off
                    ),
                )
                .into());
            }
        };
        let id = self.map.add(path, text);
        let text = self.map.text(id).to_string();
        Ok(parse(id, &text)?)
    }

    /// Loads a ruleset file (once).
    pub fn ruleset(&mut self, path: &Path, at: Option<Span>) -> Result<Arc<Env>, LoadError> {
        let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
        if let Some(e) = self.rulesets.get(&key) {
            return Ok(e.clone());
        }
        let stmts = self.parse_file(path, at)?;
        let file = self.map.find(path).unwrap_or(0);
        let env = Arc::new(lruleset::lower(file, &stmts)?);
        // A ruleset's terms name the game's vocabulary: no warnings there.
        env.notes.take();
        self.rulesets.insert(key, env.clone());
        Ok(env)
    }

    /// Loads content files against a ruleset (once per pair), with warnings about them.
    pub fn content(
        &mut self,
        env: &Env,
        ruleset: &Path,
        files: &[PathBuf],
        at: Option<Span>,
    ) -> Result<Arc<Content>, LoadError> {
        let lib = self.library(env, ruleset, files, at)?;
        self.warn(unnamed_symbols(&env.ruleset, &lib.content, &[], &lib.notes));
        Ok(lib.content)
    }

    /// Loads content files against a ruleset (once per pair): the terms of every file first, so
    /// that every class may use them, then the classes.
    fn library(
        &mut self,
        env: &Env,
        ruleset: &Path,
        files: &[PathBuf],
        at: Option<Span>,
    ) -> Result<Library, LoadError> {
        let key = (ruleset.to_path_buf(), files.to_vec());
        if let Some(lib) = self.contents.get(&key) {
            return Ok(lib.clone());
        }
        let mut ext = env.clone();
        let mut parsed = Vec::new();
        for f in files {
            let stmts = self.parse_file(f, at)?;
            lcontent::terms(&mut ext, &stmts)?;
            parsed.push(stmts);
        }
        let mut content = Content::default();
        let mut defined = std::collections::HashMap::new();
        for stmts in &parsed {
            lcontent::lower(&ext, stmts, &mut content, &mut defined)?;
        }
        ext.class_refs.check(&content)?;
        let notes = ext.notes.take();
        let lib = Library {
            content: Arc::new(content),
            env: Arc::new(ext),
            notes,
        };
        self.contents.insert(key, lib.clone());
        Ok(lib)
    }

    /// A new game with no objects: a ruleset file, content files or folders (every `.cards` file
    /// in them), and the players in turn order.
    pub fn game(
        &mut self,
        ruleset: &Path,
        content: &[&Path],
        players: &[&str],
    ) -> Result<GameState, LoadError> {
        let env = self.ruleset(ruleset, None)?;
        // A text set in memory (`set_text`) is a file there, on disk or not.
        let files: Vec<PathBuf> = content
            .iter()
            .flat_map(|p| match self.overlay.contains_key(&full_path(p)) {
                true => vec![p.to_path_buf()],
                false => self.view().files_with_ext(p, CONTENT_EXT),
            })
            .collect();
        let content = self.content(&env, ruleset, &files, None)?;
        Ok(GameState::new(
            Arc::new(env.ruleset.clone()),
            content,
            players,
        ))
    }

    /// Finds a ruleset (`folder` "rulesets") or content ("content") that `from` names by name or
    /// path: a path is relative to the folder of `from`; a name is looked up in the project above
    /// `from`, then in the search folders ([`project_roots`]).
    pub fn locate(
        &self,
        from: &Path,
        name: &str,
        folder: &str,
        ext: &str,
    ) -> Result<PathBuf, Missing> {
        let view = self.view();
        locate_in(
            &view,
            &roots_in(&view, from, &self.search),
            from,
            name,
            folder,
            ext,
        )
    }

    /// Where this loader finds files: for a confined loader, its texts set in memory are files too.
    fn view(&self) -> View<'_> {
        View {
            memory: self.confine.as_ref().map(|_| &self.overlay),
        }
    }

    /// Loads every scenario in a file.
    pub fn scenarios(&mut self, path: &Path) -> Result<Vec<(Arc<Env>, Scenario)>, LoadError> {
        let stmts = self.parse_file(path, None)?;
        let mut out = Vec::new();
        for s in &stmts {
            if !s.head[0].is_word("scenario") {
                let c = crate::lower::cursor::Cursor::new(&s.head);
                return Err(c.err("`scenario \"name\" { ... }`").into());
            }
            let header = lsc::header(s)?;
            let (rname, rspan) = header
                .ruleset
                .clone()
                .expect("header checks the ruleset is named");
            let rpath = self
                .locate(path, &rname, "rulesets", RULESET_EXT)
                .map_err(|m| Diagnostic::new(rspan, missing_message(&rname, RULESET_EXT, &m)));
            self.admit(path, &rname, rspan, rpath.as_deref().ok())?;
            let rpath = rpath?;
            let env = self.ruleset(&rpath, Some(rspan))?;
            let mut files = Vec::new();
            for (cname, cspan) in &header.content {
                let p = self
                    .locate(path, cname, "content", CONTENT_EXT)
                    .map_err(|m| Diagnostic::new(*cspan, missing_message(cname, CONTENT_EXT, &m)));
                self.admit(path, cname, *cspan, p.as_deref().ok())?;
                let p = p?;
                files.extend(self.view().files_with_ext(&p, CONTENT_EXT));
            }
            let lib = self.library(&env, &rpath, &files, header.content.first().map(|c| c.1))?;
            let sc = lsc::lower(&lib.env, &lib.content, s, header)?;
            let mut notes = lib.notes.clone();
            notes.extend(lib.env.notes.take());
            self.warn(unnamed_symbols(
                &env.ruleset,
                &sc.content,
                &choices_of(&sc),
                &notes,
            ));
            out.push((lib.env, sc));
        }
        Ok(out)
    }
}

/// A path with its links followed where it exists: the key of a text set with
/// [`Loader::set_text`].
fn full_path(path: &Path) -> PathBuf {
    path.canonicalize().unwrap_or_else(|_| path.to_path_buf())
}

/// The project root above `from`: the nearest folder holding `rulesets/`.
pub fn root_of(from: &Path) -> Option<PathBuf> {
    root_in(&View { memory: None }, from)
}

/// [`root_of`] as a loader sees files ([`View`]).
fn root_in(view: &View, from: &Path) -> Option<PathBuf> {
    // Relative paths stay relative (messages name files as the user wrote them).
    let is_root = |d: &Path| {
        let probe = if d.as_os_str().is_empty() {
            Path::new(".")
        } else {
            d
        };
        view.is_dir(&probe.join("rulesets"))
    };
    if let Some(d) = from.ancestors().skip(1).find(|d| is_root(d)) {
        return Some(d.to_path_buf());
    }
    let start = from.canonicalize().ok()?;
    start
        .ancestors()
        .find(|d| is_root(d))
        .map(|d| d.to_path_buf())
}

/// A name or path as a scenario writes it, looked up in its own project only (see
/// [`Loader::locate`]).
pub fn resolve(from: &Path, name: &str, folder: &str, ext: &str) -> Option<PathBuf> {
    let view = View { memory: None };
    locate_in(&view, &roots_in(&view, from, &[]), from, name, folder, ext).ok()
}

/// The project folders a name in `from` is looked up in, in order, each with why: the project
/// above `from` (or, for a file outside any project, the working folder's), then `search`.
pub fn project_roots(from: &Path, search: &[SearchDir]) -> Vec<(PathBuf, &'static str)> {
    roots_in(&View { memory: None }, from, search)
}

/// [`project_roots`] as a loader sees files ([`View`]).
fn roots_in(view: &View, from: &Path, search: &[SearchDir]) -> Vec<(PathBuf, &'static str)> {
    let own = match root_in(view, from) {
        Some(r) => Some((r, "this project")),
        // A file outside any project (a user's own folder) uses the working folder's project.
        None => root_in(view, &Path::new(".").join("here")).map(|r| (r, "the working folder")),
    };
    own.into_iter()
        .chain(search.iter().map(|d| (d.path.clone(), d.origin)))
        .collect()
}

/// A path (relative to the folder of `from`) if the text is one, else `ROOT/FOLDER/NAME.EXT` or
/// `ROOT/FOLDER/NAME/` in the first of `roots` that has it.
fn locate_in(
    view: &View,
    roots: &[(PathBuf, &'static str)],
    from: &Path,
    name: &str,
    folder: &str,
    ext: &str,
) -> Result<PathBuf, Missing> {
    // Content may be a folder of files; a ruleset is one file.
    let folder_ok = folder != "rulesets";
    if is_path(name, ext) {
        let rel = from.parent().unwrap_or(Path::new(".")).join(name);
        return if view.is_file(&rel) || (view.is_dir(&rel) && folder_ok) {
            Ok(rel)
        } else {
            Err(Missing::Path)
        };
    }
    let mut looked = Vec::new();
    for (root, why) in roots {
        let file = root.join(folder).join(format!("{name}.{ext}"));
        if view.is_file(&file) {
            return Ok(file);
        }
        let d = root.join(folder).join(name);
        if view.is_dir(&d) && folder_ok {
            return Ok(d);
        }
        looked.push(if folder_ok {
            format!("{} and {}/ ({why})", file.display(), d.display())
        } else {
            format!("{} ({why})", file.display())
        });
    }
    Err(Missing::Name(looked))
}

/// The message for a ruleset (`ext` "rules") or content ("cards") that was not found.
pub fn missing_message(name: &str, ext: &str, m: &Missing) -> String {
    let (kind, file_kind) = if ext == RULESET_EXT {
        ("ruleset", format!("a path to a .{ext} file"))
    } else {
        ("content", "a path to a file or folder".to_string())
    };
    match m {
        Missing::Path if ext == RULESET_EXT => format!(
            "no ruleset file `{name}`: expected a path to a .{ext} file, relative to this file's folder"
        ),
        Missing::Path => format!(
            "no content file or folder `{name}`: expected a path relative to this file's folder"
        ),
        Missing::Name(looked) if looked.is_empty() => format!(
            "no {kind} `{name}`: no project folder (one holding rulesets/) above this file or the working folder; name one with --include DIR or RULECRAFT_PATH, or give {file_kind}"
        ),
        Missing::Name(looked) => format!(
            "no {kind} `{name}`: looked for {}; name another project folder with --include DIR or RULECRAFT_PATH, or give {file_kind}",
            looked.join(", ")
        ),
    }
}

/// Whether a scenario's name for a file is a path rather than a name to look up.
fn is_path(name: &str, ext: &str) -> bool {
    name.contains('/') || name.ends_with(&format!(".{ext}"))
}

/// Every file with the extension under a path (the path itself if a file), sorted.
pub fn files_with_ext(p: &Path, ext: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if p.is_file() {
        out.push(p.to_path_buf());
    } else if let Ok(rd) = std::fs::read_dir(p) {
        let mut entries: Vec<PathBuf> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
        entries.sort();
        for e in entries {
            if e.is_dir() {
                out.extend(files_with_ext(&e, ext));
            } else if e.extension().is_some_and(|x| x == ext) {
                out.push(e);
            }
        }
    }
    out
}

/// Files as a loader sees them: the disk, and for a confined loader the texts set in memory
/// ([`Loader::set_text`]) as files in their folders. A loader confined to no folder at all sees
/// those texts alone (a playground in the browser, where there is no disk).
struct View<'a> {
    memory: Option<&'a HashMap<PathBuf, String>>,
}

impl View<'_> {
    /// Whether the path is a text set in memory.
    fn in_memory(&self, p: &Path) -> bool {
        self.memory
            .is_some_and(|m| m.contains_key(&full_path(&plain(p))))
    }
    /// Whether the path is a folder holding texts set in memory.
    fn folder_in_memory(&self, p: &Path) -> bool {
        let d = full_path(&plain(p));
        self.memory
            .is_some_and(|m| m.keys().any(|k| k.starts_with(&d) && *k != d))
    }
    /// Whether the path is a text or a folder of texts set in memory.
    fn holds(&self, p: &Path) -> bool {
        self.in_memory(p) || self.folder_in_memory(p)
    }
    fn is_file(&self, p: &Path) -> bool {
        self.in_memory(p) || p.is_file()
    }
    /// A folder on disk, or one holding a text set in memory.
    fn is_dir(&self, p: &Path) -> bool {
        self.folder_in_memory(p) || p.is_dir()
    }
    /// [`files_with_ext`], with the texts in memory under the path.
    fn files_with_ext(&self, p: &Path, ext: &str) -> Vec<PathBuf> {
        let mut out = files_with_ext(p, ext);
        let Some(m) = self.memory else {
            return out;
        };
        let d = full_path(&plain(p));
        if m.contains_key(&d) {
            return vec![p.to_path_buf()];
        }
        let disk = out.len();
        for k in m.keys() {
            if k.starts_with(&d) && k.extension().is_some_and(|x| x == ext) && !out.contains(k) {
                out.push(k.clone());
            }
        }
        if out.len() > disk {
            out.sort();
        }
        out
    }
}

/// A path without its `.` parts (`./rulesets` is `rulesets`).
fn plain(p: &Path) -> PathBuf {
    p.components()
        .filter(|c| *c != std::path::Component::CurDir)
        .collect()
}

/// Every choice a scenario makes (as objects enter, as spells are cast).
fn choices_of(sc: &Scenario) -> Vec<rulecraft_core::Symbol> {
    let mut out = Vec::new();
    for step in &sc.steps {
        match &step.kind {
            StepKind::Enter(e) => out.extend(e.choices.iter().cloned()),
            StepKind::EnterTogether(list) => {
                out.extend(list.iter().flat_map(|e| e.choices.iter().cloned()))
            }
            StepKind::Cast { choices, .. } => out.extend(choices.iter().cloned()),
            _ => {}
        }
    }
    out
}
