// Reader.read_batch: descriptors as a numpy structured array, payloads as one
// byte array plus offsets (reader.hpp).
//
// Ring and snapshot sources go through EventSource::next_batch (descriptors
// only, no virtual call per event) and copy each payload with copy_payload;
// recordings, whose payloads come only with next(), go event by event. No
// Python object is made per event either way, and the GIL is released while
// a ring batch is read.
#include <pybind11/numpy.h>

#include <cstring>
#include <string>
#include <vector>

#include "evring/ring/payload.hpp"
#include "reader.hpp"

namespace evring::python {
namespace {

constexpr std::size_t kStaging = 1024;
constexpr std::size_t kFirstRoom = std::size_t{1} << 16;

// The numpy dtype of one descriptor: RING01's 64 bytes, field by field.
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

const char* stop_name(SourceStep step) {
    switch (step) {
    case SourceStep::Event: return "full";
    case SourceStep::NotReady: return "not_ready";
    case SourceStep::End: return "end";
    default: return "other";
    }
}

struct Filled {
    std::size_t events = 0;
    std::uint64_t gaps = 0;
    std::uint64_t skipped = 0;
    SourceStep stopped = SourceStep::Event;
};

// The descriptor array of one batch. It starts at kFirstRoom events (4 MiB;
// less for a ring of smaller capacity, which cannot hold more unread events
// when the batch starts) and doubles only as events actually arrive, so
// read_batch(10**8) costs about what it returns, not max_events x 64 bytes up
// front.
class DescriptorArray {
public:
    DescriptorArray(std::size_t max_events, std::size_t first_room)
        : max_(max_events), room_(std::min(max_events, first_room)),
          array_(py::dtype::from_args(descriptor_dtype()), std::vector<py::ssize_t>{static_cast<py::ssize_t>(room_)}) {}

