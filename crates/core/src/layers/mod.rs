//! The layer system (CR 613): characteristics are derived from base values by
//! applying continuous effects layer by layer: characteristic-defining effects first, then by
//! dependency (`dependency`), then in timestamp order. An effect that began applying in one layer
//! keeps applying its later parts to the same objects (CR 613.6; Cranial Insertion, "Order of
//! Operations", 2020, "Smash It Up"). `change` computes what each operation does to a value.

mod analysis;
mod candidate;
mod categories;
mod change;
mod dependency;
mod derive;
mod dirty;
mod footprint;
#[cfg(feature = "test-hooks")]
mod hooks;
mod incremental;
mod kept;
mod order;
mod props;
mod replay;
mod rescan;
mod start;
mod step;
mod trail;
mod values;

pub use derive::derive;
#[cfg(feature = "test-hooks")]
pub use hooks::{derive_permuted, derive_upto, recomputation_outcomes, verify_recomputation};
pub(crate) use incremental::at_base;
pub(crate) use props::{prop_derived, props_written};
pub use start::subjects;
pub use values::copiable_values;
