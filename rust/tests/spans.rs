//! Assembled blocks (`reader.blocks()`, `reader.spans()`) on the real
//! snapshots: every block handed out, ended or finalized, is one a plain
//! scan of the events finds, with the events the scan tags with it, one
//! transaction per TXN_HEADER_START (TXN_START in the older schema) and its stages at the scan's BLOCK_END
//! and BLOCK_FINALIZED; on a live ring written from Rust, a rival abandoned
//! and a lapped instance broken with what it lost; and the refusals, with
//! their reasons.
mod common;

use std::collections::{BTreeMap, BTreeSet};

use evring::{
    AssembledSpan, EventNextResult, EventReader, EventRing, GapReason, Lost, OpenOptions, SpanState, Status, Writer,
    WriterOptions,
};

/// What a scan of the events says of one block (by its BLOCK_START's seqno).
#[derive(Default)]
struct Block {
    label: u64,
    events: usize,
    txns: BTreeSet<u64>,
    end_seqno: Option<u64>,
}

#[derive(Default)]
struct Scan {
    blocks: BTreeMap<u64, Block>,
    finalized: BTreeMap<u64, u64>, // block number -> BLOCK_FINALIZED's seqno
}

fn type_number(reader: &EventReader, name: &str) -> u16 {
    reader.schema().expect("a schema").event_type(name).expect(name).number
}

fn scan(reader: &mut EventReader) -> Scan {
    let schema = reader.schema().expect("a schema");
    let start = schema.event_type("BLOCK_START").expect("BLOCK_START").number;
    let finalized = schema.event_type("BLOCK_FINALIZED").expect("BLOCK_FINALIZED").number;
    let start_number = schema.field(start, "block_tag.block_number").expect("the block number");
    let final_number = schema.field(finalized, "block_number").expect("the finalized number");
    // The txn span's begin event: TXN_HEADER_START, TXN_START in the older schema (mdn-500b-genesis).
    let header = schema.event_type("TXN_HEADER_START").or_else(|_| schema.event_type("TXN_START"));
    let header = header.expect("a txn begin").number;
    let end = type_number(reader, "BLOCK_END");
    let mut scan = Scan::default();
    loop {
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => {
                let info = event.info();
                if info.event_type == start {
                    let label = event.try_field::<u64>(&start_number).ready().expect("intact").expect("a number");
                    scan.blocks.insert(info.seqno, Block { label, ..Block::default() });
                }
                if info.event_type == finalized {
                    let n = event.try_field::<u64>(&final_number).ready().expect("intact").expect("a number");
                    scan.finalized.insert(n, info.seqno);
                }
                if let Some(b) = scan.blocks.get_mut(&info.flow_info[0]) {
                    b.events += 1;
                    if info.event_type == header {
                        b.txns.insert(info.flow_info[1]);
                    }
                    if info.event_type == end {
                        b.end_seqno = Some(info.seqno);
                    }
                }
            }
            EventNextResult::Notice(_) => {}
            EventNextResult::End => return scan,
            other => panic!("unexpected step in a snapshot: {:?}", other.map(|e| e.info())),
        }
    }
}

/// The block as the scan saw it; panics with the block's label otherwise.
fn check_block(b: &AssembledSpan, scan: &Scan, stage: Option<&str>) {
    let begin = b.events[0].info.seqno;
    let x = scan.blocks.get(&begin).unwrap_or_else(|| panic!("block {}: no BLOCK_START at {}", b.label, begin));
    assert_eq!((b.span.as_str(), b.state, b.label), ("block", SpanState::Complete, x.label));
    assert_eq!(b.id.len(), 32);
    assert_eq!(b.events.len(), x.events, "block {}", b.label);
    assert!(b.events.iter().all(|e| e.info.flow_info[0] == begin));
    assert_eq!(b.events[0].type_name.as_deref(), Some("BLOCK_START"));
    let txns: BTreeSet<u64> = b.nested_of("txn").map(|t| t.key).collect();
    assert_eq!(txns, x.txns, "block {}", b.label);
    assert_eq!(b.nested_of("txn").count(), b.nested.len());
    for t in b.nested_of("txn") {
        assert!(b.events_of(t).all(|e| e.info.flow_info[1] == t.key));
    }
    let names: Vec<&str> = b.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(b.stage("ended").map(|s| s.seqno), x.end_seqno, "block {}", b.label);
    if stage.is_some() {
        assert_eq!(names, ["ended", "finalized"]);
        assert_eq!(b.stage("finalized").map(|s| s.seqno), scan.finalized.get(&b.label).copied());
    }
    assert!(b.lost.is_none());
}

