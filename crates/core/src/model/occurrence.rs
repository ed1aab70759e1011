//! Occurrences of events, and the log of what happened and what answered each.

use crate::model::ids::{EventId, ObjectId, PlayerId};
use crate::model::timing::Point;
use crate::model::value::Arg;
use serde::Serialize;
use std::sync::Arc;

/// One occurrence of an event kind, with its arguments in the order of the kind's parameters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Occurrence {
    pub event: EventId,
    pub args: Vec<Arg>,
}

impl Occurrence {
    pub fn new(event: EventId, args: Vec<Arg>) -> Self {
        Occurrence { event, args }
    }
}

/// Which response answered: its source (none for the ruleset's own) and its rules text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Responder {
    pub source: Option<ObjectId>,
    pub text: Arc<str>,
}

/// Why a response came when it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Why {
    /// Nothing else could happen at that moment.
    Only,
    /// The player chose it to come next among these many (as they happen, each once).
    Chosen { by: PlayerId, among: usize },
    /// The player took it in the action round.
    Taken { by: PlayerId },
}

/// One line of the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Logged {
    /// The occurrence starts through its timing points.
    Starts { occurrence: Occurrence },
    /// It happened: its changes were made (its arguments as they were in the end).
    Happened { occurrence: Occurrence },
    /// It would change nothing (the card is already in that state): it does not happen, and
    /// takes precedence over any effect.
    Failed { occurrence: Occurrence },
    /// A response made it not happen.
    Prevented {
        occurrence: Occurrence,
        by: Responder,
    },
    /// A response made another happen in its place.
    Substituted {
        occurrence: Occurrence,
        by: Responder,
        with: Occurrence,
    },
    /// A response changed its size.
    Amount {
        occurrence: Occurrence,
        from: i64,
        to: i64,
        by: Responder,
    },
    /// A response changed one of its parameters.
    Param {
        occurrence: Occurrence,
        param: Arc<str>,
        to: Arg,
        by: Responder,
    },
    /// Its size is zero once step B is over: no Reactions to it, no later triggers.
    Zero { occurrence: Occurrence },
    /// A response to it begins.
    Response {
        occurrence: Occurrence,
        point: Point,
        step: Arc<str>,
        by: Responder,
        why: Why,
    },
    /// A response did not go on: a cost was not paid, or it had no legal target.
    Fizzled { by: Responder, why: String },
    /// A player passed in an action round.
    Passed { player: PlayerId, step: Arc<str> },
    /// A delayed effect was set up.
    Delayed { by: Responder, text: Arc<str> },
    /// A continuous effect started, applying to these many objects or players.
    EffectStarts { by: Responder, subjects: usize },
    /// A period began or ended.
    Period {
        occurrence: Occurrence,
        begins: bool,
    },
}

/// A log line and how deep it is: responses inside responses are deeper.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LogEntry {
    pub depth: u16,
    pub what: Logged,
}

/// The log: shared between copies of a state, appended in constant time.
#[derive(Clone, Debug, Default)]
pub struct Log {
    last: Option<Arc<LogCell>>,
    len: usize,
}

#[derive(Debug)]
struct LogCell {
    entry: LogEntry,
    prev: Option<Arc<LogCell>>,
}

impl Log {
    pub fn push(&mut self, entry: LogEntry) {
        let prev = self.last.take();
        self.last = Some(Arc::new(LogCell { entry, prev }));
        self.len += 1;
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries, first to last.
    pub fn entries(&self) -> Vec<&LogEntry> {
        let mut out = Vec::with_capacity(self.len);
        let mut at = self.last.as_deref();
        while let Some(c) = at {
            out.push(&c.entry);
            at = c.prev.as_deref();
        }
        out.reverse();
        out
    }
}

/// A log is saved as its entries, oldest first.
impl Serialize for Log {
    fn serialize<Ser: serde::Serializer>(&self, s: Ser) -> Result<Ser::Ok, Ser::Error> {
        s.collect_seq(self.entries())
    }
}

impl<'de> serde::Deserialize<'de> for Log {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut log = Log::default();
        for e in Vec::<LogEntry>::deserialize(d)? {
            log.push(e);
        }
        Ok(log)
    }
}

impl Drop for Log {
    /// Drops a long chain without deep recursion.
    fn drop(&mut self) {
        let mut at = self.last.take();
        while let Some(c) = at {
            match Arc::try_unwrap(c) {
                Ok(mut cell) => at = cell.prev.take(),
                Err(_) => break,
            }
        }
    }
}
