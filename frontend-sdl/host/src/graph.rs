//! A character driven by one of its file's animation graphs ([`GraphRun`]): the graph section
//! decoded into buffers sized from its counts, and the core's `LayeredStateMachine` over it,
//! with parameters set by index.
//!
//! The state machines are the larger part of a runtime, so they are a feature (`graph`): a
//! build without it shows and plays any file, and [`GraphRun::start`] says that it runs no
//! graphs.

use alloc::string::String;
use core::fmt;

#[cfg(feature = "graph")]
mod run;
#[cfg(feature = "graph")]
pub use run::{GraphRig, GraphRun, Machine, Scratch};

#[cfg(not(feature = "graph"))]
mod none;
#[cfg(not(feature = "graph"))]
pub use none::{GraphRun, Scratch};

/// Why a graph could not start or refused a step, in one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GraphError(pub String);

impl fmt::Display for GraphError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl core::error::Error for GraphError {}
