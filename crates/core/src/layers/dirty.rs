//! Making objects dirty: an object a replay follows has its values worked out again from the
//! point it became dirty, with the previous steps applied to it as they were; the steps applied to
//! the dirty objects, new values and old; which of a step's subjects are dirty.

use super::change::{apply_in_place, apply_keeping};
use super::replay::{fail, Dirty, Fail, Replay, Res, StateDiff};
use super::step::{params_for, same_for_all, StepRef};
use crate::condition::eval::Overrides;
use crate::model::condition::Subject;
use crate::model::ids::{LayerId, ObjectId};
use crate::model::trail::Subjects;
use crate::model::trail::{Applied, LayerTrail};
use crate::model::value::{Ability, Value};
use rustc_hash::FxHashMap;

impl Replay<'_> {
    /// Makes objects dirty just before the previous step `upto` of layer `li`: their values there
    /// are their previous ones (the steps before applied to them as they were). Players cannot be
    /// followed. The steps go once over all of them: each applies to its subjects one by one (CR
    /// 613.5), so applying it to several at once is applying it to each.
    pub(super) fn make_dirty(
        &mut self,
        subjects: &[Subject],
        li: usize,
        old_lt: &LayerTrail,
        upto: usize,
    ) -> Res<()> {
        let mut xs: Vec<ObjectId> = Vec::new();
        for s in subjects {
            match s {
                Subject::Object(o) if !self.dirty.contains_key(o) => xs.push(*o),
                Subject::Object(_) => {}
                Subject::Player(_) => return Err(fail!()),
            }
        }
        if xs.is_empty() {
            return Ok(());
        }
        xs.sort_unstable();
        xs.dedup();
        if self.dirty.len() + xs.len() > self.most_dirty() {
            return Err(fail!());
        }
        let mut rows = Vec::with_capacity(xs.len());
        for &x in &xs {
            let final_old = self.sheet.objects[x.index()].to_vec();
            let start = self.undo_row(&final_old, x, li);
            self.sheet.objects[x.index()].clone_from_slice(&start);
            rows.push((final_old, start));
        }
        let lid = LayerId(li as u16);
        // Effects alike share their subject lists: each list's members are found once.
        let mut found: FxHashMap<(usize, usize), Vec<Subject>> = FxHashMap::default();
        for step in &old_lt.steps[..upto] {
            let mine = found
                .entry(list_key(&step.subjects))
                .or_insert_with(|| members(&step.subjects, &xs));
            if mine.is_empty() {
                continue;
            }
            let params = params_for(step.as_step(), mine, lid)?;
            apply_in_place(
                self.state,
                &mut self.sheet,
                &step.cand,
                lid,
                mine,
                params.as_deref(),
                None,
                |_, _, _, _| {},
            );
        }
        for (x, (final_old, start)) in xs.into_iter().zip(rows) {
            let row = self.sheet.objects[x.index()].to_vec();
            self.dirty.insert(
                x,
                Dirty {
                    old: Some(row),
                    final_old: Some(final_old),
                    at_layer_start: start,
                    diff: StateDiff::default(),
                },
            );
        }
        self.dirty_list = self.dirty.keys().copied().collect();
        self.old_members.clear();
        Ok(())
    }

    /// Applies a previous step, as it was, to the old values of the dirty objects it applied to.
    pub(super) fn apply_old(&mut self, step: &Applied, lid: LayerId) -> Res<()> {
        // Effects alike share their subject lists: each list's dirty members are found once.
        let key = list_key(&step.subjects);
        let mine = match self.old_members.get(&key) {
            Some(m) => m.clone(),
            None => {
                let mut mine = members(&step.subjects, &self.dirty_list);
                // New objects have no old values.
                mine.retain(|s| match s {
                    Subject::Object(o) => self.dirty.get(o).is_some_and(|d| d.old.is_some()),
                    Subject::Player(_) => true,
                });
                let mine: std::rc::Rc<[Subject]> = mine.into();
                self.old_members.insert(key, mine.clone());
                mine
            }
        };
        self.apply_old_to(step, lid, &mine)
    }

    /// `apply_old`, to these subjects.
    fn apply_old_to(&mut self, step: &Applied, lid: LayerId, mine: &[Subject]) -> Res<()> {
        if mine.is_empty() {
            return Ok(());
        }
        let params = params_for(step.as_step(), mine, lid)?;
        let objs = mine.iter().filter_map(|s| match s {
            Subject::Object(o) => Some(*o),
            Subject::Player(_) => None,
        });
        if !same_for_all(&step.cand, lid) {
            self.ensure_old();
        }
        self.swap_old(objs.clone());
        let state = self.old.as_ref().unwrap_or(self.state);
        apply_in_place(
            state,
            &mut self.sheet,
            &step.cand,
            lid,
            mine,
            params.as_deref(),
            None,
            |_, _, _, _| {},
        );
        self.swap_old(objs);
        Ok(())
    }

    /// Applies a step, as replayed, to the dirty objects among its subjects.
    pub(super) fn apply_new(
        &mut self,
        out: StepRef,
        lid: LayerId,
        xs: &[ObjectId],
        overrides: &Overrides,
    ) -> Res<()> {
        let _ = overrides;
        let mut mine = std::mem::take(&mut self.mine);
        members_into(out.subjects, xs, &mut mine);
        let r = self.apply_new_to(out, lid, &mine);
        self.mine = mine;
        r
    }

    /// `apply_new`, to these subjects.
    fn apply_new_to(&mut self, out: StepRef, lid: LayerId, mine: &[Subject]) -> Res<()> {
        if mine.is_empty() {
            return Ok(());
        }
        let params = params_for(out, mine, lid)?;
        let mut grants = false;
        apply_keeping(
            self.state,
            &mut self.sheet,
            out.cand,
            lid,
            mine,
            params.as_deref(),
            None,
            &mut |_, _, _, v| {
                if let Value::Abilities(l) = v {
                    grants |= l.iter().any(|a| matches!(a, Ability::Static { .. }));
                }
            },
            None,
        );
        if grants {
            // A static ability given to a dirty object: its effects would start.
            return Err(fail!());
        }
        Ok(())
    }
}

