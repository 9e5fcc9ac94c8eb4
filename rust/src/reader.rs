//! Reading: one reader over any source the C ABI opens (a live ring, a ring
//! set, a snapshot, a recording, a NATS stream when libevring.so has
//! libnats), through the C ABI's reader session (the registry, counters,
//! positions, the `--where` filter).
//!
//! A reader is one C source handle: used by one thread at a time (it is
//! `Send`, not `Sync`); any number of readers of one ring, in any threads or
//! processes, are independent.

use std::ffi::CStr;
use std::os::unix::io::{AsRawFd, RawFd};
use std::ptr::NonNull;
use std::time::Duration;

use crate::descriptor::{EventDescriptor, Payload};
use crate::error::{c_string, text, Error, Status};
use crate::ffi;
use crate::position::Position;
use crate::result::{EventNextResult, Gap, GapReason};
use crate::schema::Schema;
use crate::source_info::{Counters, OpenOptions, SourceInfo, SourceKind};

/// Reads events from one source. Shaped like `monad-event-ring`'s
/// `EventReader`: [`next_descriptor`](EventReader::next_descriptor) hands out
/// an [`EventDescriptor`] whose payload is read zero-copy with an expiry check.
pub struct EventReader {
    raw: NonNull<ffi::evring_source>,
    item: ffi::evring_item,
    kind: SourceKind,
    // Ring and snapshot payloads are read in place (peek, then the expiry
    // check); the others' come copied with the event.
    zero_copy: bool,
}

// A source handle may move between threads; it is used by one at a time.
unsafe impl Send for EventReader {}

