//! One event as a reader hands it out: its descriptor, and its payload read
//! with an expiry check, copied or zero-copy.

use std::borrow::Cow;
use std::os::raw::c_int;

use crate::error::Error;
use crate::ffi;
use crate::reader::EventReader;
use crate::result::EventPayloadResult;
use crate::field::{locate, read_field, FieldError, FieldValue};
use crate::schema::{Field, FieldKind, Scalar, Schema};

/// The descriptor's fields (as `monad-event-ring`'s `EventDescriptorInfo`,
/// with the flow tags as the raw `content_ext` words).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventDescriptorInfo {
    /// The event's sequence number (a ring set member's when `member` is not 0).
    pub seqno: u64,
    pub event_type: u16,
    pub record_epoch_nanos: u64,
    /// The four flow tags, `content_ext[0..3]` (the schema names them).
    pub flow_info: [u64; 4],
    pub payload_size: u32,
    /// The ring set member the event came from (0 for other sources).
    pub member: u32,
}

/// Whether a payload can be read, and why not.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PayloadState {
    Ok,
    /// The writer overwrote it.
    Expired,
    /// The descriptor names bytes outside the ring's payload buffer.
    Invalid,
}

#[derive(Clone, Copy)]
pub(crate) enum Payload {
    // In the ring's shared memory: peek, read, then check it was not overwritten.
    InRing,
    // Copied with the event into the reader's buffer (recordings, ring sets, streams).
    Copied { data: *const u8, len: usize, state: c_int },
}

/// One event. It borrows its reader: the payload of a copied source lives
/// in the reader's buffer until the next call, so the reader cannot move on
/// while a descriptor is held (`monad-event-ring`'s descriptors borrow the
/// ring instead: docs/rust.md).
pub struct EventDescriptor<'r> {
    reader: &'r EventReader,
    raw: ffi::evring_descriptor,
    member: u32,
    payload: Payload,
}

/// A payload's bytes with the event's descriptor and the source's schema:
/// what a [`try_filter_map`](EventDescriptor::try_filter_map) function sees.
/// In a live ring the bytes are the ring's own and may be overwritten while
/// the function runs: what it returns is discarded then (Expired).
pub struct PayloadRef<'a> {
    info: EventDescriptorInfo,
    bytes: &'a [u8],
    schema: Option<Schema<'a>>,
}

impl<'r> EventDescriptor<'r> {
    pub(crate) fn new(reader: &'r EventReader, raw: ffi::evring_descriptor, member: u32, payload: Payload) -> Self {
        EventDescriptor { reader, raw, member, payload }
    }

    /// The descriptor's fields.
    pub fn info(&self) -> EventDescriptorInfo {
        EventDescriptorInfo {
            seqno: self.raw.seqno,
            event_type: self.raw.event_type,
            record_epoch_nanos: self.raw.record_epoch_nanos,
            flow_info: self.raw.content_ext,
            payload_size: self.raw.payload_size,
            member: self.member,
        }
    }

    /// The event type's name in the source's schema.
    pub fn type_name(&self) -> Option<&'r str> {
        self.reader.type_name(self.raw.event_type)
    }

    /// Whether the payload can be read now.
    pub fn payload_state(&self) -> PayloadState {
        match self.payload {
            Payload::Copied { state, .. } => state_of(state),
            Payload::InRing => {
                if unsafe { ffi::evring_source_payload_peek(self.reader.raw(), &self.raw) }.is_null() {
                    PayloadState::Invalid
                } else if unsafe { ffi::evring_source_payload_valid(self.reader.raw(), &self.raw) } == 1 {
                    PayloadState::Ok
                } else {
                    PayloadState::Expired
                }
            }
        }
    }

    /// A copy of the payload, checked not to have been overwritten while it was copied.
    pub fn try_read(&self) -> EventPayloadResult<Vec<u8>> {
        match self.payload {
            Payload::Copied { .. } => self.with_bytes(|bytes| Some(bytes.to_vec())).map(|v| v.unwrap_or_default()),
            Payload::InRing => {
                let mut out = vec![0u8; self.raw.payload_size as usize];
                let status = unsafe {
                    ffi::evring_source_payload_copy(self.reader.raw(), &self.raw, out.as_mut_ptr() as *mut _, out.len())
                };
                if status == ffi::EVRING_OK {
                    EventPayloadResult::Ready(out)
                } else {
                    EventPayloadResult::Expired
                }
            }
        }
    }

    /// Zero-copy: `f` reads the payload in place (with the descriptor and the
    /// schema) and picks what to keep; Ready(its result) when the payload was
    /// intact throughout, Expired when the writer overwrote it meanwhile and
    /// the result was discarded. `f` is a function, not a closure, so it
    /// keeps nothing it read from bytes that may turn out overwritten (as in
    /// `monad-event-ring`).
    pub fn try_filter_map<R: 'static>(&self, f: fn(PayloadRef<'_>) -> Option<R>) -> EventPayloadResult<Option<R>> {
        let info = self.info();
        let schema = self.reader.schema();
        self.with_bytes(|bytes| f(PayloadRef { info, bytes, schema }))
    }

    /// Zero-copy over the bytes alone (see [`try_filter_map`](EventDescriptor::try_filter_map)).
    pub fn try_filter_map_raw<R: 'static>(
        &self,
        f: fn(info: EventDescriptorInfo, payload: &[u8]) -> Option<R>,
    ) -> EventPayloadResult<Option<R>> {
        let info = self.info();
        self.with_bytes(|bytes| f(info, bytes))
    }

    /// One field, read in place as `T` and checked (its type, its event type,
    /// the payload's length): the typed read of the schema's fields.
    pub fn try_field<T: FieldValue>(&self, field: &Field) -> EventPayloadResult<Result<T, FieldError>> {
        let event_type = self.raw.event_type;
        self.with_bytes(|bytes| Some(read_field::<T>(field, event_type, bytes))).map(|r| r.expect("always Some"))
    }

    /// The payload's fields as one JSON object, decoded with the source's schema.
    pub fn decode_json(&self) -> Result<EventPayloadResult<String>, Error> {
        match self.try_read() {
            EventPayloadResult::Ready(bytes) => Ok(EventPayloadResult::Ready(self.reader.decode_json(self.raw.event_type, &bytes)?)),
            EventPayloadResult::Expired => Ok(EventPayloadResult::Expired),
        }
    }

    // Runs `f` over the payload bytes, then confirms they were intact.
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> Option<R>) -> EventPayloadResult<Option<R>> {
        match self.payload {
            Payload::Copied { data, len, state } => {
                if state != ffi::EVRING_PAYLOAD_OK {
                    return EventPayloadResult::Expired;
                }
                let bytes = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(data, len) } };
                EventPayloadResult::Ready(f(bytes))
            }
            Payload::InRing => {
                let p = unsafe { ffi::evring_source_payload_peek(self.reader.raw(), &self.raw) } as *const u8;
                if p.is_null() {
                    return EventPayloadResult::Expired;
                }
                let len = self.raw.payload_size as usize;
                // The bytes may be rewritten by the writer while `f` reads them; the check
                // after it (evring_source_payload_valid: an acquire fence, then the window)
                // is what says whether they were intact (docs/format.md, "The protocol").
                let bytes = if len == 0 { &[][..] } else { unsafe { std::slice::from_raw_parts(p, len) } };
                let kept = f(bytes);
                if unsafe { ffi::evring_source_payload_valid(self.reader.raw(), &self.raw) } == 1 {
                    EventPayloadResult::Ready(kept)
                } else {
                    EventPayloadResult::Expired
                }
            }
        }
    }
}