    // Room for at least one more event (false when max_events are in).
    bool make_room(std::size_t used) {
        if (used < room_) return true;
        if (room_ >= max_) return false;
        room_ = std::min(max_, std::max<std::size_t>(2 * room_, 1));
        array_.resize(std::vector<py::ssize_t>{static_cast<py::ssize_t>(room_)}, /*refcheck=*/false);
        return true;
    }
    std::size_t room() const noexcept { return room_; }
    std::byte* data() { return static_cast<std::byte*>(array_.mutable_data()); }
    py::array& array() noexcept { return array_; }

private:
    std::size_t max_;
    std::size_t room_;
    py::array array_;
};


// Descriptors of a ring source, straight into `out` through an aligned
// staging area (the numpy buffer need not be 64-byte aligned). Notices met on
// the way are handed to the reader.
Filled fill_from_ring(Reader& reader, EventSource& source, DescriptorArray& out) {
    Filled f;
    std::vector<EventDescriptor> staging(std::min(out.room(), kStaging));
    while (out.make_room(f.events)) {
        const std::size_t n = std::min(out.room() - f.events, staging.size());
        Batch b;
        {
            Reader::Busy busy(reader);
            py::gil_scoped_release unlocked;
            b = source.next_batch({staging.data(), n});
        }
        std::memcpy(out.data() + f.events * sizeof(EventDescriptor), staging.data(),
                    b.events * sizeof(EventDescriptor));
        f.events += b.events;
        f.gaps += b.gaps;
        f.skipped += b.skipped;
        f.stopped = b.stopped;
        if (b.stopped == SourceStep::Notice) {
            SourceItem item;
            if (source.next(item) == SourceStep::Notice) reader.note(item.notice);
            continue;
        }
        if (b.stopped != SourceStep::Event) break;
    }
    return f;
}

}  // namespace

py::tuple read_batch(Reader& reader, std::size_t max_events, bool payloads) {
    EventSource& source = reader.source();
    reader.check_not_busy();
    if (reader.handle().where) raise_error("read_batch: a where filter is set (set_where); iterate instead");
    const MappedRing* mapped = source.ring();
    // A ring holds at most its capacity of unread events when the batch starts.
    DescriptorArray descriptors(max_events, mapped != nullptr ? std::min<std::size_t>(mapped->descriptor_mask() + 1, kFirstRoom)
                                                              : kFirstRoom);
    std::vector<std::uint8_t> states;
    std::vector<std::uint64_t> offsets{0};
    std::string data;              // a recording's payloads
    py::array_t<std::uint8_t> ring_data;  // a ring's payloads, copied straight in
    bool from_ring = false;
    Filled f;
    if (const MappedRing* ring = mapped) {
        f = fill_from_ring(reader, source, descriptors);
        const std::byte* out = descriptors.data();
        if (payloads) {
            states.resize(f.events);
            offsets.resize(f.events + 1);
            std::uint64_t total = 0;
            for (std::size_t i = 0; i < f.events; ++i) {
                EventDescriptor d;
                std::memcpy(&d, out + i * sizeof d, sizeof d);
                if (payload_in_bounds(*ring, d)) total += d.payload_size;
            }
            ring_data = py::array_t<std::uint8_t>(static_cast<py::ssize_t>(total));
            from_ring = true;
            auto* dst = ring_data.mutable_data();
            Reader::Busy busy(reader);
            py::gil_scoped_release unlocked;
            std::uint64_t at = 0;
            for (std::size_t i = 0; i < f.events; ++i) {
                EventDescriptor d;
                std::memcpy(&d, out + i * sizeof d, sizeof d);
                const PayloadResult r = copy_payload(*ring, d, dst + at, total - at);
                states[i] = r == PayloadResult::Ok ? 1 : r == PayloadResult::Expired ? 2 : 3;
                if (r == PayloadResult::Ok) at += d.payload_size;
                offsets[i + 1] = at;
            }
        }
    } else {
        // A recording: event by event, payloads with them.
        SourceItem item;
        while (descriptors.make_room(f.events)) {
            const SourceStep step = source.next(item, payloads ? PayloadRead::Copy : PayloadRead::None);
            f.stopped = step;
            if (step == SourceStep::Event) {
                std::memcpy(descriptors.data() + f.events * sizeof(EventDescriptor), &item.event.descriptor,
                            sizeof(EventDescriptor));
                ++f.events;
                if (payloads) {
                    const bool ok = item.event.payload_state == PayloadState::Ok;
                    states.push_back(ok ? 1 : item.event.payload_state == PayloadState::Expired ? 2 : 3);
                    if (ok) data.append(reinterpret_cast<const char*>(item.event.payload.data()), item.event.payload.size());
                    offsets.push_back(data.size());
                }
                f.stopped = SourceStep::Event;
            } else if (step == SourceStep::Gap) {
                ++f.gaps;
                f.skipped += item.gap.count;
            } else if (step == SourceStep::Notice) {
                reader.note(item.notice);
            } else {
                break;
            }
        }
    }
    if (f.stopped == SourceStep::Failed) raise_error(source.error().message());
    reader.publish_position();  // once per batch: the registry's view of how far it has read
    py::object used = descriptors.array()[py::slice(0, static_cast<py::ssize_t>(f.events), 1)];
    if (!payloads) return py::make_tuple(used, py::none(), py::none(), py::none(), stop_name(f.stopped), f.gaps, f.skipped);
    py::object payload_data = ring_data;
    if (!from_ring) {
        py::array_t<std::uint8_t> copied(static_cast<py::ssize_t>(data.size()));
        if (!data.empty()) std::memcpy(copied.mutable_data(), data.data(), data.size());
        payload_data = copied;
    } else if (offsets.back() < static_cast<std::uint64_t>(ring_data.size())) {
        payload_data = ring_data[py::slice(0, static_cast<py::ssize_t>(offsets.back()), 1)];  // expired ones left room
    }
    py::array_t<std::uint64_t> payload_offsets(static_cast<py::ssize_t>(offsets.size()), offsets.data());
    py::array_t<std::uint8_t> payload_states(static_cast<py::ssize_t>(states.size()), states.data());
    return py::make_tuple(used, payload_data, payload_offsets, payload_states, stop_name(f.stopped), f.gaps,
                          f.skipped);
}

}  // namespace evring::python
