//! The C ABI of `include/evring/evring.h`, declared by hand with `std` types.
//!
//! Every struct here has the C layout of its namesake (checked below by size,
//! and by offset in the tests). Nothing here is safe to call directly: the
//! rest of the crate wraps it. Only what the crate uses is declared.
#![allow(non_camel_case_types)]

use std::os::raw::{c_char, c_int, c_uint, c_void};

// Assembled spans (evring.h, "Assembled spans").
mod spans;
pub use spans::*;

pub const EVRING_OK: c_int = 0;
pub const EVRING_E_INVALID: c_int = -1;
pub const EVRING_E_SYSTEM: c_int = -2;
pub const EVRING_E_FORMAT: c_int = -3;
pub const EVRING_E_NOMEM: c_int = -4;
pub const EVRING_E_TOO_SMALL: c_int = -5;
pub const EVRING_E_NO_SCHEMA: c_int = -6;
pub const EVRING_E_DECODE: c_int = -7;
pub const EVRING_E_EXPIRED: c_int = -8;
pub const EVRING_E_UNSUPPORTED: c_int = -9;
pub const EVRING_E_FAILED: c_int = -10;
pub const EVRING_E_TOO_LARGE: c_int = -11;
pub const EVRING_NOT_WANTED: c_int = 1;

pub const EVRING_STEP_EVENT: c_int = 0;
pub const EVRING_STEP_GAP: c_int = 1;
pub const EVRING_STEP_NOTICE: c_int = 2;
pub const EVRING_STEP_NOT_READY: c_int = 3;
pub const EVRING_STEP_END: c_int = 4;
pub const EVRING_STEP_FAILED: c_int = 5;

pub const EVRING_PAYLOAD_NOT_READ: c_int = 0;
pub const EVRING_PAYLOAD_OK: c_int = 1;
pub const EVRING_PAYLOAD_EXPIRED: c_int = 2;
pub const EVRING_PAYLOAD_INVALID: c_int = 3;

pub const EVRING_KIND_RING: c_int = 0;
pub const EVRING_KIND_SNAPSHOT: c_int = 1;
pub const EVRING_KIND_RECORDING: c_int = 2;
pub const EVRING_KIND_STREAM: c_int = 3;
pub const EVRING_KIND_RING_SET: c_int = 4;

pub const EVRING_READ_DESCRIPTOR: c_int = 0;
pub const EVRING_READ_PAYLOAD: c_int = 1;

pub const EVRING_FIELD_SCALAR: c_int = 0;
pub const EVRING_FIELD_BYTES: c_int = 1;
pub const EVRING_FIELD_ENUM: c_int = 2;
pub const EVRING_FIELD_STRUCT: c_int = 3;
pub const EVRING_FIELD_ARRAY: c_int = 4;
pub const EVRING_FIELD_STRING: c_int = 5;
pub const EVRING_FIELD_TRAILING: c_int = 6;

