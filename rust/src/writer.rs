//! Writing: a ring writer (`evring_writer`), its checked typed writes, raw
//! reservations, interest, and payloads built field by field through the
//! writer's schema.
//!
//! A writer may be used from any number of threads at once (it is `Send`
//! and `Sync`: the C writer handle's publishing calls are thread-safe);
//! dropping it closes the ring (and removes the file unless `keep`).

use std::ptr::NonNull;

use crate::error::{c_string, text, Error, Status};
use crate::ffi;
use crate::payload_builder::PayloadBuilder;
use crate::schema::Schema;

/// How to create a ring (the C ABI's `evring_writer_options`).
#[derive(Clone, Debug)]
pub struct WriterOptions {
    /// A ring name (in the ring directory) or a path (with a '/').
    pub name: String,
    /// 2^shift descriptors; default 20.
    pub descriptor_shift: u32,
    /// 2^shift payload bytes; default 28.
    pub payload_shift: u32,
    /// Default 1 (Test); with a schema, the schema's.
    pub content_type: Option<u16>,
    /// A schema file to embed: typed writes are checked against it.
    pub schema_path: Option<String>,
    /// The same as text.
    pub schema_text: Option<String>,
    /// Join a ring other writers share.
    pub shared: bool,
    /// Leave the file when the writer closes.
    pub keep: bool,
    /// Default 0o664.
    pub file_mode: u32,
    /// With a schema: check raw commits too (a debugging aid).
    pub check_raw: bool,
}

impl WriterOptions {
    /// The defaults, writing the ring `name`.
    pub fn new(name: &str) -> WriterOptions {
        WriterOptions {
            name: name.to_string(),
            descriptor_shift: 20,
            payload_shift: 28,
            content_type: None,
            schema_path: None,
            schema_text: None,
            shared: false,
            keep: false,
            file_mode: 0o664,
            check_raw: false,
        }
    }
}

/// What a write did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Recorded {
    /// Published with this sequence number.
    Published(u64),
    /// Skipped: no registered reader wants this event type (docs/interest.md).
    NotWanted,
}

/// A ring writer.
pub struct Writer {
    raw: NonNull<ffi::evring_writer>,
}

// The C writer handle may be used from any number of threads at once (evring.h).
unsafe impl Send for Writer {}
unsafe impl Sync for Writer {}

impl Writer {
    /// Creates (or, shared, joins) a ring.
    pub fn create(options: &WriterOptions) -> Result<Writer, Error> {
        let name = c_string("ring name", &options.name)?;
        let schema_path = options.schema_path.as_deref().map(|p| c_string("schema path", p)).transpose()?;
        let schema_text = options.schema_text.as_deref().map(|t| c_string("schema text", t)).transpose()?;
        let mut o = std::mem::MaybeUninit::<ffi::evring_writer_options>::uninit();
        let mut o = unsafe {
            ffi::evring_writer_options_init(o.as_mut_ptr());
            o.assume_init()
        };
        o.name = name.as_ptr();
        o.descriptor_shift = options.descriptor_shift;
        o.payload_shift = options.payload_shift;
        o.content_type = options.content_type.unwrap_or(0);
        o.schema_path = schema_path.as_ref().map_or(std::ptr::null(), |p| p.as_ptr());
        o.schema_text = schema_text.as_ref().map_or(std::ptr::null(), |t| t.as_ptr());
        o.shared = i32::from(options.shared);
        o.keep = i32::from(options.keep);
        o.file_mode = options.file_mode;
        o.check_raw = i32::from(options.check_raw);
        let raw = NonNull::new(unsafe { ffi::evring_writer_create(&o) }).ok_or_else(|| Error::last(ffi::EVRING_E_INVALID))?;
        Ok(Writer { raw })
    }

    /// The ring file's path.
    pub fn path(&self) -> String {
        text(unsafe { ffi::evring_writer_path(self.raw.as_ptr()) })
    }

    /// The largest payload one event may carry.
    pub fn max_payload(&self) -> u64 {
        unsafe { ffi::evring_writer_max_payload(self.raw.as_ptr()) }
    }

