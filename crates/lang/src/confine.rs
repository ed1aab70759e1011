//! Confined loading, for other people's text: a playground, a rules-question bot, a server.
//!
//! A scenario may name any file as its ruleset or content. For one's own files that is what is
//! wanted (`Loader::new`). A loader made with `Loader::confined` instead reads only files
//! under the folders it is given, refuses absolute paths and `..` that leave those folders (and
//! files that are links to places outside them) without reading or quoting what it refused, and
//! bounds the input: the size of each file and of all files read. [`Confinement::run`] (and
//! `Loader::run`) runs a scenario
//! within a bound on the occurrences logged and on time. Nesting and the size of each condition are
//! bounded in either mode (`syntax::MAX_BLOCK_DEPTH`, `lower::cond::MAX_PARTS`).

use crate::diagnostics::{Diagnostic, Span};
use crate::lower::scenario::Scenario;
use crate::lower::Env;
use crate::scenario::{run_with, Report};
use rulecraft_core::model::clock::Instant;
use rulecraft_core::GameState;
use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

/// The default limit on one file's size, in bytes.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// The default limit on the bytes of all files a loader reads.
pub const MAX_TOTAL_BYTES: u64 = 8 << 20;
/// The default limit on the entries of a scenario's log (occurrences, responses and their steps).
pub const MAX_LOGGED: usize = 100_000;
/// The default limit on the time a scenario runs, and on the time a loader spends reading.
pub const MAX_TIME: Duration = Duration::from_secs(5);

/// What a confined loader may read, and how much work it may do.
#[derive(Clone, Debug)]
pub struct Confinement {
    roots: Vec<PathBuf>,
    /// The largest file read, in bytes.
    pub max_file_bytes: u64,
    /// The most bytes read in all, over every file.
    pub max_total_bytes: u64,
    /// The most entries a scenario's log may hold: a step after which it holds more stops the
    /// scenario.
    pub max_logged: usize,
    /// The longest a scenario may run (checked after each step), and the longest a loader may go
    /// on reading files after it was made.
    pub max_time: Duration,
}

impl Confinement {
    /// Reading only under `roots` (folders that exist), with the default limits.
    pub fn new<P: AsRef<Path>>(roots: &[P]) -> Result<Confinement, String> {
        let mut out = Vec::new();
        for r in roots {
            let r = r.as_ref();
            match r.canonicalize() {
                Ok(c) if c.is_dir() => out.push(c),
                Ok(_) => return Err(format!("{}: not a folder", r.display())),
                Err(e) => return Err(format!("{}: {e}", r.display())),
            }
        }
        Ok(Confinement {
            roots: out,
            max_file_bytes: MAX_FILE_BYTES,
            max_total_bytes: MAX_TOTAL_BYTES,
            max_logged: MAX_LOGGED,
            max_time: MAX_TIME,
        })
    }

    /// The folders files may be read from, as full paths without links.
    pub fn roots(&self) -> &[PathBuf] {
        &self.roots
    }

    /// Whether a full path without links is under one of the roots.
    fn holds(&self, path: &Path) -> bool {
        self.roots.iter().any(|r| path.starts_with(r))
    }
}

/// A confinement and what has been read under it so far.
#[derive(Clone, Debug)]
pub(crate) struct Guard {
    limits: Confinement,
    read: u64,
    since: Instant,
}

/// The words every refusal ends with.
const CONFINED: &str = "the folders this loader may read (confined mode)";

impl Guard {
    /// A guard with nothing read yet, its clock started.
    pub(crate) fn new(limits: Confinement) -> Guard {
        Guard {
            limits,
            read: 0,
            since: Instant::now(),
        }
    }

    /// The limits.
    pub(crate) fn limits(&self) -> &Confinement {
        &self.limits
    }

