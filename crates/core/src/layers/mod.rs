//! The layer system (CR 613): characteristics are derived from base values by
//! applying continuous effects layer by layer: characteristic-defining effects first, then by
//! dependency (`dependency`), then in timestamp order. An effect that began applying in one layer
//! keeps applying its later parts to the same objects (CR 613.6; Cranial Insertion, "Order of
//! Operations", 2020, "Smash It Up"). `change` computes what each operation does to a value.

mod analysis;
mod candidate;
mod change;
mod dependency;
mod derive;
mod incremental;
mod values;

pub use derive::{copiable_values, derive, derive_permuted, derive_upto, subjects};
pub use incremental::{recomputation_outcomes, verify_recomputation};