impl EventReader {
    /// Opens what `location` names, as `evring watch` does: a ring name or
    /// path, a ring set, a snapshot (`.zst`), a recording, a NATS stream URL
    /// (`nats://HOST[:PORT]/STREAM`, when libevring.so was built with libnats).
    /// A live ring's reader starts at its newest event (handed out first,
    /// then what is written after it); a file's at its oldest (seek to
    /// change it).
    pub fn open(location: &str, options: &OpenOptions) -> Result<EventReader, Error> {
        let c_location = c_string("location", location)?;
        let schema_path = options.schema_path.as_deref().map(|p| c_string("schema path", p)).transpose()?;
        let name = c_string("reader name", &options.reader_name)?;
        let detail = options.reader_detail.as_deref().map(|d| c_string("reader detail", d)).transpose()?;
        let keywords = options.keywords.as_deref().map(|k| c_string("keywords", k)).transpose()?;
        let mut o = std::mem::MaybeUninit::<ffi::evring_open_options>::uninit();
        let mut o = unsafe {
            ffi::evring_open_options_init(o.as_mut_ptr());
            o.assume_init()
        };
        o.schema_path = schema_path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr());
        o.max_snapshot_size = options.max_snapshot_size.unwrap_or(0);
        o.recording_series = i32::from(options.recording_series);
        o.register_reader = i32::from(options.register);
        o.reader_name = name.as_ptr();
        o.reader_detail = detail.as_ref().map_or(std::ptr::null(), |d| d.as_ptr());
        o.keywords = keywords.as_ref().map_or(std::ptr::null(), |k| k.as_ptr());
        o.level = options.level.map_or(-1, i32::from);
        let raw = NonNull::new(unsafe { ffi::evring_source_open(c_location.as_ptr(), &o) })
            .ok_or_else(|| Error::last(ffi::EVRING_E_INVALID))?;
        let mut reader = EventReader { raw, item: new_item(), kind: SourceKind::Other(-1), zero_copy: false };
        reader.kind = reader.info()?.kind;
        reader.zero_copy = matches!(reader.kind, SourceKind::Ring | SourceKind::Snapshot);
        if matches!(reader.kind, SourceKind::Snapshot | SourceKind::Recording) {
            reader.seek(Position::Oldest)?;
        }
        Ok(reader)
    }

    /// Waits up to `timeout` for `location` to name something to open (a
    /// ring a writer has not created yet), checking every 100 ms; true once
    /// it does (`evring watch --wait`).
    pub fn wait_for_name(location: &str, timeout: Duration) -> Result<bool, Error> {
        let c_location = c_string("location", location)?;
        let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        Ok(unsafe { ffi::evring_wait_for_name(c_location.as_ptr(), ns) } == 1)
    }

    /// The next event, gap, notice, or why there is none.
    pub fn next_descriptor(&mut self) -> EventNextResult<EventDescriptor<'_>> {
        let flags = if self.zero_copy { ffi::EVRING_READ_DESCRIPTOR } else { ffi::EVRING_READ_PAYLOAD };
        let step = unsafe { ffi::evring_source_next(self.raw.as_ptr(), &mut self.item, flags) };
        let item = &self.item;
        match step {
            ffi::EVRING_STEP_EVENT => {
                let payload = if self.zero_copy {
                    Payload::InRing
                } else {
                    Payload::Copied { data: item.payload as *const u8, len: item.payload_size, state: item.payload_state }
                };
                EventNextResult::Ready(EventDescriptor::new(self, item.event, item.member, payload))
            }
            ffi::EVRING_STEP_GAP => EventNextResult::Gap(gap_of(item)),
            ffi::EVRING_STEP_NOTICE => EventNextResult::Notice(text(item.text)),
            ffi::EVRING_STEP_NOT_READY => EventNextResult::NotReady,
            ffi::EVRING_STEP_END => EventNextResult::End,
            _ => EventNextResult::Failed(self.error(ffi::EVRING_E_FAILED)),
        }
    }

    /// To the newest event, which comes next, then what is written after
    /// it (`monad-event-ring`'s `reset`; docs/rust.md).
    pub fn reset(&mut self) -> Result<(), Error> {
        self.seek(Position::Latest)
    }

    /// Positions the reader ([`Position`], or any `--from` spelling).
    /// A start that had to move leaves a note in [`notice`](EventReader::notice).
    pub fn seek(&mut self, position: impl Into<Position>) -> Result<(), Error> {
        let position = position.into();
        let status = match &position {
            Position::Oldest => unsafe { ffi::evring_source_seek_oldest(self.raw.as_ptr()) },
            Position::Latest => unsafe { ffi::evring_source_seek_latest(self.raw.as_ptr()) },
            Position::Seqno(n) => unsafe { ffi::evring_source_seek_seqno(self.raw.as_ptr(), *n) },
            other => {
                let text = c_string("position", &other.to_string())?;
                unsafe { ffi::evring_source_seek(self.raw.as_ptr(), text.as_ptr()) }
            }
        };
        self.check(status)
    }

    /// To the first event of span instance `label` ("block", 15000009: the
    /// block's BLOCK_START), through the source's schema.
    pub fn seek_span(&mut self, span: &str, label: u64) -> Result<(), Error> {
        self.seek(Position::Span { span: span.to_string(), label })
    }

    /// From now on only the events `expression` keeps are handed out (docs/cli.md,
    /// "Filter expressions": `type == TXN_LOG && topics[0] ^= 0xddf252ad`); None removes it.
    pub fn set_where(&mut self, expression: Option<&str>) -> Result<(), Error> {
        let text = expression.map(|e| c_string("filter expression", e)).transpose()?;
        let status =
            unsafe { ffi::evring_source_set_where(self.raw.as_ptr(), text.as_ref().map_or(std::ptr::null(), |t| t.as_ptr())) };
        self.check(status)
    }

    /// Sleeps until something may be ready (the ring's doorbell), at most `timeout`.
    pub fn wait(&mut self, timeout: Duration) {
        let ns = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
        unsafe { ffi::evring_source_wait(self.raw.as_ptr(), ns) }
    }

    /// A descriptor for event loops (epoll, poll, mio, tokio's `AsyncFd`;
    /// docs/event-loops.md): readable from the moment
    /// [`next_descriptor`](EventReader::next_descriptor) may have something
    /// other than [`NotReady`](EventNextResult::NotReady) until it returns
    /// `NotReady` again. The same descriptor every call, owned by the reader
    /// and closed with it: only watch it, never read or close it.
    pub fn event_fd(&mut self) -> Result<RawFd, Error> {
        let fd = unsafe { ffi::evring_source_fd(self.raw.as_ptr()) };
        if fd < 0 {
            Err(self.error(fd))
        } else {
            Ok(fd)
        }
    }

    /// The note the last seek left ("" when none).
    pub fn notice(&self) -> String {
        text(unsafe { ffi::evring_source_notice(self.raw.as_ptr()) })
    }

    /// The sequence number the next event should have (0 when not known).
    pub fn next_seqno(&self) -> u64 {
        unsafe { ffi::evring_source_next_seqno(self.raw.as_ptr()) }
    }

    /// What kind of source this is.
    pub fn kind(&self) -> SourceKind {
        self.kind
    }

    /// What the source is.
    pub fn info(&self) -> Result<SourceInfo, Error> {
        let mut info = std::mem::MaybeUninit::<ffi::evring_source_info>::zeroed();
        let info = unsafe {
            (*info.as_mut_ptr()).struct_size = std::mem::size_of::<ffi::evring_source_info>() as u32;
            let status = ffi::evring_source_get_info(self.raw.as_ptr(), info.as_mut_ptr());
            self.check(status)?;
            info.assume_init()
        };
        Ok(SourceInfo {
            kind: match info.kind {
                ffi::EVRING_KIND_RING => SourceKind::Ring,
                ffi::EVRING_KIND_SNAPSHOT => SourceKind::Snapshot,
                ffi::EVRING_KIND_RECORDING => SourceKind::Recording,
                ffi::EVRING_KIND_STREAM => SourceKind::Stream,
                ffi::EVRING_KIND_RING_SET => SourceKind::RingSet,
                other => SourceKind::Other(other),
            },
            live: info.live != 0,
            content_type: info.content_type,
            schema_hash: info.schema_hash,
            descriptor_capacity: info.descriptor_capacity,
            payload_buf_size: info.payload_buf_size,
            path: text(info.path),
            member_ids: info.member_ids != 0,
            members: info.members,
            registered: info.registered != 0,
        })
    }

    /// What the reader counted (a ring set: all members summed).
    pub fn counters(&self) -> Result<Counters, Error> {
        let mut c = ffi::evring_counters {
            struct_size: std::mem::size_of::<ffi::evring_counters>() as u32,
            ..Default::default()
        };
        self.check(unsafe { ffi::evring_source_get_counters(self.raw.as_ptr(), &mut c) })?;
        Ok(Counters {
            events: c.events,
            lost: c.lost,
            gaps: c.gaps,
            abandoned: c.abandoned,
            never_committed: c.never_committed,
            damaged: c.damaged,
            replaced: c.replaced,
            damage_reports: c.damage_reports,
            records_lost_to_damage: c.records_lost_to_damage,
            foreign: c.foreign,
            late_events: c.late_events,
        })
    }

    /// The source's schema (embedded in the ring, carried by the recording,
    /// the `schema_path` given, or a built-in one), or None.
    pub fn schema(&self) -> Option<Schema<'_>> {
        Schema::from_raw(unsafe { ffi::evring_source_schema(self.raw.as_ptr()) })
    }

    /// Where the schema came from: "embedded", "recording", "built-in schema
    /// monad-exec-v1", a file path; "" when there is none.
    pub fn schema_origin(&self) -> String {
        text(unsafe { ffi::evring_source_schema_origin(self.raw.as_ptr()) })
    }

    /// An event type's name in the source's schema.
    pub fn type_name(&self, event_type: u16) -> Option<&str> {
        let p = unsafe { ffi::evring_source_type_name(self.raw.as_ptr(), event_type) };
        if p.is_null() {
            None
        } else {
            // Names live in the schema, which lives as long as the reader.
            unsafe { CStr::from_ptr(p) }.to_str().ok()
        }
    }

    /// A payload's fields as one JSON object, decoded with the source's schema
    /// (`evring watch --format jsonl`'s "fields").
    pub fn decode_json(&self, event_type: u16, payload: &[u8]) -> Result<String, Error> {
        let mut out: Vec<u8> = vec![0; 4096.max(payload.len() * 8)];
        loop {
            let mut needed = 0usize;
            let status = unsafe {
                ffi::evring_source_decode_json(
                    self.raw.as_ptr(),
                    event_type,
                    payload.as_ptr() as *const _,
                    payload.len(),
                    out.as_mut_ptr() as *mut _,
                    out.len(),
                    &mut needed,
                )
            };
            if status == ffi::EVRING_E_TOO_SMALL && needed > out.len() {
                out.resize(needed, 0);
                continue;
            }
            self.check(status)?;
            let text = CStr::from_bytes_with_nul(&out[..needed]).map_err(|_| Error::new(Status::Decode, "decoded JSON without its NUL"))?;
            return Ok(text.to_string_lossy().into_owned());
        }
    }

    pub(crate) fn raw(&self) -> *mut ffi::evring_source {
        self.raw.as_ptr()
    }

    fn error(&self, status: i32) -> Error {
        Error::from_c(status, unsafe { ffi::evring_source_error(self.raw.as_ptr()) })
    }

    fn check(&self, status: i32) -> Result<(), Error> {
        if status == ffi::EVRING_OK {
            Ok(())
        } else {
            Err(self.error(status))
        }
    }
}

