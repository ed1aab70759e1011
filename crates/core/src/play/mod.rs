//! Whole games played through decisions alone: agents that answer them ([`agents`]) and the
//! loops that play one game or many ([`playout`]), for tests, benchmarks and AI research.

pub mod agents;
pub mod playout;
