//! heisen-sim: a deterministic discrete-event simulator that runs a
//! described parallel program twice — without measurement cost (the truth)
//! and with it (the measured run, the heisen kernel online inside) — so
//! that every compensation estimate can be compared with the truth
//! (DESIGN §4). It also reads LogGOPSim's GOAL schedules and TOML
//! scenarios, and hosts the `heisen` CLI.
#![forbid(unsafe_code)]
#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod activity;
pub mod analysis;
pub mod builtin;
pub mod compare;
pub mod engine;
pub mod goal;
pub mod goalgen;
pub mod input;
pub mod output;
pub mod program;
pub mod queue;
pub mod scenario;
pub mod transfer;
