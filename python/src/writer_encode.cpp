// Encoding a payload from Python values with the ring's schema (writer_encode.hpp).
//
// The walk mirrors the decoder's (lib/schema/schema_walk.hpp) in reverse: the fixed
// part field by field at the schema's offsets, padding left zero, then each
// trailing array after it. Every value is range-checked for its type, so
// nothing is silently truncated, and the result is checked by check_payload
// like any typed write.
#include "writer_encode.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "arguments.hpp"
#include "reader.hpp"
#include "util/text_escape.hpp"

namespace evring::python {
namespace {

class Encoder {
public:
    Encoder(const Schema& schema, std::vector<std::byte>& out) : schema_(schema), out_(out) {}

    void fixed(const SchemaStruct& s, const py::dict& values, std::size_t base, const std::string& path) {
        for (auto item : values) {
            if (!PyUnicode_Check(item.first.ptr()))
                raise_error(fmt::format("{}: field names are str, not {}", where(path), described(item.first)));
            const std::string key = utf8_of(item.first, fmt::format("{}: a field name", where(path)));
            if (s.field(key) == nullptr && !is_trailing(s, key))
                raise_error(fmt::format("{}: no field '{}' (fields: {})", where(path), shortened(printable(key)),
                                        field_list(s)));
        }
        for (const auto& f : s.fields) {
            if (!values.contains(f.name.c_str())) continue;  // left zero
            value(f.type, values[f.name.c_str()], base + f.offset, join(path, f.name));
        }
    }

    // The trailing arrays of a payload struct, appended after its fixed part;
    // each count field is set from its array's length (or must agree with it).
    // A field left out is empty (zero elements, as "left out is zero" says).
    // The elements are counted as they come, never taken from len(): an
    // object may yield more than its len() says, or fewer (issue 32).
    void trailing(const SchemaStruct& s, const py::dict& values) {
        for (const auto& t : s.trailing) {
            const bool given = values.contains(t.name.c_str());
            const std::uint32_t size = schema_.type(t.element).size;
            const std::size_t start = out_.size();
            std::size_t elements = 0;
            if (t.bytes) {
                const std::string bytes = given ? as_bytes(values[t.name.c_str()], t.name) : std::string();
                elements = bytes.size();
                if (elements > UINT32_MAX - start)
                    raise_error(fmt::format("trailing array '{}' of {} bytes is over 2^32-1 bytes", t.name, elements));
                out_.insert(out_.end(), reinterpret_cast<const std::byte*>(bytes.data()),
                            reinterpret_cast<const std::byte*>(bytes.data()) + bytes.size());
            } else if (given) {
                const py::object sequence = values[t.name.c_str()];
                for (const py::handle element : elements_of(sequence, t.name, "a sequence of elements")) {
                    if (size > UINT32_MAX - out_.size())
                        raise_error(fmt::format("trailing array '{}' of more than {} elements is over 2^32-1 bytes",
                                                t.name, elements));
                    out_.resize(out_.size() + size);  // room first: value() writes at its offset
                    value(t.element, element, start + elements * size, fmt::format("{}[{}]", t.name, elements));
                    ++elements;
                }
            }
            set_count(t, elements);
        }
    }

private:
    static std::string join(const std::string& path, const std::string& name) {
        return path.empty() ? name : path + "." + name;
    }
    static std::string where(const std::string& path) { return path.empty() ? "the payload" : "'" + path + "'"; }
    static bool is_trailing(const SchemaStruct& s, const std::string& key) {
        for (const auto& t : s.trailing)
            if (t.name == key) return true;
        return false;
    }
    static std::string field_list(const SchemaStruct& s) {
        std::string names;
        for (const auto& f : s.fields) names += (names.empty() ? "" : ", ") + f.name;
        for (const auto& t : s.trailing) names += (names.empty() ? "" : ", ") + t.name;
        return names.empty() ? "none" : names;
    }

    std::string as_bytes(const py::object& v, const std::string& path) const {
        if (py::isinstance<py::bytes>(v) || py::isinstance<py::bytearray>(v) || py::isinstance<py::memoryview>(v))
            return py::bytes(v).cast<std::string>();
        raise_error(fmt::format("'{}' takes bytes, not {}", path, type_name_of(v)));
    }

