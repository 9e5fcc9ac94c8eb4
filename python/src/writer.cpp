// evring.Writer: creating a ring and recording events into it (module.hpp).
//
// record() copies the payload (any bytes-like object) into a reservation and
// commits it; a payload larger than the ring allows raises evring.Error
// after recording a RECORD_ERROR in its place, as typed_publish.hpp does.
// With a schema, record() is checked (schema_write_check.hpp): an unknown
// type or a size the layout rules out raises evring.Error and publishes
// nothing. A checked event no registered reader wants (interest,
// docs/interest.md) is then skipped: record() returns None instead of a
// seqno. wants(type) asks before building one. record_raw() is the
// unchecked path (checked with check_raw=True), and never skips.
//
// Thread safety: a Writer may be used from several Python threads (the
// publisher is shared-safe: evring.h). close() may come at any time, from
// any thread or from Python code a record() runs (a value's __index__ or
// __float__): every Python argument is turned into C++ values first, and the
// handle is taken only after that, so no Python code runs while record()
// holds it (the GIL is never released there); a record() whose writer was
// closed that way raises "the writer is closed".
#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <cstring>

#include "evring/schema/typed_publish.hpp"
#include "arguments.hpp"
#include "module.hpp"
#include "reader.hpp"
#include "writer_batch.hpp"
#include "writer_encode.hpp"
#include "bindings/writer_handle.hpp"
#include "schema/schema_write_check.hpp"

namespace evring::python {
namespace {

// The flow tags: None or a tuple or list of at most 4 ints, each 0..2^64-1.
FlowTags flow_tags(const py::handle& flow) {
    FlowTags tags{};
    if (flow.is_none()) return tags;
    if (!PyTuple_Check(flow.ptr()) && !PyList_Check(flow.ptr()))
        raise_error(fmt::format("flow: give a tuple of up to 4 flow tags (ints 0..2^64-1), not {}",
                                described(flow)));
    const py::sequence given = py::reinterpret_borrow<py::sequence>(flow);
    if (given.size() > 4) raise_error(fmt::format("flow has {} tags; a ring carries at most 4", given.size()));
    for (std::size_t i = 0; i < given.size(); ++i)
        tags[i] = unsigned_of(given[i], fmt::format("flow[{}]", i), UINT64_MAX);
    return tags;
}

class Writer {
public:
    explicit Writer(std::unique_ptr<evring_writer> handle, std::optional<Schema> schema)
        : handle_(std::move(handle)), schema_(std::move(schema)) {}

    // The typed write: record(type, payload_bytes), record(type, {fields}) or
    // record(type, field=value, ...), checked against the ring's schema.
    py::object record(const py::args& args, const py::kwargs& kwargs) {
        if (args.size() < 1 || args.size() > 3)
            raise_error("record(event_type, payload=None, flow=(), **fields) takes 1 to 3 positional arguments");
        py::dict fields;
        py::object flow = args.size() == 3 ? py::reinterpret_borrow<py::object>(args[2]) : py::none();
        for (auto item : kwargs) {
            if (utf8_of(item.first, "record: a keyword's name") != "flow") {
                fields[item.first] = item.second;
            } else {
                if (args.size() == 3) raise_error("record: flow given twice (as the third argument and as flow=)");
                flow = py::reinterpret_borrow<py::object>(item.second);
            }
        }
        const FlowTags tags = flow_tags(flow);
        const py::object payload = args.size() >= 2 ? py::reinterpret_borrow<py::object>(args[1]) : py::none();
        if (payload.is_none() || py::isinstance<py::dict>(payload)) {
            if (!payload.is_none()) {
                if (!fields.empty()) raise_error("record: give the fields as a dict or as keywords, not both");
                fields = py::reinterpret_borrow<py::dict>(payload);
            }
            return record_fields(args[0], fields, tags);
        }
        if (!fields.empty()) raise_error("record: give a payload's bytes or its fields, not both");
        return publish(args[0], payload, tags, true);
    }
    // The raw write: any bytes under any event type.
    py::object record_raw(const py::object& event_type, const py::object& payload, const py::object& flow) {
        return publish(event_type, payload, flow_tags(flow), false);
    }

    // Whether some registered reader wants events of this type (interest).
    bool wants(const py::object& event_type) {
        const std::uint16_t type = type_number(event_type);  // may run Python code: before handle()
        return bindings::wanted(handle(), type);
    }

    py::object record_fields(const py::handle& event_type, const py::dict& fields, const FlowTags& tags) {
        if (!schema_) {
            handle();  // a closed writer says so first
            raise_error("record with fields needs a ring created with a schema");
        }
        const std::uint16_t type = type_number(py::reinterpret_borrow<py::object>(event_type));
        const SchemaEvent* event = schema_->event(type);
        if (event == nullptr) {
            DecodeError unknown;
            unknown.status = DecodeStatus::UnknownEventType;
            unknown.event_type = type;
            raise_error(describe_write_refusal(*schema_, unknown));
        }
        // Runs the values' Python code (__index__, __float__, iterators), which
        // may close this writer: the handle is taken after it (see above).
        const std::vector<std::byte> payload = encode_payload(*schema_, *event, fields);
        return publish_bytes(handle(), event->number, payload.data(), payload.size(), tags, true);
    }

    py::object publish(const py::object& event_type, const py::object& payload, const FlowTags& tags, bool checked) {
        const std::uint16_t type = type_number(event_type);
        if (!PyObject_CheckBuffer(payload.ptr()))
            raise_error(fmt::format("payload: give bytes (or another buffer, or a dict of fields), not {}",
                                    described(payload)));
        const py::buffer_info info = py::reinterpret_borrow<py::buffer>(payload).request();
        if (info.ndim > 1 && !PyBuffer_IsContiguous(info.view(), 'C'))
            raise_error("the payload must be a contiguous buffer");
        const auto size = static_cast<std::uint64_t>(info.size * info.itemsize);
        return publish_bytes(handle(), type, info.ptr, size, tags, checked);
    }