/// `list` with `s` taken out (found at `Ok(k)`) or put in (at `Err(k)`), made in one allocation.
pub(super) fn toggled(list: &[Subject], at: Result<usize, usize>, s: Subject) -> Subjects {
    match at {
        Ok(k) => list[..k].iter().chain(&list[k + 1..]).copied().collect(),
        Err(k) => list[..k]
            .iter()
            .copied()
            .chain(std::iter::once(s))
            .chain(list[k..].iter().copied())
            .collect(),
    }
}

/// The subjects in `list` (in id order) that are among `xs` (in id order).
pub(super) fn members(list: &[Subject], xs: &[ObjectId]) -> Vec<Subject> {
    let mut out = Vec::new();
    members_into(list, xs, &mut out);
    out
}

/// A subject list's address and length: which list it is, while it is kept alive. Only the
/// previous derivation's lists are keyed so (the replay holds its trail to the end).
pub(super) fn list_key(list: &Subjects) -> (usize, usize) {
    (list.as_ptr() as usize, list.len())
}

/// `members`, into `out` (emptied first), so a caller that goes through many steps allocates once.
pub(super) fn members_into(list: &[Subject], xs: &[ObjectId], out: &mut Vec<Subject>) {
    out.clear();
    if list.len() < xs.len() * 4 {
        out.extend(
            list.iter()
                .filter(|s| matches!(s, Subject::Object(o) if xs.binary_search(o).is_ok())),
        );
    } else {
        out.extend(
            xs.iter()
                .map(|x| Subject::Object(*x))
                .filter(|s| list.binary_search(s).is_ok()),
        );
    }
}

/// Whether any of `xs` (in id order) is in `list` (in id order).
pub(super) fn any_member(list: &[Subject], xs: &[ObjectId]) -> bool {
    if list.len() < xs.len() * 4 {
        list.iter()
            .any(|s| matches!(s, Subject::Object(o) if xs.binary_search(o).is_ok()))
    } else {
        xs.iter()
            .any(|x| list.binary_search(&Subject::Object(*x)).is_ok())
    }
}
