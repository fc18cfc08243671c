//! The command line's own modules (the `sinew` binary's, not the library's): the argument
//! schema (`args`), one module per subcommand (`bake`, `bench`, `demo`, `dump`, `info`,
//! `soft`), which never use one another, and what they share: a model's contents
//! (`model_info`, `info` and `bake`), the clips' error measurement (`measure`, `bake` and
//! `info`), the retargeting setup (`retarget`, `info`, `dump`, `bake` and `demo`), and how
//! failures and output are reported (`output`).

pub mod args;
pub mod bake;
pub mod bench;
pub mod demo;
pub mod dump;
pub mod info;
pub mod measure;
pub mod model_info;
pub mod output;
pub mod retarget;
pub mod soft;
