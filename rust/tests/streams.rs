//! A NATS JetStream stream read from Rust through the C ABI: a ring written
//! from Rust, relayed by `evring relay` into a `nats-server -js` on 127.0.0.1
//! (a port the server picks, a temporary store), and read back by URL with
//! every field intact. Skipped, with the reason, without nats-server.
mod common;

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use evring::{EventNextResult, EventPayloadResult, EventRing, PayloadRef, SourceKind, Writer, WriterOptions};

/// A child process killed and reaped when dropped, and a directory removed.
struct Running(Child, Option<PathBuf>);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        if let Some(dir) = &self.1 {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

fn nats_server() -> Option<PathBuf> {
    let on_path = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).map(|d| d.join("nats-server")).find(|f| f.is_file()))
        .unwrap_or(None);
    on_path.or_else(|| Some(PathBuf::from("/usr/sbin/nats-server")).filter(|f| f.is_file()))
}

/// Starts `nats-server -js` on 127.0.0.1 and returns it with its port, read
/// from the ports file it writes (waited for with a bound).
fn start_server(work: &PathBuf) -> (Running, u16) {
    let server = nats_server().expect("checked before");
    std::fs::create_dir_all(work.join("ports")).unwrap();
    let child = Command::new(server)
        .args(["-js", "-a", "127.0.0.1", "-p", "-1", "-sd"])
        .arg(work.join("store"))
        .arg("--ports_file_dir")
        .arg(work.join("ports"))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nats-server starts");
    let running = Running(child, Some(work.clone()));
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(15) {
        if let Some(Ok(entry)) = std::fs::read_dir(work.join("ports")).unwrap().next() {
            let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
            // {"nats":["nats://127.0.0.1:PORT"],...}
            if let Some(at) = text.find("nats://127.0.0.1:") {
                let digits: String = text[at + 17..].chars().take_while(|c| c.is_ascii_digit()).collect();
                if let Ok(port) = digits.parse() {
                    return (running, port);
                }
            }
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    panic!("nats-server wrote no port within 15 s");
}

fn tick(p: PayloadRef<'_>) -> Option<(u64, i64, String)> {
    let s = p.schema()?;
    let e = p.info().event_type;
    let counter = p.get::<u64>(&s.field(e, "counter").ok()?).ok()?;
    let price = p.get::<i64>(&s.field(e, "price").ok()?).ok()?;
    let name = p.text(&s.field(e, "name").ok()?).ok()?.into_owned();
    Some((counter, price, name))
}

#[test]
fn a_relayed_stream_reads_from_rust_by_its_url() {
    let test = "a_relayed_stream_reads_from_rust_by_its_url";
    if nats_server().is_none() {
        common::skip(test, "nats-server is not installed (apt-get install nats-server)");
        return;
    }
    let evring = match common::evring_bin(test) {
        Some(p) => p,
        None => return,
    };
    let work = PathBuf::from(format!("{}-nats", common::ring_path("stream")));
    let (_server, port) = start_server(&work);

    let mut o = WriterOptions::new(&common::ring_path("relayed"));
    o.descriptor_shift = 10;
    o.payload_shift = 20;
    o.schema_path = Some(common::schemas_dir().join("demo.toml").to_string_lossy().into_owned());
    let w = Writer::create(&o).unwrap();
    const EVENTS: u64 = 50;
    for i in 0..EVENTS {
        let mut t = w.payload("QUOTE").unwrap();
        t.set("counter", i).unwrap().set("price", 1000 + i as i64).unwrap().set_bytes("name", b"ACME").unwrap();
        t.record(Some(&[1, 1, 0, 0])).unwrap();
    }
    let relay = Command::new(evring)
        .args(["relay", &w.path(), "--to", &format!("nats://127.0.0.1:{}", port), "--stream", "RUST"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("the relay starts");
    let _relay = Running(relay, None);

    // The stream exists once the relay has announced the ring: wait for it to open.
    let url = format!("nats://127.0.0.1:{}/RUST", port);
    let start = Instant::now();
    let mut reader = loop {
        // EventRing leaves a URL to the reader's connect (a name or path it checks at once).
        match EventRing::new(&url).and_then(|ring| ring.create_reader()) {
            Ok(r) => break r,
            Err(e) if start.elapsed() < Duration::from_secs(30) => {
                let _ = e;
                std::thread::sleep(Duration::from_millis(50));
            }
            Err(e) => panic!("the stream did not open within 30 s: {}", e),
        }
    };
    assert_eq!(reader.kind(), SourceKind::Stream);
    reader.seek("oldest").unwrap();
    let mut seen = Vec::new();
    while (seen.len() as u64) < EVENTS {
        assert!(start.elapsed() < Duration::from_secs(60), "{} of {} events within 60 s", seen.len(), EVENTS);
        match reader.next_descriptor() {
            EventNextResult::Ready(event) => {
                assert_eq!(event.info().seqno, seen.len() as u64 + 1);
                match event.try_filter_map(tick) {
                    EventPayloadResult::Ready(Some(t)) => seen.push(t),
                    other => panic!("event {} did not decode: {:?}", event.info().seqno, other),
                }
            }
            EventNextResult::NotReady => reader.wait(Duration::from_millis(100)),
            EventNextResult::Notice(_) => {}
            other => panic!("unexpected {:?}", other.map(|e| e.info())),
        }
    }
    let expected: Vec<(u64, i64, String)> = (0..EVENTS).map(|i| (i, 1000 + i as i64, "ACME".to_string())).collect();
    assert_eq!(seen, expected);
}
