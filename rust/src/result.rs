//! What a reader's step yields, and what reading a payload yields.

use crate::error::Error;

/// The result of asking a reader for the next event: shaped like
/// `monad-event-ring`'s `EventNextResult` (Ready, NotReady, Gap), with the
/// steps evring's sources have besides (docs/rust.md says why).
#[derive(Debug)]
pub enum EventNextResult<T> {
    /// The next event.
    Ready(T),
    /// Nothing new yet (a live ring the reader has caught up with): try
    /// again, or sleep on the ring's doorbell with [`EventReader::wait`](crate::EventReader::wait).
    NotReady,
    /// Events were lost: their exact range and why. After a gap a consumer
    /// that needs every event must recover what it missed.
    Gap(Gap),
    /// Something the source has to say (a start that moved, a writer that
    /// exited, damage in a recording, a reader that could not register).
    Notice(String),
    /// The source has no more events: the end of a snapshot or recording,
    /// or a live ring whose writer exited and whose events were all read.
    End,
    /// The source failed (a ring truncated under the reader); reading stops.
    Failed(Error),
}

impl<T> EventNextResult<T> {
    /// Maps the event of [`Ready`](EventNextResult::Ready), keeping the other steps.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> EventNextResult<U> {
        match self {
            EventNextResult::Ready(t) => EventNextResult::Ready(f(t)),
            EventNextResult::NotReady => EventNextResult::NotReady,
            EventNextResult::Gap(g) => EventNextResult::Gap(g),
            EventNextResult::Notice(n) => EventNextResult::Notice(n),
            EventNextResult::End => EventNextResult::End,
            EventNextResult::Failed(e) => EventNextResult::Failed(e),
        }
    }
}

/// Why events were lost (the C ABI's `evring_gap_reason`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GapReason {
    /// A recording did not record them.
    Unrecorded,
    /// The reader fell behind the writer (lapped).
    FellBehind,
    /// A writer reserved them and gave up.
    Abandoned,
    /// A writer reserved them and never committed.
    NeverCommitted,
    /// The writer is gone.
    WriterGone,
    /// Lost to damage in a recording.
    LostToDamage,
    /// The ring was replaced under the reader.
    RingReplaced,
    /// A reason this crate does not know (a newer library).
    Other(u32),
}

impl GapReason {
    pub(crate) fn from_c(reason: u32) -> GapReason {
        match reason {
            0 => GapReason::Unrecorded,
            1 => GapReason::FellBehind,
            2 => GapReason::Abandoned,
            3 => GapReason::NeverCommitted,
            4 => GapReason::WriterGone,
            5 => GapReason::LostToDamage,
            6 => GapReason::RingReplaced,
            other => GapReason::Other(other),
        }
    }
}

/// Events lost between two that were read: `count` sequence numbers from
/// `first_seqno` (a ring set member's when `member` is not 0).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gap {
    /// The first lost sequence number.
    pub first_seqno: u64,
    /// How many.
    pub count: u64,
    /// Why.
    pub reason: GapReason,
    /// The reason in words ("the reader fell behind the writer (lapped)").
    pub description: String,
    /// The source's detail, or "".
    pub detail: String,
    /// The ring set member whose sequence numbers these are (0 for other sources).
    pub member: u32,
}

/// The result of reading a payload: shaped like `monad-event-ring`'s
/// `EventPayloadResult`.
#[derive(Debug, PartialEq, Eq)]
pub enum EventPayloadResult<T> {
    /// The payload was read, and was not overwritten while it was.
    Ready(T),
    /// The payload's bytes are not there to read: the writer overwrote them
    /// (or, rarely, the descriptor names bytes outside the ring:
    /// [`EventDescriptor::payload_state`](crate::EventDescriptor::payload_state) says which).
    Expired,
}

impl<T> EventPayloadResult<T> {
    /// Maps the value of [`Ready`](EventPayloadResult::Ready).
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> EventPayloadResult<U> {
        match self {
            EventPayloadResult::Ready(t) => EventPayloadResult::Ready(f(t)),
            EventPayloadResult::Expired => EventPayloadResult::Expired,
        }
    }

    /// The value, or None when expired.
    pub fn ready(self) -> Option<T> {
        match self {
            EventPayloadResult::Ready(t) => Some(t),
            EventPayloadResult::Expired => None,
        }
    }
}
