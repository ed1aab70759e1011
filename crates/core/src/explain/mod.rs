//! Explanations in words: why a derived value is what it is, layer by layer (CR 613), from the
//! steps the layer system recorded (`model::explain`).

pub mod accounting;
pub mod describe;
