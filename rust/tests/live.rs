//! Live rings across languages: a ring written from Rust and read by the
//! C++ `evring` program, a ring written by the C++ producer example and read
//! from Rust while it writes, and what a reader that falls behind is told.
mod common;

use std::process::{Child, Command};
use std::time::{Duration, Instant};

use evring::{
    EventNextResult, EventPayloadResult, EventReader, GapReason, OpenOptions, PayloadRef, Recorded, Writer, WriterOptions,
};

const SYMBOLS: [&str; 4] = ["ACME", "GLOBEX", "INITECH", "UMBRELLA"];

/// examples/demo_events.hpp's tick_checksum: FNV-1a over the fields and the name.
fn tick_checksum(counter: u64, price: i64, quantity: u32, name: &str) -> u64 {
    let mut h: u64 = 1469598103934665603;
    let mut mix = |v: u64| h = (h ^ v).wrapping_mul(1099511628211);
    mix(counter);
    mix(price as u64);
    mix(u64::from(quantity));
    for b in name.bytes() {
        mix(u64::from(b));
    }
    h
}

fn demo_schema() -> String {
    common::schemas_dir().join("demo.toml").to_string_lossy().into_owned()
}

#[test]
fn a_ring_written_from_rust_is_decoded_by_the_cpp_cli() {
    let test = "a_ring_written_from_rust_is_decoded_by_the_cpp_cli";
    let evring = match common::evring_bin(test) {
        Some(p) => p,
        None => return,
    };
    let mut o = WriterOptions::new(&common::ring_path("to-cpp"));
    o.descriptor_shift = 10;
    o.payload_shift = 20;
    o.schema_path = Some(demo_schema());
    let w = Writer::create(&o).unwrap();
    for i in 0..10u64 {
        let name = SYMBOLS[(i % 4) as usize];
        let (price, quantity) = (10_000 + 25 * i as i64, 100 * i as u32 + 1);
        let mut tick = w.payload(if i % 2 == 0 { "QUOTE" } else { "TRADE" }).unwrap();
        tick.set("counter", i).unwrap().set("price", price).unwrap().set("quantity", quantity).unwrap();
        tick.set("checksum", tick_checksum(i, price, quantity, name)).unwrap().set_bytes("name", name.as_bytes()).unwrap();
        assert_eq!(tick.record(Some(&[i % 4 + 1, 2, 0, 0])).unwrap(), Recorded::Published(i + 1));
    }
    // The writer is alive: the CLI follows it, and stops after the ten.
    let out = common::run(
        Command::new(evring).args(["watch", &w.path(), "--from", "oldest", "--count", "10", "--format", "jsonl"]),
        Duration::from_secs(60),
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 10, "{}", out);
    for (i, line) in lines.iter().enumerate() {
        let i = i as u64;
        let name = SYMBOLS[(i % 4) as usize];
        let (price, quantity) = (10_000 + 25 * i as i64, 100 * i as u32 + 1);
        assert_eq!(common::json_value(line, "seqno"), Some((i + 1).to_string().as_str()), "{}", line);
        assert_eq!(common::json_value(line, "type_name"), Some(if i % 2 == 0 { "QUOTE" } else { "TRADE" }), "{}", line);
        assert_eq!(common::json_value(line, "counter"), Some(i.to_string().as_str()), "{}", line);
        assert_eq!(common::json_value(line, "price"), Some(price.to_string().as_str()), "{}", line);
        assert_eq!(common::json_value(line, "quantity"), Some(quantity.to_string().as_str()), "{}", line);
        let checksum = tick_checksum(i, price, quantity, name).to_string();
        assert_eq!(common::json_value(line, "checksum"), Some(checksum.as_str()), "{}", line);
        assert_eq!(common::json_value(line, "name"), Some(name), "{}", line);
    }
}

struct Producer(Child);

impl Drop for Producer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn verified_tick(p: PayloadRef<'_>) -> Option<(u64, String)> {
    let s = p.schema()?;
    let e = p.info().event_type;
    let counter = p.get::<u64>(&s.field(e, "counter").ok()?).ok()?;
    let price = p.get::<i64>(&s.field(e, "price").ok()?).ok()?;
    let quantity = p.get::<u32>(&s.field(e, "quantity").ok()?).ok()?;
    let checksum = p.get::<u64>(&s.field(e, "checksum").ok()?).ok()?;
    let name = p.text(&s.field(e, "name").ok()?).ok()?.into_owned();
    if checksum != tick_checksum(counter, price, quantity, &name) {
        return None;
    }
    Some((counter, name))
}

