//! Places on a galaxy map, for the distance and starlane-jump conditions (FreeOrion's effects
//! system): straight-line distance, a grid of positions, and the systems with their starlanes.

use crate::model::condition::{Footprint, Owners};
use crate::model::ids::{CharId, ObjectId, PlayerId};
use rustc_hash::FxHashMap;
use std::rc::Rc;

/// What one context keeps of the map: each distance condition's `NearIndex` (by the
/// condition's address), and the map's indexes where the context shares none with a
/// derivation (made when first asked for).
#[derive(Default)]
pub(crate) struct Local {
    pub(crate) near: FxHashMap<usize, Rc<NearIndex>>,
    pub(crate) maps: Option<Rc<std::cell::RefCell<Maps>>>,
}

/// The map's indexes that the conditions tested in a derivation share, whatever their source:
/// the systems with their starlanes (by the lanes' and names' characteristics), each empire's
/// detection ranges, grids of positions, what distance conditions measure from, and each
/// object's position and empires (FreeOrion's scopes index objects by location and owner).
/// Each keeps what it read, and is dropped, like a shared count, when an effect writes
/// something it read.
#[derive(Default)]
pub struct Maps {
    pub(crate) lanes: Kept<(CharId, CharId), Systems>,
    /// By ownership rules (`rule`), detection range and position characteristics; each
    /// empire's, by player index.
    pub(crate) detection: Kept<(usize, CharId, CharId, CharId), Vec<Rc<Detection>>>,
    /// Every object in play with a position, by square (by the position's characteristics).
    pub(crate) placed: Kept<(CharId, CharId), Placed>,
    /// The objects in play outside any system that name a starlane they are on (by the
    /// characteristic naming it).
    pub(crate) on_lanes: Kept<CharId, Vec<ObjectId>>,
    /// What each distance condition that names no source measures from (by the condition's
    /// address, and "you" where it reads who that is).
    pub(crate) near: Kept<(usize, Option<PlayerId>), NearIndex>,
    /// The objects each player controls among those a broad condition narrows to ("planets you
    /// control": FreeOrion's scopes index objects by owner).
    pub(crate) controlled: Kept<Broad, FxHashMap<PlayerId, Vec<ObjectId>>>,
    /// Each object's position on the map, by the position's characteristics and object index,
    /// once found; with what it read.
    pub(crate) positions: Vec<Positions>,
    /// Each object's empires, by ownership rules (`rule`) and object index, once found; and
    /// all that they read.
    pub(crate) empires: Vec<EmpireTable>,
    pub(crate) empires_read: Footprint,
    /// The ownership rules met, each once however many conditions carry a copy, and the place
    /// among them of each copy (by its address).
    rules: Vec<Owners>,
    rule_of: FxHashMap<usize, usize>,
    /// The last copy asked about and its place: most calls ask about the same one in a row.
    last_rule: Option<(usize, usize)>,
}

/// A condition that narrows to every object of a kind: of a type, in play, or any.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) enum Broad {
    OfType(crate::model::ids::TypeId),
    InPlay,
    Any,
}

/// Indexes of one kind, by key, each with what it read.
pub(crate) type Kept<K, V> = FxHashMap<K, (Footprint, Rc<V>)>;

/// The positions found, by the position's characteristics, with what they read; by object
/// index, `None` where not yet found, `Some(None)` where the object has no position.
pub(crate) type Positions = ((CharId, CharId), Footprint, Vec<Option<Option<Point>>>);

/// The empires of an object, as a set of players (ids below 256): copied, never allocated.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Empires([u64; 4]);

impl Empires {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    pub(crate) fn push(&mut self, p: PlayerId) {
        self.0[usize::from(p.0 >> 6)] |= 1 << (p.0 & 63);
    }

    pub(crate) fn contains(&self, p: &PlayerId) -> bool {
        (self.0[usize::from(p.0 >> 6)] >> (p.0 & 63)) & 1 == 1
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.0 == [0; 4]
    }

