//! Occurrences of events, and the log of what happened and what answered each.

use crate::model::ids::{EventId, ObjectId, PlayerId};
use crate::model::timing::Point;
use crate::model::value::Arg;
use serde::Serialize;
use std::sync::Arc;

/// An occurrence's arguments: most events have at most three parameters, held without an
/// allocation of their own.
pub type Args = smallvec::SmallVec<[Arg; 3]>;

/// Each argument's value in order, or `None` where one has none: pushed into the inline list one
/// by one (a `collect` into an `Option` of the list goes through a generic adapter that costs
/// more than the values).
pub(crate) fn args_of(values: impl Iterator<Item = Option<Arg>>) -> Option<Args> {
    let mut out = Args::new();
    for v in values {
        out.push(v?);
    }
    Some(out)
}

/// One occurrence of an event kind, with its arguments in the order of the kind's parameters.
#[derive(Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Occurrence {
    /// Its event kind.
    pub event: EventId,
    /// Its arguments, one per parameter of the kind, in order.
    pub args: Args,
}

/// A copy's arguments copied as one slice (they are plain values), not one by one through the
/// inline list's generic `clone`: the log and the frames copy occurrences at every point.
impl Clone for Occurrence {
    fn clone(&self) -> Self {
        Occurrence {
            event: self.event,
            args: Args::from_slice(&self.args),
        }
    }
}

impl Occurrence {
    /// An occurrence of `event` with these arguments (not checked against its parameters).
    pub fn new(event: EventId, args: impl Into<Args>) -> Self {
        Occurrence {
            event,
            args: args.into(),
        }
    }
}

/// Which response answered: its source (none for the ruleset's own) and its rules text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct Responder {
    /// The object whose response it is (for a resolving spell, the spell); `None` for the
    /// ruleset's own rules.
    pub source: Option<ObjectId>,
    /// Its rules text.
    pub text: Arc<str>,
}

/// Why a response came when it did.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Why {
    /// Nothing else could happen at that moment.
    Only,
    /// The player chose it to come next among these many (as they happen, each once).
    Chosen {
        /// The player who chose: the one who orders the responses.
        by: PlayerId,
        /// How many responses could have come next.
        among: usize,
    },
    /// The player took it in the action round.
    Taken {
        /// The player who took it.
        by: PlayerId,
    },
}

/// One line of the log.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub enum Logged {
    /// The game is over (CR 104.1): the player left in it wins, or none (a draw).
    GameOver {
        /// The winner, if any.
        winner: Option<PlayerId>,
    },
    /// The occurrence starts through its timing points.
    Starts {
        /// The occurrence, with its arguments as it starts.
        occurrence: Occurrence,
    },
    /// It happened: its changes were made (its arguments as they were in the end).
    Happened {
        /// The occurrence, with the arguments its changes were made with.
        occurrence: Occurrence,
    },
    /// It would change nothing (the card is already in that state): it does not happen, and
    /// takes precedence over any effect.
    Failed {
        /// The occurrence that does not happen.
        occurrence: Occurrence,
    },
    /// An object it is about changed zones after it began: that object is a new object, which
    /// the occurrence is not about (CR 400.7). It does not happen, and nothing answers it after.
    Moved {
        /// The occurrence that does not happen.
        occurrence: Occurrence,
    },
    /// A standing prohibition forbids it: it fails before any step, and nothing answers it.
    Prohibited {
        /// The occurrence that does not happen.
        occurrence: Occurrence,
        /// The prohibition.
        by: Responder,
    },
    /// A response negated its effects: it still happens (it counts as taken), without its
    /// changes.
    Negated {
        /// The occurrence whose effects are negated.
        occurrence: Occurrence,
        /// The response that negated them.
        by: Responder,
    },
    /// A response could not do one of its deeds to the occurrence it answers (it "cannot be
    /// prevented").
    Immune {
        /// The occurrence the deed would have changed.
        occurrence: Occurrence,
        /// The response.
        by: Responder,
        /// What it could not do, in words.
        what: String,
    },
    /// A response made it not happen.
    Prevented {
        /// The occurrence that does not happen.
        occurrence: Occurrence,
        /// The response that prevented it.
        by: Responder,
    },
    /// A response made another happen in its place.
    Substituted {
        /// The occurrence that does not happen.
        occurrence: Occurrence,
        /// The response that substituted another for it.
        by: Responder,
        /// The occurrence that happens in its place.
        with: Occurrence,
    },
    /// A response changed its size.
    Amount {
        /// The occurrence, with its arguments before the change.
        occurrence: Occurrence,
        /// Its size before.
        from: i64,
        /// Its size after (never below zero).
        to: i64,
        /// The response that changed it.
        by: Responder,
    },
    /// A response changed one of its parameters.
    Param {
        /// The occurrence, with its arguments before the change.
        occurrence: Occurrence,
        /// The parameter's name.
        param: Arc<str>,
        /// Its new argument.
        to: Arg,
        /// The response that changed it.
        by: Responder,
    },
    /// Its size is zero once step B is over: no Reactions to it, no later triggers.
    Zero {
        /// The occurrence whose size is zero.
        occurrence: Occurrence,
    },
    /// A response to it begins.
    Response {
        /// The occurrence answered, with its arguments as the response begins.
        occurrence: Occurrence,
        /// The timing point it answers at.
        point: Point,
        /// The name of the timing step that took it ("A", "B", "C").
        step: Arc<str>,
        /// The response that begins.
        by: Responder,
        /// Why it came then.
        why: Why,
    },
    /// A response did not go on: a cost was not paid, or it had no legal target.
    Fizzled {
        /// The response (or the resolving spell) that does nothing.
        by: Responder,
        /// Why, in words.
        why: String,
    },
    /// A player passed in an action round.
    Passed {
        /// The player who passed.
        player: PlayerId,
        /// The name of the timing step whose action round it is.
        step: Arc<str>,
    },
    /// A delayed effect was set up.
    Delayed {
        /// The response that set it up.
        by: Responder,
        /// The delayed effect's rules text.
        text: Arc<str>,
    },
    /// A continuous effect started, applying to these many objects or players.
    EffectStarts {
        /// The response that started it.
        by: Responder,
        /// How many objects or players it applies to.
        subjects: usize,
    },
    /// A player made a play the game offered ("cast Lightning Bolt", "play a land Mountain").
    Played {
        /// The player who played.
        player: PlayerId,
        /// The play's label.
        label: Arc<str>,
    },
    /// A spell or ability was announced and added to the batch, as the item of this id.
    AddedToBatch {
        /// The batch item's id.
        item: u32,
        /// The spell or ability.
        by: Responder,
    },
    /// A spell is being cast: batches of interrupts may come before it is added to the batch.
    BeingCast {
        /// The batch item's id it will have.
        item: u32,
        /// The spell.
        by: Responder,
    },
    /// Every player in turn passed: the batch is complete and resolves, last in first out.
    BatchComplete {
        /// How many items it holds.
        items: usize,
    },
    /// The batch's last item resolves.
    BatchResolves {
        /// The batch item's id.
        item: u32,
        /// The spell or ability.
        by: Responder,
    },
    /// Current meter values changed together (each grew, or each was capped by its max): the
    /// object, the meter's counter kind and by how much, for each value that changed (FreeOrion's
    /// effects system, Turn Processing Order: growth, then the cap).
    CurrentValues {
        /// True: capped by the max values; false: grown.
        capped: bool,
        /// Each value that changed, and by how much.
        changes: Vec<(
            crate::model::ids::ObjectId,
            crate::model::ids::CounterId,
            i64,
        )>,
    },
    /// A period began or ended.
    Period {
        /// The period's occurrence.
        occurrence: Occurrence,
        /// True when it began, false when it ended.
        begins: bool,
    },
}

