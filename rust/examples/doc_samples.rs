//! The Rust samples of README.md and docs/rust.md, compiled: each region
//! between SAMPLE-BEGIN and SAMPLE-END markers is exactly a block of those
//! files (tests/docs.rs checks it, and runs the readers over a snapshot).
//!
//!     cargo run --example doc_samples -- readme|rust-md-read|rust-md-write|rust-md-blocks

fn readme() -> Result<(), evring::Error> {
    // SAMPLE-BEGIN README.md
    let mut reader = evring::EventRing::new("emn-30b-15m.snapshot.zst")?.create_reader()?;
    reader.seek_span("block", 15000009)?;
    while let evring::EventNextResult::Ready(event) = reader.next_descriptor() {
        println!("{} {:?}", event.info().seqno, event.type_name());
    }
    // SAMPLE-END
    Ok(())
}

fn rust_md_read() -> Result<(), evring::Error> {
    // SAMPLE-BEGIN docs/rust.md 1
    use evring::{EventNextResult, EventPayloadResult, EventRing, PayloadRef};

    fn block_number(p: PayloadRef<'_>) -> Option<u64> {
        let field = p.schema()?.field(p.info().event_type, "block_tag.block_number").ok()?;
        p.get::<u64>(&field).ok()
    }

    let ring = EventRing::new("emn-30b-15m.snapshot.zst")?;   // or a ring name, a path, a set, a recording
    let mut reader = ring.create_reader()?;
    reader.seek_span("block", 15000009)?;                      // block 15000009's BLOCK_START
    reader.set_where(Some("type == BLOCK_START"))?;            // docs/cli.md, "Filter expressions"
    loop {
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => match event.try_filter_map(block_number) {
                EventPayloadResult::Ready(Some(n)) => println!("block {}", n),
                EventPayloadResult::Ready(None) => {}
                EventPayloadResult::Expired => eprintln!("overwritten before it was read"),
            },
            EventNextResult::NotReady => reader.wait(std::time::Duration::from_millis(100)),  // the doorbell
            EventNextResult::Gap(gap) => eprintln!("lost {} events: {}", gap.count, gap.description),
            EventNextResult::Notice(text) => eprintln!("{}", text),
            EventNextResult::End => break,
            EventNextResult::Failed(e) => return Err(e),
        }
    }
    // SAMPLE-END
    Ok(())
}

fn rust_md_write() -> Result<(), evring::Error> {
    // SAMPLE-BEGIN docs/rust.md 2
    use evring::{Recorded, Writer, WriterOptions};

    let mut options = WriterOptions::new("/dev/shm/ticks");    // a path, or a name in the ring directory
    options.schema_path = Some("schemas/demo.toml".into());    // embedded in the ring; typed writes checked
    let writer = Writer::create(&options)?;
    let mut quote = writer.payload("QUOTE")?;                  // built field by field through the schema
    quote.set("counter", 1u64)?.set("price", 1_000_000i64)?.set("quantity", 5u32)?.set_bytes("name", b"ACME")?;
    match quote.record(Some(&[1, 2, 0, 0]))? {
        Recorded::Published(seqno) => println!("published {}", seqno),
        Recorded::NotWanted => println!("no registered reader wants QUOTE"),
    }
    if writer.wants(3) {                                       // interest: skip building what nobody wants
        writer.payload("TRADE")?.set("counter", 2u64)?.record(None)?;
    }
    // SAMPLE-END
    Ok(())
}

fn rust_md_blocks() -> Result<(), evring::Error> {
    // SAMPLE-BEGIN docs/rust.md 3
    use evring::{EventNextResult, EventRing};

    let mut reader = EventRing::new("emn-30b-15m.snapshot.zst")?.create_reader()?;
    reader.seek_span("block", 15000028)?;                      // from block 15000028's BLOCK_START
    let mut blocks = reader.blocks(Some("finalized"))?;        // each block once it is finalized
    loop {
        match blocks.next_span() {
            EventNextResult::Ready(block) => println!(
                "block {} {:?}: {} transactions, {} events, stages {:?}",
                block.label,
                block.state,                                   // Complete, Abandoned (a rival), Broken (a gap)
                block.nested_of("txn").count(),
                block.events.len(),
                block.stages.iter().map(|s| s.name.as_str()).collect::<Vec<_>>()
            ),
            EventNextResult::NotReady => blocks.wait(std::time::Duration::from_millis(100)),
            EventNextResult::Gap(gap) => eprintln!("lost {} events: the blocks across them come Broken", gap.count),
            EventNextResult::Notice(text) => eprintln!("{}", text),
            EventNextResult::End => break,
            EventNextResult::Failed(e) => return Err(e),
        }
    }
    // SAMPLE-END
    Ok(())
}

fn main() -> Result<(), evring::Error> {
    match std::env::args().nth(1).as_deref() {
        Some("readme") => readme(),
        Some("rust-md-read") => rust_md_read(),
        Some("rust-md-write") => rust_md_write(),
        Some("rust-md-blocks") => rust_md_blocks(),
        _ => {
            eprintln!("usage: doc_samples readme|rust-md-read|rust-md-write|rust-md-blocks");
            std::process::exit(2);
        }
    }
}
