//! evring for Rust: shared-memory event rings (RING01, byte-compatible with
//! Monad's execution event rings), ring sets, snapshots, recordings and NATS
//! streams, through evring's C ABI (`include/evring/evring.h`, `libevring.so`).
//!
//! ```no_run
//! use evring::{EventNextResult, EventPayloadResult, EventRing, PayloadRef};
//!
//! fn block_number(p: PayloadRef<'_>) -> Option<u64> {
//!     let field = p.schema()?.field(p.info().event_type, "block_tag.block_number").ok()?;
//!     p.get::<u64>(&field).ok()
//! }
//!
//! let ring = EventRing::new("emn-30b-15m.snapshot.zst")?;
//! let mut reader = ring.create_reader()?;
//! reader.seek_span("block", 15000009)?;                 // span labels through the schema
//! reader.set_where(Some("type == BLOCK_START"))?;       // --where
//! loop {
//!     match reader.next_descriptor() {
//!         EventNextResult::Ready(event) => match event.try_filter_map(block_number) {
//!             EventPayloadResult::Ready(Some(n)) => println!("block {}", n),
//!             EventPayloadResult::Ready(None) => {}
//!             EventPayloadResult::Expired => eprintln!("payload overwritten: fell behind"),
//!         },
//!         EventNextResult::NotReady => reader.wait(std::time::Duration::from_millis(100)),
//!         EventNextResult::Gap(gap) => eprintln!("lost {} events: {}", gap.count, gap.description),
//!         EventNextResult::Notice(text) => eprintln!("{}", text),
//!         EventNextResult::End => break,
//!         EventNextResult::Failed(e) => return Err(e),
//!     }
//! }
//! # Ok::<(), evring::Error>(())
//! ```
//!
//! The reader is shaped like Monad's `monad-event-ring` crate
//! (`next_descriptor()` returning Ready, NotReady or Gap, `try_filter_map`
//! over a zero-copy view, `EventPayloadResult::Expired` when the writer
//! overwrote a payload); docs/rust.md says where it differs and why.
//! Writers ([`Writer`]) publish checked typed events, honour readers'
//! interest, and build payloads field by field through their schema.
//! Whole blocks with their transactions and commit stages, as Monad's block
//! builders hand them out, come from [`EventReader::blocks`] (any labelled
//! span: [`EventReader::spans`]) as owned [`AssembledSpan`]s: complete,
//! abandoned (a rival the chain did not take) or broken by a gap, never short.

pub mod ffi;

mod descriptor;
mod error;
mod field;
mod payload_builder;
mod position;
mod reader;
mod result;
mod ring;
mod schema;
mod source_info;
mod span;
mod span_reader;
mod writer;

pub use descriptor::{EventDescriptor, EventDescriptorInfo, PayloadRef, PayloadState};
pub use error::{Error, Status};
pub use position::Position;
pub use field::{FieldError, FieldValue};
pub use payload_builder::PayloadBuilder;
pub use reader::EventReader;
pub use source_info::{Counters, OpenOptions, SourceInfo, SourceKind};
pub use result::{EventNextResult, EventPayloadResult, Gap, GapReason};
pub use ring::{EventRing, SnapshotEventRing};
pub use schema::{EventType, Field, FieldKind, Scalar, Schema, TrailingPlace};
pub use span::{AssembledSpan, Lost, NestedSpan, SpanEvent, SpanStage, SpanState};
pub use span_reader::{SpanCounts, SpanReader};
pub use writer::{Recorded, Reservation, Writer, WriterOptions};

/// The library's version at run time ("0.1.0").
pub fn version() -> String {
    error::text_of_version()
}
