//! The command line's own modules (the `sinew` binary's, not the library's): the argument
//! schema, one module per subcommand, the measurement `bake` and `info` share, and how
//! failures and output are reported.

pub mod args;
pub mod bake;
pub mod bench;
pub mod demo;
pub mod dump;
pub mod info;
pub mod measure;
pub mod output;
pub mod soft;