    /// The players, in id order.
    pub(crate) fn iter(self) -> impl Iterator<Item = PlayerId> {
        self.0.into_iter().enumerate().flat_map(|(w, mut bits)| {
            std::iter::from_fn(move || {
                (bits != 0).then(|| {
                    let b = bits.trailing_zeros();
                    bits &= bits - 1;
                    PlayerId((w as u32 * 64 + b) as u8)
                })
            })
        })
    }
}

impl FromIterator<PlayerId> for Empires {
    fn from_iter<I: IntoIterator<Item = PlayerId>>(it: I) -> Self {
        let mut out = Empires::new();
        it.into_iter().for_each(|p| out.push(p));
        out
    }
}

/// Each object's empires once found, by object index: one word each where every player's id is
/// below 63 (the set's first word, the last bit for "not found yet"), so that the table of a
/// large galaxy stays small; else a whole set each.
#[derive(Clone, Debug, Default)]
pub(crate) enum EmpireTable {
    #[default]
    Empty,
    Small(Vec<u64>),
    Wide(Vec<Option<Empires>>),
}

/// In a `Small` table: not found yet.
const NOT_FOUND: u64 = 1 << 63;

impl EmpireTable {
    /// A table of `objects` objects, none found yet, for a game of `players` players.
    pub(crate) fn new(objects: usize, players: usize) -> Self {
        if players < 64 {
            EmpireTable::Small(vec![NOT_FOUND; objects])
        } else {
            EmpireTable::Wide(vec![None; objects])
        }
    }

    pub(crate) fn is_empty(&self) -> bool {
        matches!(self, EmpireTable::Empty)
    }

    pub(crate) fn clear(&mut self) {
        *self = EmpireTable::Empty;
    }

    /// Object `o`'s empires, if found.
    pub(crate) fn get(&self, o: usize) -> Option<Empires> {
        match self {
            EmpireTable::Empty => None,
            EmpireTable::Small(v) => v
                .get(o)
                .filter(|w| **w != NOT_FOUND)
                .map(|w| Empires([*w, 0, 0, 0])),
            EmpireTable::Wide(v) => v.get(o).copied().flatten(),
        }
    }

    /// Notes object `o`'s empires (an index past the table is ignored).
    pub(crate) fn set(&mut self, o: usize, e: Empires) {
        match self {
            EmpireTable::Empty => {}
            EmpireTable::Small(v) => {
                if let Some(w) = v.get_mut(o) {
                    debug_assert!(e.0[1..] == [0; 3] && e.0[0] & NOT_FOUND == 0);
                    *w = e.0[0];
                }
            }
            EmpireTable::Wide(v) => {
                if let Some(w) = v.get_mut(o) {
                    *w = Some(e);
                }
            }
        }
    }
}

/// A position on the map.
pub(crate) type Point = (i64, i64);

/// How many squares of side `cell` the rectangle from `lo` to `hi` touches.
fn squares_over(lo: Point, hi: Point, cell: i64) -> i128 {
    let across =
        |a: i64, b: i64| i128::from(b.div_euclid(cell)) - i128::from(a.div_euclid(cell)) + 1;
    across(lo.0, hi.0) * across(lo.1, hi.1)
}

/// The objects in play with a position, by square of a grid over the points' extent: the
/// points sorted by square (squares in rows; in id order within one) and where each square's
/// points start among them. The squares' side is the smallest power of two that makes at most
/// about two squares a point, so that any distance is looked for in the squares it reaches.
pub(crate) struct Placed {
    cell: i64,
    /// The first square (across, down) and how many there are across and down.
    origin: Point,
    size: (i64, i64),
    /// Where each square's points start in `entries`, and one past the last.
    starts: Vec<u32>,
    entries: Vec<(ObjectId, Point)>,
}

