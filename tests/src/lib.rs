//! Test support for sinew: an independent `f64` reference implementation.