fn state_of(state: c_int) -> PayloadState {
    match state {
        ffi::EVRING_PAYLOAD_OK => PayloadState::Ok,
        ffi::EVRING_PAYLOAD_EXPIRED => PayloadState::Expired,
        _ => PayloadState::Invalid,
    }
}

impl<'a> PayloadRef<'a> {
    /// The descriptor's fields.
    pub fn info(&self) -> EventDescriptorInfo {
        self.info
    }

    /// The payload's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The source's schema, if it has one.
    pub fn schema(&self) -> Option<Schema<'a>> {
        self.schema
    }

    /// `field` as `T`, checked: its type is exactly `T`'s, it belongs to this
    /// event's type, and it lies inside the payload (a trailing element: by
    /// this payload's counts).
    pub fn get<T: FieldValue>(&self, field: &Field) -> Result<T, FieldError> {
        read_field(field, self.info.event_type, self.bytes)
    }

    /// An unsigned integer field (or enum) of any width, as u64.
    pub fn unsigned(&self, field: &Field) -> Result<u64, FieldError> {
        let bytes = self.checked(field, "an unsigned integer", |f| {
            matches!(f.kind, FieldKind::Scalar | FieldKind::Enum)
                && matches!(f.scalar, Some(Scalar::U8 | Scalar::U16 | Scalar::U32 | Scalar::U64 | Scalar::Bool))
        })?;
        Ok(bytes.iter().rev().fold(0u64, |acc, b| (acc << 8) | u64::from(*b)))
    }

    /// A signed integer field (or enum) of any width, as i64.
    pub fn signed(&self, field: &Field) -> Result<i64, FieldError> {
        let bytes = self.checked(field, "a signed integer", |f| {
            matches!(f.kind, FieldKind::Scalar | FieldKind::Enum)
                && matches!(f.scalar, Some(Scalar::I8 | Scalar::I16 | Scalar::I32 | Scalar::I64))
        })?;
        let unsigned = bytes.iter().rev().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
        let shift = 64 - 8 * bytes.len() as u32;
        Ok(((unsigned << shift) as i64) >> shift)
    }

    /// The bytes of any field: a `bytesN`, a struct, an array, a `char[N]`, a
    /// whole trailing array, an element of one.
    pub fn field_bytes(&self, field: &Field) -> Result<&'a [u8], FieldError> {
        self.checked(field, "bytes", |_| true)
    }

    /// A `char[N]` field's text: the bytes before the first NUL (invalid UTF-8 replaced).
    pub fn text(&self, field: &Field) -> Result<Cow<'a, str>, FieldError> {
        let bytes = self.checked(field, "text (char[N])", |f| f.kind == FieldKind::String)?;
        let end = bytes.iter().position(|b| *b == 0).unwrap_or(bytes.len());
        Ok(String::from_utf8_lossy(&bytes[..end]))
    }

    fn checked(&self, field: &Field, asked: &str, fits: impl Fn(&Field) -> bool) -> Result<&'a [u8], FieldError> {
        if field.event_type != self.info.event_type {
            return Err(FieldError::WrongEvent {
                field: field.path.clone(),
                field_event: field.event_type,
                event: self.info.event_type,
            });
        }
        if !fits(field) {
            return Err(FieldError::WrongType { field: field.path.clone(), type_name: field.type_name.clone(), asked: asked.to_string() });
        }
        let range = locate(field, self.bytes)?;
        Ok(&self.bytes[range])
    }
}

