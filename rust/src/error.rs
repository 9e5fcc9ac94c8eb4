//! Errors: the C ABI's status with the library's message.

use std::ffi::CStr;
use std::fmt;
use std::os::raw::{c_char, c_int};

use crate::ffi;

/// What kind of failure, as `evring_status` says it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Status {
    /// A bad argument or value (the message names it).
    Invalid,
    /// A system call failed.
    System,
    /// A file is not what it claims, or is damaged.
    Format,
    /// Out of memory.
    NoMemory,
    /// A buffer was too small.
    TooSmall,
    /// The source has no schema.
    NoSchema,
    /// A payload does not match its event type's layout.
    Decode,
    /// A payload was overwritten before it was read.
    Expired,
    /// Not possible for this kind of source.
    Unsupported,
    /// The source failed (a ring truncated under the reader).
    Failed,
    /// A payload larger than the ring allows.
    TooLarge,
    /// A status this crate does not know (a newer library).
    Other(i32),
}

impl Status {
    pub(crate) fn from_c(status: c_int) -> Status {
        match status {
            ffi::EVRING_E_INVALID => Status::Invalid,
            ffi::EVRING_E_SYSTEM => Status::System,
            ffi::EVRING_E_FORMAT => Status::Format,
            ffi::EVRING_E_NOMEM => Status::NoMemory,
            ffi::EVRING_E_TOO_SMALL => Status::TooSmall,
            ffi::EVRING_E_NO_SCHEMA => Status::NoSchema,
            ffi::EVRING_E_DECODE => Status::Decode,
            ffi::EVRING_E_EXPIRED => Status::Expired,
            ffi::EVRING_E_UNSUPPORTED => Status::Unsupported,
            ffi::EVRING_E_FAILED => Status::Failed,
            ffi::EVRING_E_TOO_LARGE => Status::TooLarge,
            other => Status::Other(other),
        }
    }
}

/// A failure: its [`Status`] and the library's message, which names the file
/// or value and the reason (`opening '/dev/shm/feed': No such file or directory`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    status: Status,
    message: String,
}

impl Error {
    pub(crate) fn new(status: Status, message: impl Into<String>) -> Error {
        Error { status, message: message.into() }
    }

    /// A failure the C ABI reported with `status` and the message at `message`.
    pub(crate) fn from_c(status: c_int, message: *const c_char) -> Error {
        Error::new(Status::from_c(status), text(message))
    }

    /// A failure whose message is this thread's `evring_last_error`.
    pub(crate) fn last(status: c_int) -> Error {
        Error::from_c(status, unsafe { ffi::evring_last_error() })
    }

    /// The kind of failure.
    pub fn status(&self) -> Status {
        self.status
    }

    /// The library's message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// A C string the library returned, as UTF-8 (invalid bytes replaced); "" for NULL.
pub(crate) fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// A Rust string as a C string; a NUL inside it is an [`Status::Invalid`] error naming `what`.
pub(crate) fn c_string(what: &str, s: &str) -> Result<std::ffi::CString, Error> {
    std::ffi::CString::new(s).map_err(|_| Error::new(Status::Invalid, format!("{} '{}' contains a NUL byte", what, s.escape_debug())))
}

pub(crate) fn text_of_version() -> String {
    text(unsafe { ffi::evring_version() })
}
