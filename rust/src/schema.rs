//! Typed field access through a source's or writer's schema: event types and
//! payload fields found by name (the C ABI's `evring_schema_*` calls), then
//! read from payload bytes, or written into them, with no call into the
//! library per event and with every read checked (the field's type, the
//! event type, the payload's length).

use std::marker::PhantomData;
use std::os::raw::c_int;

use crate::error::{c_string, text, Error};
use crate::ffi;

/// A schema borrowed from an [`EventReader`](crate::EventReader) or a
/// [`Writer`](crate::Writer): valid while they are.
#[derive(Clone, Copy)]
pub struct Schema<'a> {
    raw: *const ffi::evring_schema,
    _owner: PhantomData<&'a ()>,
}

/// An event type of a schema.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EventType {
    /// Its number (the descriptor's `event_type`).
    pub number: u16,
    /// Its name ("TXN_LOG").
    pub name: String,
    /// The size of its payload's fixed part (0: an empty payload).
    pub fixed_size: u32,
    /// How many variable-length arrays follow the fixed part.
    pub trailing_arrays: u32,
}

/// What a field holds (the schema language's kinds, docs/schema.md).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldKind {
    /// An integer, float or bool: [`Field::scalar`] says which.
    Scalar,
    /// `bytesN` or `address`: [`Field::count`] bytes.
    Bytes,
    /// An integer with named values, of [`Field::scalar`]'s type.
    Enum,
    /// A nested struct.
    Struct,
    /// A fixed array of [`Field::count`] elements.
    Array,
    /// `char[N]`: NUL-padded text.
    String,
    /// A trailing array named whole: its length is the payload's.
    Trailing,
}

/// The primitive types, little-endian.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    U8,
    U16,
    U32,
    U64,
    I8,
    I16,
    I32,
    I64,
    F32,
    F64,
    Bool,
    /// 16 bytes aligned to 16.
    U128,
    /// Four 64-bit limbs, least significant first.
    U256,
}

impl Scalar {
    fn from_c(scalar: c_int) -> Option<Scalar> {
        use Scalar::*;
        [U8, U16, U32, U64, I8, I16, I32, I64, F32, F64, Bool, U128, U256].get(usize::try_from(scalar).ok()?).copied()
    }

    /// As schema files write it ("u64").
    pub fn name(self) -> &'static str {
        use Scalar::*;
        match self {
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            I8 => "i8",
            I16 => "i16",
            I32 => "i32",
            I64 => "i64",
            F32 => "f32",
            F64 => "f64",
            Bool => "bool",
            U128 => "u128",
            U256 => "u256",
        }
    }
}

/// Where a trailing array's element lies: after the fixed part and the
/// arrays before it, each as long as its count field says.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrailingPlace {
    /// Which trailing array (0 the first).
    pub index: u32,
    /// The element the path names (`topics[1]`), or None: the whole array.
    pub element: Option<u64>,
    /// The size of the payload's fixed part.
    pub fixed_size: u32,
    /// (count field offset, its width, element size) of this array and each
    /// one before it, first array first.
    pub arrays: Vec<(u32, u32, u32)>,
}

/// A payload field of one event type, found by path (`txn_header.gas_limit`,
/// `levels[2].price`, `topics[0]`): what it holds and where. A plain value:
/// look it up once, then read it from any number of payloads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    /// The event type it belongs to.
    pub event_type: u16,
    /// The path it was found by.
    pub path: String,
    /// What it holds.
    pub kind: FieldKind,
    /// Scalars and enums: the primitive; arrays: the element's when a scalar.
    pub scalar: Option<Scalar>,
    /// In the fixed part; inside the element when [`Field::trailing`] names one.
    pub offset: u32,
    /// Its bytes (a whole trailing array: 0).
    pub size: u32,
    /// Bytes and strings: N; arrays: the element count.
    pub count: u32,
    /// Arrays and trailing arrays: one element's bytes.
    pub element_size: u32,
    /// A path into a trailing array: which array and element.
    pub trailing: Option<TrailingPlace>,
    /// As schema files write its type ("u64", "bytes32", "u16[3]", "bytes[data_length]").
    pub type_name: String,
}

