//! A cursor over a statement's tokens, with "expected X, found Y" errors.

use crate::diagnostics::{did_you_mean, Diagnostic, Span};
use crate::lexer::{Tok, Token};

pub struct Cursor<'a> {
    pub toks: &'a [Token],
    pub pos: usize,
    /// Where "end of statement" errors point: just after the last token.
    pub end: Span,
    /// How deeply the condition or expression being read nests (see [`Cursor::nest`]).
    pub depth: usize,
}

/// How deeply a condition or expression may nest: each `(`, `not`, unary `-`, call such as
/// `exists(`, and each `+`, `-` or `*` in a row is a level. Parsing and every later walk of the
/// tree recurse, so an unbounded depth would overflow the stack.
pub const MAX_NESTING: usize = 64;

pub type Res<T> = Result<T, Diagnostic>;

impl<'a> Cursor<'a> {
    pub fn new(toks: &'a [Token]) -> Self {
        let last = toks
            .last()
            .map(|t| t.span)
            .expect("statements are never empty");
        Cursor {
            toks,
            pos: 0,
            end: Span::new(last.file, last.end, last.end),
            depth: 0,
        }
    }
    /// Enters one level of nesting; an error past [`MAX_NESTING`].
    pub fn nest(&mut self) -> Res<()> {
        self.depth += 1;
        if self.depth > MAX_NESTING {
            return Err(Diagnostic::new(
                self.here(),
                format!(
                    "too deeply nested: expected at most {MAX_NESTING} levels of `(`, `not`, unary `-`, calls such as `exists(` and operators in a row"
                ),
            ));
        }
        Ok(())
    }
    /// Leaves `levels` levels of nesting.
    pub fn unnest(&mut self, levels: usize) {
        self.depth = self.depth.saturating_sub(levels);
    }
    pub fn peek(&self) -> Option<&'a Token> {
        self.toks.get(self.pos)
    }
    pub fn peek_at(&self, k: usize) -> Option<&'a Token> {
        self.toks.get(self.pos + k)
    }
    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }
    pub fn bump(&mut self) -> Option<&'a Token> {
        let t = self.toks.get(self.pos);
        if t.is_some() {
            self.pos += 1;
        }
        t
    }
    /// The span of the next token, or the end of the statement.
    pub fn here(&self) -> Span {
        self.peek().map(|t| t.span).unwrap_or(self.end)
    }
    pub fn found(&self) -> String {
        match self.peek() {
            Some(t) => t.tok.to_string(),
            None => "the end of the statement".to_string(),
        }
    }
    pub fn err(&self, expected: &str) -> Diagnostic {
        Diagnostic::new(
            self.here(),
            format!("expected {expected}, found {}", self.found()),
        )
    }
    pub fn eat_word(&mut self, w: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_word(w)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    pub fn eat_words(&mut self, ws: &[&str]) -> bool {
        let ok = ws
            .iter()
            .enumerate()
            .all(|(i, w)| self.peek_at(i).is_some_and(|t| t.is_word(w)));
        if ok {
            self.pos += ws.len();
        }
        ok
    }
    pub fn eat_punct(&mut self, p: &str) -> bool {
        if self.peek().is_some_and(|t| t.is_punct(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }
    pub fn expect_word(&mut self, w: &str) -> Res<Span> {
        let sp = self.here();
        if self.eat_word(w) {
            Ok(sp)
        } else {
            Err(self.err(&format!("`{w}`")))
        }
    }
    pub fn expect_punct(&mut self, p: &str) -> Res<Span> {
        let sp = self.here();
        if self.eat_punct(p) {
            Ok(sp)
        } else {
            Err(self.err(&format!("`{p}`")))
        }
    }
    /// A name: a word.
    pub fn name(&mut self, what: &str) -> Res<(String, Span)> {
        match self.peek() {
            Some(Token {
                tok: Tok::Word(w),
                span,
            }) => {
                self.pos += 1;
                Ok((w.clone(), *span))
            }
            _ => Err(self.err(what)),
        }
    }
    /// A word or a string (names with spaces are written as strings).
    pub fn name_or_string(&mut self, what: &str) -> Res<(String, Span)> {
        match self.peek() {
            Some(Token {
                tok: Tok::Word(w) | Tok::Str(w),
                span,
            }) => {
                self.pos += 1;
                Ok((w.clone(), *span))
            }
            _ => Err(self.err(what)),
        }
    }
    /// A label: a word, a string or a number (`4`, `7a`, "players").
    pub fn label(&mut self, what: &str) -> Res<(String, Span)> {
        match self.peek() {
            Some(Token {
                tok: Tok::Number(n),
                span,
            }) => {
                self.pos += 1;
                Ok((n.to_string(), *span))
            }
            _ => self.name_or_string(what),
        }
    }
    pub fn string(&mut self, what: &str) -> Res<(String, Span)> {
        match self.peek() {
            Some(Token {
                tok: Tok::Str(w),
                span,
            }) => {
                self.pos += 1;
                Ok((w.clone(), *span))
            }
            _ => Err(self.err(what)),
        }
    }
    pub fn number(&mut self, what: &str) -> Res<(i64, Span)> {
        let neg = self.peek().is_some_and(|t| t.is_punct("-"));
        let k = usize::from(neg);
        match self.peek_at(k) {
            Some(Token {
                tok: Tok::Number(n),
                span,
            }) => {
                self.pos += 1 + k;
                Ok((if neg { -n } else { *n }, *span))
            }
            _ => Err(self.err(what)),
        }
    }
    pub fn finish(&self) -> Res<()> {
        if self.at_end() {
            return Ok(());
        }
        let mut e = self.err("the end of the statement");
        if let Some(name) = self.glued_name() {
            e.message.push_str(&format!(
                ": to use `{name}` as a name, write it as a string: \"{name}\""
            ));
        }
        Err(e)
    }
    /// At a `-`, `+` or `.` written with no space between two names or numbers (`mtg-2020`): the
    /// whole run, which an author meant as one name.
    fn glued_name(&self) -> Option<String> {
        let part = |t: &Token| match &t.tok {
            Tok::Word(w) => Some(w.clone()),
            Tok::Number(n) => Some(n.to_string()),
            Tok::Punct(p @ ("-" | "+" | ".")) => Some(p.to_string()),
            _ => None,
        };
        let glued = |a: &Token, b: &Token| a.span.end == b.span.start;
        let cur = self.peek()?;
        let prev = self.toks.get(self.pos.checked_sub(1)?)?;
        let next = self.peek_at(1)?;
        if !matches!(cur.tok, Tok::Punct("-" | "+" | "."))
            || !glued(prev, cur)
            || !glued(cur, next)
            || part(prev).is_none()
            || part(next).is_none()
        {
            return None;
        }
        let mut first = self.pos - 1;
        while first > 0
            && glued(&self.toks[first - 1], &self.toks[first])
            && part(&self.toks[first - 1]).is_some()
        {
            first -= 1;
        }
        let mut last = self.pos + 1;
        while last + 1 < self.toks.len()
            && glued(&self.toks[last], &self.toks[last + 1])
            && part(&self.toks[last + 1]).is_some()
        {
            last += 1;
        }
        self.toks[first..=last].iter().map(part).collect()
    }
}

/// An "unknown X" error with a did-you-mean.
pub fn unknown<'k>(
    span: Span,
    what: &str,
    name: &str,
    known: impl IntoIterator<Item = &'k str>,
) -> Diagnostic {
    let known: Vec<&str> = known.into_iter().collect();
    let mut msg = format!("unknown {what} `{name}`");
    if let Some(h) = did_you_mean(name, known.iter().copied()) {
        msg = format!("{msg}: {h}");
    } else if !known.is_empty() && known.len() <= 16 {
        msg = format!("{msg}: expected one of {}", known.join(", "));
    }
    Diagnostic::new(span, msg)
}
