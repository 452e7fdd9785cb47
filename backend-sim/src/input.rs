//! The error every reader of user files (GOAL schedules, TOML scenarios)
//! returns: the file, the line and what was expected there.

use core::fmt;

/// A problem in a user's file, located to a line.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputError {
    /// The file (as the user named it).
    pub file: String,
    /// 1-based line number; 0 when the problem is not on one line.
    pub line: usize,
    /// What was expected and what was found.
    pub message: String,
}

impl InputError {
    /// An error at `line` of `file`.
    pub fn new(file: &str, line: usize, message: impl Into<String>) -> Self {
        InputError {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line > 0 {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(f, "{}: {}", self.file, self.message)
        }
    }
}

impl core::error::Error for InputError {}

/// The 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    let end = offset.min(text.len());
    text.as_bytes()[..end]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
