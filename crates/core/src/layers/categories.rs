//! The categories of a characteristic tied to card types (CR 205.1a, 205.3d): at the end of a layer
//! that may change them, each object keeps only the symbols of sets tied to a card type it has,
//! and the abilities of symbols it lost go with them (CR 305.6). The derivation does it for every
//! object, a replay for the objects it follows.

use super::change::{slot_mut, KeepBefore};
use super::derive::Deriver;
use super::replay::Replay;
use crate::model::condition::Subject;
use crate::model::explain::{Reason, Step};
use crate::model::ids::{CharId, LayerId, ObjectId, SlotTarget};
use crate::model::value::{SymbolSet, Value};
use crate::state::GameState;

impl Deriver<'_> {
    /// CR 205.1a, 205.3d: after a layer that may change a characteristic whose categories are tied
    /// to card types (or those types), each object keeps only the symbols of sets tied to a card
    /// type it has ("Enchanted permanent is a colorless Forest land": no creature types left).
    pub(super) fn follow_types(&mut self, lid: LayerId) {
        if self.state.ruleset.tied_in_layer(lid).is_empty() {
            return;
        }
        let mut known = Vec::new();
        for o in self.state.object_ids() {
            let writes =
                follow_types_of(self.state, &self.sheet.objects[o.index()], lid, &mut known);
            for (ch, after, text) in writes {
                self.write_by_rules(lid, o, ch, after, &text);
            }
        }
    }

    /// Writes a value the ruleset's categories decide (see `follow_types`), keeping the value before
    /// and explaining it.
    fn write_by_rules(&mut self, lid: LayerId, o: ObjectId, ch: CharId, after: Value, text: &str) {
        let (s, t) = (Subject::Object(o), SlotTarget::Char(ch));
        if let Some((_, log)) = &mut self.trail {
            log.keep(s, t, &self.sheet.objects[o.index()][ch.index()]);
        }
        let before = std::mem::replace(slot_mut(&mut self.sheet, s, t), after.clone());
        if let Some(e) = self.expl.as_mut() {
            let l = &self.state.ruleset.layers[lid.index()];
            e.objects[o.index()][ch.index()].push(Step {
                layer: l.label.clone(),
                layer_name: l.name.clone(),
                source: self.state.obj(o).name.to_string(),
                label: self.state.obj(o).name.to_string(),
                text: text.to_string(),
                timestamp: self.state.obj(o).timestamp.0,
                reason: Reason::Categories,
                before,
                after,
            });
        }
    }
}

/// What the categories tied to card types (CR 205.1a, 205.3d) change of one object's values at
/// the end of layer `lid`: each characteristic with its new value and why. `known` keeps, by
/// characteristic and the card types' sets an object has, the symbols allowed.
type Allowed = Vec<(CharId, Vec<bool>, SymbolSet)>;

fn follow_types_of(
    state: &GameState,
    row: &[Value],
    lid: LayerId,
    known: &mut Allowed,
) -> Vec<(CharId, Value, String)> {
    let rs = &state.ruleset;
    let mut out = Vec::new();
    for ch in rs.tied_in_layer(lid) {
        let Value::Symbols(cur) = &row[ch.index()] else {
            continue;
        };
        // The allowed symbols depend only on which sets' card types an object has.
        let key: Vec<bool> = rs
            .categories_of(ch)
            .map(
                |c| match (&c.by, c.by.as_ref().map(|(b, _)| &row[b.index()])) {
                    (Some((_, types)), Some(Value::Symbols(t))) => {
                        types.iter().any(|x| t.contains(x))
                    }
                    (None, _) => true,
                    _ => false,
                },
            )
            .collect();
        let allowed = match known.iter().find(|(c, k, _)| *c == ch && *k == key) {
            Some((_, _, a)) => a.clone(),
            None => {
                let Some(a) = rs.symbols_allowed(ch, row) else {
                    continue;
                };
                known.push((ch, key, a.clone()));
                a
            }
        };
        // A finite set whose symbols are all allowed keeps them all (no new set is built).
        if !cur.is_every() && cur.iter().all(|x| allowed.contains(x)) {
            continue;
        }
        let mut new = cur.clone();
        new.intersect(&allowed);
        if new == *cur {
            continue;
        }
        // The abilities of symbols it lost go with them (CR 305.6).
        if let (Some(i), Some(ac)) = (rs.intrinsic_of(ch), state.abilities_char) {
            if let Value::Abilities(have) = &row[ac.index()] {
                let after = i.abilities_after(have, cur, &new, false);
                if after[..] != **have {
                    out.push((
                        ac,
                        Value::Abilities(after.into()),
                        "its abilities follow its subtypes".to_string(),
                    ));
                }
            }
        }
        let text = format!("its {} follow its card types", rs.char_def(ch).name);
        out.push((ch, Value::Symbols(new), text));
    }
    out
}

impl Replay<'_> {
    /// CR 205.1a, 205.3d, at the end of a layer: the dirty objects keep only the symbols their
    /// card types allow (as the derivation does for every object), new values and old alike.
    pub(super) fn follow_types(&mut self, lid: LayerId) {
        if self.state.ruleset.tied_in_layer(lid).is_empty() {
            return;
        }
        let mut known = Vec::new();
        let xs = self.dirty_ids();
        for &x in xs.iter() {
            for old in [false, true] {
                if old {
                    if self.dirty[&x].old.is_none() {
                        continue;
                    }
                    self.swap_old([x]);
                }
                // What is allowed comes from the ruleset alone: the state as it was is not needed.
                let writes =
                    follow_types_of(self.state, &self.sheet.objects[x.index()], lid, &mut known);
                for (ch, v, _) in writes {
                    self.sheet.objects[x.index()][ch.index()] = v;
                }
                if old {
                    self.swap_old([x]);
                }
            }
        }
    }
}
