//! Tokens: words, numbers, strings and punctuation, each with its span. `#` starts a comment.

use crate::diagnostics::{Diagnostic, FileId, Span};
use std::fmt;

/// What a token is, without its place.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A name or keyword: letters, digits, `_`; may start with digits (`7a`).
    Word(String),
    /// A whole number written in digits (`-` before it is a separate token).
    Number(i64),
    /// A `"..."` string, its escapes (`\"`, `\\`, `\n`) already replaced.
    Str(String),
    /// Punctuation: `{ } ( ) , : ; . = += -= + - * < <= > >= == !=`.
    Punct(&'static str),
    /// The end of a line: it ends a statement, as `;` does.
    Newline,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tok::Word(w) => write!(f, "`{w}`"),
            Tok::Number(n) => write!(f, "number `{n}`"),
            Tok::Str(s) => write!(f, "string \"{s}\""),
            Tok::Punct(p) => write!(f, "`{p}`"),
            Tok::Newline => f.write_str("end of line"),
        }
    }
}

/// A token and where it was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    /// What was written.
    pub tok: Tok,
    /// Where it was written.
    pub span: Span,
}

impl Token {
    /// Whether this is the word `w` (a string with the same text is not).
    pub fn is_word(&self, w: &str) -> bool {
        matches!(&self.tok, Tok::Word(x) if x == w)
    }
    /// Whether this is the punctuation `p`.
    pub fn is_punct(&self, p: &str) -> bool {
        matches!(&self.tok, Tok::Punct(x) if *x == p)
    }
    /// The word's text, if this is a word.
    pub fn word(&self) -> Option<&str> {
        match &self.tok {
            Tok::Word(w) => Some(w),
            _ => None,
        }
    }
}

const PUNCT: [&str; 20] = [
    "+=", "-=", "<=", ">=", "==", "!=", "{", "}", "(", ")", ",", ":", ";", ".", "=", "+", "-", "*",
    "/", "<",
];