impl Placed {
    /// The grid of `points`: one count of each square, then each point put in its square's
    /// place.
    pub(crate) fn new(points: &[(ObjectId, Point)]) -> Self {
        let (mut lo, mut hi) = ((i64::MAX, i64::MAX), (i64::MIN, i64::MIN));
        for (_, (x, y)) in points {
            lo = (lo.0.min(*x), lo.1.min(*y));
            hi = (hi.0.max(*x), hi.1.max(*y));
        }
        let most = 2 * points.len() as i128 + 1;
        let mut cell = 1i64;
        while !points.is_empty() && cell < 1 << 62 && squares_over(lo, hi, cell) > most {
            cell *= 2;
        }
        let (origin, far) = (square(lo, cell), square(hi, cell));
        let size = if points.is_empty() {
            (0, 0)
        } else {
            (far.0 - origin.0 + 1, far.1 - origin.1 + 1)
        };
        let mut grid = Placed {
            cell,
            origin,
            size,
            starts: Vec::new(),
            entries: Vec::new(),
        };
        let at: Vec<usize> = points
            .iter()
            .filter_map(|(_, p)| grid.index(square(*p, cell)))
            .collect();
        let mut starts = vec![0u32; (size.0 * size.1) as usize + 1];
        for i in &at {
            starts[i + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        let mut entries = vec![(ObjectId(0), (0, 0)); at.len()];
        for (i, e) in at.iter().zip(points) {
            entries[next[*i] as usize] = *e;
            next[*i] += 1;
        }
        grid.starts = starts;
        grid.entries = entries;
        grid
    }

    /// The place of square `sq` among the grid's squares, if it is one of them.
    fn index(&self, sq: Point) -> Option<usize> {
        let (a, d) = (
            sq.0.checked_sub(self.origin.0)?,
            sq.1.checked_sub(self.origin.1)?,
        );
        ((0..self.size.0).contains(&a) && (0..self.size.1).contains(&d))
            .then(|| (d * self.size.0 + a) as usize)
    }

    /// The objects within `d` of `at`, in id order: those of the squares the distance reaches,
    /// a row of squares at a time.
    pub(crate) fn within(&self, at: (i64, i64), d: i64) -> Vec<ObjectId> {
        if d < 0 || self.entries.is_empty() {
            return Vec::new();
        }
        let (sx, sy) = square(at, self.cell);
        let reach = d / self.cell + 1;
        let a0 = sx.saturating_sub(reach).max(self.origin.0) - self.origin.0;
        let a1 = sx
            .saturating_add(reach)
            .min(self.origin.0 + self.size.0 - 1)
            - self.origin.0;
        let d0 = sy.saturating_sub(reach).max(self.origin.1) - self.origin.1;
        let d1 = sy
            .saturating_add(reach)
            .min(self.origin.1 + self.size.1 - 1)
            - self.origin.1;
        let mut out = Vec::new();
        if a0 > a1 || d0 > d1 {
            return out;
        }
        for row in d0..=d1 {
            let first = (row * self.size.0 + a0) as usize;
            let last = (row * self.size.0 + a1) as usize;
            let from = self.starts[first] as usize;
            let to = self.starts[last + 1] as usize;
            out.extend(
                self.entries[from..to]
                    .iter()
                    .filter(|(_, p)| within_distance(*p, at, d))
                    .map(|(o, _)| *o),
            );
        }
        out.sort_unstable();
        out
    }
}

impl Maps {
    /// Whether it holds no index.
    pub(crate) fn is_empty(&self) -> bool {
        self.lanes.is_empty()
            && self.detection.is_empty()
            && self.placed.is_empty()
            && self.on_lanes.is_empty()
            && self.near.is_empty()
            && self.controlled.is_empty()
            && self.positions.is_empty()
            && self.empires.iter().all(|e| e.is_empty())
    }

    /// Drops the indexes whose reads `stale` says were written.
    pub(crate) fn forget(&mut self, stale: impl Fn(&Footprint) -> bool) {
        self.lanes.retain(|_, (f, _)| !stale(f));
        self.detection.retain(|_, (f, _)| !stale(f));
        self.placed.retain(|_, (f, _)| !stale(f));
        self.on_lanes.retain(|_, (f, _)| !stale(f));
        self.near.retain(|_, (f, _)| !stale(f));
        self.controlled.retain(|_, (f, _)| !stale(f));
        self.positions.retain(|(_, f, _)| !stale(f));
        if stale(&self.empires_read) {
            self.empires.iter_mut().for_each(EmpireTable::clear);
            self.empires_read = Footprint::default();
        }
    }

    /// The place of the ownership rules `ow` among those met: equal rules share one, so that
    /// each object's empires are found once for all conditions.
    pub(crate) fn rule(&mut self, ow: &Owners) -> usize {
        let at = ow as *const Owners as usize;
        match self.last_rule {
            Some((a, i)) if a == at => return i,
            _ => {}
        }
        if let Some(i) = self.rule_of.get(&at).copied() {
            self.last_rule = Some((at, i));
            return i;
        }
        let i = match self.rules.iter().position(|r| r == ow) {
            Some(i) => i,
            None => {
                self.rules.push(ow.clone());
                self.empires.push(EmpireTable::default());
                self.rules.len() - 1
            }
        };
        self.rule_of.insert(at, i);
        self.last_rule = Some((at, i));
        i
    }
}

/// The detection ranges of one empire's objects (FreeOrion's effects system, visibility): each
/// object with a position and a range, listed in every square of the grid its range reaches
/// into (the squares' side the longest range, so at most nine).
pub(crate) struct Detection {
    cell: i64,
    grid: FxHashMap<Point, Vec<(Point, i64)>>,
}

impl Detection {
    /// The index of these detectors: (position, range).
    pub(crate) fn new(detectors: Vec<((i64, i64), i64)>) -> Self {
        let cell = detectors.iter().map(|(_, r)| *r).max().unwrap_or(1).max(1);
        let mut grid: FxHashMap<Point, Vec<(Point, i64)>> = FxHashMap::default();
        for (at, r) in detectors {
            if r < 0 {
                continue;
            }
            let low = square((at.0.saturating_sub(r), at.1.saturating_sub(r)), cell);
            let high = square((at.0.saturating_add(r), at.1.saturating_add(r)), cell);
            for x in low.0..=high.0 {
                for y in low.1..=high.1 {
                    grid.entry((x, y)).or_default().push((at, r));
                }
            }
        }
        Detection { cell, grid }
    }

    /// Whether some detector's range reaches `at`.
    pub(crate) fn covers(&self, at: (i64, i64)) -> bool {
        self.grid
            .get(&square(at, self.cell))
            .is_some_and(|v| v.iter().any(|(d, r)| within_distance(*d, at, *r)))
    }
}

/// What a distance condition measures from (`Ctx::near_index`).
pub(crate) struct NearIndex {
    /// The side of a square of the grid.
    pub(super) cell: i64,
    /// Whether any object satisfies the condition's `of`.
    pub(super) any: bool,
    /// The positions of those objects, by square.
    pub(super) grid: FxHashMap<(i64, i64), Vec<(i64, i64)>>,
    /// For starlane jumps: the systems and their lanes.
    pub(super) systems: Option<Rc<Systems>>,
    /// For starlane jumps: each system within the distance of those objects, with the fewest
    /// jumps (an object on a starlane is one jump from either end).
    pub(super) reach: FxHashMap<ObjectId, i64>,
}

/// The square of side `cell` that a position is in.
pub(super) fn square(at: (i64, i64), cell: i64) -> (i64, i64) {
    (at.0.div_euclid(cell), at.1.div_euclid(cell))
}

/// Whether a position of `grid` (positions by square of side `cell`, `d` at most `cell`) is
/// within `d` of `a`: it is in `a`'s square or one next to it.
pub(super) fn grid_within(
    grid: &FxHashMap<(i64, i64), Vec<(i64, i64)>>,
    cell: i64,
    a: (i64, i64),
    d: i64,
) -> bool {
    around(a, cell).any(|sq| {
        grid.get(&sq)
            .is_some_and(|v| v.iter().any(|b| within_distance(a, *b, d)))
    })
}

/// The square of side `cell` that `at` is in and the eight next to it: where every position
/// within `cell` of `at` lies.
fn around(at: Point, cell: i64) -> impl Iterator<Item = Point> {
    let (x, y) = square(at, cell);
    (-1..=1i64)
        .flat_map(move |dx| (-1..=1i64).map(move |dy| (x.saturating_add(dx), y.saturating_add(dy))))
}

/// The systems in play by name, and the systems one starlane jump from each.
pub(crate) struct Systems {
    pub(super) by_name: FxHashMap<std::sync::Arc<str>, Vec<ObjectId>>,
    pub(super) next: FxHashMap<ObjectId, Vec<ObjectId>>,
}

impl Systems {
    pub(super) fn named(&self, name: &str) -> impl Iterator<Item = ObjectId> + '_ {
        self.by_name.get(name).into_iter().flatten().copied()
    }

    /// The fewest jumps to each system from the starting ones (each with the jumps it starts
    /// at), up to `limit`: breadth first.
    pub(super) fn jumps_from(
        &self,
        from: &[(ObjectId, i64)],
        limit: i64,
    ) -> FxHashMap<ObjectId, i64> {
        let mut best: FxHashMap<ObjectId, i64> = FxHashMap::default();
        let mut queue = std::collections::VecDeque::new();
        let mut start: Vec<(ObjectId, i64)> = from.to_vec();
        start.sort_by_key(|(_, k)| *k);
        for (s, k) in start {
            if k <= limit && !best.contains_key(&s) {
                best.insert(s, k);
                queue.push_back(s);
            }
        }
        // Every start is 0 or 1 jump away, so the queue stays in order of jumps but for a start
        // at 1 found at 1 through another: keep the least.
        while let Some(s) = queue.pop_front() {
            let k = best[&s];
            if k >= limit {
                continue;
            }
            for t in self.next.get(&s).into_iter().flatten() {
                if best.get(t).is_none_or(|b| *b > k + 1) {
                    best.insert(*t, k + 1);
                    queue.push_back(*t);
                }
            }
        }
        best
    }
}

/// Whether two positions are at most `d` apart (straight line).
pub(super) fn within_distance(a: (i64, i64), b: (i64, i64), d: i64) -> bool {
    let dx = i128::from(a.0) - i128::from(b.0);
    let dy = i128::from(a.1) - i128::from(b.1);
    d >= 0 && dx * dx + dy * dy <= i128::from(d) * i128::from(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The grid finds what a test of every position finds, across squares' edges and below 0.
    #[test]
    fn the_grid_finds_what_every_position_finds() {
        let points: Vec<(i64, i64)> = (-9..=9)
            .flat_map(|x| (-9..=9).map(move |y| (x * 3 % 11, y * 5 % 13)))
            .filter(|(x, y)| (x * 7 + y * 3) % 5 == 0)
            .collect();
        for d in 0..=6 {
            let cell = d.max(1);
            let mut grid: FxHashMap<(i64, i64), Vec<(i64, i64)>> = FxHashMap::default();
            for p in &points {
                grid.entry(square(*p, cell)).or_default().push(*p);
            }
            for x in -14..=14 {
                for y in -14..=14 {
                    let every = points.iter().any(|b| within_distance((x, y), *b, d));
                    assert_eq!(
                        grid_within(&grid, cell, (x, y), d),
                        every,
                        "({x}, {y}) within {d}"
                    );
                }
            }
        }
    }

    /// Detection ranges of different lengths cover what a test of every detector finds; the
    /// objects placed within a distance are those a test of every object finds, in id order.
    #[test]
    fn detection_and_placed_objects_find_what_every_one_finds() {
        let points: Vec<Point> = (-9..=9)
            .flat_map(|x| (-9..=9).map(move |y| (x * 3 % 11, y * 5 % 13)))
            .filter(|(x, y)| (x * 7 + y * 3) % 5 == 0)
            .collect();
        let detectors: Vec<(Point, i64)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (*p, [0, 1, 2, 5][i % 4]))
            .collect();
        let detection = Detection::new(detectors.clone());
        let listed: Vec<(ObjectId, Point)> = points
            .iter()
            .enumerate()
            .map(|(i, p)| (ObjectId(i as u32), *p))
            .collect();
        let placed = Placed::new(&listed);
        for d in (0..=6).chain([11, 25]) {
            for x in -14..=14 {
                for y in -14..=14 {
                    let every: Vec<ObjectId> = points
                        .iter()
                        .enumerate()
                        .filter(|(_, b)| within_distance((x, y), **b, d))
                        .map(|(i, _)| ObjectId(i as u32))
                        .collect();
                    assert_eq!(placed.within((x, y), d), every, "({x}, {y}) within {d}");
                }
            }
        }
        for x in -14..=14 {
            for y in -14..=14 {
                let every = detectors
                    .iter()
                    .any(|(p, r)| within_distance(*p, (x, y), *r));
                assert_eq!(detection.covers((x, y)), every, "({x}, {y}) detected");
            }
        }
    }

    /// Points far apart (a grid of few squares, of a side near the largest): each distance finds
    /// what a test of every point finds, and none is lost at the map's edges.
    #[test]
    fn placed_objects_far_apart_are_found() {
        let far = i64::MAX / 4;
        let listed: Vec<(ObjectId, Point)> =
            [(0, 0), (far, -far), (-far, far), (3, 4), (-far, -far)]
                .iter()
                .enumerate()
                .map(|(i, p)| (ObjectId(i as u32), *p))
                .collect();
        let placed = Placed::new(&listed);
        for at in [(0, 0), (far, -far), (-far, -far), (1, 1)] {
            for d in [0, 5, far / 2, far] {
                let every: Vec<ObjectId> = listed
                    .iter()
                    .filter(|(_, p)| within_distance(*p, at, d))
                    .map(|(o, _)| *o)
                    .collect();
                assert_eq!(placed.within(at, d), every, "{at:?} within {d}");
            }
        }
        assert!(Placed::new(&[]).within((0, 0), 10).is_empty());
    }

    #[test]
    fn empires_hold_each_player_once_in_id_order_across_words() {
        let mut e = Empires::new();
        assert!(e.is_empty());
        for p in [255u8, 64, 0, 63, 64] {
            e.push(PlayerId(p));
        }
        assert!(!e.is_empty());
        let got: Vec<u8> = e.iter().map(|p| p.0).collect();
        assert_eq!(got, vec![0, 63, 64, 255]);
        assert!(e.contains(&PlayerId(63)) && e.contains(&PlayerId(255)));
        assert!(!e.contains(&PlayerId(1)) && !e.contains(&PlayerId(128)));
        let again: Empires = got.into_iter().map(PlayerId).collect();
        assert_eq!(again, e);
    }

    /// A table of empires gives back what was noted, and nothing for an object not found yet:
    /// in one word each for a few players (an empty set is found, not "not found"), and in
    /// whole sets for many.
    #[test]
    fn empire_tables_give_back_what_was_noted() {
        for players in [4usize, 63, 64, 256] {
            let mut t = EmpireTable::new(3, players);
            assert!(!t.is_empty());
            let most = (players - 1) as u8;
            let two: Empires = [PlayerId(0), PlayerId(most)].into_iter().collect();
            t.set(0, two);
            t.set(1, Empires::new());
            t.set(7, two);
            assert_eq!(t.get(0), Some(two), "{players} players");
            assert_eq!(t.get(1), Some(Empires::new()), "{players} players");
            assert_eq!(t.get(2), None, "{players} players");
            assert_eq!(t.get(7), None, "{players} players");
            t.clear();
            assert!(t.is_empty() && t.get(0).is_none());
        }
    }
}