    /// The schema the ring was created with, or None.
    pub fn schema(&self) -> Option<Schema<'_>> {
        Schema::from_raw(unsafe { ffi::evring_writer_schema(self.raw.as_ptr()) })
    }

    /// Interest: whether some registered reader wants events of `event_type`
    /// (always true without a schema). One load of the ring's interest word:
    /// skip building an event nobody wants.
    pub fn wants(&self, event_type: u16) -> bool {
        (unsafe { ffi::evring_writer_wants(self.raw.as_ptr(), event_type) }) == 1
    }

    /// Writes one event in one call. With a schema this is the checked typed
    /// write: an event type the schema does not declare, or a payload whose
    /// size its layout rules out, is refused ([`Status::Decode`], the message
    /// says why) and nothing is published; an event no registered reader
    /// wants is skipped ([`Recorded::NotWanted`]). Without a schema any bytes go.
    pub fn record(&self, event_type: u16, payload: &[u8], flow: Option<&[u64; 4]>) -> Result<Recorded, Error> {
        let mut seqno = 0u64;
        let status = unsafe {
            ffi::evring_writer_record(
                self.raw.as_ptr(),
                event_type,
                payload.as_ptr() as *const _,
                payload.len() as u64,
                flow.map_or(std::ptr::null(), |f| f.as_ptr()),
                &mut seqno,
            )
        };
        match status {
            ffi::EVRING_OK => Ok(Recorded::Published(seqno)),
            ffi::EVRING_NOT_WANTED => Ok(Recorded::NotWanted),
            _ => Err(self.error(status)),
        }
    }

    /// The raw path: room for a payload of `size` bytes in the ring, filled
    /// in place, then committed (or aborted: dropping it aborts). Not checked
    /// against the schema (unless the writer was created with `check_raw`).
    pub fn reserve(&self, size: u64) -> Result<Reservation<'_>, Error> {
        let mut r: Box<ffi::evring_reservation> = Box::new(unsafe { std::mem::zeroed() });
        r.struct_size = std::mem::size_of::<ffi::evring_reservation>() as u32;
        let status = unsafe { ffi::evring_writer_reserve(self.raw.as_ptr(), size, &mut *r) };
        if status != ffi::EVRING_OK {
            return Err(self.error(status));
        }
        Ok(Reservation { writer: self, raw: r, done: false })
    }

    /// A payload of the event type `event` built field by field through the
    /// writer's schema (the fixed part zeroed to start).
    pub fn payload(&self, event: &str) -> Result<PayloadBuilder<'_>, Error> {
        let schema = self.schema().ok_or_else(|| Error::new(Status::NoSchema, format!("{}: the writer has no schema", self.path())))?;
        let event = schema.event_type(event)?;
        Ok(PayloadBuilder::new(self, event))
    }

    pub(crate) fn error(&self, status: i32) -> Error {
        Error::from_c(status, unsafe { ffi::evring_writer_error(self.raw.as_ptr()) })
    }
}

impl Drop for Writer {
    fn drop(&mut self) {
        unsafe { ffi::evring_writer_close(self.raw.as_ptr()) }
    }
}

/// A reserved event: fill [`payload`](Reservation::payload), then
/// [`commit`](Reservation::commit). Dropped uncommitted, it is aborted (a
/// RECORD_ERROR takes its place, so readers never wait on a hole).
pub struct Reservation<'w> {
    writer: &'w Writer,
    raw: Box<ffi::evring_reservation>,
    done: bool,
}

impl<'w> Reservation<'w> {
    /// The payload's bytes in the ring (16-byte aligned).
    pub fn payload(&mut self) -> &mut [u8] {
        let len = self.raw.payload_size as usize;
        if len == 0 {
            return &mut [];
        }
        unsafe { std::slice::from_raw_parts_mut(self.raw.payload as *mut u8, len) }
    }

    /// The sequence number the event will have.
    pub fn seqno(&self) -> u64 {
        self.raw.seqno
    }

    /// Publishes the event.
    pub fn commit(mut self, event_type: u16, flow: Option<&[u64; 4]>) -> Result<u64, Error> {
        self.raw.event_type = event_type;
        self.raw.content_ext = flow.copied().unwrap_or([0; 4]);
        self.done = true;
        let status = unsafe { ffi::evring_writer_commit(self.writer.raw.as_ptr(), &mut *self.raw) };
        if status != ffi::EVRING_OK {
            return Err(self.writer.error(status));
        }
        Ok(self.raw.seqno)
    }

    /// Gives the event up: a RECORD_ERROR is published in its place.
    pub fn abort(mut self) {
        self.done = true;
        unsafe { ffi::evring_writer_abort(self.writer.raw.as_ptr(), &mut *self.raw) };
    }
}

impl Drop for Reservation<'_> {
    fn drop(&mut self) {
        if !self.done {
            unsafe { ffi::evring_writer_abort(self.writer.raw.as_ptr(), &mut *self.raw) };
        }
    }
}
