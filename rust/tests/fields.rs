//! Typed field access through the schema, from Rust: payloads built field
//! by field through a writer's schema and read back through a reader's,
//! every read and write checked, against the library's own decoding.
mod common;

use evring::{
    EventNextResult, EventPayloadResult, EventReader, FieldError, FieldKind, OpenOptions, PayloadRef, Recorded, Scalar,
    Status, Writer, WriterOptions,
};

// Every kind of field (the schema of tests/c/c_fields_test.c): the fixed part is 80 bytes.
const SCHEMA: &str = r#"content_type = 4661
content_name = "cfields"
[[event]]
number = 2
name = "ORDER"
fields = [
  { name = "id", type = "u64" },
  { name = "side", type = "side" },
  { name = "px", type = "px" },
  { name = "levels", type = "u32[3]" },
  { name = "owner", type = "address" },
  { name = "sym", type = "char[8]" },
  { name = "n_legs", type = "u8" },
  { name = "n_note", type = "u16" },
  { name = "legs", type = "leg[n_legs]" },
  { name = "note", type = "bytes[n_note]" },
]
[[event]]
number = 3
name = "PING"
[enum.side]
type = "u8"
values = { BUY = 0, SELL = 1 }
[struct.px]
fields = [ { name = "mantissa", type = "i64" }, { name = "exponent", type = "i8" } ]
[struct.leg]
fields = [ { name = "qty", type = "u32" }, { name = "venue", type = "u16" } ]
"#;

fn writer(what: &str) -> Writer {
    let mut o = WriterOptions::new(&common::ring_path(what));
    o.descriptor_shift = 8;
    o.payload_shift = 16;
    o.schema_text = Some(SCHEMA.to_string());
    Writer::create(&o).expect("the writer")
}

fn leg(qty: u32, venue: u16) -> [u8; 8] {
    let mut b = [0u8; 8];
    b[..4].copy_from_slice(&qty.to_le_bytes());
    b[4..6].copy_from_slice(&venue.to_le_bytes());
    b
}

#[test]
fn a_payload_built_by_field_names_reads_back_field_by_field() {
    let w = writer("build");
    let mut order = w.payload("ORDER").unwrap();
    order.set("id", 77u64).unwrap().set_unsigned("side", 1).unwrap().set_signed("px.mantissa", -12345).unwrap();
    order.set("px.exponent", -4i8).unwrap().set("levels[2]", 9000u32).unwrap();
    order.set("owner", [0xab_u8; 20]).unwrap().set_bytes("sym", b"ACME").unwrap();
    let mut legs = leg(5, 11).to_vec();
    legs.extend_from_slice(&leg(6, 31));
    order.set_trailing("legs", &legs).unwrap().set_trailing("note", b"hi!").unwrap();
    assert_eq!(order.bytes().len(), 80 + 16 + 3);
    assert_eq!(order.record(Some(&[1, 2, 3, 4])).unwrap(), Recorded::Published(1));

    let mut reader = EventReader::open(&w.path(), &OpenOptions::default()).unwrap();
    reader.seek("oldest").unwrap();
    let schema = reader.schema().expect("the embedded schema");
    let id = schema.field_of("ORDER", "id").unwrap();
    let side = schema.field_of("ORDER", "side").unwrap();
    let mantissa = schema.field_of("ORDER", "px.mantissa").unwrap();
    let venue = schema.field_of("ORDER", "legs[1].venue").unwrap();
    let note = schema.field_of("ORDER", "note").unwrap();
    assert_eq!((side.kind, side.scalar, side.type_name.as_str()), (FieldKind::Enum, Some(Scalar::U8), "side"));
    assert_eq!((note.kind, note.type_name.as_str()), (FieldKind::Trailing, "bytes[n_note]"));
    let json = match reader.next_descriptor() {
        EventNextResult::Ready(event) => {
            let info = event.info();
            assert_eq!((info.seqno, info.event_type, info.flow_info), (1, 2, [1, 2, 3, 4]));
            assert_eq!(event.try_field::<u64>(&id), EventPayloadResult::Ready(Ok(77)));
            assert_eq!(event.try_field::<u16>(&venue), EventPayloadResult::Ready(Ok(31)));
            assert_eq!(event.try_field::<i64>(&mantissa), EventPayloadResult::Ready(Ok(-12345)));
            let read = event.try_filter_map(|p: PayloadRef<'_>| {
                let s = p.schema()?;
                let e = p.info().event_type;
                let exponent = p.signed(&s.field(e, "px.exponent").ok()?).ok()?;
                let level = p.unsigned(&s.field(e, "levels[2]").ok()?).ok()?;
                let sym = p.text(&s.field(e, "sym").ok()?).ok()?.into_owned();
                let note = p.field_bytes(&s.field(e, "note").ok()?).ok()?.to_vec();
                let owner = p.get::<[u8; 20]>(&s.field(e, "owner").ok()?).ok()?;
                Some((exponent, level, sym, note, owner))
            });
            assert_eq!(read, EventPayloadResult::Ready(Some((-4, 9000, "ACME".to_string(), b"hi!".to_vec(), [0xab; 20]))));
            event.decode_json().unwrap().ready().unwrap()
        }
        other => panic!("no event: {:?}", other.map(|e| e.info())),
    };
    // The library's decoder agrees with what was built.
    for part in ["\"id\":77", "\"side\":\"SELL\"", "\"mantissa\":-12345", "\"exponent\":-4", "\"levels\":[0,0,9000]",
                 "\"sym\":\"ACME\"", "[{\"qty\":5,\"venue\":11},{\"qty\":6,\"venue\":31}]", "\"note\":\"0x686921\""] {
        assert!(json.contains(part), "{} not in {}", part, json);
    }
}

