//! The pending decision as a list of options, each with a stable index and a readable label:
//! what an agent (a random player, a search, a neural network, a person at a UI) chooses from.
//! `answer(i)` takes option `i`; the same state always lists the same options in the same order.

use crate::model::action::Outcome;
use crate::model::condition::Subject;
use crate::model::decision::{Choice, DecisionRequest};
use crate::model::error::ActionError;
use crate::state::GameState;

/// One legal answer to the pending decision.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct DecisionOption {
    /// Readable: "cast Lightning Bolt", "pass", "target Ben", "pay".
    pub label: String,
    /// The answer it stands for.
    pub choice: Choice,
}

impl GameState {
    /// The legal answers to the pending decision, in a stable order (an empty list when nothing
    /// is pending, or for ordering timestamps, whose answer is an order of the objects). For a
    /// play or a Reaction, passing is the last option.
    pub fn decision_options(&self) -> Vec<DecisionOption> {
        let Some(d) = self.pending_decision() else {
            return Vec::new();
        };
        let name = |s: &Subject| match s {
            Subject::Object(o) => self
                .get_object(*o)
                .map_or("?".into(), |x| x.name.to_string()),
            Subject::Player(p) => self.player_name(*p).to_string(),
        };
        let pass = || DecisionOption {
            label: "pass".into(),
            choice: Choice::Pass,
        };
        match d {
            DecisionRequest::OrderTimestamps { .. } => Vec::new(),
            DecisionRequest::Play { options, .. } => options
                .iter()
                .enumerate()
                .map(|(i, o)| DecisionOption {
                    label: self.option_label(o),
                    choice: Choice::Pick(i),
                })
                .chain(std::iter::once(pass()))
                .collect(),
            DecisionRequest::ChooseNext { options, .. } => options
                .iter()
                .enumerate()
                .map(|(i, o)| DecisionOption {
                    label: o.text.to_string(),
                    choice: Choice::Pick(i),
                })
                .collect(),
            DecisionRequest::React { options, .. } => options
                .iter()
                .enumerate()
                .map(|(i, o)| DecisionOption {
                    label: format!("take \"{}\"", o.text),
                    choice: Choice::Pick(i),
                })
                .chain(std::iter::once(pass()))
                .collect(),
            DecisionRequest::OrderChoices { choosers, .. } => choosers
                .iter()
                .enumerate()
                .map(|(i, p)| DecisionOption {
                    label: format!("{} chooses next", self.player_name(*p)),
                    choice: Choice::Pick(i),
                })
                .collect(),
            DecisionRequest::PayCost { .. } => vec![
                DecisionOption {
                    label: "pay".into(),
                    choice: Choice::Pick(0),
                },
                DecisionOption {
                    label: "decline".into(),
                    choice: Choice::Pass,
                },
            ],
            DecisionRequest::ChooseTarget { options, .. } => options
                .iter()
                .map(|t| DecisionOption {
                    label: format!("target {}", name(t)),
                    choice: Choice::Target(*t),
                })
                .collect(),
            DecisionRequest::ChooseNumber { options, .. } => options
                .iter()
                .map(|n| DecisionOption {
                    label: format!("X = {n}"),
                    choice: Choice::Number(*n),
                })
                .collect(),
        }
    }

    /// [`GameState::decision_options`] with every label empty: the same answers in the same
    /// order (the request's choices), for agents that do not read the labels.
    pub(crate) fn decision_options_unlabelled(&self) -> Vec<DecisionOption> {
        match self.pending_decision() {
            None | Some(DecisionRequest::OrderTimestamps { .. }) => Vec::new(),
            Some(d) => {
                // One list: the request's choices written straight into the options.
                let mut out = Vec::with_capacity(d.choice_count());
                d.each_choice(|choice| {
                    out.push(DecisionOption {
                        label: String::new(),
                        choice,
                    })
                });
                out
            }
        }
    }

    /// Takes option `index` of [`GameState::decision_options`]. An index past them is an error that
    /// changes nothing.
    pub fn answer(&mut self, index: usize) -> Result<Outcome, ActionError> {
        // The options' answers in their order, without their labels: the request's choices
        // (none listed for ordering timestamps).
        let mut choices = match self.pending_decision() {
            None | Some(DecisionRequest::OrderTimestamps { .. }) => Vec::new(),
            Some(d) => d.choices(),
        };
        if index >= choices.len() {
            return Err(ActionError::BadChoice(format!(
                "option {index} of {}: there is no such option",
                choices.len()
            )));
        }
        self.decide(choices.swap_remove(index))
    }
}
