//! Deck lists: one line per card, `COPIES NAME` (`20 Mountain`, `4 "Lightning Bolt"`), `#` to
//! the end of a line a comment. A name is the rest of the line, or a quoted text (which may hold
//! `#`). Errors name `file:line:col`; a card the content does not have is reported with the
//! closest name it has.

use crate::diagnostics::{Diagnostic, FileId, Span};
use crate::loader::{LoadError, Loader};
use crate::lower::cursor::unknown;
use rulecraft_core::model::content::Content;
use std::path::Path;

/// The extension of deck files (`.deck`).
pub const DECK_EXT: &str = "deck";

/// One line of a deck list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeckEntry {
    /// The card's name.
    pub name: String,
    /// How many copies.
    pub copies: u32,
    /// Where the name is written.
    pub span: Span,
}

/// A deck list as its file gives it, in order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Deck {
    /// The entries, one per line.
    pub entries: Vec<DeckEntry>,
}

impl Deck {
    /// The list as [`rulecraft_core::GameState::deal`] takes it, each name checked against the
    /// content: an unknown card is an error at its line, with a did-you-mean.
    pub fn check(&self, content: &Content) -> Result<Vec<(String, u32)>, Diagnostic> {
        let mut out = Vec::with_capacity(self.entries.len());
        for e in &self.entries {
            if content.class_id(&e.name).is_none() {
                return Err(unknown(
                    e.span,
                    "card",
                    &e.name,
                    content.classes.iter().map(|c| c.name.as_str()),
                ));
            }
            out.push((e.name.clone(), e.copies));
        }
        Ok(out)
    }
}

/// Reads and parses a deck file, keeping its text in the loader's map for diagnostics.
pub fn read_deck(loader: &mut Loader, path: &Path) -> Result<Deck, LoadError> {
    let bytes = loader.read_source(path, None)?;
    let text = match String::from_utf8(bytes) {
        Ok(t) => t,
        Err(e) => {
            let off = e.utf8_error().valid_up_to();
            let byte = e.as_bytes()[off];
            let id = loader
                .map
                .add(path, String::from_utf8_lossy(e.as_bytes()).into_owned());
            return Err(Diagnostic::new(
                Span::new(id, off, off + '\u{fffd}'.len_utf8()),
                format!("not UTF-8 text: the byte 0x{byte:02X} is not valid UTF-8; save the file as UTF-8"),
            )
            .into());
        }
    };
    // A byte-order mark says the file is UTF-8; it is no part of the text.
    let text = text.strip_prefix('\u{feff}').unwrap_or(&text).to_string();
    let id = loader.map.add(path, text);
    let text = loader.map.text(id).to_string();
    Ok(parse_deck(id, &text)?)
}

/// Parses a deck list's text (file `file` of a source map).
pub fn parse_deck(file: FileId, text: &str) -> Result<Deck, Diagnostic> {
    let mut entries = Vec::new();
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        let at = start;
        start += line.len();
        if let Some(e) = entry(file, at, line.trim_end_matches(['\n', '\r']))? {
            entries.push(e);
        }
    }
    if entries.is_empty() {
        let end = text.len();
        return Err(Diagnostic::new(
            Span::new(file, end, end),
            "the deck lists no cards: expected lines such as `20 Mountain`",
        ));
    }
    Ok(Deck { entries })
}

