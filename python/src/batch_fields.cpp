// Batch.to_dataframe(fields=True)'s decoded columns (batch.hpp).
//
// Each event's payload is decoded as Event.fields decodes it (decode_fields,
// event.hpp), and its nested structs are flattened into columns named by
// path (`txn_header.gas_limit`); an array stays one column holding a list
// per event, so the columns are the schema's fields, however many elements a
// payload holds. A column gets one of pandas' nullable dtypes when every
// value fits it (Int64, UInt64, Float64, boolean, string): an event without
// the field is <NA>, and integers stay exact; anything else (lists, bytes,
// integers past 64 bits) is an object column. Byte arrays are "0x..." text,
// or bytes with bytes="bytes".
#include <pybind11/numpy.h>

#include <map>
#include <string>
#include <vector>

#include "batch.hpp"
#include "event.hpp"
#include "reader.hpp"

namespace evring::python {
namespace {

struct Column {
    std::vector<py::object> values;  // None where an event has no such field
    bool any = false;
    bool all_bool = true, all_int = true, fits_signed = true, fits_unsigned = true, all_float = true, all_str = true;

    void note(PyObject* v) {
        any = true;
        const bool is_bool = PyBool_Check(v);
        const bool is_int = PyLong_Check(v) && !is_bool;
        all_bool = all_bool && is_bool;
        all_int = all_int && is_int;
        all_float = all_float && PyFloat_Check(v);
        all_str = all_str && PyUnicode_Check(v);
        if (!is_int) return;
        int overflow = 0;
        const long long s = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow != 0) fits_signed = false;
        if (overflow < 0 || (overflow == 0 && s < 0)) {
            fits_unsigned = false;
        } else if (overflow > 0) {
            PyLong_AsUnsignedLongLong(v);
            if (PyErr_Occurred() != nullptr) {
                PyErr_Clear();
                fits_unsigned = false;
            }
        }
    }
    const char* dtype() const {
        if (!any) return nullptr;
        if (all_bool) return "boolean";
        if (all_int) return fits_signed ? "Int64" : fits_unsigned ? "UInt64" : nullptr;
        if (all_float) return "Float64";
        if (all_str) return "string";
        return nullptr;
    }
};

// Byte arrays as "0x..." text when `hex`, inside lists and dicts too.
py::object converted(py::handle v, bool hex) {
    if (!hex) return py::reinterpret_borrow<py::object>(v);
    if (PyBytes_Check(v.ptr())) return py::str("0x") + v.attr("hex")();
    if (PyList_Check(v.ptr())) {
        py::list out;
        for (py::handle e : v) out.append(converted(e, hex));
        return out;
    }
    if (PyDict_Check(v.ptr())) {
        py::dict out;
        for (auto [key, value] : py::reinterpret_borrow<py::dict>(v)) out[key] = converted(value, hex);
        return out;
    }
    return py::reinterpret_borrow<py::object>(v);
}

class Columns {
public:
    Columns(std::size_t rows, bool hex) : rows_(rows), hex_(hex) {}

    // Event `row`'s fields (a dict), nested structs under `prefix`.
    void add(py::handle fields, std::size_t row, const std::string& prefix = std::string()) {
        for (auto [key, value] : py::reinterpret_borrow<py::dict>(fields)) {
            const std::string name = prefix + py::str(key).cast<std::string>();
            if (PyDict_Check(value.ptr())) {
                add(value, row, name + ".");
                continue;
            }
            auto [it, fresh] = columns_.try_emplace(name);
            if (fresh) {
                order_.push_back(name);
                it->second.values.assign(rows_, py::none());
            }
            py::object v = converted(value, hex_);
            it->second.note(v.ptr());
            it->second.values[row] = std::move(v);
        }
    }

    // Adds each column to `frame` (name -> array), after the descriptor's:
    // a field named as one of them gets "payload." in front.
    void put(py::dict& frame) const {
        py::module_ pandas = py::module_::import("pandas");
        for (const std::string& name : order_) {
            const Column& c = columns_.at(name);
            py::list values(rows_);
            for (std::size_t i = 0; i < rows_; ++i) values[i] = c.values[i];
            const char* dtype = c.dtype();
            py::object array = dtype != nullptr
                                   ? pandas.attr("array")(values, py::arg("dtype") = dtype)
                                   : pandas.attr("Series")(values, py::arg("dtype") = "object").attr("array");
            const std::string key = frame.contains(py::str(name)) ? "payload." + name : name;
            frame[py::str(key)] = array;
        }
    }

private:
    std::size_t rows_;
    bool hex_;
    std::vector<std::string> order_;  // first seen first
    std::map<std::string, Column> columns_;
};

}  // namespace

void add_field_columns(const BatchData& b, py::dict& frame, bool hex) {
    const std::size_t rows = py::len(b.events);
    if (b.payload_offsets.is_none())
        raise_error("to_dataframe(fields=True): this batch was read without payloads (read_batch(payloads=False))");
    const DecodeContext& context = decode_context(b.context.ptr());
    if (!context.schema) raise_error("to_dataframe(fields=True): the reader has no schema to decode payloads with");
    const auto data = b.payload_data.cast<py::array_t<std::uint8_t, py::array::c_style>>();
    const auto offsets = b.payload_offsets.cast<py::array_t<std::uint64_t>>().unchecked<1>();
    const auto states = b.payload_states.cast<py::array_t<std::uint8_t>>().unchecked<1>();
    const auto types = b.events["event_type"].cast<py::array_t<std::uint16_t>>().unchecked<1>();
    const auto* bytes = reinterpret_cast<const std::byte*>(data.data());
    const auto size = static_cast<std::uint64_t>(data.size());
    Columns columns(rows, hex);
    for (std::size_t i = 0; i < rows; ++i) {
        const auto at = static_cast<py::ssize_t>(i);
        if (states(at) != 1 || offsets(at + 1) > size || offsets(at) > offsets(at + 1)) continue;
        py::object fields = decode_fields(context, types(at), {bytes + offsets(at), offsets(at + 1) - offsets(at)});
        if (!fields.is_none()) columns.add(fields, i);
    }
    columns.put(frame);
}

}  // namespace evring::python
