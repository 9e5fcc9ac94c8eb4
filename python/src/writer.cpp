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
// Publisher is shared-safe); close() must not race with record().
#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <cstring>

#include "evring/schema/typed_publish.hpp"
#include "module.hpp"
#include "reader.hpp"
#include "writer_batch.hpp"
#include "writer_encode.hpp"
#include "bindings/writer_handle.hpp"
#include "schema/schema_write_check.hpp"

namespace evring::python {
namespace {

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
        py::tuple flow;
        for (auto item : kwargs) {
            if (py::str(item.first).cast<std::string>() == "flow") flow = py::tuple(py::reinterpret_borrow<py::object>(item.second));
            else fields[item.first] = item.second;
        }
        if (args.size() == 3) flow = py::tuple(args[2]);
        const py::object payload = args.size() >= 2 ? py::reinterpret_borrow<py::object>(args[1]) : py::none();
        if (payload.is_none() || py::isinstance<py::dict>(payload)) {
            if (!payload.is_none()) {
                if (!fields.empty()) raise_error("record: give the fields as a dict or as keywords, not both");
                fields = py::reinterpret_borrow<py::dict>(payload);
            }
            return record_fields(args[0], fields, flow);
        }
        if (!fields.empty()) raise_error("record: give a payload's bytes or its fields, not both");
        return publish(args[0], payload, flow, true);
    }
    // The raw write: any bytes under any event type.
    py::object record_raw(const py::object& event_type, const py::buffer& payload, const py::tuple& flow) {
        return publish(event_type, payload, flow, false);
    }

    // Whether some registered reader wants events of this type (interest).
    bool wants(const py::object& event_type) {
        return bindings::wanted(handle(), type_number(event_type));
    }

    py::object record_fields(const py::handle& event_type, const py::dict& fields, const py::tuple& flow) {
        evring_writer& w = handle();
        if (!w.schema) raise_error("record with fields needs a ring created with a schema");
        const SchemaEvent* event = w.schema->event(type_number(py::reinterpret_borrow<py::object>(event_type)));
        if (event == nullptr) {
            DecodeError unknown;
            unknown.status = DecodeStatus::UnknownEventType;
            unknown.event_type = type_number(py::reinterpret_borrow<py::object>(event_type));
            raise_error(describe_write_refusal(*w.schema, unknown));
        }
        const std::vector<std::byte> payload = encode_payload(*w.schema, *event, fields);
        return publish_bytes(w, event->number, payload.data(), payload.size(), flow, true);
    }

    py::object publish(const py::object& event_type, const py::buffer& payload, const py::tuple& flow,
                       bool checked) {
        evring_writer& w = handle();
        const std::uint16_t type = type_number(event_type);
        const py::buffer_info info = payload.request();
        if (info.ndim > 1 && !PyBuffer_IsContiguous(info.view(), 'C'))
            raise_error("the payload must be a contiguous buffer");
        const auto size = static_cast<std::uint64_t>(info.size * info.itemsize);
        return publish_bytes(w, type, info.ptr, size, flow, checked);
    }

    // The seqno, or None when a checked event nobody wants was skipped.
    py::object publish_bytes(evring_writer& w, std::uint16_t type, const void* data, std::uint64_t size,
                             const py::tuple& flow, bool checked) {
        FlowTags tags{};
        if (flow.size() > 4) raise_error(fmt::format("flow has {} tags; a ring carries at most 4", flow.size()));
        for (std::size_t i = 0; i < flow.size(); ++i) tags[i] = flow[i].cast<std::uint64_t>();
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
        if (py::isinstance<py::str>(event_type)) {
            const std::string name = event_type.cast<std::string>();
            if (!schema_) raise_error(fmt::format("event type '{}' given by name, but the ring has no schema", name));
            const SchemaEvent* e = schema_->event(name);
            if (e == nullptr) raise_error(fmt::format("the schema has no event type named '{}'", name));
            return e->number;
        }
        const auto number = event_type.cast<std::int64_t>();
        if (number < 0 || number > 0xffff) raise_error(fmt::format("event type {} is not in 0..65535", number));
        return static_cast<std::uint16_t>(number);
    }

    std::unique_ptr<evring_writer> handle_;
    std::optional<Schema> schema_;
};

Writer create(const std::string& name, unsigned descriptor_shift, unsigned payload_shift,
              const py::object& content_type, const py::object& schema, bool shared, bool keep, bool check_raw) {
    bindings::WriterSettings settings;
    settings.name = name;
    settings.descriptor_shift = descriptor_shift;
    settings.payload_shift = payload_shift;
    if (!content_type.is_none()) {
        const auto type = content_type.cast<std::int64_t>();
        if (type <= 0 || type > 0xffff) raise_error(fmt::format("content type {} is not in 1..65535", type));
        settings.content_type = static_cast<std::uint16_t>(type);
    }
    std::optional<Schema> parsed;
    if (!schema.is_none()) {
        settings.schema = py::str(schema).cast<std::string>();
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
