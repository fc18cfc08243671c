//! sinew's host side: importers, the baker, and the viewers behind the `sinew` command line.

pub mod bake;
pub mod bench;
pub mod demo;
pub mod dump;
pub mod eval;
pub mod import;
pub mod model;
pub mod rig;
pub mod scene;
pub mod soft;
