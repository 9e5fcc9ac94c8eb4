//! Prints the events of any source, decoded by its schema, as `evring watch`
//! does in jsonl (much simplified): a Rust reader in some forty lines.
//!
//!     cargo run --example watch -- SOURCE [POSITION [WHERE]]
//!     cargo run --example watch -- emn-30b-15m.snapshot.zst block:15000009 'type == TXN_LOG'
//!
//! A live ring is followed (sleeping on its doorbell) until its writer exits.
use std::io::Write;
use std::time::Duration;

use evring::{EventNextResult, EventPayloadResult, EventReader, OpenOptions};

fn main() -> Result<(), evring::Error> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let source = match args.first() {
        Some(s) => s,
        None => {
            eprintln!("usage: watch SOURCE [POSITION [WHERE]]");
            std::process::exit(2);
        }
    };
    let mut reader = EventReader::open(source, &OpenOptions { reader_name: "watch.rs".into(), ..Default::default() })?;
    if let Some(position) = args.get(1) {
        reader.seek(position.as_str())?;
    }
    reader.set_where(args.get(2).map(String::as_str))?;
    let mut out = std::io::stdout().lock();
    loop {
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => {
                let info = event.info();
                let fields = match event.decode_json() {
                    Ok(EventPayloadResult::Ready(json)) => json,
                    Ok(EventPayloadResult::Expired) => "\"(overwritten before it was read)\"".to_string(),
                    Err(e) => format!("{:?}", e.message()),
                };
                let line = writeln!(
                    out,
                    "{{\"seqno\":{},\"type_name\":{:?},\"content_ext\":{:?},\"fields\":{}}}",
                    info.seqno,
                    event.type_name().unwrap_or(""),
                    info.flow_info,
                    fields
                );
                if line.is_err() {
                    return Ok(()); // the reader of our output went away (`| head`)
                }
            }
            EventNextResult::NotReady => reader.wait(Duration::from_millis(100)),
            EventNextResult::Gap(gap) => eprintln!("lost {} events from {}: {}", gap.count, gap.first_seqno, gap.description),
            EventNextResult::Notice(text) => eprintln!("{}", text),
            EventNextResult::End => return Ok(()),
            EventNextResult::Failed(e) => return Err(e),
        }
    }
}