    // The elements `v` yields (a list of them, taken once): a str or bytes is
    // refused (its characters are not elements), and so is what cannot be
    // iterated. The list is what was yielded, whatever len(v) says.
    static py::list elements_of(const py::handle& v, const std::string& path, std::string_view wanted) {
        if (PyUnicode_Check(v.ptr()) || PyBytes_Check(v.ptr()) || PyByteArray_Check(v.ptr()) ||
            PyDict_Check(v.ptr()))
            raise_error(fmt::format("'{}' takes {}, not {}", path, wanted, type_name_of(v)));
        PyObject* iterator = PyObject_GetIter(v.ptr());
        if (iterator == nullptr) {
            PyErr_Clear();
            raise_error(fmt::format("'{}' takes {}, not {}", path, wanted, described(v)));
        }
        py::list out;
        const py::object owned = py::reinterpret_steal<py::object>(iterator);
        while (PyObject* item = PyIter_Next(iterator)) out.append(py::reinterpret_steal<py::object>(item));
        if (PyErr_Occurred() != nullptr) throw py::error_already_set();  // the iterator's own error
        return out;
    }

    // A float field's value: an int or a float, or an object that says it is
    // a number (__float__, __index__: numpy's scalars); never a str (float()
    // would parse "1.5") or a bool.
    static double number_of(const py::handle& v, const std::string& path, std::string_view type) {
        if (PyUnicode_Check(v.ptr()) || PyBytes_Check(v.ptr()) || PyByteArray_Check(v.ptr()) || PyBool_Check(v.ptr()))
            raise_error(fmt::format("'{}' is an {}: give a number, not {}", path, type, described(v)));
        const double x = PyFloat_AsDouble(v.ptr());
        if (x == -1.0 && PyErr_Occurred() != nullptr) {
            const bool overflow = PyErr_ExceptionMatches(PyExc_OverflowError) != 0;
            PyErr_Clear();
            raise_error(overflow ? fmt::format("'{}' = {} does not fit an {}", path, shown(v), type)
                                 : fmt::format("'{}' is an {}: give a number, not {}", path, type, described(v)));
        }
        return x;
    }

    void set_count(const SchemaTrailing& t, std::size_t elements) {
        const std::uint32_t width = scalar_size(t.count_scalar);
        std::uint64_t current = 0;
        std::memcpy(&current, out_.data() + t.count_offset, width);
        if (current != 0 && current != elements)
            raise_error(fmt::format("count field '{}' is {}, but trailing array '{}' has {} elements", t.count_path,
                                    current, t.name, elements));
        if (width < 8 && elements >> (width * 8) != 0)
            raise_error(fmt::format("trailing array '{}' has {} elements, too many for its count field '{}' ({})",
                                    t.name, elements, t.count_path, scalar_name(t.count_scalar)));
        const std::uint64_t n = elements;
        std::memcpy(out_.data() + t.count_offset, &n, width);
    }

    void value(TypeId id, const py::handle& v, std::size_t at, const std::string& path) {
        const SchemaType& t = schema_.type(id);
        switch (t.kind) {
        case TypeKind::Scalar: return scalar(t.scalar, v, at, path);
        case TypeKind::Enum: return enumeration(schema_.enums()[t.index], v, at, path);
        case TypeKind::Bytes: {
            const std::string bytes = as_bytes(py::reinterpret_borrow<py::object>(v), path);
            if (bytes.size() != t.count)
                raise_error(fmt::format("'{}' takes exactly {} bytes, not {}", path, t.count, bytes.size()));
            std::memcpy(out_.data() + at, bytes.data(), bytes.size());
            return;
        }
        case TypeKind::String: {
            std::string text;
            if (PyUnicode_Check(v.ptr())) {
                text = utf8_of(v, fmt::format("'{}'", path));
            } else {
                text = as_bytes(py::reinterpret_borrow<py::object>(v), path);
                // Read back as str: bytes that are not UTF-8 would come back as U+FFFD.
                if (!is_valid_utf8(text))
                    raise_error(fmt::format("'{}' is a char[{}] string: its bytes \"{}\" are not UTF-8", path,
                                            t.count, shortened(printable(text), 64)));
            }
            if (text.size() > t.count)
                raise_error(fmt::format("'{}' is a char[{}]; \"{}\" is {} bytes", path, t.count,
                                        text.size() > 64 ? printable(text.substr(0, 64)) + "..." : printable(text),
                                        text.size()));
            if (text.find('\0') != std::string::npos)
                raise_error(fmt::format("'{}': a char[{}] string cannot hold a NUL (it is the padding)", path, t.count));
            std::memcpy(out_.data() + at, text.data(), text.size());
            return;
        }
        case TypeKind::Struct: {
            if (!py::isinstance<py::dict>(v)) raise_error(fmt::format("'{}' is a struct: give a dict", path));
            return fixed(schema_.structs()[t.index], py::reinterpret_borrow<py::dict>(v), at, path);
        }
        case TypeKind::Array: {
            // Counted as yielded, never by len() (issue 32: an object whose
            // len() is smaller than what it yields wrote past the payload).
            const std::string wanted = fmt::format("a sequence of exactly {} elements", t.count);
            const py::list elements = elements_of(v, path, wanted);
            if (elements.size() != t.count)
                raise_error(fmt::format("'{}' takes a sequence of exactly {} elements, not {}", path, t.count,
                                        elements.size()));
            const std::uint32_t size = schema_.type(t.element).size;
            for (std::size_t i = 0; i < t.count; ++i)
                value(t.element, elements[i], at + i * size, fmt::format("{}[{}]", path, i));
            return;
        }
        }
    }

