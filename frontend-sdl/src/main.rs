//! The `sinew` command line: parses the arguments ([`cli::args`]) and runs the subcommand
//! (each in a module of [`cli`]), reporting a failure on standard error with its exit code.

use std::process::ExitCode;

use clap::Parser;

mod cli;

use cli::args::{Cli, Command};
use cli::output::Failure;

fn main() -> ExitCode {
    match run(Cli::parse().command) {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => f.report(),
    }
}

/// Runs one subcommand.
fn run(command: Command) -> Result<(), Failure> {
    match command {
        Command::Bake(args) => cli::bake::run(args),
        Command::Info(args) => cli::info::run(args),
        Command::Bench(args) => cli::bench::run(args),
        Command::Soft(args) => cli::soft::run(args),
        Command::Dump(args) => cli::dump::run(args),
        Command::Demo(args) => cli::demo::run(args),
    }
}