fn check_snapshot(name: &str, test: &str) {
    let path = match common::snapshot(test, name) {
        Some(p) => p,
        None => return,
    };
    let ring = EventRing::new_from_zstd_path(&path, None).expect("the snapshot opens");
    let mut reader = ring.create_reader().expect("a reader");
    let scan = scan(&mut reader);
    for stage in [None, Some("finalized")] {
        reader.seek(evring::Position::Oldest).expect("oldest");
        let start_number = {
            let schema = reader.schema().expect("a schema");
            schema.field(type_number(&reader, "BLOCK_START"), "block_tag.block_number").expect("a field")
        };
        let mut blocks = reader.blocks(stage).expect("blocks");
        let got: Vec<AssembledSpan> = blocks.by_ref().collect::<Result<_, _>>().expect("no failure");
        let want: Vec<u64> = scan
            .blocks
            .values()
            .filter(|b| b.end_seqno.is_some() && (stage.is_none() || scan.finalized.contains_key(&b.label)))
            .map(|b| b.label)
            .collect();
        assert_eq!(got.iter().map(|b| b.label).collect::<Vec<_>>(), want, "{} {:?}", name, stage);
        for b in &got {
            check_block(b, &scan, stage);
            assert_eq!(b.events[0].get::<u64>(&start_number).expect("typed"), b.label);
        }
        let counts = blocks.counts();
        assert_eq!((counts.handed_out, counts.abandoned, counts.broken), (want.len() as u64, 0, 0));
        assert_eq!(counts.unfinished, (scan.blocks.len() - want.len()) as u64);
        assert!(matches!(blocks.next_span(), EventNextResult::End));
        println!("{} {:?}: {} blocks equal the scan", name, stage, got.len());
    }
}

#[test]
fn blocks_of_emn_30b_equal_a_scan() {
    check_snapshot("emn-30b-15m", "blocks_of_emn_30b_equal_a_scan");
}

#[test]
fn blocks_of_emn_1b_equal_a_scan() {
    check_snapshot("emn-1b-15m", "blocks_of_emn_1b_equal_a_scan");
}

#[test]
fn blocks_of_mdn_500b_genesis_equal_a_scan() {
    check_snapshot("mdn-500b-genesis", "blocks_of_mdn_500b_genesis_equal_a_scan");
}

#[test]
fn refusals_name_the_reason() {
    let path = match common::snapshot("refusals_name_the_reason", "emn-1b-15m") {
        Some(p) => p,
        None => return,
    };
    let mut reader = EventRing::new_from_zstd_path(&path, None).expect("opens").create_reader().expect("a reader");
    let e = reader.spans("txn", None).err().expect("refused");
    assert!(e.message().contains("no span 'txn' with a label"), "{}", e);
    let e = reader.blocks(Some("final")).err().expect("refused");
    let why = "span 'block' has no stage 'final' (its stages: ended, finalized, verified)";
    assert!(e.message().contains(why), "{}", e);
    reader.set_where(Some("type == TXN_LOG")).expect("a filter");
    let e = reader.blocks(None).err().expect("refused");
    assert!(e.message().contains("where filter"), "{}", e);
    assert_eq!(e.status(), Status::Invalid);
    reader.set_where(None).expect("removed");
    let e = reader.spans("bl\0ck", None).err().expect("refused");
    assert!(e.message().contains("NUL"), "{}", e);
}

/// Rounds: OPEN (a number and an id) begins one, WORK events are its steps
/// (flow tag `step`), CLOSE ends it, SETTLED marks a number and id as taken.
const ROUNDS: &str = r#"content_type = 4663
content_name = "rounds"
flow_tags = ["round", "step"]
[[event]]
number = 1
name = "OPEN"
payload = "round"
[[event]]
number = 2
name = "WORK"
[[event]]
number = 3
name = "CLOSE"
[[event]]
number = 4
name = "SETTLED"
payload = "round"
[struct.round]
fields = [{ name = "id", type = "bytes4" }, { name = "number", type = "u64" }]
[span.round]
begin = "OPEN"
end = "CLOSE"
key = ["round"]
label = "number"
id = "id"
opener = "round"
stages = [{ name = "settled", event = "SETTLED", label = "number", id = "id" }]
[span.step]
begin = "WORK"
end = "CLOSE"
key = ["round", "step"]
"#;

