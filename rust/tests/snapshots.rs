//! The three real execution-ring snapshots (../shared/data/monad-snapshots),
//! read by name from Rust: every event and payload, typed fields through the
//! built-in schema, span seeks, `--where`, and the same events as the C++
//! CLI hands out.
mod common;

use std::process::Command;
use std::time::Duration;

use evring::{EventNextResult, EventPayloadResult, EventReader, EventRing, OpenOptions, PayloadRef, SourceKind};

/// What a whole read of a snapshot saw.
struct Scan {
    events: u64,
    blocks: Vec<u64>,
    first_seqno: u64,
    last_seqno: u64,
}

fn block_number(p: PayloadRef<'_>) -> Option<u64> {
    let field = p.schema()?.field(p.info().event_type, "block_tag.block_number").ok()?;
    p.get::<u64>(&field).ok()
}

/// Reads every event with its payload (zero-copy, and copied), and each
/// BLOCK_START's block number through the schema.
fn scan(path: &str) -> Scan {
    let ring = EventRing::new_from_zstd_path(path, None).expect("the snapshot opens");
    let mut reader = ring.create_reader().expect("a reader");
    assert_eq!(reader.kind(), SourceKind::Snapshot);
    assert!(reader.schema_origin().starts_with("built-in schema monad-exec"), "{}", reader.schema_origin());
    let block_start = reader.schema().expect("a schema").event_type("BLOCK_START").expect("BLOCK_START").number;
    let mut scan = Scan { events: 0, blocks: Vec::new(), first_seqno: 0, last_seqno: 0 };
    loop {
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => {
                let info = event.info();
                assert!(event.type_name().is_some(), "event {} has no type name", info.seqno);
                let copied = event.try_read().ready().expect("a snapshot's payload never expires");
                assert_eq!(copied.len(), info.payload_size as usize);
                let in_place = event.try_filter_map_raw(|_, bytes| Some(bytes.to_vec()));
                assert_eq!(in_place, EventPayloadResult::Ready(Some(copied)));
                if info.event_type == block_start {
                    let n = event.try_filter_map(block_number).ready().flatten().expect("a block number");
                    scan.blocks.push(n);
                }
                if scan.events == 0 {
                    scan.first_seqno = info.seqno;
                }
                scan.last_seqno = info.seqno;
                scan.events += 1;
            }
            EventNextResult::End => break,
            EventNextResult::Notice(_) => {}
            other => panic!("unexpected step in a snapshot: {:?}", other.map(|e| e.info())),
        }
    }
    let counters = reader.counters().expect("counters");
    assert_eq!(counters.events, scan.events);
    assert_eq!((counters.lost, counters.gaps), (0, 0));
    scan
}

/// The C++ CLI's count of the same snapshot (`evring watch --format jsonl --no-payload`).
fn cli_count(evring: &std::path::Path, path: &str) -> u64 {
    let out = common::run(
        Command::new(evring).args(["watch", path, "--from", "oldest", "--format", "jsonl", "--no-payload"]),
        Duration::from_secs(300),
    );
    out.lines().count() as u64
}

