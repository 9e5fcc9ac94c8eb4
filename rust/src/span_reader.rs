//! Whole span instances from a reader: [`EventReader::blocks`] and
//! [`EventReader::spans`] open the C ABI's assembler (evring.h, "Assembled
//! spans") on the reader's source, the same span assembler `evring watch
//! --assemble` and Python's `reader.blocks()` use.
//!
//! A [`SpanReader`] borrows its reader mutably: while it is open the source is
//! read only through it (events read past it would be missing from its
//! instances), and it is closed before the reader, as the C ABI asks.

use std::ffi::CString;
use std::ptr::NonNull;
use std::time::Duration;

use crate::error::{c_string, text, Error, Status};
use crate::ffi;
use crate::reader::{gap_of, new_item, EventReader};
use crate::result::EventNextResult;
use crate::span::AssembledSpan;

/// What an assembler counted (`evring_assembler_get_counts`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SpanCounts {
    /// Complete instances handed out.
    pub handed_out: u64,
    pub abandoned: u64,
    pub broken: u64,
    /// Open or waiting for their stage when the source ended, or pushed out by newer ones.
    pub unfinished: u64,
    /// Events of instances begun before reading started (never handed out short).
    pub unassembled: u64,
}

/// Hands out whole span instances of one reader's source.
pub struct SpanReader<'r> {
    reader: &'r mut EventReader,
    raw: NonNull<ffi::evring_assembler>,
    span: ffi::evring_span,
    item: ffi::evring_item,
    failed: bool,  // the iterator ends after its first error
}

// As its reader: it may move between threads, used by one at a time.
unsafe impl Send for SpanReader<'_> {}

impl EventReader {
    /// Whole blocks with their transactions and commit stages:
    /// [`spans("block", stage)`](EventReader::spans).
    pub fn blocks(&mut self, stage: Option<&str>) -> Result<SpanReader<'_>, Error> {
        self.spans("block", stage)
    }

    /// Whole instances of `span` (any span of the source's schema with a
    /// label), from where the reader stands, each handed out when it ends
    /// (`stage` None) or once it reaches `stage` ("finalized"). Refused, with
    /// the reason, for a source without a schema, a span or stage the schema
    /// lacks, or a reader with a `set_where` filter.
    pub fn spans(&mut self, span: &str, stage: Option<&str>) -> Result<SpanReader<'_>, Error> {
        let c_span = c_string("span", span)?;
        let c_stage: Option<CString> = stage.map(|s| c_string("stage", s)).transpose()?;
        let stage_ptr = c_stage.as_ref().map_or(std::ptr::null(), |s| s.as_ptr());
        let raw = unsafe { ffi::evring_assembler_open(self.raw(), c_span.as_ptr(), stage_ptr) };
        let raw = NonNull::new(raw).ok_or_else(|| Error::last(ffi::EVRING_E_INVALID))?;
        // All-zero is a valid evring_span: integers, and null pointers.
        let mut span: ffi::evring_span = unsafe { std::mem::MaybeUninit::zeroed().assume_init() };
        span.struct_size = std::mem::size_of::<ffi::evring_span>() as u32;
        Ok(SpanReader { reader: self, raw, span, item: new_item(), failed: false })
    }
}

impl<'r> SpanReader<'r> {
    /// The next instance, or why there is none: `Ready(span)`; `Gap` and
    /// `Notice` as the reader would hand them out (a gap has already broken
    /// the instances open across it: they come next, `Broken`); `NotReady`
    /// (a live ring: wait, then ask again; open instances stay open); `End`
    /// (what is still open or waiting for its stage is counted unfinished);
    /// `Failed`.
    pub fn next_span(&mut self) -> EventNextResult<AssembledSpan> {
        let step = unsafe { ffi::evring_assembler_next(self.raw.as_ptr(), &mut self.span, &mut self.item) };
        match step {
            ffi::EVRING_STEP_EVENT => EventNextResult::Ready(AssembledSpan::from_c(&self.span, &*self.reader)),
            ffi::EVRING_STEP_GAP => EventNextResult::Gap(gap_of(&self.item)),
            ffi::EVRING_STEP_NOTICE => EventNextResult::Notice(text(self.item.text)),
            ffi::EVRING_STEP_NOT_READY => EventNextResult::NotReady,
            ffi::EVRING_STEP_END => EventNextResult::End,
            _ => EventNextResult::Failed(Error::new(
                Status::Failed,
                text(unsafe { ffi::evring_assembler_error(self.raw.as_ptr()) }),
            )),
        }
    }

    /// Sleeps on the source's doorbell (after `NotReady`).
    pub fn wait(&mut self, timeout: Duration) {
        self.reader.wait(timeout)
    }

    /// What the assembler counted so far.
    pub fn counts(&self) -> SpanCounts {
        let mut c = ffi::evring_assembler_counts {
            struct_size: std::mem::size_of::<ffi::evring_assembler_counts>() as u32,
            ..Default::default()
        };
        // Cannot fail: the handle is open and the struct whole.
        unsafe { ffi::evring_assembler_get_counts(self.raw.as_ptr(), &mut c) };
        SpanCounts {
            handed_out: c.handed_out,
            abandoned: c.abandoned,
            broken: c.broken,
            unfinished: c.unfinished,
            unassembled: c.unassembled,
        }
    }
}

/// The instances there are now: ends at the end of the source, or when a
/// live ring has nothing more yet (as Python's `reader.blocks()`); gaps and
/// notices are passed over (a gap's instances still come, `Broken`).
impl<'r> Iterator for SpanReader<'r> {
    type Item = Result<AssembledSpan, Error>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed {
            return None;
        }
        loop {
            match self.next_span() {
                EventNextResult::Ready(span) => return Some(Ok(span)),
                EventNextResult::Gap(_) | EventNextResult::Notice(_) => continue,
                EventNextResult::NotReady | EventNextResult::End => return None,
                EventNextResult::Failed(e) => {
                    self.failed = true;
                    return Some(Err(e));
                }
            }
        }
    }
}

impl<'r> Drop for SpanReader<'r> {
    fn drop(&mut self) {
        unsafe { ffi::evring_assembler_close(self.raw.as_ptr()) }
    }
}
