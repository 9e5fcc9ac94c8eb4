//! An assembled span: one whole span instance (a Monad block with its
//! transactions and the commit stages it reached), owned, as
//! [`SpanReader`](crate::SpanReader) hands it out. Built from the C ABI's
//! `evring_span` (evring.h, "Assembled spans"), whose views live only until
//! the assembler's next call: everything is copied out.

use std::os::raw::c_int;

use crate::descriptor::{EventDescriptorInfo, PayloadState};
use crate::error::text;
use crate::ffi;
use crate::field::{read_field, FieldError, FieldValue};
use crate::reader::EventReader;
use crate::schema::Field;

/// How an instance came out.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpanState {
    /// Every event, and the stage asked for.
    Complete,
    /// A rival: a stage marked another instance of the same label (a block
    /// the chain did not take).
    Abandoned,
    /// Events inside it were lost: [`AssembledSpan::lost`] says which.
    Broken,
    /// A state this crate does not know (a newer library).
    Other(i32),
}

/// One event of an instance, its payload copied.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanEvent {
    pub info: EventDescriptorInfo,
    /// The event type's name in the source's schema.
    pub type_name: Option<String>,
    pub payload_state: PayloadState,
    /// The payload (empty unless `payload_state` is `Ok`).
    pub payload: Vec<u8>,
}

impl SpanEvent {
    /// `field` as `T`, checked as [`PayloadRef::get`](crate::PayloadRef::get) checks it.
    pub fn get<T: FieldValue>(&self, field: &Field) -> Result<T, FieldError> {
        read_field(field, self.info.event_type, &self.payload)
    }
}

/// A stage an instance reached: "ended" (a block executed), then the
/// schema's stages ("finalized", "verified"), with the event that marked it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpanStage {
    pub name: String,
    pub seqno: u64,
    pub record_epoch_nanos: u64,
}

/// A nested span's instance (a block's transaction): its events, as indices
/// into [`AssembledSpan::events`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NestedSpan {
    /// The nested span's name ("txn").
    pub span: String,
    /// Its flow tag's value (a transaction's `txn` tag).
    pub key: u64,
    pub events: Vec<usize>,
}

/// What a gap inside a broken instance lost.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lost {
    pub first_seqno: u64,
    pub count: u64,
    /// "seqno 41700..41703 lost", as `evring watch --assemble` says it.
    pub reassembly_error: String,
}

/// One whole span instance.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AssembledSpan {
    /// The span's name ("block").
    pub span: String,
    pub state: SpanState,
    /// The instance's label (a block's number).
    pub label: u64,
    /// Its begin event's id (a block's 32-byte id); empty when the span has none.
    pub id: Vec<u8>,
    /// The ring set member it came from (0 for other sources).
    pub member: u32,
    /// In the order read: the begin event first.
    pub events: Vec<SpanEvent>,
    /// The nested spans' instances, in the order they began.
    pub nested: Vec<NestedSpan>,
    /// The events in no nested instance (the begin and end events among them).
    pub outside: Vec<usize>,
    /// The stages reached, in order.
    pub stages: Vec<SpanStage>,
    /// Broken: what was lost.
    pub lost: Option<Lost>,
}

impl AssembledSpan {
    /// The instances of nested span `span` ("txn": a block's transactions).
    pub fn nested_of<'a>(&'a self, span: &'a str) -> impl Iterator<Item = &'a NestedSpan> + 'a {
        self.nested.iter().filter(move |n| n.span == span)
    }

    /// The events of a nested instance.
    pub fn events_of<'a>(&'a self, nested: &'a NestedSpan) -> impl Iterator<Item = &'a SpanEvent> + 'a {
        nested.events.iter().filter_map(move |&i| self.events.get(i))
    }

    /// The stage `name` ("finalized") when the instance reached it.
    pub fn stage(&self, name: &str) -> Option<&SpanStage> {
        self.stages.iter().find(|s| s.name == name)
    }

    /// Copies what `raw` points to; `reader` names the event types.
    pub(crate) fn from_c(raw: &ffi::evring_span, reader: &EventReader) -> AssembledSpan {
        let events = slice(raw.events, raw.event_count).iter().map(|e| event_of(e, reader)).collect();
        let nested = slice(raw.nested, raw.nested_count)
            .iter()
            .map(|n| NestedSpan { span: text(n.span), key: n.key, events: slice(n.events, n.event_count).to_vec() })
            .collect();
        let stages = slice(raw.stages, raw.stage_count)
            .iter()
            .map(|s| SpanStage { name: text(s.name), seqno: s.seqno, record_epoch_nanos: s.nanos })
            .collect();
        let state = state_of(raw.state);
        let lost = (state == SpanState::Broken).then(|| Lost {
            first_seqno: raw.lost_first,
            count: raw.lost_count,
            reassembly_error: text(raw.reassembly_error),
        });
        AssembledSpan {
            span: text(raw.span),
            state,
            label: raw.label,
            id: slice(raw.id, raw.id_size).to_vec(),
            member: raw.member,
            events,
            nested,
            outside: slice(raw.outside, raw.outside_count).to_vec(),
            stages,
            lost,
        }
    }
}

// The C array at `p` (NULL when `n` is 0), valid until the assembler's next call.
fn slice<'a, T>(p: *const T, n: usize) -> &'a [T] {
    if p.is_null() || n == 0 {
        &[]
    } else {
        unsafe { std::slice::from_raw_parts(p, n) }
    }
}

fn event_of(e: &ffi::evring_span_event, reader: &EventReader) -> SpanEvent {
    let payload_state = match e.payload_state {
        ffi::EVRING_PAYLOAD_OK => PayloadState::Ok,
        ffi::EVRING_PAYLOAD_EXPIRED => PayloadState::Expired,
        _ => PayloadState::Invalid,
    };
    SpanEvent {
        info: EventDescriptorInfo {
            seqno: e.event.seqno,
            event_type: e.event.event_type,
            record_epoch_nanos: e.event.record_epoch_nanos,
            flow_info: e.event.content_ext,
            payload_size: e.event.payload_size,
            member: e.member,
        },
        type_name: reader.type_name(e.event.event_type).map(str::to_string),
        payload_state,
        payload: slice(e.payload, e.payload_size).to_vec(),
    }
}

fn state_of(state: c_int) -> SpanState {
    match state {
        ffi::EVRING_SPAN_COMPLETE => SpanState::Complete,
        ffi::EVRING_SPAN_ABANDONED => SpanState::Abandoned,
        ffi::EVRING_SPAN_BROKEN => SpanState::Broken,
        other => SpanState::Other(other),
    }
}