#[test]
fn emn_1b_15m_is_block_15000001_whole() {
    let test = "emn_1b_15m_is_block_15000001_whole";
    let path = match common::snapshot(test, "emn-1b-15m") {
        Some(path) => path,
        None => return,
    };
    let scan = scan(&path);
    assert_eq!(scan.blocks, vec![15000001]);
    assert_eq!(scan.first_seqno, 1);
    assert_eq!(scan.last_seqno - scan.first_seqno + 1, scan.events);
    if let Some(evring) = common::evring_bin_for_comparison(test) {
        assert_eq!(cli_count(&evring, &path), scan.events);
    }

    // The first event decodes to the hand-checked values of tests/python/test_snapshots.py.
    let mut reader = EventReader::open(&path, &OpenOptions::default()).unwrap();
    let schema_fields = {
        let schema = reader.schema().unwrap();
        let t = schema.event_type("BLOCK_START").unwrap();
        (schema.field(t.number, "eth_block_input.gas_limit").unwrap(), schema.field(t.number, "eth_block_input.beneficiary").unwrap(), schema.field(t.number, "chain_id").unwrap())
    };
    let (gas_limit, beneficiary, chain_id) = schema_fields;
    match reader.next_descriptor() {
        EventNextResult::Ready(event) => {
            assert_eq!(event.type_name(), Some("BLOCK_START"));
            assert_eq!(event.try_field::<u64>(&gas_limit), EventPayloadResult::Ready(Ok(30000000)));
            let address = event.try_field::<[u8; 20]>(&beneficiary).ready().unwrap().unwrap();
            let hex: String = address.iter().map(|b| format!("{:02x}", b)).collect();
            assert_eq!(hex, "1ad91ee08f21be3de0ba2ba6918e714da6b45836");
            let json = event.decode_json().unwrap().ready().unwrap();
            assert!(json.contains("\"gas_limit\":30000000"), "{}", json);
            // A field asked as the wrong type is refused, naming both types.
            let wrong = event.try_field::<u32>(&gas_limit).ready().unwrap().unwrap_err();
            assert_eq!(wrong.to_string(), "field 'eth_block_input.gas_limit' is u64, not u32");
            let _ = chain_id;
        }
        other => panic!("no first event: {:?}", other.map(|e| e.info())),
    }

    // --where through the schema: the 229 transaction headers (the count of tests/c/c_api_test.c).
    reader.set_where(Some("type == TXN_HEADER_START && txn_header.gas_limit > 0")).unwrap();
    reader.seek("oldest").unwrap();
    let mut kept = 0;
    loop {
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => {
                assert_eq!(event.type_name(), Some("TXN_HEADER_START"));
                kept += 1;
            }
            EventNextResult::End => break,
            EventNextResult::Notice(_) => {}
            other => panic!("unexpected {:?}", other.map(|e| e.info())),
        }
    }
    assert_eq!(kept, 229);
    let bad = reader.set_where(Some("type == TXN_HEADR_START")).unwrap_err();
    assert!(bad.message().contains("nearest: TXN_HEADER_START"), "{}", bad);
}

#[test]
fn emn_30b_15m_has_thirty_blocks_and_seeks_to_one_by_label() {
    let test = "emn_30b_15m_has_thirty_blocks_and_seeks_to_one_by_label";
    let path = match common::snapshot(test, "emn-30b-15m") {
        Some(path) => path,
        None => return,
    };
    let scan = scan(&path);
    assert_eq!(scan.blocks, (15000001..=15000030).collect::<Vec<u64>>());
    if let Some(evring) = common::evring_bin_for_comparison(test) {
        assert_eq!(cli_count(&evring, &path), scan.events);
    }

    // block:15000009 is that block's BLOCK_START; `block == 15000009` keeps its events, each
    // carrying the opener's seqno in its block tag (content_ext[0]).
    let mut reader = EventRing::new(&path).unwrap().create_reader().unwrap();
    reader.seek_span("block", 15000009).unwrap();
    let opener = match reader.next_descriptor() {
        EventNextResult::Ready(event) => {
            assert_eq!(event.try_filter_map(block_number), EventPayloadResult::Ready(Some(15000009)));
            event.info().seqno
        }
        other => panic!("no BLOCK_START: {:?}", other.map(|e| e.info())),
    };
    reader.set_where(Some("block == 15000009")).unwrap();
    let mut events = 0;
    loop {
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => {
                assert_eq!(event.info().flow_info[0], opener);
                events += 1;
            }
            EventNextResult::End => break,
            EventNextResult::Notice(_) => {}
            other => panic!("unexpected {:?}", other.map(|e| e.info())),
        }
    }
    assert!(events > 100, "{} events in block 15000009", events);
    let missing = reader.seek_span("block", 12).unwrap_err();
    assert!(missing.message().contains("no block 12"), "{}", missing);
}

#[test]
fn mdn_500b_genesis_reads_with_the_older_schema() {
    let test = "mdn_500b_genesis_reads_with_the_older_schema";
    let path = match common::snapshot(test, "mdn-500b-genesis") {
        Some(path) => path,
        None => return,
    };
    let scan = scan(&path);
    assert!(scan.blocks.len() >= 400, "{} blocks", scan.blocks.len());
    assert!(scan.blocks.windows(2).all(|w| w[0] < w[1]), "block numbers grow");
    if let Some(evring) = common::evring_bin_for_comparison(test) {
        assert_eq!(cli_count(&evring, &path), scan.events);
    }
}
