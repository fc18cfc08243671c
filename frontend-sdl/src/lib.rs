//! sinew's host side: importers, the baker, and the viewers behind the `sinew` command line.

pub mod import;
pub mod rig;
