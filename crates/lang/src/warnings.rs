//! Warnings: input that loads but probably does not say what its author meant. A symbol written as
//! a bare word after `has` or `lacks` that no ruleset value, content or choice names can never be
//! held by an object (save one holding every symbol): the author probably meant a reference such
//! as `chosen` (the source's choice), or mistyped a word.

use crate::diagnostics::{did_you_mean, Diagnostic};
use crate::lower::defs::char_def;
use crate::lower::SymbolNote;
use rulecraft_core::model::content::Content;
use rulecraft_core::model::effect::{Change, EffectDef, SymRef};
use rulecraft_core::model::response::Deed;
use rulecraft_core::model::ruleset::Ruleset;
use rulecraft_core::{Ability, Symbol, Value};
use std::collections::HashSet;

/// The words a game can give objects: every symbol and keyword the ruleset's face-down values, the
/// content's printed values, the operations of its effects (static, spell and started by a
/// response or rule), and the choices name; the words a template or a word
/// replacement can make.
struct Produced {
    names: HashSet<String>,
    /// Ability templates (`"protection from {}"`): prefix and suffix around the symbol.
    templates: Vec<(String, String)>,
    /// Words a replacement writes in (`replace island with forest`): a word containing one.
    parts: Vec<String>,
}

impl Produced {
    fn of(rs: &Ruleset, content: &Content, choices: &[Symbol]) -> Self {
        let mut p = Produced {
            names: choices.iter().map(|s| s.to_string()).collect(),
            templates: Vec::new(),
            parts: Vec::new(),
        };
        for (_, v) in &rs.face_down {
            p.value(v);
        }
        for class in &content.classes {
            for (_, v) in &class.printed {
                p.value(v);
            }
            let spells = class
                .spell
                .iter()
                .flat_map(|s| s.effects.iter().map(|(_, d)| d));
            for def in class.statics.iter().chain(spells) {
                p.effect(def, choices);
            }
            for r in &class.responses {
                p.deeds(r.costs.iter().chain(&r.deeds), choices);
            }
        }
        for r in &rs.rules {
            p.deeds(r.costs.iter().chain(&r.deeds), choices);
        }
        p
    }

    /// The effects a response starts, now or in a delayed effect.
    fn deeds<'a>(&mut self, deeds: impl IntoIterator<Item = &'a Deed>, choices: &[Symbol]) {
        for d in deeds {
            match d {
                Deed::Effect { def, .. } => self.effect(def, choices),
                Deed::Delayed(delayed) => self.deeds(&delayed.deeds, choices),
                _ => {}
            }
        }
    }

    fn value(&mut self, v: &Value) {
        match v {
            Value::Symbols(s) => self.names.extend(s.iter().map(|s| s.to_string())),
            Value::Abilities(list) => self.abilities(list),
            _ => {}
        }
    }

    fn abilities(&mut self, list: &[Ability]) {
        for a in list {
            if let Ability::Keyword(k) = a {
                self.names.insert(k.to_string());
            }
        }
    }

    fn effect(&mut self, def: &EffectDef, choices: &[Symbol]) {
        for op in &def.ops {
            self.change(&op.change, choices);
        }
    }

    fn change(&mut self, change: &Change, choices: &[Symbol]) {
        match change {
            Change::SetSymbols(l)
            | Change::SetInCategories { set: l, .. }
            | Change::AddSymbols(l)
            | Change::RemoveSymbols(l) => self.names.extend(l.set.iter().map(|s| s.to_string())),
            // A change to symbols that give abilities (CR 305.6-305.7) names what it lists.
            Change::WithIntrinsic { change, .. } => self.change(change, choices),
            Change::SetAbilities(l)
            | Change::AddAbilities(l)
            | Change::RemoveAbilities(l)
            | Change::MergeAbilities(l) => self.abilities(l),
            Change::SetValues(vals) => vals.iter().for_each(|(_, v)| self.value(v)),
            Change::AbilitiesPer { template, .. } => {
                if let Some((a, b)) = template.split_once("{}") {
                    self.templates.push((a.to_string(), b.to_string()));
                }
            }
            Change::ReplaceWord(_, to) => match to {
                SymRef::Lit(s) => self.parts.push(s.to_string()),
                SymRef::Chosen(_) => self.parts.extend(choices.iter().map(|s| s.to_string())),
            },
            _ => {}
        }
    }

    fn makes(&self, w: &str) -> bool {
        self.names.contains(w)
            || self
                .templates
                .iter()
                .any(|(a, b)| w.len() >= a.len() + b.len() && w.starts_with(a) && w.ends_with(b))
            || self
                .parts
                .iter()
                .any(|p| !p.is_empty() && w.contains(p.as_str()))
    }
}

/// A warning for each noted symbol that nothing names.
pub fn unnamed_symbols(
    rs: &Ruleset,
    content: &Content,
    choices: &[Symbol],
    notes: &[SymbolNote],
) -> Vec<Diagnostic> {
    if notes.is_empty() {
        return Vec::new();
    }
    let p = Produced::of(rs, content, choices);
    let refs = ["chosen", "first_choice", "second_choice"];
    notes
        .iter()
        .filter(|n| !p.makes(&n.symbol))
        .map(|n| {
            let known = p.names.iter().map(|s| s.as_str()).chain(refs);
            let mut msg = format!(
                "`{} {} {}`: no ruleset, content or choice names the symbol `{}`",
                char_def(rs, n.ch).name,
                if n.lacks { "lacks" } else { "has" },
                n.symbol,
                n.symbol
            );
            if let Some(h) = did_you_mean(&n.symbol, known) {
                msg = format!("{msg}: {h}");
            }
            Diagnostic::new(n.span, msg).with_help(format!(
                "`chosen`, `first_choice` and `second_choice` name the source's choices; write \"{}\" as a string to mean the word itself",
                n.symbol
            ))
        })
        .collect()
}
