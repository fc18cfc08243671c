//! The command line's own modules (the `sinew` binary's, not the library's).

pub mod info;
pub mod output;
