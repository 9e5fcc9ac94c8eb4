//! What a reader is opened with and what it reports: open options, the
//! source's kind and description, the counters.

/// How to open a source (the C ABI's `evring_open_options`).
#[derive(Clone, Debug)]
pub struct OpenOptions {
    /// A schema file to decode with when the source carries none (it must
    /// describe the source; docs/schema.md).
    pub schema_path: Option<String>,
    /// Larger snapshots are refused; None: the library's default.
    pub max_snapshot_size: Option<u64>,
    /// A recording continues into FILE.1, ...; default true.
    pub recording_series: bool,
    /// A reader of a live ring registers in its reader registry, so `evring
    /// readers RING` lists it with its lag; default true.
    pub register: bool,
    /// As listed in the registry; default "rust".
    pub reader_name: String,
    /// What it does with the events; None: the program's name.
    pub reader_detail: Option<String>,
    /// Interest (docs/interest.md): keywords of the source's schema,
    /// "trades,quotes"; None: every keyword.
    pub keywords: Option<String>,
    /// Interest: the highest level wanted (0..15); None: every level.
    pub level: Option<u8>,
}

impl Default for OpenOptions {
    fn default() -> Self {
        OpenOptions {
            schema_path: None,
            max_snapshot_size: None,
            recording_series: true,
            register: true,
            reader_name: "rust".to_string(),
            reader_detail: None,
            keywords: None,
            level: None,
        }
    }
}

/// What kind of source a reader reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceKind {
    Ring,
    Snapshot,
    Recording,
    Stream,
    RingSet,
    Other(i32),
}

/// What a source is (`evring_source_get_info`).
#[derive(Clone, Debug)]
pub struct SourceInfo {
    pub kind: SourceKind,
    /// A live ring with a writer.
    pub live: bool,
    pub content_type: u16,
    pub schema_hash: [u8; 32],
    pub descriptor_capacity: u64,
    pub payload_buf_size: u64,
    /// The file it resolved to.
    pub path: String,
    /// Events and gaps carry ring set members.
    pub member_ids: bool,
    /// A ring set: the members read now.
    pub members: u32,
    /// Listed in the ring's reader registry.
    pub registered: bool,
}

/// What a reader counted (`evring_source_get_counters`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counters {
    pub events: u64,
    /// Lost because the writer lapped the reader (the C++ iterator's `total_lost()`).
    pub lost: u64,
    /// In how many lapped gaps.
    pub gaps: u64,
    pub abandoned: u64,
    pub never_committed: u64,
    pub damaged: u64,
    pub replaced: u64,
    pub damage_reports: u64,
    pub records_lost_to_damage: u64,
    pub foreign: u64,
    /// A ring set: events older than one already handed out.
    pub late_events: u64,
}