/// Splits text into tokens; the first bad character or unclosed string is an error.
pub fn lex(file: FileId, text: &str) -> Result<Vec<Token>, Diagnostic> {
    let bytes = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let start = i;
        match c {
            b'\n' => {
                out.push(Token {
                    tok: Tok::Newline,
                    span: Span::new(file, i, i + 1),
                });
                i += 1;
            }
            b' ' | b'\t' | b'\r' => i += 1,
            b'#' => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'"' => {
                i += 1;
                let mut s = String::new();
                loop {
                    let Some(ch) = text[i..].chars().next() else {
                        return Err(Diagnostic::new(
                            Span::new(file, start, start + 1),
                            "unclosed string: expected a closing `\"`",
                        ));
                    };
                    match ch {
                        '"' => {
                            i += 1;
                            break;
                        }
                        '\n' => return Err(Diagnostic::new(
                            Span::new(file, start, i),
                            "unclosed string: expected a closing `\"` before the end of the line",
                        )),
                        '\\' => {
                            let esc = text[i + 1..].chars().next();
                            match esc {
                                Some('"') => s.push('"'),
                                Some('\\') => s.push('\\'),
                                Some('n') => s.push('\n'),
                                _ => {
                                    return Err(Diagnostic::new(
                                        Span::new(file, i, i + 1 + esc.map_or(0, |e| e.len_utf8())),
                                        "unknown escape: expected `\\\"`, `\\\\` or `\\n`",
                                    ))
                                }
                            }
                            i += 1 + esc.map_or(0, |e| e.len_utf8());
                        }
                        _ => {
                            s.push(ch);
                            i += ch.len_utf8();
                        }
                    }
                }
                out.push(Token {
                    tok: Tok::Str(s),
                    span: Span::new(file, start, i),
                });
            }
            b'0'..=b'9' => {
                while i < bytes.len() && bytes[i].is_ascii_digit() {
                    i += 1;
                }
                if i < bytes.len() && (bytes[i].is_ascii_alphabetic() || bytes[i] == b'_') {
                    while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_')
                    {
                        i += 1;
                    }
                    out.push(Token {
                        tok: Tok::Word(text[start..i].to_string()),
                        span: Span::new(file, start, i),
                    });
                } else if bytes.get(i) == Some(&b'.')
                    && bytes.get(i + 1).is_some_and(|b| b.is_ascii_digit())
                {
                    let mut end = i + 1;
                    while end < bytes.len() && bytes[end].is_ascii_digit() {
                        end += 1;
                    }
                    return Err(Diagnostic::new(
                        Span::new(file, start, end),
                        format!(
                            "expected a whole number, found `{}`: numbers are integers",
                            &text[start..end]
                        ),
                    ));
                } else {
                    let n: i64 = text[start..i].parse().map_err(|_| {
                        Diagnostic::new(
                            Span::new(file, start, i),
                            "number too large: expected at most 9223372036854775807",
                        )
                    })?;
                    out.push(Token {
                        tok: Tok::Number(n),
                        span: Span::new(file, start, i),
                    });
                }
            }
            c if c.is_ascii_alphabetic() || c == b'_' => {
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                out.push(Token {
                    tok: Tok::Word(text[start..i].to_string()),
                    span: Span::new(file, start, i),
                });
            }
            _ => {
                let rest = &text[i..];
                // `/` glued between signs and digits (`+1/+1`) is a counter's name written
                // without quotes, not a division.
                let glued_slash = rest.starts_with('/') && {
                    let run = glued_run(text, start);
                    run.len() > 1 && run.chars().all(|c| "+-/0123456789".contains(c))
                };
                let p = PUNCT
                    .iter()
                    .chain([">"].iter())
                    .find(|p| rest.starts_with(**p))
                    .filter(|_| !glued_slash);
                match p {
                    Some(p) => {
                        i += p.len();
                        out.push(Token {
                            tok: Tok::Punct(p),
                            span: Span::new(file, start, i),
                        });
                    }
                    None => {
                        let ch = rest.chars().next().unwrap_or(' ');
                        let mut msg = format!(
                            "unexpected character `{ch}`: expected a name, a number, a string or punctuation"
                        );
                        let run = glued_run(text, start);
                        if run.chars().count() > 1 {
                            msg.push_str(&format!(
                                "; to use `{run}` as a name, write it as a string: \"{run}\""
                            ));
                        }
                        return Err(Diagnostic::new(
                            Span::new(file, start, start + ch.len_utf8()),
                            msg,
                        ));
                    }
                }
            }
        }
    }
    Ok(out)
}

/// The characters around `at` up to a space or a separator (`"`, `#`, brackets, `,`, `:`, `;`):
/// the name an author meant, such as `José` or `+1/+1`.
fn glued_run(text: &str, at: usize) -> &str {
    let stop = |c: char| c.is_whitespace() || "\"#{}(),:;".contains(c);
    let start = text[..at]
        .char_indices()
        .rev()
        .find(|(_, c)| stop(*c))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let end = text[at..].find(stop).map_or(text.len(), |i| at + i);
    &text[start..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_numbers_strings_and_punctuation() {
        let toks: Vec<Tok> = lex(0, "layer 7c \"P/T\": power += -1 # note\n")
            .unwrap()
            .into_iter()
            .map(|t| t.tok)
            .collect();
        assert_eq!(
            toks,
            vec![
                Tok::Word("layer".into()),
                Tok::Word("7c".into()),
                Tok::Str("P/T".into()),
                Tok::Punct(":"),
                Tok::Word("power".into()),
                Tok::Punct("+="),
                Tok::Punct("-"),
                Tok::Number(1),
                Tok::Newline,
            ]
        );
    }

    #[test]
    fn bad_characters_name_their_column() {
        let e = lex(0, "power = 1 @").unwrap_err();
        assert_eq!((e.span.start, e.span.end), (10, 11));
        assert!(e.message.contains("unexpected character `@`"));
    }
}
