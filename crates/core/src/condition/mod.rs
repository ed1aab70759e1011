//! Conditions and numeric expressions evaluated against a game state: which objects an effect
//! applies to, "as long as", the state-based checks (their definitions are in `model::condition`).

pub mod eval;
pub mod galaxy;
pub mod places;
