//! A sheet of values: each object's characteristics and each player's properties.

use crate::model::value::Value;
use serde::Serialize;

/// A value for every object characteristic and every player property: the base values, or the
/// values after the layers ([`Derived::sheet`](crate::model::derived::Derived::sheet)).
#[derive(Clone, Debug, Default, Serialize)]
pub struct Sheet {
    /// Each object's characteristics: `objects[o][c]` for object index `o` and characteristic index
    /// `c`.
    pub objects: Rows,
    /// Each player's properties: `players[p][q]` for player index `p` and property index `q`.
    pub players: Vec<Vec<Value>>,
}

/// Each object's values by characteristic, one row per object. Rows are kept in blocks of 64
/// objects; a block is shared (between a derivation and the ones copied from it) until written,
/// so a copy of a sheet costs a pointer per block and a change to a few objects copies only their
/// blocks. `rows[o]` is object `o`'s row.
#[derive(Clone, Default)]
pub struct Rows {
    width: usize,
    len: usize,
    blocks: Vec<Block>,
}

/// Objects per block of rows.
const BLOCK: usize = 64;

/// A block of rows: held by this sheet alone (written in place), or shared (copied when written).
#[derive(Clone, Debug)]
enum Block {
    Own(Vec<Value>),
    Shared(std::sync::Arc<Vec<Value>>),
}

impl Block {
    fn values(&self) -> &Vec<Value> {
        match self {
            Block::Own(v) => v,
            Block::Shared(a) => a,
        }
    }
    fn values_mut(&mut self) -> &mut Vec<Value> {
        if let Block::Shared(a) = self {
            // Held alone: its values are taken out, with no copy and no new allocation.
            let v = match std::sync::Arc::get_mut(a) {
                Some(v) => std::mem::take(v),
                None => (**a).clone(),
            };
            *self = Block::Own(v);
        }
        match self {
            Block::Own(v) => v,
            Block::Shared(_) => unreachable!("made its own just above"),
        }
    }
}

/// The rows, one list per object (whether a block is shared is not part of the value).
impl std::fmt::Debug for Rows {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries((0..self.len).map(|o| &self[o]))
            .finish()
    }
}

impl PartialEq for Rows {
    fn eq(&self, other: &Self) -> bool {
        self.width == other.width
            && self.len == other.len
            && self
                .blocks
                .iter()
                .zip(&other.blocks)
                .all(|(a, b)| match (a, b) {
                    (Block::Shared(x), Block::Shared(y)) if std::sync::Arc::ptr_eq(x, y) => true,
                    _ => a.values() == b.values(),
                })
    }
}

impl Rows {
    /// Rows of `width` values each.
    pub fn new(width: usize, rows: impl IntoIterator<Item = Vec<Value>>) -> Self {
        let mut out = Rows {
            width,
            ..Rows::default()
        };
        for row in rows {
            out.push_row(&row);
        }
        out
    }

    /// Adds a row for a new object.
    pub fn push_row(&mut self, row: &[Value]) {
        debug_assert_eq!(row.len(), self.width);
        if self.len.is_multiple_of(BLOCK) {
            self.blocks
                .push(Block::Own(Vec::with_capacity(BLOCK * self.width)));
        }
        if let Some(b) = self.blocks.last_mut() {
            b.values_mut().extend_from_slice(row);
        }
        self.len += 1;
    }

    /// Adds a row for a new object from its values, moved in as they are made.
    pub fn push_values(&mut self, row: impl IntoIterator<Item = Value>) {
        if self.len.is_multiple_of(BLOCK) {
            self.blocks
                .push(Block::Own(Vec::with_capacity(BLOCK * self.width)));
        }
        if let Some(b) = self.blocks.last_mut() {
            let v = b.values_mut();
            let before = v.len();
            v.extend(row);
            debug_assert_eq!(v.len() - before, self.width);
        }
        self.len += 1;
    }

    /// Makes every block shareable, so that copies of the sheet share them until written.
    pub fn share(&mut self) {
        for b in &mut self.blocks {
            if let Block::Own(v) = b {
                *b = Block::Shared(std::sync::Arc::new(std::mem::take(v)));
            }
        }
    }

    /// An object's row, if the sheet has one for that index.
    pub fn get_row(&self, o: usize) -> Option<&[Value]> {
        (o < self.len).then(|| &self[o])
    }

    /// How many rows (objects).
    pub fn len(&self) -> usize {
        self.len
    }
    /// Whether there are no rows (no objects).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

impl std::ops::Index<usize> for Rows {
    type Output = [Value];
    fn index(&self, o: usize) -> &[Value] {
        let at = (o % BLOCK) * self.width;
        &self.blocks[o / BLOCK].values()[at..at + self.width]
    }
}

impl std::ops::IndexMut<usize> for Rows {
    fn index_mut(&mut self, o: usize) -> &mut [Value] {
        let at = (o % BLOCK) * self.width;
        let w = self.width;
        &mut self.blocks[o / BLOCK].values_mut()[at..at + w]
    }
}

/// Written as a list of rows.
impl Serialize for Rows {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.len()))?;
        for o in 0..self.len() {
            seq.serialize_element(&self[o])?;
        }
        seq.end()
    }
}
