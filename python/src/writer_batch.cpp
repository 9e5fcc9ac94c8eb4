// Writer.record_many (writer_batch.hpp): the events of a list, a tuple or a
// numpy array gathered as the bindings' EventToRecord, then recorded by
// record_batch (lib/bindings/writer_batch.hpp), the C ABI's batch write.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <cstring>
#include <vector>

#include "arguments.hpp"
#include "bindings/writer_batch.hpp"
#include "reader.hpp"
#include "schema/schema_write_check.hpp"
#include "writer_batch.hpp"
#include "writer_encode.hpp"

namespace evring::python {
namespace {

bool is_sequence(const py::handle& h) {
    return py::isinstance<py::list>(h) || py::isinstance<py::tuple>(h) || py::isinstance<py::array>(h);
}

// A number, or a name from the ring's schema: arguments.hpp's rule, the one
// Writer.record uses.
std::uint16_t type_number(const evring_writer& writer, const py::handle& type) {
    return event_type_of(type, writer.schema ? &*writer.schema : nullptr);
}

FlowTags tags_of(const py::handle& row) {
    if (!is_sequence(row)) raise_error("record_many: a flow row must be a tuple, a list or an array of integers");
    const auto tags = py::reinterpret_borrow<py::sequence>(row);
    if (tags.size() > 4) raise_error(fmt::format("flow has {} tags; a ring carries at most 4", tags.size()));
    FlowTags out{};
    for (std::size_t i = 0; i < tags.size(); ++i) out[i] = tags[i].cast<std::uint64_t>();
    return out;
}

// Every event's type: one for all, or one each.
std::vector<std::uint16_t> types_of(const evring_writer& writer, const py::object& event_type, std::size_t n) {
    if (!is_sequence(event_type)) return std::vector<std::uint16_t>(n, type_number(writer, event_type));
    const auto types = py::reinterpret_borrow<py::sequence>(event_type);
    if (types.size() != n)
        raise_error(fmt::format("record_many: {} event types for {} events: give one, or one per event", types.size(), n));
    std::vector<std::uint16_t> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(type_number(writer, types[i]));
    return out;
}

// Every event's flow tags: one row for all (a tuple of integers, or none),
// or one row each (a sequence of rows, a 2-D array).
std::vector<FlowTags> flows_of(const py::object& flow, std::size_t n) {
    const auto rows = py::reinterpret_borrow<py::sequence>(flow);
    const bool per_event = rows.size() > 0 && (is_sequence(rows[0]) || (py::isinstance<py::array>(flow) &&
                                                                         py::reinterpret_borrow<py::array>(flow).ndim() == 2));
    if (!per_event) return std::vector<FlowTags>(n, tags_of(flow));
    if (rows.size() != n)
        raise_error(fmt::format("record_many: {} flow rows for {} events: give one, or one per event", rows.size(), n));
    std::vector<FlowTags> out;
    out.reserve(n);
    for (std::size_t i = 0; i < n; ++i) out.push_back(tags_of(rows[i]));
    return out;
}

// The payloads, and what keeps their bytes alive while they are recorded.
struct Payloads {
    std::vector<const void*> data;
    std::vector<std::uint64_t> size;
    std::vector<py::buffer_info> views;            // bytes-like items
    std::vector<std::vector<std::byte>> encoded;  // dicts of fields
};

void add_item(const evring_writer& writer, const py::handle& item, std::uint16_t type, std::size_t index, Payloads& out) {
    if (py::isinstance<py::dict>(item)) {
        if (!writer.schema) raise_error("record_many with fields needs a ring created with a schema");
        const SchemaEvent* event = writer.schema->event(type);
        if (event == nullptr) {
            DecodeError unknown;
            unknown.status = DecodeStatus::UnknownEventType;
            unknown.event_type = type;
            raise_error(fmt::format("event {} of the batch: {}", index, describe_write_refusal(*writer.schema, unknown)));
        }
        out.encoded.push_back(encode_payload(*writer.schema, *event, py::reinterpret_borrow<py::dict>(item)));
        out.data.push_back(out.encoded.back().data());
        out.size.push_back(out.encoded.back().size());
        return;
    }
    if (!py::isinstance<py::buffer>(item))
        raise_error(fmt::format("record_many: event {} is neither a bytes-like payload nor a dict of fields", index));
    py::buffer_info info = py::reinterpret_borrow<py::buffer>(item).request();
    if (info.ndim > 1 && !PyBuffer_IsContiguous(info.view(), 'C'))
        raise_error(fmt::format("record_many: the payload of event {} is not a contiguous buffer", index));
    out.data.push_back(info.ptr);
    out.size.push_back(static_cast<std::uint64_t>(info.size * info.itemsize));
    out.views.push_back(std::move(info));
}

Payloads payloads_of(const evring_writer& writer, const py::object& events, const std::vector<std::uint16_t>& types) {
    Payloads out;
    const std::size_t n = types.size();
    if (py::isinstance<py::array>(events)) {  // one event per row, all of one size
        const auto array = py::reinterpret_borrow<py::array>(events);
        if ((array.flags() & py::array::c_style) == 0)
            raise_error("record_many: the array is not C-contiguous (numpy.ascontiguousarray makes it so)");
        const std::uint64_t row = n == 0 ? 0 : static_cast<std::uint64_t>(array.nbytes()) / n;
        const auto* base = static_cast<const std::byte*>(array.data());
        for (std::size_t i = 0; i < n; ++i) {
            out.data.push_back(base + i * row);
            out.size.push_back(row);
        }
        return out;
    }
    const auto items = py::reinterpret_borrow<py::sequence>(events);
    out.data.reserve(n);
    out.views.reserve(n);
    out.encoded.reserve(n);  // no reallocation: data[] points into these
    for (std::size_t i = 0; i < n; ++i) add_item(writer, items[i], types[i], i, out);
    return out;
}

std::size_t count_of(const py::object& events) {
    if (py::isinstance<py::array>(events)) {
        const auto array = py::reinterpret_borrow<py::array>(events);
        if (array.ndim() < 1) raise_error("record_many: a numpy array of events needs one row per event (ndim >= 1)");
        return static_cast<std::size_t>(array.shape(0));
    }
    if (!py::isinstance<py::list>(events) && !py::isinstance<py::tuple>(events))
        raise_error("record_many: events must be a list or tuple of payloads, or a numpy array with one event per row");
    return py::len(events);
}

}  // namespace

py::object record_many(evring_writer& writer, const py::object& event_type, const py::object& events,
                       const py::object& flow) {
    const std::size_t n = count_of(events);
    const std::vector<std::uint16_t> types = types_of(writer, event_type, n);
    const std::vector<FlowTags> flows = flows_of(flow, n);
    const Payloads payloads = payloads_of(writer, events, types);
    py::array_t<std::uint64_t> seqnos(static_cast<py::ssize_t>(n));
    const auto event_at = [&](std::size_t i) {
        bindings::EventToRecord e;
        e.event_type = types[i];
        e.payload = payloads.data[i];
        e.payload_size = payloads.size[i];
        e.content_ext = flows[i];
        return e;
    };
    const bindings::BatchRecorded done = bindings::record_batch(writer, n, event_at, seqnos.mutable_data());
    if (done.status != EVRING_OK) raise_error(done.message);
    return seqnos;
}

}  // namespace evring::python
