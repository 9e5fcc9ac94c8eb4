//! Reading and writing one field in payload bytes: the Rust types a field
//! can be (`FieldValue`), where a field lies in a given payload (trailing
//! arrays placed by its counts), and why a read or write is refused.

use crate::error::{Error, Status};
use crate::schema::{Field, FieldKind, Scalar};

/// Why a field could not be read from, or written into, a payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldError {
    /// The field belongs to another event type.
    WrongEvent { field: String, field_event: u16, event: u16 },
    /// The field does not hold the type asked for.
    WrongType { field: String, type_name: String, asked: String },
    /// The payload is too short for the field, or a trailing array's counts
    /// reach past its end.
    OutOfBounds { field: String, payload_size: usize },
    /// (writes) the value does not fit the field.
    DoesNotFit { field: String, type_name: String, value: String },
}

impl std::fmt::Display for FieldError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            FieldError::WrongEvent { field, field_event, event } => {
                write!(f, "field '{}' is of event type {}, not of event type {}", field, field_event, event)
            }
            FieldError::WrongType { field, type_name, asked } => {
                write!(f, "field '{}' is {}, not {}", field, type_name, asked)
            }
            FieldError::OutOfBounds { field, payload_size } => {
                write!(f, "field '{}' is not inside this payload of {} bytes", field, payload_size)
            }
            FieldError::DoesNotFit { field, type_name, value } => {
                write!(f, "{} does not fit field '{}' ({})", value, field, type_name)
            }
        }
    }
}

impl std::error::Error for FieldError {}

impl From<FieldError> for Error {
    fn from(e: FieldError) -> Error {
        Error::new(Status::Invalid, e.to_string())
    }
}

/// A Rust type a field can be read as and written from: the integers, floats
/// and `bool` for scalars and enums of exactly that type, `[u8; N]` for
/// `bytesN`/`address`, `u128` for `u128`, `[u64; 4]` for `u256` limbs.
pub trait FieldValue: Sized {
    /// The name used in errors ("u64", "[u8; 20]").
    fn type_name() -> String;
    /// Whether `field` holds exactly this type.
    fn fits(field: &Field) -> bool;
    /// The value from exactly its little-endian bytes.
    fn from_le(bytes: &[u8]) -> Self;
    /// Its little-endian bytes into `out` (exactly its size).
    fn to_le(&self, out: &mut [u8]);
}

fn scalar_field(field: &Field, scalar: Scalar) -> bool {
    matches!(field.kind, FieldKind::Scalar | FieldKind::Enum) && field.scalar == Some(scalar)
}

macro_rules! scalar_value {
    ($t:ty, $scalar:ident) => {
        impl FieldValue for $t {
            fn type_name() -> String {
                Scalar::$scalar.name().to_string()
            }
            fn fits(field: &Field) -> bool {
                scalar_field(field, Scalar::$scalar)
            }
            fn from_le(bytes: &[u8]) -> Self {
                let mut b = [0u8; std::mem::size_of::<$t>()];
                b.copy_from_slice(bytes);
                <$t>::from_le_bytes(b)
            }
            fn to_le(&self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes());
            }
        }
    };
}

scalar_value!(u8, U8);
scalar_value!(u16, U16);
scalar_value!(u32, U32);
scalar_value!(u64, U64);
scalar_value!(i8, I8);
scalar_value!(i16, I16);
scalar_value!(i32, I32);
scalar_value!(i64, I64);
scalar_value!(f32, F32);
scalar_value!(f64, F64);
scalar_value!(u128, U128);

impl FieldValue for bool {
    fn type_name() -> String {
        "bool".to_string()
    }
    fn fits(field: &Field) -> bool {
        scalar_field(field, Scalar::Bool)
    }
    fn from_le(bytes: &[u8]) -> Self {
        bytes[0] != 0
    }
    fn to_le(&self, out: &mut [u8]) {
        out[0] = u8::from(*self);
    }
}

impl FieldValue for [u64; 4] {
    fn type_name() -> String {
        "u256 ([u64; 4], least significant first)".to_string()
    }
    fn fits(field: &Field) -> bool {
        scalar_field(field, Scalar::U256)
    }
    fn from_le(bytes: &[u8]) -> Self {
        let mut limbs = [0u64; 4];
        for (i, limb) in limbs.iter_mut().enumerate() {
            *limb = u64::from_le_bytes(bytes[i * 8..i * 8 + 8].try_into().expect("8 bytes"));
        }
        limbs
    }
    fn to_le(&self, out: &mut [u8]) {
        for (i, limb) in self.iter().enumerate() {
            out[i * 8..i * 8 + 8].copy_from_slice(&limb.to_le_bytes());
        }
    }
}

impl<const N: usize> FieldValue for [u8; N] {
    fn type_name() -> String {
        format!("[u8; {}]", N)
    }
    fn fits(field: &Field) -> bool {
        field.kind == FieldKind::Bytes && field.count as usize == N
    }
    fn from_le(bytes: &[u8]) -> Self {
        let mut out = [0u8; N];
        out.copy_from_slice(bytes);
        out
    }
    fn to_le(&self, out: &mut [u8]) {
        out.copy_from_slice(self);
    }
}

/// Where `field` lies in `payload`: its byte range, with the trailing
/// arrays' counts read and checked against the payload's length.
pub(crate) fn locate(field: &Field, payload: &[u8]) -> Result<std::ops::Range<usize>, FieldError> {
    let out = || FieldError::OutOfBounds { field: field.path.clone(), payload_size: payload.len() };
    let (start, len) = match &field.trailing {
        None => (field.offset as usize, field.size as usize),
        Some(place) => {
            let mut at = place.fixed_size as usize;
            let last = place.arrays.len() - 1;
            let mut this_count = 0usize;
            for (i, &(count_offset, count_size, element_size)) in place.arrays.iter().enumerate() {
                let c = count_offset as usize..count_offset as usize + count_size as usize;
                let bytes = payload.get(c).ok_or_else(out)?;
                let count = bytes.iter().rev().fold(0u64, |acc, b| (acc << 8) | u64::from(*b));
                let count = usize::try_from(count).map_err(|_| out())?;
                let len = count.checked_mul(element_size as usize).ok_or_else(out)?;
                if i == last {
                    this_count = count;
                    break;
                }
                at = at.checked_add(len).ok_or_else(out)?;
            }
            let element_size = place.arrays[last].2 as usize;
            match place.element {
                None => (at, this_count.checked_mul(element_size).ok_or_else(out)?),
                Some(i) => {
                    let i = usize::try_from(i).map_err(|_| out())?;
                    if i >= this_count {
                        return Err(out());
                    }
                    (at + i * element_size + field.offset as usize, field.size as usize)
                }
            }
        }
    };
    let end = start.checked_add(len).ok_or_else(out)?;
    if end > payload.len() {
        return Err(out());
    }
    Ok(start..end)
}

/// Reads `field` as `T` from a payload of event type `event_type`, checked.
pub(crate) fn read_field<T: FieldValue>(field: &Field, event_type: u16, payload: &[u8]) -> Result<T, FieldError> {
    if field.event_type != event_type {
        return Err(FieldError::WrongEvent { field: field.path.clone(), field_event: field.event_type, event: event_type });
    }
    if !T::fits(field) {
        return Err(FieldError::WrongType { field: field.path.clone(), type_name: field.type_name.clone(), asked: T::type_name() });
    }
    let range = locate(field, payload)?;
    Ok(T::from_le(&payload[range]))
}
