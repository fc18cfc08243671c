//! How the command line reports: a failure's message and exit code, and standard output that
//! goes quiet when its reader leaves.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

/// A failure to report: one line naming the file and the problem, and the exit code.
pub struct Failure {
    /// The file the problem is in, if any.
    pub file: Option<PathBuf>,
    /// What is wrong.
    pub message: String,
    /// The process's exit code.
    pub code: u8,
}

impl Failure {
    /// Writes the failure's line to standard error (`sinew: FILE: MESSAGE`, or
    /// `sinew: MESSAGE`) and returns its exit code.
    pub fn report(&self) -> ExitCode {
        match &self.file {
            Some(p) => eprintln!("sinew: {}: {}", p.display(), self.message),
            None => eprintln!("sinew: {}", self.message),
        }
        ExitCode::from(self.code)
    }
}

/// A failure in `file`, exit code 2.
pub fn fail(file: &Path, message: impl ToString) -> Failure {
    Failure { file: Some(file.to_path_buf()), message: message.to_string(), code: 2 }
}

/// A failure that is no file's (a bad argument, a viewer that cannot run), exit code 2.
pub fn error(message: impl ToString) -> Failure {
    Failure { file: None, message: message.to_string(), code: 2 }
}

/// Standard output that goes quiet once its reader has gone (`sinew info … | head -1`): a closed
/// pipe ends the output without an error; other write errors fail with exit code 1.
pub struct Out {
    closed: bool,
}

impl Out {
    /// Standard output, open.
    pub fn new() -> Self {
        Out { closed: false }
    }
    /// Writes one line (nothing once the pipe is closed).
    pub fn line(&mut self, args: std::fmt::Arguments<'_>) -> Result<(), Failure> {
        if self.closed {
            return Ok(());
        }
        match writeln!(std::io::stdout().lock(), "{args}") {
            Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                self.closed = true;
                Ok(())
            }
            Err(e) => Err(Failure { file: None, message: format!("cannot write the output: {e}"), code: 1 }),
            Ok(()) => Ok(()),
        }
    }
}