#[repr(C)]
pub struct evring_source {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct evring_writer {
    _opaque: [u8; 0],
}
#[repr(C)]
pub struct evring_schema {
    _opaque: [u8; 0],
}

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct evring_descriptor {
    pub seqno: u64,
    pub event_type: u16,
    pub reserved: u16,
    pub payload_size: u32,
    pub record_epoch_nanos: u64,
    pub payload_buf_offset: u64,
    pub content_ext: [u64; 4],
}

#[repr(C)]
pub struct evring_open_options {
    pub struct_size: u32,
    pub schema_path: *const c_char,
    pub max_snapshot_size: u64,
    pub recording_series: c_int,
    pub register_reader: c_int,
    pub reader_name: *const c_char,
    pub reader_detail: *const c_char,
    pub keywords: *const c_char,
    pub level: c_int,
}

#[repr(C)]
pub struct evring_source_info {
    pub struct_size: u32,
    pub kind: c_int,
    pub live: c_int,
    pub content_type: u16,
    pub schema_hash: [u8; 32],
    pub descriptor_capacity: u64,
    pub payload_buf_size: u64,
    pub path: *const c_char,
    pub member_ids: c_int,
    pub members: u32,
    pub registered: c_int,
}

#[repr(C)]
pub struct evring_item {
    pub struct_size: u32,
    pub member: u32,
    pub event: evring_descriptor,
    pub payload_state: c_int,
    pub payload: *const c_void,
    pub payload_size: usize,
    pub gap_first_seqno: u64,
    pub gap_count: u64,
    pub gap_reason: u32,
    pub text: *const c_char,
}

#[repr(C)]
#[derive(Default)]
pub struct evring_counters {
    pub struct_size: u32,
    pub events: u64,
    pub lost: u64,
    pub gaps: u64,
    pub abandoned: u64,
    pub never_committed: u64,
    pub damaged: u64,
    pub replaced: u64,
    pub damage_reports: u64,
    pub records_lost_to_damage: u64,
    pub foreign: u64,
    pub late_events: u64,
}

#[repr(C)]
pub struct evring_event_type_info {
    pub struct_size: u32,
    pub number: u16,
    pub fixed_size: u32,
    pub trailing_arrays: u32,
    pub name: *const c_char,
}

#[repr(C)]
pub struct evring_field {
    pub struct_size: u32,
    pub kind: c_int,
    pub scalar: c_int,
    pub offset: u32,
    pub size: u32,
    pub count: u32,
    pub element_size: u32,
    pub trailing: i32,
    pub element_index: u64,
    pub count_offset: u32,
    pub count_size: u32,
    pub trailing_element_size: u32,
    pub type_name: [c_char; 64],
}

#[repr(C)]
pub struct evring_writer_options {
    pub struct_size: u32,
    pub name: *const c_char,
    pub descriptor_shift: c_uint,
    pub payload_shift: c_uint,
    pub content_type: u16,
    pub schema_path: *const c_char,
    pub schema_text: *const c_char,
    pub shared: c_int,
    pub keep: c_int,
    pub file_mode: u32,
    pub check_raw: c_int,
}

pub const EVRING_RESERVATION_PRIVATE_SIZE: usize = 192;

#[repr(C, align(64))]
pub struct evring_reservation {
    pub struct_size: u32,
    pub payload: *mut c_void,
    pub seqno: u64,
    pub payload_size: u64,
    pub event_type: u16,
    pub content_ext: [u64; 4],
    // C aligns private_ to 64: it starts at 128, after the 72 bytes above.
    pub _align: [u8; 56],
    pub private_: [u8; EVRING_RESERVATION_PRIVATE_SIZE],
}

// The sizes of evring.h's structs on x86-64 (its static_asserts and first-versioned sizes).
const _: () = assert!(std::mem::size_of::<evring_descriptor>() == 64);
const _: () = assert!(std::mem::size_of::<evring_open_options>() == 64);
const _: () = assert!(std::mem::size_of::<evring_source_info>() == 88);
const _: () = assert!(std::mem::size_of::<evring_item>() == 128);
const _: () = assert!(std::mem::size_of::<evring_counters>() == 96);
const _: () = assert!(std::mem::size_of::<evring_event_type_info>() == 24);
const _: () = assert!(std::mem::size_of::<evring_field>() == 120);
const _: () = assert!(std::mem::size_of::<evring_writer_options>() == 64);
const _: () = assert!(std::mem::size_of::<evring_reservation>() == 320);

extern "C" {
    pub fn evring_version() -> *const c_char;
    pub fn evring_status_name(status: c_int) -> *const c_char;
    pub fn evring_last_error() -> *const c_char;
    pub fn evring_gap_reason_text(reason: u32) -> *const c_char;

    pub fn evring_open_options_init(options: *mut evring_open_options);
    pub fn evring_source_open(location: *const c_char, options: *const evring_open_options) -> *mut evring_source;
    pub fn evring_source_close(source: *mut evring_source);
    pub fn evring_wait_for_name(location: *const c_char, timeout_ns: u64) -> c_int;
    pub fn evring_source_error(source: *const evring_source) -> *const c_char;
    pub fn evring_source_get_info(source: *const evring_source, info: *mut evring_source_info) -> c_int;
    pub fn evring_source_next(source: *mut evring_source, item: *mut evring_item, flags: c_int) -> c_int;
    pub fn evring_source_set_where(source: *mut evring_source, expression: *const c_char) -> c_int;
    pub fn evring_source_seek(source: *mut evring_source, position: *const c_char) -> c_int;
    pub fn evring_source_seek_seqno(source: *mut evring_source, seqno: u64) -> c_int;
    pub fn evring_source_seek_latest(source: *mut evring_source) -> c_int;
    pub fn evring_source_seek_oldest(source: *mut evring_source) -> c_int;
    pub fn evring_source_notice(source: *const evring_source) -> *const c_char;
    pub fn evring_source_next_seqno(source: *const evring_source) -> u64;
    pub fn evring_source_wait(source: *mut evring_source, timeout_nanos: u64);
    pub fn evring_source_fd(source: *mut evring_source) -> c_int;
    pub fn evring_source_get_counters(source: *const evring_source, counters: *mut evring_counters) -> c_int;

    pub fn evring_source_payload_peek(source: *const evring_source, event: *const evring_descriptor) -> *const c_void;
    pub fn evring_source_payload_valid(source: *const evring_source, event: *const evring_descriptor) -> c_int;
    pub fn evring_source_payload_copy(
        source: *const evring_source,
        event: *const evring_descriptor,
        dst: *mut c_void,
        dst_size: usize,
    ) -> c_int;

    pub fn evring_source_schema_origin(source: *const evring_source) -> *const c_char;
    pub fn evring_source_type_name(source: *const evring_source, event_type: u16) -> *const c_char;
    pub fn evring_source_decode_json(
        source: *mut evring_source,
        event_type: u16,
        payload: *const c_void,
        payload_size: usize,
        out: *mut c_char,
        out_size: usize,
        needed: *mut usize,
    ) -> c_int;

    pub fn evring_source_schema(source: *const evring_source) -> *const evring_schema;
    pub fn evring_writer_schema(writer: *const evring_writer) -> *const evring_schema;
    pub fn evring_schema_event_by_name(
        schema: *const evring_schema,
        name: *const c_char,
        info: *mut evring_event_type_info,
    ) -> c_int;
    pub fn evring_schema_event_by_number(
        schema: *const evring_schema,
        number: u16,
        info: *mut evring_event_type_info,
    ) -> c_int;
    pub fn evring_schema_field(
        schema: *const evring_schema,
        event_type: u16,
        path: *const c_char,
        field: *mut evring_field,
    ) -> c_int;
    pub fn evring_schema_trailing(
        schema: *const evring_schema,
        event_type: u16,
        index: u32,
        field: *mut evring_field,
    ) -> c_int;

    pub fn evring_writer_options_init(options: *mut evring_writer_options);
    pub fn evring_writer_create(options: *const evring_writer_options) -> *mut evring_writer;
    pub fn evring_writer_close(writer: *mut evring_writer);
    pub fn evring_writer_error(writer: *const evring_writer) -> *const c_char;
    pub fn evring_writer_path(writer: *const evring_writer) -> *const c_char;
    pub fn evring_writer_max_payload(writer: *const evring_writer) -> u64;
    pub fn evring_writer_reserve(
        writer: *mut evring_writer,
        payload_size: u64,
        reservation: *mut evring_reservation,
    ) -> c_int;
    pub fn evring_writer_commit(writer: *mut evring_writer, reservation: *mut evring_reservation) -> c_int;
    pub fn evring_writer_abort(writer: *mut evring_writer, reservation: *mut evring_reservation) -> c_int;
    pub fn evring_writer_record(
        writer: *mut evring_writer,
        event_type: u16,
        payload: *const c_void,
        payload_size: u64,
        flow: *const u64,
        seqno: *mut u64,
    ) -> c_int;
    pub fn evring_writer_wants(writer: *const evring_writer, event_type: u16) -> c_int;
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::MaybeUninit;
    use std::ptr::addr_of;

    macro_rules! offset {
        ($t:ty, $field:ident) => {{
            let x = MaybeUninit::<$t>::uninit();
            let base = x.as_ptr();
            unsafe { (addr_of!((*base).$field) as *const u8).offset_from(base as *const u8) as usize }
        }};
    }

    // The offsets of evring.h's structs as a C compiler lays them out on x86-64
    // (tests/c checks the same structs from C).
    #[test]
    fn structs_have_the_c_layout() {
        assert_eq!(offset!(evring_item, event), 8);
        assert_eq!(offset!(evring_item, payload_state), 72);
        assert_eq!(offset!(evring_item, payload), 80);
        assert_eq!(offset!(evring_item, gap_reason), 112);
        assert_eq!(offset!(evring_item, text), 120);
        assert_eq!(offset!(evring_source_info, schema_hash), 14);
        assert_eq!(offset!(evring_source_info, descriptor_capacity), 48);
        assert_eq!(offset!(evring_source_info, registered), 80);
        assert_eq!(offset!(evring_open_options, schema_path), 8);
        assert_eq!(offset!(evring_open_options, level), 56);
        assert_eq!(offset!(evring_writer_options, content_type), 24);
        assert_eq!(offset!(evring_writer_options, check_raw), 60);
        assert_eq!(offset!(evring_reservation, event_type), 32);
        assert_eq!(offset!(evring_reservation, content_ext), 40);
        assert_eq!(offset!(evring_reservation, private_), 128);
        assert_eq!(offset!(evring_field, element_index), 32);
        assert_eq!(offset!(evring_field, type_name), 52);
        assert_eq!(offset!(evring_event_type_info, fixed_size), 8);
        assert_eq!(offset!(evring_event_type_info, name), 16);
        assert_eq!(std::mem::align_of::<evring_reservation>(), 64);
    }
}