/// A log line and how deep it is: responses inside responses are deeper.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct LogEntry {
    /// How far it is indented: what a response does, and the occurrences another's change makes,
    /// are one deeper than the occurrence they come from.
    pub depth: u16,
    /// What happened.
    pub what: Logged,
}

/// The log: shared between copies of a state, appended in constant time. Its entries lie in
/// chunks of up to [`CHUNK`]: a copy shares them all, and an entry goes into the last chunk only
/// while no other log shares it (else into a new one), so a copy never sees a later entry and
/// most entries cost no allocation of their own.
#[derive(Clone, Debug, Default)]
pub struct Log {
    last: Option<Arc<LogChunk>>,
    len: usize,
}

/// The most entries a chunk of the log holds.
const CHUNK: usize = 64;

#[derive(Debug)]
struct LogChunk {
    entries: Vec<LogEntry>,
    prev: Option<Arc<LogChunk>>,
}

impl Log {
    /// Appends an entry, in constant time; copies of the log taken before do not see it.
    pub fn push(&mut self, entry: LogEntry) {
        self.len += 1;
        if let Some(c) = self.last.as_mut().and_then(Arc::get_mut) {
            if c.entries.len() < CHUNK {
                c.entries.push(entry);
                return;
            }
        }
        let prev = self.last.take();
        let mut entries = Vec::with_capacity(CHUNK);
        entries.push(entry);
        self.last = Some(Arc::new(LogChunk { entries, prev }));
    }

    /// How many entries it holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether it holds no entries.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The entries, first to last.
    pub fn entries(&self) -> Vec<&LogEntry> {
        let mut chunks = Vec::new();
        let mut at = self.last.as_deref();
        while let Some(c) = at {
            chunks.push(c);
            at = c.prev.as_deref();
        }
        let mut out = Vec::with_capacity(self.len);
        for c in chunks.into_iter().rev() {
            out.extend(c.entries.iter());
        }
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
        // Each chunk no other log shares is dropped where it lies (not moved out first).
        while let Some(mut c) = at {
            match Arc::get_mut(&mut c) {
                Some(chunk) => at = chunk.prev.take(),
                None => break,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn passed(i: usize) -> LogEntry {
        LogEntry {
            depth: i as u16,
            what: Logged::Passed {
                player: PlayerId(0),
                step: "C".into(),
            },
        }
    }

    fn depths(log: &Log) -> Vec<u16> {
        log.entries().iter().map(|e| e.depth).collect()
    }

    /// A copy sees the entries before it was taken and none after, on either side, across the
    /// chunks' boundaries.
    #[test]
    fn a_copy_sees_no_later_entry() {
        let mut log = Log::default();
        for i in 0..CHUNK + 3 {
            log.push(passed(i));
        }
        let copy = log.clone();
        let mut other = log.clone();
        log.push(passed(1000));
        other.push(passed(2000));
        for i in 0..2 * CHUNK {
            other.push(passed(3000 + i));
        }
        let first: Vec<u16> = (0..CHUNK as u16 + 3).collect();
        assert_eq!(depths(&copy), first);
        assert_eq!(copy.len(), CHUNK + 3);
        let mut with = first.clone();
        with.push(1000);
        assert_eq!(depths(&log), with);
        assert_eq!(log.len(), CHUNK + 4);
        let mut other_list = first;
        other_list.push(2000);
        other_list.extend((0..2 * CHUNK as u16).map(|i| 3000 + i));
        assert_eq!(depths(&other), other_list);
        assert_eq!(other.len(), other_list.len());
        drop(log);
        drop(copy);
        assert_eq!(depths(&other), other_list);
    }
}