#[test]
fn a_ring_written_by_the_cpp_producer_is_read_from_rust_while_it_writes() {
    let test = "a_ring_written_by_the_cpp_producer_is_read_from_rust_while_it_writes";
    let producer = match common::producer_bin(test) {
        Some(p) => p,
        None => return,
    };
    let path = common::ring_path("from-cpp");
    let _cleanup = RemoveOnDrop(path.clone());
    const EVENTS: u64 = 500;
    let child = Command::new(producer)
        .args([&format!("{}:10:20", path), "--count", &EVENTS.to_string(), "--rate", "2000", "--keep"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .expect("the producer starts");
    let _producer = Producer(child);
    assert!(EventReader::wait_for_name(&path, Duration::from_secs(30)).unwrap(), "the producer made no ring");
    let options = OpenOptions { reader_name: "rust-test".to_string(), ..OpenOptions::default() };
    let mut reader = EventReader::open(&path, &options).unwrap();
    assert_eq!(reader.schema_origin(), "embedded");
    reader.seek("oldest").unwrap();
    let mut counters = Vec::new();
    let start = Instant::now();
    while (counters.len() as u64) < EVENTS {
        assert!(start.elapsed() < Duration::from_secs(60), "only {} events within 60 s", counters.len());
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => {
                let symbol = event.info().flow_info[0];
                match event.try_filter_map(verified_tick) {
                    EventPayloadResult::Ready(Some((counter, name))) => {
                        assert_eq!(SYMBOLS[(symbol - 1) as usize], name);
                        counters.push(counter);
                    }
                    EventPayloadResult::Ready(None) => panic!("a tick whose checksum is wrong"),
                    EventPayloadResult::Expired => panic!("a payload expired in a ring large enough for all"),
                }
            }
            EventNextResult::NotReady => reader.wait(Duration::from_millis(100)),
            EventNextResult::Notice(_) => {}
            other => panic!("unexpected {:?}", other.map(|e| e.info())),
        }
    }
    assert!(counters.windows(2).all(|w| w[1] == w[0] + 1), "the producer's counters follow each other");
    assert_eq!(reader.counters().unwrap().lost, 0);
}

#[test]
fn a_recording_made_by_the_cli_reads_from_rust_with_its_payloads() {
    let test = "a_recording_made_by_the_cli_reads_from_rust_with_its_payloads";
    let evring = match common::evring_bin(test) {
        Some(p) => p,
        None => return,
    };
    let mut o = WriterOptions::new(&common::ring_path("to-record"));
    o.descriptor_shift = 8;
    o.payload_shift = 16;
    let w = Writer::create(&o).unwrap();
    let payload = |i: u64| -> Vec<u8> { (0..(i as usize % 7) * 8).map(|b| (b as u64 + i) as u8).collect() };
    for i in 0..20u64 {
        w.record(40 + (i % 3) as u16, &payload(i), Some(&[i, 0, 0, 0])).unwrap();
    }
    let file = format!("{}.rec", common::ring_path("recording"));
    let _cleanup = RemoveOnDrop(file.clone());
    common::run(
        Command::new(evring).args(["record", &w.path(), "-o", &file, "--from", "oldest", "--count", "20"]),
        Duration::from_secs(60),
    );
    drop(w);
    let mut reader = EventReader::open(&file, &OpenOptions::default()).unwrap();
    assert_eq!(reader.kind(), evring::SourceKind::Recording);
    let mut i = 0u64;
    loop {
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => {
                let info = event.info();
                assert_eq!((info.seqno, info.event_type, info.flow_info[0]), (i + 1, 40 + (i % 3) as u16, i));
                // A recording's payloads come copied with the event: the same accessors read them.
                assert_eq!(event.try_read(), EventPayloadResult::Ready(payload(i)));
                assert_eq!(event.try_filter_map_raw(|_, b| Some(b.len())), EventPayloadResult::Ready(Some(payload(i).len())));
                i += 1;
            }
            EventNextResult::End => break,
            EventNextResult::Notice(_) => {}
            other => panic!("unexpected {:?}", other.map(|e| e.info())),
        }
    }
    assert_eq!(i, 20);
}

#[test]
fn a_ring_set_written_by_the_producer_reads_merged_with_its_members() {
    let test = "a_ring_set_written_by_the_producer_reads_merged_with_its_members";
    let producer = match common::producer_bin(test) {
        Some(p) => p,
        None => return,
    };
    let path = common::ring_path("set");
    let _cleanup = RemoveDirOnDrop(path.clone());
    const PER_THREAD: u64 = 100;
    common::run(
        Command::new(producer).args([&format!("{}:10:20", path), "--count", &PER_THREAD.to_string(), "--threads", "2"]),
        Duration::from_secs(60),
    );
    let mut reader = EventReader::open(&path, &OpenOptions::default()).unwrap();
    reader.seek("oldest").unwrap();
    let info = reader.info().unwrap();
    assert_eq!(reader.kind(), evring::SourceKind::RingSet);
    assert!(info.member_ids && info.members == 2, "{:?}", info);
    let mut per_member = std::collections::BTreeMap::new();
    let mut last_time = 0;
    loop {
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => {
                let info = event.info();
                assert!(info.record_epoch_nanos >= last_time, "merged in time order");
                last_time = info.record_epoch_nanos;
                assert!(matches!(event.try_filter_map(verified_tick), EventPayloadResult::Ready(Some(_))));
                *per_member.entry(info.member).or_insert(0u64) += 1;
            }
            EventNextResult::End | EventNextResult::NotReady => break,
            EventNextResult::Notice(_) => {}
            other => panic!("unexpected {:?}", other.map(|e| e.info())),
        }
    }
    assert_eq!(per_member.values().copied().collect::<Vec<u64>>(), vec![PER_THREAD, PER_THREAD], "{:?}", per_member);
}

