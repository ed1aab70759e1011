//! The game's seeded random source: shuffles and other random choices draw from it, so the same
//! content, seed and answers give the same game, byte for byte. It is part of the state (a clone
//! goes on alike; a save keeps it).
//!
//! The generator is SplitMix64 (Steele, Lea and Flood, "Fast splittable pseudorandom number
//! generators", OOPSLA 2014): one 64-bit word of state, fixed here so that saved games and seeds
//! give the same draws in every version of the engine.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A seeded random source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Random {
    state: u64,
}

impl Default for Random {
    /// The source of seed 0.
    fn default() -> Self {
        Random::new(0)
    }
}

impl Random {
    /// The source a seed starts.
    pub fn new(seed: u64) -> Self {
        Random { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number from 0 to `n - 1`, each equally likely (draws that would favour the low numbers
    /// are drawn again); 0 when `n` is 0.
    pub fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            return 0;
        }
        // The largest multiple of n that fits: draws at or above it are redrawn.
        let zone = u64::MAX - u64::MAX % n;
        loop {
            let x = self.next_u64();
            if x < zone {
                return x % n;
            }
        }
    }

    /// Puts the items in a random order, each order equally likely (Fisher and Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// Saved as a string of 16 hexadecimal digits: a JSON number would lose bits in readers that
/// take numbers as doubles.
impl Serialize for Random {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&format!("{:016x}", self.state))
    }
}

impl<'de> Deserialize<'de> for Random {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        u64::from_str_radix(&text, 16)
            .map(|state| Random { state })
            .map_err(|_| serde::de::Error::custom("a random source is 16 hexadecimal digits"))
    }
}

#[cfg(test)]
mod tests {
    use super::Random;

    #[test]
    fn splitmix64_gives_the_published_sequence() {
        // The first outputs for seed 1234567 that Rosetta Code's "Pseudo-random numbers/
        // Splitmix64" task gives for the reference algorithm.
        let mut r = Random::new(1234567);
        let got: Vec<u64> = (0..5).map(|_| r.next_u64()).collect();
        assert_eq!(
            got,
            [
                6457827717110365317,
                3203168211198807973,
                9817491932198370423,
                4593380528125082431,
                16408922859458223821
            ]
        );
    }

    #[test]
    fn a_shuffle_is_a_permutation_and_every_order_comes() {
        let mut r = Random::new(7);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..600 {
            let mut v = [0, 1, 2];
            r.shuffle(&mut v);
            let mut sorted = v;
            sorted.sort();
            assert_eq!(sorted, [0, 1, 2]);
            seen.insert(v);
        }
        // 3! = 6 orders, each likely about 100 times in 600.
        assert_eq!(seen.len(), 6);
    }

    #[test]
    fn below_stays_below_and_saves_as_hex() {
        let mut r = Random::new(42);
        assert!((0..1000).all(|_| r.below(6) < 6));
        assert_eq!(r.below(0), 0);
        let text = serde_json::to_string(&r).expect("serializes");
        let back: Random = serde_json::from_str(&text).expect("deserializes");
        assert_eq!(back, r);
        assert!(serde_json::from_str::<Random>("\"not hex\"").is_err());
    }
}
