//! `EventRing`: the entry point shaped like `monad-event-ring`'s (a ring,
//! then `create_reader`), over [`EventReader::open`].

use std::path::Path;

use crate::error::{Error, Status};
use crate::reader::EventReader;
use crate::source_info::{OpenOptions, SourceKind};

/// Something to read, by location: a ring name or path, a ring set, a
/// snapshot, a recording, a NATS stream. Each [`create_reader`](EventRing::create_reader)
/// opens an independent reader of it (docs/rust.md: a reader is one source
/// handle; a snapshot is decompressed once per reader).
#[derive(Clone, Debug)]
pub struct EventRing {
    location: String,
    options: OpenOptions,
    snapshot_only: bool,
}

/// `monad-event-ring`'s name for a ring read from a snapshot file.
pub type SnapshotEventRing = EventRing;

impl EventRing {
    /// A source by location, with the default options. Fails at once when
    /// no file has the name or path (a ring not created yet:
    /// [`EventReader::wait_for_name`]); a URL is checked by `create_reader`.
    pub fn new(location: impl AsRef<Path>) -> Result<EventRing, Error> {
        EventRing::with_options(location, OpenOptions::default())
    }

    /// A source by location with options (a schema file, interest, the reader's name).
    pub fn with_options(location: impl AsRef<Path>, options: OpenOptions) -> Result<EventRing, Error> {
        let location = location.as_ref().to_string_lossy().into_owned();
        // A name or path must be there now; a URL (nats://) always names something,
        // and is checked when a reader connects.
        if !EventReader::wait_for_name(&location, std::time::Duration::from_secs(0))? {
            return Err(Error::new(Status::System, format!("opening '{}': No such file or directory", location)));
        }
        Ok(EventRing { location, options, snapshot_only: false })
    }

    /// A snapshot (a zstd-compressed ring file), larger than `max_size`
    /// bytes decompressed refused (None: the library's default). Its readers
    /// start at its oldest event and end at its newest.
    pub fn new_from_zstd_path(path: impl AsRef<Path>, max_size: Option<usize>) -> Result<EventRing, Error> {
        let options = OpenOptions { max_snapshot_size: max_size.map(|m| m as u64), ..OpenOptions::default() };
        let mut ring = EventRing::with_options(path, options)?;
        ring.snapshot_only = true;
        Ok(ring)
    }

    /// Where it is.
    pub fn location(&self) -> &str {
        &self.location
    }

    /// A new reader: of a live ring at its newest event (handed out first,
    /// then what is written after it), of a file at its oldest.
    pub fn create_reader(&self) -> Result<EventReader, Error> {
        let reader = EventReader::open(&self.location, &self.options)?;
        if self.snapshot_only && reader.kind() != SourceKind::Snapshot {
            return Err(Error::new(Status::Format, format!("{} is not an event ring snapshot", self.location)));
        }
        Ok(reader)
    }
}
