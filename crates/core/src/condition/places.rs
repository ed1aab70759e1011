//! Places on a galaxy map, for the distance and starlane-jump conditions (FreeOrion's effects
//! system): straight-line distance, a grid of positions, and the systems with their starlanes.

use crate::model::ids::ObjectId;
use rustc_hash::FxHashMap;

/// What a distance condition measures from (`Ctx::near_index`).
pub(crate) struct NearIndex {
    /// The side of a square of the grid.
    pub(super) cell: i64,
    /// Whether any object satisfies the condition's `of`.
    pub(super) any: bool,
    /// The positions of those objects, by square.
    pub(super) grid: FxHashMap<(i64, i64), Vec<(i64, i64)>>,
    /// For starlane jumps: the systems and their lanes.
    pub(super) systems: Option<Systems>,
    /// For starlane jumps: each system those objects are at or next to, with the fewest jumps.
    pub(super) ends: FxHashMap<ObjectId, i64>,
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
    let (x, y) = square(a, cell);
    (-1..=1).any(|dx: i64| {
        (-1..=1).any(|dy: i64| {
            let at = (x.saturating_add(dx), y.saturating_add(dy));
            grid.get(&at)
                .is_some_and(|v| v.iter().any(|b| within_distance(a, *b, d)))
        })
    })
}

/// The systems in play by name, and the systems one starlane jump from each.
pub(super) struct Systems {
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
}
