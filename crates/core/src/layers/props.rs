//! Players' properties and the layers: whether the layers read or write one (a change of one
//! that nothing in them reads derives nothing), and the derived values of those that changed
//! where no layer writes one.

use super::footprint::def_scan_reads;
use crate::model::condition::Footprint;
use crate::model::ids::{PlayerId, PropId, SlotTarget};
use crate::model::sheet::Sheet;
use crate::state::GameState;

/// Whether the layers can read or change the player property `prop`: a layer applies effects to
/// a property, or an effect the content or ruleset can start, or a state-based check of objects,
/// reads this one. Where none can, a player's derived property is its base value, and a change of
/// it reaches nothing else (FreeOrion's stockpiles change many times a turn: a change of one that
/// nothing reads derives nothing). Worked out once for the content.
pub(crate) fn prop_derived(state: &GameState, prop: PropId) -> bool {
    let (written, read) = props_read(state);
    *written || read.has_prop(prop)
}

/// Whether a layer applies effects to players' properties: where none does, a player's derived
/// property is always its base value.
pub(crate) fn props_written(state: &GameState) -> bool {
    props_read(state).0
}

/// Whether a layer writes players' properties, and which properties the layers read.
fn props_read(state: &GameState) -> &(bool, Footprint) {
    state.content.props_derived.get_or_init(|| {
        let rs = &state.ruleset;
        let ctl = state.controller_char;
        let layer_writes = rs.layers.iter().any(|l| {
            l.slots
                .iter()
                .any(|s| matches!(s.target, SlotTarget::Prop(_)))
        });
        let mut f = Footprint::default();
        for c in rs.state_checks.iter().filter(|c| !c.loses) {
            c.condition.reads(ctl, &mut f);
        }
        state.content.any_effect_def(rs, &mut |d| {
            def_scan_reads(d, state, ctl, &mut f);
            if let Some(w) = &d.while_cond {
                w.reads(ctl, &mut f);
            }
            false
        });
        (layer_writes, f)
    })
}

/// The players' properties that changed (where no layer writes one): their derived values are
/// their new base values.
pub(super) fn props_into(state: &GameState, props: &[(PlayerId, PropId)], sheet: &mut Sheet) {
    for &(p, q) in props {
        sheet.players[p.index()][q.index()] = state.player_props[p.index()][q.index()].clone();
    }
}