    // The seqno, or None when a checked event nobody wants was skipped. Runs
    // no Python code before the event is published (the writer stays open).
    py::object publish_bytes(evring_writer& w, std::uint16_t type, const void* data, std::uint64_t size,
                             const FlowTags& tags, bool checked) {
        if (checked || w.check_raw)
            if (std::string why = bindings::refusal(w, type, data, size); !why.empty()) raise_error(why);
        if (checked && !bindings::wanted(w, type)) return py::none();  // checked first, then skipped
        Reservation r = w.publisher.reserve(size);
        if (!r) {
            detail::publish_oversized(w.publisher, type, size, data, size, tags);
            raise_error(fmt::format("a payload of {} bytes is larger than ring {} allows ({}); a RECORD_ERROR "
                                    "was recorded instead",
                                    size, w.writer.path(), w.publisher.max_payload_size()));
        }
        r.descriptor().event_type = type;
        r.descriptor().content_ext = tags;
        if (size > 0) std::memcpy(r.payload(), data, size);
        w.publisher.commit(r);
        return py::int_(r.seqno());
    }

    evring_writer& handle() {
        if (!handle_) raise_error("the writer is closed");
        return *handle_;
    }
    void close() { handle_.reset(); }

private:
    std::uint16_t type_number(const py::object& event_type) const {
        return event_type_of(event_type, schema_ ? &*schema_ : nullptr);
    }

    std::unique_ptr<evring_writer> handle_;
    std::optional<Schema> schema_;  // the handle's, kept here too: it outlives a close() during record()
};

Writer create(const py::object& name, const py::object& descriptor_shift, const py::object& payload_shift,
              const py::object& content_type, const py::object& schema, bool shared, bool keep, bool check_raw) {
    bindings::WriterSettings settings;
    settings.name = path_of(name, "name");
    settings.descriptor_shift = static_cast<unsigned>(unsigned_of(descriptor_shift, "descriptor_shift", 63));
    settings.payload_shift = static_cast<unsigned>(unsigned_of(payload_shift, "payload_shift", 63));
    if (!content_type.is_none()) {
        const auto type = unsigned_of(content_type, "content_type", 0xffff);
        if (type == 0) raise_error("content_type 0 is not in 1..65535");
        settings.content_type = static_cast<std::uint16_t>(type);
    }
    std::optional<Schema> parsed;
    if (!schema.is_none()) {
        // Schema text (it has a newline, as load_schema tells them apart) or a file's path.
        const bool text = PyUnicode_Check(schema.ptr()) &&
                          PyUnicode_FindChar(schema.ptr(), '\n', 0, PyUnicode_GetLength(schema.ptr()), 1) >= 0;
        settings.schema = text ? utf8_of(schema, "schema") : path_of(schema, "schema");
        auto loaded = bindings::load_schema(settings.schema);
        if (!loaded) raise_error(loaded.error().message());
        parsed = std::move(*loaded);
    }
    settings.shared = shared;
    settings.keep = keep;
    settings.check_raw = check_raw;
    auto handle = bindings::create_writer_handle(settings);
    if (!handle) raise_error(handle.error().message());
    return Writer(std::move(*handle), std::move(parsed));
}

}  // namespace

void register_writer(py::module_& m) {
    py::class_<Writer>(m, "Writer", "A ring this process writes (evring.create).")
        .def("record", &Writer::record,
             "record(event_type, payload=None, flow=(), **fields): records one event (event_type: a number, or a "
             "name from the schema) and returns its seqno. The payload is bytes, or a dict of field values, or "
             "the fields as keywords, encoded with the ring's schema. With a schema, an unknown type or a payload "
             "size its layout rules out raises evring.Error; an event no registered reader wants (interest, "
             "docs/interest.md) is skipped and record returns None.")
        .def("wants", &Writer::wants, py::arg("event_type"),
             "True when some registered reader wants events of this type (a number or a name) by the schema's "
             "keywords and level, or nobody narrowed what they want: False means record() would skip it.")
        .def("record_many",
             [](Writer& w, const py::object& event_type, const py::object& events, const py::object& flow) {
                 return record_many(w.handle(), event_type, events, flow);  // writer_batch.cpp
             },
             py::arg("event_type"), py::arg("events"), py::arg("flow") = py::tuple(), kRecordManyDoc)
        .def("record_raw", &Writer::record_raw, py::arg("event_type"), py::arg("payload"),
             py::arg("flow") = py::tuple(), "Records one event unchecked (unless created with check_raw=True).")
        .def_property_readonly("path", [](Writer& w) { return w.handle().writer.path(); })
        .def_property_readonly("max_payload", [](Writer& w) { return w.handle().publisher.max_payload_size(); })
        .def("close", &Writer::close, "Closes the ring; its file is removed unless keep=True.")
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](Writer& w, py::args) { w.close(); });
    m.def("create", &create, py::arg("name"), py::arg("descriptor_shift") = kDefaultDescriptorShift,
          py::arg("payload_shift") = kDefaultPayloadBufShift, py::arg("content_type") = py::none(),
          py::arg("schema") = py::none(), py::arg("shared") = false, py::arg("keep") = false, py::arg("check_raw") = false,
          "Creates a ring (a name in the ring directory, or a path) and returns its Writer.");
}

}  // namespace evring::python