fn round_payload(number: u64, id: u8) -> [u8; 16] {
    let mut p = [0u8; 16];
    p[0] = id;
    p[8..].copy_from_slice(&number.to_le_bytes());
    p
}

/// OPEN carries its own seqno in the `round` tag (the opener), as BLOCK_START does.
fn open_round(w: &Writer, number: u64, id: u8) -> u64 {
    let mut r = w.reserve(16).expect("a reservation");
    r.payload().copy_from_slice(&round_payload(number, id));
    let seqno = r.seqno();
    r.commit(1, Some(&[seqno, 0, 0, 0])).expect("committed")
}

fn put(w: &Writer, event_type: u16, round: u64, step: u64) {
    w.record(event_type, &[], Some(&[round, step, 0, 0])).expect("recorded");
}

fn ready(step: EventNextResult<AssembledSpan>) -> AssembledSpan {
    match step {
        EventNextResult::Ready(span) => span,
        other => panic!("no span: {:?}", other.map(|s| s.label)),
    }
}

#[test]
fn a_live_rings_rival_is_abandoned_and_a_lapped_round_broken() {
    let mut o = WriterOptions::new(&common::ring_path("rounds"));
    o.descriptor_shift = 6; // 64 events: easy to lap
    o.payload_shift = 16;
    o.schema_text = Some(ROUNDS.to_string());
    let w = Writer::create(&o).expect("a writer");
    let mut reader = EventReader::open(&w.path(), &OpenOptions { register: false, ..OpenOptions::default() }).unwrap();
    let mut rounds = reader.spans("round", Some("settled")).expect("an assembler");
    assert!(matches!(rounds.next_span(), EventNextResult::NotReady));

    let first = open_round(&w, 7, 0xA);
    put(&w, 2, first, 1);
    put(&w, 3, first, 0);
    let second = open_round(&w, 7, 0xB);
    put(&w, 2, second, 1);
    put(&w, 3, second, 0);
    assert!(matches!(rounds.next_span(), EventNextResult::NotReady)); // both wait for the stage
    w.record(4, &round_payload(7, 0xB), None).expect("settled");
    let rival = ready(rounds.next_span());
    assert_eq!((rival.state, rival.label, rival.id.as_slice()), (SpanState::Abandoned, 7, &[0xA, 0, 0, 0][..]));
    let taken = ready(rounds.next_span());
    assert_eq!((taken.state, taken.events[0].info.seqno), (SpanState::Complete, second));
    assert_eq!(taken.stage("settled").map(|s| s.seqno), Some(second + 3));
    assert_eq!(taken.nested_of("step").map(|s| s.key).collect::<Vec<_>>(), [1]);
    assert_eq!(taken.outside, [0, 2]); // OPEN and CLOSE
    assert_eq!(taken.events[0].type_name.as_deref(), Some("OPEN"));

    let lapped = open_round(&w, 8, 0xC);
    put(&w, 2, lapped, 1);
    assert!(matches!(rounds.next_span(), EventNextResult::NotReady));
    for _ in 0..200 {
        put(&w, 2, lapped, 1);
    }
    put(&w, 3, lapped, 0);
    let gap = match rounds.next_span() {
        EventNextResult::Gap(gap) => gap,
        other => panic!("no gap: {:?}", other.map(|s| s.label)),
    };
    assert_eq!((gap.reason, gap.first_seqno), (GapReason::FellBehind, lapped + 2));
    let broken = ready(rounds.next_span());
    assert_eq!((broken.state, broken.label, broken.events.len()), (SpanState::Broken, 8, 2));
    let message = format!("seqno {}..{} lost", gap.first_seqno, gap.first_seqno + gap.count - 1);
    assert_eq!(broken.lost, Some(Lost { first_seqno: gap.first_seqno, count: gap.count, reassembly_error: message }));
    assert!(matches!(rounds.next_span(), EventNextResult::NotReady));
    let counts = rounds.counts();
    assert_eq!((counts.handed_out, counts.abandoned, counts.broken), (1, 1, 1));
}