/// One line (without its line break), starting at byte `at`: an entry, or none for a blank or
/// comment line.
fn entry(file: FileId, at: usize, line: &str) -> Result<Option<DeckEntry>, Diagnostic> {
    let span = |from: usize, to: usize| Span::new(file, at + from, at + to);
    let skip_ws = |i: usize| {
        i + line[i..]
            .find(|c: char| !c.is_whitespace())
            .unwrap_or(line.len() - i)
    };
    let i = skip_ws(0);
    if i == line.len() || line[i..].starts_with('#') {
        return Ok(None);
    }
    let digits_end = i + line[i..]
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(line.len() - i);
    if digits_end == i {
        let word_end = i + line[i..]
            .find(char::is_whitespace)
            .unwrap_or(line.len() - i);
        return Err(Diagnostic::new(
            span(i, word_end),
            format!(
                "expected a number of copies, then a card name (`20 Mountain`), found `{}`",
                &line[i..word_end]
            ),
        ));
    }
    let copies: u32 =
        match line[i..digits_end].parse() {
            Ok(n) if n > 0 => n,
            Ok(_) => return Err(Diagnostic::new(
                span(i, digits_end),
                "a deck holds at least one copy of each card it lists: expected a number from 1",
            )),
            Err(_) => {
                return Err(Diagnostic::new(
                    span(i, digits_end),
                    format!("too many copies: at most {}", u32::MAX),
                ))
            }
        };
    let n = skip_ws(digits_end);
    if n == digits_end && n < line.len() {
        return Err(Diagnostic::new(
            span(n, n + line[n..].chars().next().map_or(0, char::len_utf8)),
            "expected a space between the number of copies and the card name",
        ));
    }
    if n == line.len() || line[n..].starts_with('#') {
        return Err(Diagnostic::new(
            span(n, n),
            "expected a card name after the number of copies",
        ));
    }
    let (name, name_span, after) = if let Some(rest) = line[n..].strip_prefix('"') {
        let Some(close) = rest.find('"') else {
            return Err(Diagnostic::new(
                span(n, line.len()),
                "a quoted card name is not closed: expected `\"` before the end of the line",
            ));
        };
        let end = n + 1 + close;
        (&line[n + 1..end], span(n, end + 1), end + 1)
    } else {
        let end = line[n..].find('#').map_or(line.len(), |k| n + k);
        let name = line[n..end].trim_end();
        (name, span(n, n + name.len()), end)
    };
    if name.trim().is_empty() {
        return Err(Diagnostic::new(name_span, "the card name is empty"));
    }
    let rest = skip_ws(after);
    if rest < line.len() && !line[rest..].starts_with('#') {
        return Err(Diagnostic::new(
            span(rest, line.len()),
            "unexpected text after the quoted card name: expected the end of the line or a `#` comment",
        ));
    }
    Ok(Some(DeckEntry {
        name: name.to_string(),
        copies,
        span: name_span,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_comments_and_quoted_names() {
        let d = parse_deck(
            0,
            "# burn\n20 Mountain\n\n  4 \"Lightning # Bolt\" # odd\n36 Lightning Bolt # more\n",
        )
        .unwrap();
        let got: Vec<(&str, u32)> = d
            .entries
            .iter()
            .map(|e| (e.name.as_str(), e.copies))
            .collect();
        assert_eq!(
            got,
            [
                ("Mountain", 20),
                ("Lightning # Bolt", 4),
                ("Lightning Bolt", 36)
            ]
        );
        assert_eq!(d.entries[0].span, Span::new(0, 10, 18));
    }

    #[test]
    fn bad_lines_are_errors_at_their_place() {
        for (text, start, msg) in [
            ("Mountain\n", 0, "expected a number of copies"),
            ("20\n", 2, "expected a card name"),
            ("0 Mountain\n", 0, "at least one copy"),
            ("20Mountain\n", 2, "expected a space"),
            ("2 \"Bolt\n", 2, "not closed"),
            ("2 \"Bolt\" x\n", 9, "unexpected text"),
            ("# nothing\n", 10, "no cards"),
            ("99999999999 Mountain", 0, "too many"),
        ] {
            let e = parse_deck(0, text).unwrap_err();
            assert_eq!(e.span.start, start, "{text:?}: {e:?}");
            assert!(e.message.contains(msg), "{text:?}: {}", e.message);
        }
    }

    #[test]
    fn any_cut_of_a_deck_parses_or_fails_without_panicking() {
        let text = "# Brûlure\n20 Montagne élevée\n  4 \"Éclair # x\" # c\n\t7\u{a0}Bolt\n";
        for cut in (0..=text.len()).filter(|&c| text.is_char_boundary(c)) {
            let _ = parse_deck(0, &text[..cut]);
        }
    }
}