#[test]
fn reads_and_writes_are_checked() {
    let w = writer("checked");
    let mut order = w.payload("ORDER").unwrap();
    let wrong_type = order.set("id", 1u32).err().unwrap();
    assert_eq!(wrong_type.message(), "field 'id' is u64, not u32");
    let too_big = order.set_unsigned("n_legs", 256).err().unwrap();
    assert_eq!(too_big.message(), "256 does not fit field 'n_legs' (u8)");
    let too_small = order.set_signed("px.exponent", -129).err().unwrap();
    assert_eq!(too_small.message(), "-129 does not fit field 'px.exponent' (i8)");
    assert!(order.set_bytes("owner", b"short").is_err());
    assert!(order.set_bytes("sym", b"nine char").is_err());
    let odd = order.set_trailing("legs", &[0u8; 7]).err().unwrap();
    assert_eq!(odd.message(), "7 bytes (8-byte elements) does not fit field 'legs' (leg[n_legs])");
    let in_array = order.set("legs[0].qty", 1u32).err().unwrap();
    assert!(in_array.message().contains("trailing array"), "{}", in_array);
    let unknown = order.set("prce", 1u64).err().unwrap();
    assert!(unknown.message().contains("has no field 'prce' (its fields: id, side, px,"), "{}", unknown);
    assert_eq!(w.payload("ORDR").err().unwrap().status(), Status::Invalid);

    // The checked write refuses bytes the layout rules out, publishing nothing.
    let refused = w.record(2, &[0u8; 5], None).unwrap_err();
    assert_eq!(refused.status(), Status::Decode);
    assert!(refused.message().starts_with("ORDER (event type 2): a payload of 5 bytes"), "{}", refused);
    assert_eq!(w.record(9, &[], None).unwrap_err().status(), Status::Decode);
    assert_eq!(w.record(3, &[], None).unwrap(), Recorded::Published(1));

    // A field of another event type, or a payload too short for it, is refused at the read.
    let mut reader = EventReader::open(&w.path(), &OpenOptions::default()).unwrap();
    reader.seek("oldest").unwrap();
    let id = reader.schema().unwrap().field_of("ORDER", "id").unwrap();
    match reader.next_descriptor() {
        EventNextResult::Ready(ping) => {
            let err = ping.try_field::<u64>(&id).ready().unwrap().unwrap_err();
            assert_eq!(err, FieldError::WrongEvent { field: "id".into(), field_event: 2, event: 3 });
        }
        other => panic!("no event: {:?}", other.map(|e| e.info())),
    }
}

#[test]
fn raw_reservations_commit_and_abort() {
    let w = writer("raw");
    let mut r = w.reserve(16).unwrap();
    assert_eq!(r.payload().len(), 16);
    r.payload().copy_from_slice(&[7u8; 16]);
    assert_eq!(r.commit(40, None).unwrap(), 1);
    let r = w.reserve(8).unwrap();
    r.abort();
    drop(w.reserve(8).unwrap()); // dropped: aborted too
    let mut reader = EventReader::open(&w.path(), &OpenOptions::default()).unwrap();
    reader.seek("oldest").unwrap();
    let mut seen = Vec::new();
    while let EventNextResult::Ready(e) = reader.next_descriptor() {
        seen.push((e.info().event_type, e.type_name().map(str::to_string), e.try_read().ready().unwrap().len()));
    }
    let record_error = Some("RECORD_ERROR".to_string());
    assert_eq!(seen[0], (40, None, 16));
    assert_eq!(seen[1].0, 1);
    assert_eq!(seen[1].1, record_error);
    assert_eq!(seen[2].1, record_error);
    assert_eq!(seen.len(), 3);
}
