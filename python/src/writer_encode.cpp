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

#include "reader.hpp"

namespace evring::python {
namespace {

class Encoder {
public:
    Encoder(const Schema& schema, std::vector<std::byte>& out) : schema_(schema), out_(out) {}

    void fixed(const SchemaStruct& s, const py::dict& values, std::size_t base, const std::string& path) {
        for (auto item : values) {
            const std::string key = py::str(item.first).cast<std::string>();
            if (s.field(key) == nullptr && !is_trailing(s, key))
                raise_error(fmt::format("{}: no field '{}' (fields: {})", where(path), key, field_list(s)));
        }
        for (const auto& f : s.fields) {
            if (!values.contains(f.name.c_str())) continue;  // left zero
            value(f.type, values[f.name.c_str()], base + f.offset, join(path, f.name));
        }
    }

    // The trailing arrays of a payload struct, appended after its fixed part;
    // each count field is set from its array's length (or must agree with it).
    void trailing(const SchemaStruct& s, const py::dict& values) {
        for (const auto& t : s.trailing) {
            py::object given = values.contains(t.name.c_str()) ? values[t.name.c_str()] : py::object(py::tuple());
            const std::size_t elements = t.bytes ? as_bytes(given, t.name).size() : py::len(given);
            set_count(t, elements);
            const std::uint32_t size = schema_.type(t.element).size;
            const std::size_t start = out_.size();
            if (elements > (UINT32_MAX - start) / size)
                raise_error(fmt::format("trailing array '{}' of {} elements is over 2^32-1 bytes", t.name, elements));
            out_.resize(start + elements * size);
            if (t.bytes) {
                const std::string bytes = as_bytes(given, t.name);
                if (!bytes.empty()) std::memcpy(out_.data() + start, bytes.data(), bytes.size());
                continue;
            }
            std::size_t i = 0;
            for (auto element : given) {
                value(t.element, py::reinterpret_borrow<py::object>(element), start + i * size,
                      fmt::format("{}[{}]", t.name, i));
                ++i;
            }
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
        raise_error(fmt::format("'{}' takes bytes, not {}", path, py::str(py::type::of(v).attr("__name__"))
                                                                     .cast<std::string>()));
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
            if (py::isinstance<py::str>(v)) text = v.cast<std::string>();  // UTF-8
            else text = as_bytes(py::reinterpret_borrow<py::object>(v), path);
            if (text.size() > t.count)
                raise_error(fmt::format("'{}' is a char[{}]; \"{}\" is {} bytes", path, t.count,
                                        text.size() > 64 ? text.substr(0, 64) + "..." : text, text.size()));
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
            if (py::isinstance<py::str>(v) || !py::hasattr(v, "__len__") || py::len(v) != t.count)
                raise_error(fmt::format("'{}' takes a sequence of exactly {} elements", path, t.count));
            const std::uint32_t size = schema_.type(t.element).size;
            std::size_t i = 0;
            for (auto element : v) {
                value(t.element, element, at + i * size, fmt::format("{}[{}]", path, i));
                ++i;
            }
            return;
        }
        }
    }

    void enumeration(const SchemaEnum& e, const py::handle& v, std::size_t at, const std::string& path) {
        if (py::isinstance<py::str>(v)) {
            const std::string name = v.cast<std::string>();
            const SchemaEnumValue* value = e.value(name);
            if (value == nullptr) raise_error(fmt::format("'{}': enum '{}' has no value '{}'", path, e.name, name));
            std::memcpy(out_.data() + at, &value->bits, scalar_size(e.underlying));
            return;
        }
        scalar(e.underlying, v, at, path);
    }

    void scalar(Scalar s, const py::handle& v, std::size_t at, const std::string& path) {
        std::byte* p = out_.data() + at;
        const std::uint32_t size = scalar_size(s);
        if (s == Scalar::F32 || s == Scalar::F64) {
            const double x = py::cast<double>(py::float_(py::reinterpret_borrow<py::object>(v)));
            if (s == Scalar::F32) {
                const auto f = static_cast<float>(x);
                std::memcpy(p, &f, 4);
            } else {
                std::memcpy(p, &x, 8);
            }
            return;
        }
        if (s == Scalar::Bool) {
            if (!py::isinstance<py::bool_>(v) && !py::isinstance<py::int_>(v))
                raise_error(fmt::format("'{}' is a bool", path));
            const std::uint8_t b = py::cast<bool>(v) ? 1 : 0;
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
            raise_error(fmt::format("'{}' = {} does not fit a {}", path, py::str(v).cast<std::string>(),
                                    scalar_name(s)));
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
