//! The C ABI's assembled spans (evring.h, "Assembled spans"), declared by
//! hand like the rest of [`ffi`](crate::ffi): sizes checked at compile time,
//! offsets by the test below.

use std::os::raw::{c_char, c_int};

use super::{evring_descriptor, evring_item, evring_source};

pub const EVRING_SPAN_COMPLETE: c_int = 0;
pub const EVRING_SPAN_ABANDONED: c_int = 1;
pub const EVRING_SPAN_BROKEN: c_int = 2;

#[repr(C)]
pub struct evring_assembler {
    _opaque: [u8; 0],
}

#[repr(C)]
pub struct evring_span_event {
    pub event: evring_descriptor,
    pub member: u32,
    pub payload_state: c_int,
    pub payload: *const u8,
    pub payload_size: usize,
}

#[repr(C)]
pub struct evring_span_stage {
    pub name: *const c_char,
    pub seqno: u64,
    pub nanos: u64,
}

#[repr(C)]
pub struct evring_span_nested {
    pub span: *const c_char,
    pub key: u64,
    pub events: *const usize,
    pub event_count: usize,
}

#[repr(C)]
pub struct evring_span {
    pub struct_size: u32,
    pub state: c_int,
    pub span: *const c_char,
    pub label: u64,
    pub id: *const u8,
    pub id_size: usize,
    pub member: u32,
    pub events: *const evring_span_event,
    pub event_count: usize,
    pub nested: *const evring_span_nested,
    pub nested_count: usize,
    pub outside: *const usize,
    pub outside_count: usize,
    pub stages: *const evring_span_stage,
    pub stage_count: usize,
    pub lost_first: u64,
    pub lost_count: u64,
    pub reassembly_error: *const c_char,
}

#[repr(C)]
#[derive(Default)]
pub struct evring_assembler_counts {
    pub struct_size: u32,
    pub handed_out: u64,
    pub abandoned: u64,
    pub broken: u64,
    pub unfinished: u64,
    pub unassembled: u64,
}

const _: () = assert!(std::mem::size_of::<evring_span>() == 136);
const _: () = assert!(std::mem::size_of::<evring_span_event>() == 88);
const _: () = assert!(std::mem::size_of::<evring_span_stage>() == 24);
const _: () = assert!(std::mem::size_of::<evring_span_nested>() == 32);
const _: () = assert!(std::mem::size_of::<evring_assembler_counts>() == 48);

extern "C" {
    pub fn evring_assembler_open(
        source: *mut evring_source,
        span: *const c_char,
        stage: *const c_char,
    ) -> *mut evring_assembler;
    pub fn evring_assembler_close(assembler: *mut evring_assembler);
    pub fn evring_assembler_next(
        assembler: *mut evring_assembler,
        span: *mut evring_span,
        item: *mut evring_item,
    ) -> c_int;
    pub fn evring_assembler_error(assembler: *const evring_assembler) -> *const c_char;
    pub fn evring_assembler_get_counts(
        assembler: *const evring_assembler,
        counts: *mut evring_assembler_counts,
    ) -> c_int;
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

    // As a C compiler lays them out on x86-64.
    #[test]
    fn span_structs_have_the_c_layout() {
        assert_eq!(offset!(evring_span, state), 4);
        assert_eq!(offset!(evring_span, member), 40);
        assert_eq!(offset!(evring_span, events), 48);
        assert_eq!(offset!(evring_span, stages), 96);
        assert_eq!(offset!(evring_span, reassembly_error), 128);
        assert_eq!(offset!(evring_span_event, member), 64);
        assert_eq!(offset!(evring_span_event, payload), 72);
        assert_eq!(offset!(evring_span_nested, events), 16);
        assert_eq!(offset!(evring_assembler_counts, handed_out), 8);
    }
}