struct RemoveDirOnDrop(String);

impl Drop for RemoveDirOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Removes a file kept after its writer exited, and the reader registry beside it.
struct RemoveOnDrop(String);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
        let _ = std::fs::remove_file(format!("{}.readers", self.0));
    }
}

#[test]
fn a_lapped_reader_gets_the_exact_gap_and_an_overwritten_payload_expires() {
    let mut o = WriterOptions::new(&common::ring_path("lapped"));
    o.descriptor_shift = 6; // 64 descriptors
    o.payload_shift = 16; // 64 KiB: 16 payloads of 4 KiB fill it
    let w = Writer::create(&o).unwrap();
    let mut reader = EventReader::open(&w.path(), &OpenOptions::default()).unwrap();
    reader.seek("oldest").unwrap();
    let payload = vec![9u8; 4096];
    assert_eq!(w.record(5, &payload, None).unwrap(), Recorded::Published(1));
    match reader.next_descriptor() {
        EventNextResult::Ready(event) => {
            assert_eq!(event.try_read(), EventPayloadResult::Ready(payload.clone()));
            // The writer laps the reader while it holds the descriptor: the bytes are gone.
            for _ in 0..100 {
                w.record(5, &payload, None).unwrap();
            }
            assert_eq!(event.try_read(), EventPayloadResult::Expired);
            assert_eq!(event.try_filter_map_raw(|_, b| Some(b.len())), EventPayloadResult::Expired);
        }
        other => panic!("no event: {:?}", other.map(|e| e.info())),
    }
    // 101 events in 64 descriptors: the reader, still at 2, lost at least 101 - 64 - 1 of them.
    let gap = match reader.next_descriptor() {
        EventNextResult::Gap(gap) => gap,
        other => panic!("no gap: {:?}", other.map(|e| e.info())),
    };
    assert_eq!((gap.reason, gap.first_seqno), (GapReason::FellBehind, 2));
    assert!(gap.count >= 101 - 64 - 1, "{:?}", gap);
    assert!(gap.description.ends_with("fell behind the writer (lapped)"), "{}", gap.description);
    // The gap is exact: the next event is the one after it, and the counters say the same.
    match reader.next_descriptor() {
        EventNextResult::Ready(event) => assert_eq!(event.info().seqno, gap.first_seqno + gap.count),
        other => panic!("no event after the gap: {:?}", other.map(|e| e.info())),
    }
    let counters = reader.counters().unwrap();
    assert_eq!((counters.lost, counters.gaps), (gap.count, 1));
}

#[test]
fn an_absent_ring_is_refused_with_its_name() {
    let path = common::ring_path("absent");
    let err = evring::EventRing::new(&path).unwrap_err();
    assert_eq!(err.message(), format!("opening '{}': No such file or directory", path));
    let err = EventReader::open(&path, &OpenOptions::default()).err().expect("no reader of an absent ring");
    assert!(err.message().contains(&path) && err.message().contains("No such file or directory"), "{}", err);
    assert!(!EventReader::wait_for_name(&path, Duration::from_millis(0)).unwrap());
}

#[test]
fn a_live_rings_reader_starts_at_its_newest_event() {
    let mut o = WriterOptions::new(&common::ring_path("start"));
    o.descriptor_shift = 8;
    o.payload_shift = 16;
    let w = Writer::create(&o).unwrap();
    for _ in 0..3 {
        w.record(5, b"old", None).unwrap();
    }
    let seqno = |r: EventNextResult<evring::EventDescriptor<'_>>| match r {
        EventNextResult::Ready(event) => Some(event.info().seqno),
        _ => None,
    };
    // The newest event first, then what is written after it; reset() goes back to the newest.
    let mut reader = evring::EventRing::new(w.path()).unwrap().create_reader().unwrap();
    assert_eq!(seqno(reader.next_descriptor()), Some(3));
    assert!(matches!(reader.next_descriptor(), EventNextResult::NotReady));
    w.record(5, b"new", None).unwrap();
    assert_eq!(seqno(reader.next_descriptor()), Some(4));
    reader.reset().unwrap();
    assert_eq!(seqno(reader.next_descriptor()), Some(4));
    reader.seek("oldest").unwrap();
    assert_eq!(seqno(reader.next_descriptor()), Some(1));
}
