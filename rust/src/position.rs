//! Where a reader starts: the positions `evring watch --from` takes.

use std::fmt;

/// A position, resolved by the library's one position resolver (the CLI's
/// `--from`): the same spellings, refused with the same reasons.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Position {
    /// The oldest event still held.
    Oldest,
    /// The newest event (handed out first), then what is written after it.
    Latest,
    /// A sequence number (a ring set's: `Text("MEMBER:SEQNO")`).
    Seqno(u64),
    /// N events back from the newest ("-N").
    Back(u64),
    /// The first event of a span instance by its label ("block:15000009"),
    /// through the source's schema.
    Span { span: String, label: u64 },
    /// Where a span instance reached a stage ("block.finalized:15000009").
    SpanStage { span: String, stage: String, label: u64 },
    /// Any spelling `--from` takes: a time ("@1700000000", "-5s",
    /// "2026-11-22T01:45:00Z"), "block:latest", "2:1234" (a set member's).
    Text(String),
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Position::Oldest => f.write_str("oldest"),
            Position::Latest => f.write_str("latest"),
            Position::Seqno(n) => write!(f, "{}", n),
            Position::Back(n) => write!(f, "-{}", n),
            Position::Span { span, label } => write!(f, "{}:{}", span, label),
            Position::SpanStage { span, stage, label } => write!(f, "{}.{}:{}", span, stage, label),
            Position::Text(t) => f.write_str(t),
        }
    }
}

impl From<&str> for Position {
    fn from(text: &str) -> Position {
        Position::Text(text.to_string())
    }
}

impl From<String> for Position {
    fn from(text: String) -> Position {
        Position::Text(text)
    }
}

impl From<u64> for Position {
    fn from(seqno: u64) -> Position {
        Position::Seqno(seqno)
    }
}
