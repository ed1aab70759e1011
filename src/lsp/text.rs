//! Places in a text as the Language Server Protocol counts them (lines from 0, columns in UTF-16
//! code units), and `file:` URIs.

use lsp_types::{Position, Range, Uri};
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// The LSP position of a byte offset (an offset inside a character counts as its start).
pub fn position(text: &str, offset: usize) -> Position {
    let offset = offset.min(text.len());
    let before = &text[..floor_char(text, offset)];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = before.matches('\n').count();
    let col: usize = before[line_start..].chars().map(char::len_utf16).sum();
    Position::new(line as u32, col as u32)
}

/// The range of the bytes `start..end`.
pub fn range(text: &str, start: usize, end: usize) -> Range {
    Range::new(position(text, start), position(text, end.max(start)))
}

/// The byte offset of an LSP position (clamped to its line and to the text).
pub fn offset(text: &str, pos: Position) -> usize {
    let mut line_start = 0;
    for _ in 0..pos.line {
        match text[line_start..].find('\n') {
            Some(i) => line_start += i + 1,
            None => return text.len(),
        }
    }
    let line_end = text[line_start..]
        .find('\n')
        .map_or(text.len(), |i| line_start + i);
    let mut units = 0;
    for (i, c) in text[line_start..line_end].char_indices() {
        if units >= pos.character as usize {
            return line_start + i;
        }
        units += c.len_utf16();
    }
    line_end
}

fn floor_char(text: &str, mut i: usize) -> usize {
    while !text.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The name under a byte offset: the text of the `"..."` string it is in, else the word
/// (letters, digits, `_`) it is in or just after.
pub fn name_at(text: &str, at: usize) -> Option<String> {
    let at = floor_char(text, at.min(text.len()));
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let line = &text[line_start..line_end];
    let col = at - line_start;
    // Strings on the line up to a comment, with their escapes.
    let mut open: Option<usize> = None;
    let mut chars = line.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match (c, open) {
            ('#', None) => break,
            ('"', None) => open = Some(i),
            ('\\', Some(_)) => {
                chars.next();
            }
            ('"', Some(s)) => {
                if (s..=i).contains(&col) {
                    return Some(unescape(&line[s + 1..i]));
                }
                open = None;
            }
            _ => {}
        }
    }
    let is_word = |c: char| c.is_ascii_alphanumeric() || c == '_';
    let start = line[..col]
        .char_indices()
        .rev()
        .find(|&(_, c)| !is_word(c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = line[col..]
        .find(|c: char| !is_word(c))
        .map_or(line.len(), |i| col + i);
    (start < end).then(|| line[start..end].to_string())
}

fn unescape(s: &str) -> String {
    s.replace("\\\"", "\"")
        .replace("\\n", "\n")
        .replace("\\\\", "\\")
}

/// The path of a `file:` URI.
pub fn path_of(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    // `file:///path` or `file://localhost/path`.
    let rest = rest.strip_prefix("localhost").unwrap_or(rest);
    let bytes = rest.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(String::from_utf8(out).ok()?))
}

/// The `file:` URI of an absolute path.
pub fn uri_of(path: &Path) -> Option<Uri> {
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().ok()?.join(path)
    };
    let mut s = String::from("file://");
    for b in full.to_str()?.bytes() {
        if b.is_ascii_alphanumeric() || b"/-._~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    Uri::from_str(&s).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_utf16_units_and_come_back() {
        let t = "ab\n\u{e9}\u{1f600}x\n";
        let x = t.find('x').unwrap();
        assert_eq!(position(t, x), Position::new(1, 3));
        assert_eq!(offset(t, Position::new(1, 3)), x);
        assert_eq!(offset(t, Position::new(9, 0)), t.len());
    }

    #[test]
    fn the_name_under_a_place_is_a_string_or_a_word() {
        let t = "    \"Honor Tax\" for Alice # \"not\"\n    do gains_honor(Bob, 1)";
        assert_eq!(name_at(t, 7).as_deref(), Some("Honor Tax"));
        assert_eq!(name_at(t, 19).as_deref(), Some("for"));
        let g = t.find("honor(").unwrap();
        assert_eq!(name_at(t, g).as_deref(), Some("gains_honor"));
        // Not a word next to a character of several bytes: no slicing inside it.
        let u = "\u{e9}\u{2014}ab";
        assert_eq!(name_at(u, u.len() - 1).as_deref(), Some("ab"));
        assert_eq!(name_at(u, 2).as_deref(), None);
    }

    #[test]
    fn uris_and_paths() {
        let p = Path::new("/tmp/a b/c.rules");
        let u = uri_of(p).unwrap();
        assert_eq!(u.as_str(), "file:///tmp/a%20b/c.rules");
        assert_eq!(path_of(&u).as_deref(), Some(p));
    }
}
