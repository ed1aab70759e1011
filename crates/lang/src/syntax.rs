//! Statements and blocks. A statement is the tokens up to the end of a line or a `;`; a statement
//! may end in a `{ ... }` block of further statements.

use crate::diagnostics::{Diagnostic, FileId, Span};
use crate::lexer::{lex, Tok, Token};

/// One statement: its tokens up to the end of the line or a `;`, and the block it ends in, if any.
#[derive(Clone, Debug)]
pub struct Stmt {
    /// The tokens before any block; never empty.
    pub head: Vec<Token>,
    /// The `{ ... }` block that ends the statement.
    pub block: Option<Block>,
}

/// A `{ ... }` block of statements.
#[derive(Clone, Debug)]
pub struct Block {
    /// The statements inside, in order.
    pub stmts: Vec<Stmt>,
    /// Where the `{` is.
    pub open: Span,
    /// Where the `}` is.
    pub close: Span,
}

impl Stmt {
    /// From the statement's first token to its last, or to its block's `}`.
    pub fn span(&self) -> Span {
        let s = self.head[0].span;
        match &self.block {
            Some(b) => s.to(b.close),
            None => s.to(self.head[self.head.len() - 1].span),
        }
    }
}

/// Parses a whole file into statements.
pub fn parse(file: FileId, text: &str) -> Result<Vec<Stmt>, Diagnostic> {
    let toks = lex(file, text)?;
    let mut p = Parser {
        toks,
        pos: 0,
        depth: 0,
    };
    let stmts = p.stmts(None)?;
    Ok(stmts)
}

/// How deeply blocks may nest. Reading a block recurses, so an unbounded depth would overflow the
/// stack; rulesets, content and scenarios need four levels.
pub const MAX_BLOCK_DEPTH: usize = 64;

struct Parser {
    toks: Vec<Token>,
    pos: usize,
    /// Blocks open around the current position.
    depth: usize,
}

impl Parser {
    fn stmts(&mut self, open: Option<Span>) -> Result<Vec<Stmt>, Diagnostic> {
        let mut out = Vec::new();
        let mut head: Vec<Token> = Vec::new();
        loop {
            let Some(t) = self.toks.get(self.pos).cloned() else {
                if let Some(open) = open {
                    return Err(Diagnostic::new(
                        open,
                        "this block is never closed: expected `}` before the end of the file",
                    ));
                }
                if !head.is_empty() {
                    out.push(Stmt { head, block: None });
                }
                return Ok(out);
            };
            self.pos += 1;
            match &t.tok {
                Tok::Newline | Tok::Punct(";") => {
                    if !head.is_empty() {
                        out.push(Stmt {
                            head: std::mem::take(&mut head),
                            block: None,
                        });
                    }
                }
                Tok::Punct("{") => {
                    if head.is_empty() {
                        return Err(Diagnostic::new(
                            t.span,
                            "unexpected `{`: expected a statement before the block",
                        ));
                    }
                    if self.depth >= MAX_BLOCK_DEPTH {
                        return Err(Diagnostic::new(
                            t.span,
                            format!("too deeply nested: expected at most {MAX_BLOCK_DEPTH} levels of `{{` blocks"),
                        ));
                    }
                    self.depth += 1;
                    let stmts = self.stmts(Some(t.span))?;
                    self.depth -= 1;
                    let close = self.toks[self.pos - 1].span;
                    out.push(Stmt {
                        head: std::mem::take(&mut head),
                        block: Some(Block {
                            stmts,
                            open: t.span,
                            close,
                        }),
                    });
                    // After a block the statement ends; only a line end, `;` or `}` may follow.
                    if let Some(n) = self.toks.get(self.pos) {
                        if !matches!(n.tok, Tok::Newline | Tok::Punct(";") | Tok::Punct("}")) {
                            return Err(Diagnostic::new(
                                n.span,
                                format!(
                                    "unexpected {} after a block: expected the end of the line",
                                    n.tok
                                ),
                            ));
                        }
                    }
                }
                Tok::Punct("}") => {
                    if open.is_none() {
                        return Err(Diagnostic::new(
                            t.span,
                            "unexpected `}`: no block is open here",
                        ));
                    }
                    if !head.is_empty() {
                        out.push(Stmt { head, block: None });
                    }
                    return Ok(out);
                }
                _ => head.push(t),
            }
        }
    }
}
