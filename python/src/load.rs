//! A game's ruleset and content as texts, loaded through the language's loader: from files, from
//! text, or the classic ruleset built into the module. A game keeps its texts, so it can be
//! pickled and loaded again on another machine (a Ray worker) without the project's folders.

use rulecraft_core::GameState;
use rulecraft_lang::deck::parse_deck;
use rulecraft_lang::loader::{files_with_ext, LoadError, Loader, CONTENT_EXT};
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// A file's name (as error messages name it) and its text.
pub type Source = (String, String);

/// The classic ruleset and its content (content/classic), built in.
pub fn classic() -> (Source, Vec<Source>) {
    let s = |name: &str, text: &str| (name.to_string(), text.to_string());
    (
        s(
            "rulesets/classic.rules",
            include_str!("../../rulesets/classic.rules"),
        ),
        vec![
            s(
                "content/classic/basic.cards",
                include_str!("../../content/classic/basic.cards"),
            ),
            s(
                "content/classic/phases.cards",
                include_str!("../../content/classic/phases.cards"),
            ),
            s(
                "content/classic/specialized.cards",
                include_str!("../../content/classic/specialized.cards"),
            ),
        ],
    )
}

/// The bolt deck (decks/bolt.deck), built in: the benchmark's deck for the classic ruleset.
pub const BOLT: &str = include_str!("../../decks/bolt.deck");

/// Reads a file.
pub fn read(path: &Path) -> Result<Source, String> {
    std::fs::read_to_string(path)
        .map(|t| (path.display().to_string(), t))
        .map_err(|e| format!("{}: cannot read: {e}", path.display()))
}

/// The content files a path names: the file, or every `.cards` file under a folder.
pub fn content_files(path: &Path) -> Result<Vec<Source>, String> {
    let files = files_with_ext(path, CONTENT_EXT);
    if files.is_empty() {
        return Err(format!(
            "{}: no such file, or no .{CONTENT_EXT} files in this folder",
            path.display()
        ));
    }
    files.iter().map(|f| read(f)).collect()
}

/// A ruleset, content or deck named as the `rulecraft` command names it: a path, or a name looked
/// up in the project above the working folder (`rulesets/NAME.rules`, `content/NAME`).
pub fn locate(name: &str, folder: &str, ext: &str) -> Option<PathBuf> {
    if Path::new(name).exists() {
        return Some(PathBuf::from(name));
    }
    Loader::new()
        .locate(&Path::new(".").join("here"), name, folder, ext)
        .ok()
}

/// An error's message: `file:line:col: message`, then the line with a caret.
fn message(loader: &Loader, e: &LoadError) -> String {
    let short = loader.short(e);
    let full = loader.render(e);
    if full.trim() == short.trim() {
        short
    } else {
        format!("{short}\n{full}")
    }
}

/// A new game with no objects, from the texts of a ruleset and its content files.
pub fn game(ruleset: &Source, content: &[Source], players: &[&str]) -> Result<GameState, String> {
    let mut loader = Loader::new();
    loader.set_text(Path::new(&ruleset.0), ruleset.1.clone());
    for (name, text) in content {
        loader.set_text(Path::new(name), text.clone());
    }
    let rpath = Path::new(&ruleset.0);
    let env = loader
        .ruleset(rpath, None)
        .map_err(|e| message(&loader, &e))?;
    let files: Vec<PathBuf> = content.iter().map(|(n, _)| PathBuf::from(n)).collect();
    let lib = loader
        .content(&env, rpath, &files, None)
        .map_err(|e| message(&loader, &e))?;
    Ok(GameState::new(Arc::new(env.ruleset.clone()), lib, players))
}

/// A deck list's text checked against a game's content: each card by name, with its copies.
pub fn deck(name: &str, text: &str, state: &GameState) -> Result<Vec<(String, u32)>, String> {
    let mut loader = Loader::new();
    let id = loader.map.add(Path::new(name), text.to_string());
    parse_deck(id, text)
        .and_then(|d| d.check(state.content()))
        .map_err(|d| message(&loader, &LoadError::Diag(d)))
}
