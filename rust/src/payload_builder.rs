//! A payload built field by field through a writer's schema, every set
//! checked, then written with the checked write.

use crate::error::{Error, Status};
use crate::field::{locate, FieldError, FieldValue};
use crate::schema::{EventType, Field, FieldKind, Scalar};
use crate::writer::{Recorded, Writer};

/// A payload built by field names through the writer's schema, then written
/// with the checked write ([`Writer::record`]). Every set is checked: the
/// field exists, the value's type is exactly the field's (or, with
/// [`set_unsigned`](PayloadBuilder::set_unsigned)/[`set_signed`](PayloadBuilder::set_signed),
/// the value fits its width), bytes have the field's length.
pub struct PayloadBuilder<'w> {
    writer: &'w Writer,
    event: EventType,
    fixed: Vec<u8>,
    trailing: Vec<(u32, Vec<u8>)>,
}

impl<'w> PayloadBuilder<'w> {
    pub(crate) fn new(writer: &'w Writer, event: EventType) -> Self {
        PayloadBuilder { writer, fixed: vec![0; event.fixed_size as usize], trailing: Vec::new(), event }
    }
}

impl<'w> PayloadBuilder<'w> {
    /// Sets a field of exactly `T`'s type.
    pub fn set<T: FieldValue>(&mut self, path: &str, value: T) -> Result<&mut Self, Error> {
        let field = self.fixed_field(path)?;
        if !T::fits(&field) {
            return Err(FieldError::WrongType { field: path.to_string(), type_name: field.type_name, asked: T::type_name() }.into());
        }
        let range = locate(&field, &self.fixed)?;
        value.to_le(&mut self.fixed[range]);
        Ok(self)
    }

    /// Sets an unsigned integer (or enum) field of any width; refused when the value does not fit it.
    pub fn set_unsigned(&mut self, path: &str, value: u64) -> Result<&mut Self, Error> {
        let field = self.integer_field(path, &[Scalar::U8, Scalar::U16, Scalar::U32, Scalar::U64, Scalar::Bool])?;
        let bits = field.size * 8;
        if bits < 64 && value >> bits != 0 {
            return Err(FieldError::DoesNotFit { field: path.to_string(), type_name: field.type_name, value: value.to_string() }.into());
        }
        let range = locate(&field, &self.fixed)?;
        let n = range.len();
        self.fixed[range].copy_from_slice(&value.to_le_bytes()[..n]);
        Ok(self)
    }

    /// Sets a signed integer (or enum) field of any width; refused when the value does not fit it.
    pub fn set_signed(&mut self, path: &str, value: i64) -> Result<&mut Self, Error> {
        let field = self.integer_field(path, &[Scalar::I8, Scalar::I16, Scalar::I32, Scalar::I64])?;
        let bits = field.size * 8;
        if bits < 64 && (value < -(1i64 << (bits - 1)) || value >= 1i64 << (bits - 1)) {
            return Err(FieldError::DoesNotFit { field: path.to_string(), type_name: field.type_name, value: value.to_string() }.into());
        }
        let range = locate(&field, &self.fixed)?;
        let n = range.len();
        self.fixed[range].copy_from_slice(&value.to_le_bytes()[..n]);
        Ok(self)
    }

    /// Sets a `bytesN` field (exactly N bytes), or a `char[N]` field (at most
    /// N bytes of text, NUL-padded), or any field's bytes whole (exactly its size).
    pub fn set_bytes(&mut self, path: &str, value: &[u8]) -> Result<&mut Self, Error> {
        let field = self.fixed_field(path)?;
        let size = field.size as usize;
        let fits = if field.kind == FieldKind::String { value.len() <= size } else { value.len() == size };
        if !fits {
            let value = format!("{} bytes", value.len());
            return Err(FieldError::DoesNotFit { field: path.to_string(), type_name: field.type_name, value }.into());
        }
        let range = locate(&field, &self.fixed)?;
        let dst = &mut self.fixed[range];
        dst.fill(0);
        dst[..value.len()].copy_from_slice(value);
        Ok(self)
    }

    /// Sets a trailing array from its elements' bytes (a whole number of
    /// elements), and its count field from their number.
    pub fn set_trailing(&mut self, name: &str, elements: &[u8]) -> Result<&mut Self, Error> {
        let schema = self.writer.schema().expect("a builder's writer has a schema");
        let field = schema.field(self.event.number, name)?;
        let place = match (&field.kind, &field.trailing) {
            (FieldKind::Trailing, Some(place)) => place.clone(),
            _ => {
                return Err(FieldError::WrongType { field: name.to_string(), type_name: field.type_name, asked: "a trailing array".to_string() }.into())
            }
        };
        let element = field.element_size as usize;
        let (count_offset, count_size, _) = place.arrays[place.arrays.len() - 1];
        let count = elements.len().checked_div(element).unwrap_or(0);
        let too_long = count_size < 8 && (count as u64) >> (count_size * 8) != 0;
        if element == 0 || elements.len() % element != 0 || too_long {
            let value = format!("{} bytes ({}-byte elements)", elements.len(), element);
            return Err(FieldError::DoesNotFit { field: name.to_string(), type_name: field.type_name, value }.into());
        }
        let at = count_offset as usize;
        self.fixed[at..at + count_size as usize].copy_from_slice(&(count as u64).to_le_bytes()[..count_size as usize]);
        self.trailing.retain(|(index, _)| *index != place.index);
        self.trailing.push((place.index, elements.to_vec()));
        Ok(self)
    }

    /// The payload as built: the fixed part, then the trailing arrays in order.
    pub fn bytes(&self) -> Vec<u8> {
        let mut arrays = self.trailing.clone();
        arrays.sort_by_key(|(index, _)| *index);
        let mut out = self.fixed.clone();
        for (_, bytes) in arrays {
            out.extend_from_slice(&bytes);
        }
        out
    }

    /// Writes it with the checked write ([`Writer::record`]).
    pub fn record(&self, flow: Option<&[u64; 4]>) -> Result<Recorded, Error> {
        self.writer.record(self.event.number, &self.bytes(), flow)
    }

    fn fixed_field(&self, path: &str) -> Result<Field, Error> {
        let schema = self.writer.schema().expect("a builder's writer has a schema");
        let field = schema.field(self.event.number, path)?;
        if field.trailing.is_some() {
            return Err(Error::new(
                Status::Invalid,
                format!("'{}' is in a trailing array: give the array whole with set_trailing", path),
            ));
        }
        Ok(field)
    }

    fn integer_field(&self, path: &str, scalars: &[Scalar]) -> Result<Field, Error> {
        let field = self.fixed_field(path)?;
        let integer = matches!(field.kind, FieldKind::Scalar | FieldKind::Enum) && field.scalar.map_or(false, |s| scalars.contains(&s));
        if !integer {
            let asked = if scalars.contains(&Scalar::I8) { "a signed integer" } else { "an unsigned integer" };
            return Err(FieldError::WrongType { field: path.to_string(), type_name: field.type_name, asked: asked.to_string() }.into());
        }
        Ok(field)
    }
}