    /// A file's bytes, if the confinement allows reading it; else why not, quoting nothing of it.
    pub(crate) fn read(&mut self, path: &Path) -> Result<Vec<u8>, String> {
        let limits = &self.limits;
        if self.since.elapsed() > limits.max_time {
            return Err(format!(
                "refused: loading took longer than the limit of {} ms",
                limits.max_time.as_millis()
            ));
        }
        // Links are followed before the check, so a link inside to a file outside is refused.
        match path.canonicalize() {
            Ok(full) if limits.holds(&full) => {}
            _ => return Err(format!("refused: outside {CONFINED}")),
        }
        let mut bytes = Vec::new();
        // One byte past the limit tells a file at the limit from a larger one.
        std::fs::File::open(path)
            .and_then(|f| f.take(limits.max_file_bytes + 1).read_to_end(&mut bytes))
            .map_err(|e| e.to_string())?;
        let n = bytes.len() as u64;
        if n > limits.max_file_bytes {
            return Err(format!(
                "refused: larger than the limit of {} bytes for one file (confined mode)",
                limits.max_file_bytes
            ));
        }
        if self.read + n > limits.max_total_bytes {
            return Err(format!(
                "refused: reading it would pass the limit of {} bytes read in all (confined mode)",
                limits.max_total_bytes
            ));
        }
        self.read += n;
        Ok(bytes)
    }

    /// Whether a file may be named as `written` in the file `from` and found at `found`: an
    /// absolute path is refused, and so is a path whose `..` leaves the confinement's folders,
    /// before anything there is looked at; then the file or folder found must be inside them
    /// (after following links). The messages quote only what `from` wrote.
    pub(crate) fn admit(
        &self,
        from: &Path,
        written: &str,
        at: Span,
        found: Option<&Path>,
    ) -> Result<(), Diagnostic> {
        let w = Path::new(written);
        if w.has_root() || w.is_absolute() || written.starts_with('\\') {
            return Err(Diagnostic::new(
                at,
                format!("refused: `{written}` is an absolute path; in confined mode name a file by a path relative to this file's folder, inside {CONFINED}"),
            ));
        }
        if w.components().any(|c| c == Component::ParentDir) {
            let base = from
                .parent()
                .filter(|p| !p.as_os_str().is_empty())
                .unwrap_or(Path::new("."));
            let inside = base
                .canonicalize()
                .ok()
                .and_then(|b| lexical_join(&b, w))
                .is_some_and(|p| self.limits.holds(&p));
            if !inside {
                return Err(Diagnostic::new(
                    at,
                    format!("refused: `{written}` leaves {CONFINED}"),
                ));
            }
        }
        if let Some(f) = found {
            if !f.canonicalize().is_ok_and(|full| self.limits.holds(&full)) {
                return Err(Diagnostic::new(
                    at,
                    format!("refused: `{written}` is outside {CONFINED}"),
                ));
            }
        }
        Ok(())
    }
}

impl Confinement {
    /// Runs a scenario, stopped after the first step that leaves more than `max_logged` log
    /// entries or takes the run past `max_time`.
    pub fn run(&self, env: &Env, sc: &Scenario) -> Report {
        let (max_logged, max_time) = (self.max_logged, self.max_time);
        let start = Instant::now();
        let mut check = move |s: &GameState| -> Result<GameState, String> {
            if s.log().len() > max_logged {
                return Err(format!(
                    "stopped: the log holds more than {max_logged} entries, the limit of confined mode"
                ));
            }
            if start.elapsed() > max_time {
                return Err(format!(
                    "stopped: the scenario ran longer than the limit of {} ms of confined mode",
                    max_time.as_millis()
                ));
            }
            Ok(s.clone())
        };
        run_with(env, sc, None, Some(&mut check))
    }
}

/// `base` joined with a relative path, `.` and `..` worked out on the text alone (none above the
/// top: `None`).
fn lexical_join(base: &Path, rel: &Path) -> Option<PathBuf> {
    let mut out = base.to_path_buf();
    for c in rel.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::Normal(n) => out.push(n),
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    Some(out)
}