impl<'a> Schema<'a> {
    /// A borrowed schema handle; null gives None.
    pub(crate) fn from_raw(raw: *const ffi::evring_schema) -> Option<Schema<'a>> {
        if raw.is_null() {
            None
        } else {
            Some(Schema { raw, _owner: PhantomData })
        }
    }

    /// An event type by name ("TXN_LOG").
    pub fn event_type(&self, name: &str) -> Result<EventType, Error> {
        let c_name = c_string("event type", name)?;
        let mut info = event_type_info();
        let status = unsafe { ffi::evring_schema_event_by_name(self.raw, c_name.as_ptr(), &mut info) };
        event_type_of(status, &info)
    }

    /// An event type by number.
    pub fn event_type_by_number(&self, number: u16) -> Result<EventType, Error> {
        let mut info = event_type_info();
        let status = unsafe { ffi::evring_schema_event_by_number(self.raw, number, &mut info) };
        event_type_of(status, &info)
    }

    /// The field at `path` in `event_type`'s payload. An error names the
    /// event type and lists its fields when it has no such field.
    pub fn field(&self, event_type: u16, path: &str) -> Result<Field, Error> {
        let c_path = c_string("field path", path)?;
        let mut raw = field_struct();
        let status = unsafe { ffi::evring_schema_field(self.raw, event_type, c_path.as_ptr(), &mut raw) };
        if status != ffi::EVRING_OK {
            return Err(Error::last(status));
        }
        let mut field = field_of(event_type, path, &raw);
        if raw.trailing >= 0 {
            let index = raw.trailing as u32;
            field.trailing = Some(TrailingPlace {
                index,
                element: if raw.kind == ffi::EVRING_FIELD_TRAILING { None } else { Some(raw.element_index) },
                fixed_size: self.event_type_by_number(event_type)?.fixed_size,
                arrays: self.arrays_through(event_type, index)?,
            });
        }
        Ok(field)
    }

    /// The field at `path` of the event type named `event`.
    pub fn field_of(&self, event: &str, path: &str) -> Result<Field, Error> {
        let number = self.event_type(event)?.number;
        self.field(number, path)
    }

    /// Trailing array `index` (0 the first) of `event_type`, named whole.
    pub fn trailing(&self, event_type: u16, index: u32) -> Result<Field, Error> {
        let raw = self.raw_trailing(event_type, index)?;
        let mut field = field_of(event_type, &format!("#{}", index), &raw);
        field.trailing = Some(TrailingPlace {
            index,
            element: None,
            fixed_size: self.event_type_by_number(event_type)?.fixed_size,
            arrays: self.arrays_through(event_type, index)?,
        });
        Ok(field)
    }

    fn raw_trailing(&self, event_type: u16, index: u32) -> Result<ffi::evring_field, Error> {
        let mut raw = field_struct();
        let status = unsafe { ffi::evring_schema_trailing(self.raw, event_type, index, &mut raw) };
        if status != ffi::EVRING_OK {
            return Err(Error::last(status));
        }
        Ok(raw)
    }

    // (count offset, count width, element size) of trailing arrays 0..=last.
    fn arrays_through(&self, event_type: u16, last: u32) -> Result<Vec<(u32, u32, u32)>, Error> {
        (0..=last)
            .map(|i| self.raw_trailing(event_type, i).map(|a| (a.count_offset, a.count_size, a.trailing_element_size)))
            .collect()
    }
}

fn event_type_info() -> ffi::evring_event_type_info {
    ffi::evring_event_type_info {
        struct_size: std::mem::size_of::<ffi::evring_event_type_info>() as u32,
        number: 0,
        fixed_size: 0,
        trailing_arrays: 0,
        name: std::ptr::null(),
    }
}

fn event_type_of(status: c_int, info: &ffi::evring_event_type_info) -> Result<EventType, Error> {
    if status != ffi::EVRING_OK {
        return Err(Error::last(status));
    }
    Ok(EventType {
        number: info.number,
        name: text(info.name),
        fixed_size: info.fixed_size,
        trailing_arrays: info.trailing_arrays,
    })
}

fn field_struct() -> ffi::evring_field {
    ffi::evring_field {
        struct_size: std::mem::size_of::<ffi::evring_field>() as u32,
        kind: 0,
        scalar: -1,
        offset: 0,
        size: 0,
        count: 0,
        element_size: 0,
        trailing: -1,
        element_index: 0,
        count_offset: 0,
        count_size: 0,
        trailing_element_size: 0,
        type_name: [0; 64],
    }
}

fn field_of(event_type: u16, path: &str, raw: &ffi::evring_field) -> Field {
    let kind = match raw.kind {
        ffi::EVRING_FIELD_SCALAR => FieldKind::Scalar,
        ffi::EVRING_FIELD_BYTES => FieldKind::Bytes,
        ffi::EVRING_FIELD_ENUM => FieldKind::Enum,
        ffi::EVRING_FIELD_STRUCT => FieldKind::Struct,
        ffi::EVRING_FIELD_ARRAY => FieldKind::Array,
        ffi::EVRING_FIELD_STRING => FieldKind::String,
        _ => FieldKind::Trailing,
    };
    Field {
        event_type,
        path: path.to_string(),
        kind,
        scalar: Scalar::from_c(raw.scalar),
        offset: raw.offset,
        size: raw.size,
        count: raw.count,
        element_size: raw.element_size,
        trailing: None,
        type_name: text(raw.type_name.as_ptr()),
    }
}

