// evring.Batch and DESCRIPTOR_DTYPE (batch.hpp).
#include "batch.hpp"

#include <pybind11/numpy.h>

#include <map>
#include <stdexcept>

#include "evring/format.hpp"
#include "reader.hpp"

namespace evring::python {
namespace {

py::object all() { return py::reinterpret_steal<py::object>(PySlice_New(nullptr, nullptr, nullptr)); }

// Each event's type name from the schema dict's events, None where it names none.
py::object type_names(const BatchData& b) {
    std::map<std::uint64_t, py::object> names;
    if (!b.schema.is_none())
        for (py::handle t : b.schema.attr("get")("events", py::list()))
            names.emplace(t["number"].cast<std::uint64_t>(), py::reinterpret_borrow<py::object>(t["name"]));
    const auto types = b.events["event_type"].cast<py::array_t<std::uint16_t>>().unchecked<1>();
    py::list values(static_cast<std::size_t>(types.shape(0)));
    for (py::ssize_t i = 0; i < types.shape(0); ++i) {
        auto it = names.find(types(i));
        values[static_cast<std::size_t>(i)] = it != names.end() ? it->second : py::none();
    }
    return py::module_::import("numpy").attr("array")(values, py::arg("dtype") = "O");
}

py::object to_dataframe(const BatchData& b, bool fields, const std::string& bytes) {
    if (bytes != "hex" && bytes != "bytes") raise_error("to_dataframe: bytes is \"hex\" or \"bytes\", not \"" + bytes + "\"");
    py::module_ pandas = py::module_::import("pandas");  // ImportError without it, as documented
    const py::object& e = b.events;
    py::dict columns;
    columns["seqno"] = e["seqno"];
    if (b.member_ids) columns["member"] = b.members;
    columns["event_type"] = e["event_type"];
    columns["type_name"] = type_names(b);
    columns["payload_size"] = e["payload_size"];
    columns["record_epoch_nanos"] = e["record_epoch_nanos"];
    columns["payload_buf_offset"] = e["payload_buf_offset"];
    py::list tags = b.schema.is_none() ? py::list() : py::list(b.schema.attr("get")("flow_tags", py::list()));
    for (std::size_t i = 0; i < 4; ++i) {
        const bool named = i < tags.size() && !tags[i].is_none() && py::len(tags[i]) > 0;
        const py::object name = named ? py::object(tags[i]) : py::object(py::str("content_ext{}").format(i));
        columns[name] = e["content_ext"][py::make_tuple(all(), i)];
    }
    if (!b.payload_states.is_none() && py::len(b.payload_states) == py::len(e))
        columns["payload_state"] = b.payload_states;
    if (fields) add_field_columns(b, columns, bytes == "hex");
    return pandas.attr("DataFrame")(columns);
}

py::object payload(const BatchData& b, py::ssize_t i) {
    if (b.payload_offsets.is_none()) raise_error("this batch was read without payloads (read_batch(payloads=False))");
    const auto offsets = b.payload_offsets.cast<py::array_t<std::uint64_t>>().unchecked<1>();
    if (i < 0) i += offsets.shape(0) - 1;
    if (i < 0 || i + 1 >= offsets.shape(0)) throw py::index_error("batch index out of range");
    return b.payload_data[py::slice(static_cast<py::ssize_t>(offsets(i)), static_cast<py::ssize_t>(offsets(i + 1)), 1)];
}

}  // namespace

py::object descriptor_dtype() {
    // Never destroyed: it would be released after the interpreter is gone.
    static py::object* dtype = new py::object([] {
        py::list fields;
        fields.append(py::make_tuple("seqno", "<u8"));
        fields.append(py::make_tuple("event_type", "<u2"));
        fields.append(py::make_tuple("reserved", "<u2"));
        fields.append(py::make_tuple("payload_size", "<u4"));
        fields.append(py::make_tuple("record_epoch_nanos", "<u8"));
        fields.append(py::make_tuple("payload_buf_offset", "<u8"));
        fields.append(py::make_tuple("content_ext", "<u8", py::make_tuple(4)));
        py::object d = py::module_::import("numpy").attr("dtype")(fields);
        if (d.attr("itemsize").cast<std::size_t>() != sizeof(EventDescriptor))
            throw std::logic_error("descriptor dtype is not 64 bytes");
        return d;
    }());
    return *dtype;
}

void register_batch(py::module_& m) {
    m.attr("DESCRIPTOR_DTYPE") = descriptor_dtype();
    py::class_<BatchData>(m, "Batch",
                          "What Reader.read_batch returns: `events` (a numpy array of DESCRIPTOR_DTYPE), `members` "
                          "(each event's ring set member), the payloads as one uint8 array `payload_data` with "
                          "`payload_offsets` (event i's bytes are data[offsets[i]:offsets[i+1]]) and `payload_states` "
                          "(1 ok, 2 expired, 3 invalid), why it stopped (`stopped`: \"full\", \"not_ready\", \"end\") "
                          "and the gaps it passed over.")
        .def_readonly("events", &BatchData::events)
        .def_readonly("members", &BatchData::members)
        .def_readonly("payload_data", &BatchData::payload_data)
        .def_readonly("payload_offsets", &BatchData::payload_offsets)
        .def_readonly("payload_states", &BatchData::payload_states)
        .def_readonly("stopped", &BatchData::stopped)
        .def_readonly("gaps", &BatchData::gaps)
        .def_readonly("skipped", &BatchData::skipped)
        .def_readonly("schema", &BatchData::schema, "the reader's schema (a dict) when it has one")
        .def("__len__", [](const BatchData& b) { return py::len(b.events); })
        .def("payload", &payload, py::arg("i"), "Event i's payload as a numpy view (empty when it expired).")
        .def("to_dataframe", &to_dataframe, py::arg("fields") = false, py::arg("bytes") = "hex",
             "The batch as a pandas DataFrame, one row per event, flat columns: seqno, member (ring sets and "
             "their recordings only), event_type, type_name (from the schema; None without one), payload_size, "
             "record_epoch_nanos, payload_buf_offset, one column per flow tag named as the schema names it "
             "(content_ext0..3 otherwise), payload_state. fields=True adds the decoded payloads: a column per "
             "field, nested structs flattened as a.b, arrays as one column of lists, nullable dtypes (Int64, "
             "UInt64, Float64, boolean, string) where every value fits, <NA> where an event has no such field; "
             "byte arrays as \"0x...\" text, or bytes with bytes=\"bytes\". pandas is optional (Debian: "
             "python3-pandas); without it this raises ImportError.");
}

}  // namespace evring::python