/// [`event_fd`](EventReader::event_fd)'s descriptor; negative when none
/// could be made (`event_fd` says why).
impl AsRawFd for EventReader {
    fn as_raw_fd(&self) -> RawFd {
        // The C call makes the descriptor the first time: a call on the
        // handle, which only this reader's thread makes (it is not Sync).
        unsafe { ffi::evring_source_fd(self.raw.as_ptr()) }
    }
}

impl Drop for EventReader {
    fn drop(&mut self) {
        unsafe { ffi::evring_source_close(self.raw.as_ptr()) }
    }
}

/// The gap an item of step GAP says.
pub(crate) fn gap_of(item: &ffi::evring_item) -> Gap {
    Gap {
        first_seqno: item.gap_first_seqno,
        count: item.gap_count,
        reason: GapReason::from_c(item.gap_reason),
        description: text(unsafe { ffi::evring_gap_reason_text(item.gap_reason) }),
        detail: text(item.text),
        member: item.member,
    }
}

pub(crate) fn new_item() -> ffi::evring_item {
    ffi::evring_item {
        struct_size: std::mem::size_of::<ffi::evring_item>() as u32,
        member: 0,
        event: ffi::evring_descriptor::default(),
        payload_state: 0,
        payload: std::ptr::null(),
        payload_size: 0,
        gap_first_seqno: 0,
        gap_count: 0,
        gap_reason: 0,
        text: std::ptr::null(),
    }
}

