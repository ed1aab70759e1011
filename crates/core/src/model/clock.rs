//! The clock bounds on time read (a game's playouts, a confined load): `std::time::Instant`,
//! except on wasm32-unknown-unknown, which has no clock (`Instant::now` panics there) and where
//! time reads as zero, so only the bounds on size and occurrences hold (the playground's page
//! stops a run that takes too long instead).

#[cfg(not(target_arch = "wasm32"))]
pub use std::time::Instant;

/// A clock that reads no time passing.
#[cfg(target_arch = "wasm32")]
#[derive(Clone, Copy, Debug)]
pub struct Instant;

#[cfg(target_arch = "wasm32")]
impl Instant {
    /// Now.
    pub fn now() -> Instant {
        Instant
    }
    /// The time since: none.
    pub fn elapsed(&self) -> std::time::Duration {
        std::time::Duration::ZERO
    }
}
