//! A reader's descriptor for event loops (docs/event-loops.md): not readable
//! on an empty ring, readable once an event is committed, and not readable
//! again once the reader is read to NotReady; AsRawFd gives the same one.
mod common;

use std::os::unix::io::AsRawFd;

use evring::{EventNextResult, EventReader, OpenOptions, Position, Writer, WriterOptions};

#[repr(C)]
struct PollFd {
    fd: i32,
    events: i16,
    revents: i16,
}

extern "C" {
    fn poll(fds: *mut PollFd, nfds: u64, timeout: i32) -> i32;
}

const POLLIN: i16 = 1;

fn readable(fd: i32, millis: i32) -> bool {
    let mut p = PollFd { fd, events: POLLIN, revents: 0 };
    unsafe { poll(&mut p, 1, millis) == 1 }
}

#[test]
fn the_descriptor_is_readable_exactly_while_events_are_pending() {
    let path = common::ring_path("event-fd");
    let mut o = WriterOptions::new(&path);
    o.descriptor_shift = 8;
    o.payload_shift = 16;
    let w = Writer::create(&o).unwrap();
    let mut reader = EventReader::open(&path, &OpenOptions::default()).unwrap();
    reader.seek(Position::Oldest).unwrap();
    let fd = reader.event_fd().unwrap();
    assert_eq!(reader.as_raw_fd(), fd);
    assert!(!readable(fd, 0), "nothing committed");
    w.record(5, &[1u8; 8], None).unwrap();
    assert!(readable(fd, 20_000), "a commit makes it readable");
    assert!(matches!(reader.next_descriptor(), EventNextResult::Ready(_)));
    assert!(matches!(reader.next_descriptor(), EventNextResult::NotReady));
    assert!(!readable(fd, 0), "read to NotReady: asleep again");
}