    void enumeration(const SchemaEnum& e, const py::handle& v, std::size_t at, const std::string& path) {
        if (PyUnicode_Check(v.ptr())) {
            const std::string name = utf8_of(v, fmt::format("'{}'", path));
            const SchemaEnumValue* value = e.value(name);
            if (value == nullptr)
                raise_error(fmt::format("'{}': enum '{}' has no value '{}'", path, e.name, shortened(printable(name))));
            std::memcpy(out_.data() + at, &value->bits, scalar_size(e.underlying));
            return;
        }
        scalar(e.underlying, v, at, path);
    }

    void scalar(Scalar s, const py::handle& v, std::size_t at, const std::string& path) {
        std::byte* p = out_.data() + at;
        const std::uint32_t size = scalar_size(s);
        if (s == Scalar::F32 || s == Scalar::F64) {
            const double x = number_of(v, path, scalar_name(s));
            if (s == Scalar::F32) {
                // A finite value past the f32 range would be stored as inf.
                if (std::isfinite(x) && std::fabs(x) > std::numeric_limits<float>::max())
                    raise_error(fmt::format("'{}' = {} is out of the range of an f32 (at most {:g} either way)", path,
                                            shown(v), std::numeric_limits<float>::max()));
                const auto f = static_cast<float>(x);
                std::memcpy(p, &f, 4);
            } else {
                std::memcpy(p, &x, 8);
            }
            return;
        }
        if (s == Scalar::Bool) {
            // True, False, or the ints 1 and 0: anything else is not a bool.
            const bool is_int = PyLong_Check(v.ptr()) != 0;
            int overflow = 0;
            const long n = is_int ? PyLong_AsLongAndOverflow(v.ptr(), &overflow) : -1;
            if (!is_int || overflow != 0 || (n != 0 && n != 1))
                raise_error(fmt::format("'{}' is a bool: give True or False (or 1 or 0), not {}", path, described(v)));
            const std::uint8_t b = n == 1 ? 1 : 0;
            std::memcpy(p, &b, 1);
            return;
        }
        if (!py::isinstance<py::int_>(v) || py::isinstance<py::bool_>(v))
            raise_error(fmt::format("'{}' is a {}: give an int", path, scalar_name(s)));
        // Every integer type through CPython's exact conversion: an OverflowError
        // means the value does not fit.
        const bool is_signed = s >= Scalar::I8 && s <= Scalar::I64;
        if (_PyLong_AsByteArray(reinterpret_cast<PyLongObject*>(v.ptr()), reinterpret_cast<unsigned char*>(p), size,
                                /*little_endian=*/1, is_signed ? 1 : 0) != 0) {
            PyErr_Clear();
            raise_error(fmt::format("'{}' = {} does not fit a {}", path, shown(v), scalar_name(s)));
        }
    }

    const Schema& schema_;
    std::vector<std::byte>& out_;
};

}  // namespace

std::vector<std::byte> encode_payload(const Schema& schema, const SchemaEvent& event, const py::dict& values) {
    std::vector<std::byte> out;
    const SchemaStruct* s = schema.payload_of(event);
    if (s == nullptr) {
        if (!values.empty()) raise_error(fmt::format("{} has an empty payload: it takes no fields", event.name));
        return out;
    }
    out.resize(s->size);
    Encoder encoder(schema, out);
    encoder.fixed(*s, values, 0, "");
    encoder.trailing(*s, values);
    return out;
}

}  // namespace evring::python
