// Reader.read_batch: descriptors as a numpy structured array, each event's
// member, payloads as one byte array plus offsets (reader.hpp, batch.hpp).
//
// Ring and snapshot sources go through the session's next_descriptors
// (EventSource::next_batch: descriptors only, no virtual call per event) and
// copy each payload with copy_payload; recordings, whose payloads come only
// with next(), and ring sets, merged event by event, go through next_item.
// No Python object is made per event either way, and the GIL is released
// while events are read, for every kind of source.
#include <pybind11/numpy.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "batch.hpp"
#include "evring/ring/payload.hpp"
#include "reader.hpp"
#include "without_gil.hpp"

namespace evring::python {
namespace {

constexpr std::size_t kStaging = 1024;
constexpr std::size_t kFirstRoom = std::size_t{1} << 16;

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
Filled fill_from_ring(Reader& reader, DescriptorArray& out) {
    Filled f;
    evring_source& handle = reader.handle();
    std::vector<EventDescriptor> staging(std::min(out.room(), kStaging));
    while (out.make_room(f.events)) {
        const std::size_t n = std::min(out.room() - f.events, staging.size());
        Batch b;
        {
            Reader::Busy busy(reader);
            b = without_gil([&] { return bindings::next_descriptors(handle, {staging.data(), n}, {}); });
        }
        std::memcpy(out.data() + f.events * sizeof(EventDescriptor), staging.data(),
                    b.events * sizeof(EventDescriptor));
        f.events += b.events;
        f.gaps += b.gaps;
        f.skipped += b.skipped;
        f.stopped = b.stopped;
        if (b.stopped == SourceStep::Notice) {
            SourceItem item;
            if (bindings::next_item(handle, item, PayloadRead::None) == SourceStep::Notice) reader.note(item.notice);
            continue;
        }
        if (b.stopped != SourceStep::Event) break;
    }
    return f;
}

// What an event-by-event batch gathers besides descriptors: plain C++
// containers, filled without the GIL.
struct ByEvent {
    std::vector<std::uint32_t> members;
    std::vector<std::uint8_t> states;
    std::vector<std::uint64_t> offsets{0};
    std::vector<std::uint8_t> data;  // the payloads, handed to numpy without a copy
    std::vector<std::string> notices;
};

// Up to out.size() events into `out`, their members and payloads into `by`.
// Runs without the GIL: touches no Python object.
std::size_t read_run(evring_source& handle, std::span<EventDescriptor> out, bool payloads, ByEvent& by, Filled& f) {
    SourceItem item;
    std::size_t got = 0;
    while (got < out.size()) {
        const SourceStep step = bindings::next_item(handle, item, payloads ? PayloadRead::Copy : PayloadRead::None);
        if (step == SourceStep::Event) {
            out[got++] = item.event.descriptor;
            by.members.push_back(item.event.member);
            if (payloads) {
                const bool ok = item.event.payload_state == PayloadState::Ok;
                by.states.push_back(ok ? 1 : item.event.payload_state == PayloadState::Expired ? 2 : 3);
                if (ok) by.data.insert(by.data.end(), reinterpret_cast<const std::uint8_t*>(item.event.payload.data()),
                                       reinterpret_cast<const std::uint8_t*>(item.event.payload.data()) +
                                           item.event.payload.size());
                by.offsets.push_back(by.data.size());
            }
        } else if (step == SourceStep::Gap) {
            ++f.gaps;
            f.skipped += item.gap.count;
        } else if (step == SourceStep::Notice) {
            by.notices.emplace_back(item.notice);
        } else {
            f.stopped = step;
            return got;
        }
    }
    f.stopped = SourceStep::Event;
    return got;
}

// Event by event (recordings, ring sets), members and payloads with them, in
// runs of up to kStaging events read with the GIL released, as a ring's
// batch is. Each payload is copied once out of the source's own copy (a
// set's member source copies it under its SIGBUS guard, a recording's comes
// with next()), into one buffer that numpy then owns.
Filled fill_by_event(Reader& reader, DescriptorArray& out, bool payloads, ByEvent& by) {
    Filled f;
    evring_source& handle = reader.handle();
    std::vector<EventDescriptor> staging(std::min(out.room(), kStaging));
    while (out.make_room(f.events)) {
        const std::size_t n = std::min(out.room() - f.events, staging.size());
        std::size_t got = 0;
        {
            Reader::Busy busy(reader);
            got = without_gil([&] { return read_run(handle, {staging.data(), n}, payloads, by, f); });
        }
        std::memcpy(out.data() + f.events * sizeof(EventDescriptor), staging.data(), got * sizeof(EventDescriptor));
        f.events += got;
        for (const std::string& notice : by.notices) reader.note(notice);
        by.notices.clear();
        if (f.stopped != SourceStep::Event) break;
    }
    return f;
}

// A numpy array over `bytes` without copying them: the array owns the vector.
py::array_t<std::uint8_t> numpy_owning(std::vector<std::uint8_t>&& bytes) {
    auto* owned = new std::vector<std::uint8_t>(std::move(bytes));
    py::capsule free_when_done(owned, [](void* p) { delete static_cast<std::vector<std::uint8_t>*>(p); });
    return py::array_t<std::uint8_t>(static_cast<py::ssize_t>(owned->size()), owned->data(), free_when_done);
}

template <class T>
py::array_t<T> numpy_copy(const std::vector<T>& values) {
    return py::array_t<T>(static_cast<py::ssize_t>(values.size()), values.data());
}

}  // namespace

py::object read_batch(Reader& reader, std::size_t max_events, bool payloads) {
    EventSource& source = reader.source();
    reader.check_not_busy();
    if (reader.handle().where) raise_error("read_batch: a where filter is set (set_where); iterate instead");
    const MappedRing* mapped = source.ring();
    // A ring holds at most its capacity of unread events when the batch starts.
    DescriptorArray descriptors(max_events, mapped != nullptr ? std::min<std::size_t>(mapped->descriptor_mask() + 1, kFirstRoom)
                                                              : kFirstRoom);
    std::vector<std::uint8_t> states;
    std::vector<std::uint64_t> offsets{0};
    ByEvent by;                           // event by event only; a ring's members are all 0 (numpy.zeros)
    py::array_t<std::uint8_t> ring_data;  // a ring's payloads, copied straight in
    Filled f;
    if (const MappedRing* ring = mapped) {
        f = fill_from_ring(reader, descriptors);
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
            auto* dst = ring_data.mutable_data();
            Reader::Busy busy(reader);
            without_gil([&] {
                std::uint64_t at = 0;
                for (std::size_t i = 0; i < f.events; ++i) {
                    EventDescriptor d;
                    std::memcpy(&d, out + i * sizeof d, sizeof d);
                    const PayloadResult r = copy_payload(*ring, d, dst + at, total - at);
                    states[i] = r == PayloadResult::Ok ? 1 : r == PayloadResult::Expired ? 2 : 3;
                    if (r == PayloadResult::Ok) at += d.payload_size;
                    offsets[i + 1] = at;
                }
            });
        }
    } else {
        f = fill_by_event(reader, descriptors, payloads, by);
    }
    if (f.stopped == SourceStep::Failed) raise_error(source.error().message());
    BatchData b;
    b.events = descriptors.array()[py::slice(0, static_cast<py::ssize_t>(f.events), 1)];
    b.members = mapped != nullptr ? py::module_::import("numpy").attr("zeros")(f.events, "uint32") : numpy_copy(by.members);
    b.stopped = stop_name(f.stopped);
    b.gaps = f.gaps;
    b.skipped = f.skipped;
    b.schema = reader.schema_dict();
    b.context = py::reinterpret_borrow<py::object>(reader.context());
    b.member_ids = source.identity().members;
    b.payload_data = b.payload_offsets = b.payload_states = py::none();
    if (payloads) {
        if (mapped == nullptr) {
            b.payload_data = numpy_owning(std::move(by.data));
            b.payload_offsets = numpy_copy(by.offsets);
            b.payload_states = numpy_copy(by.states);
        } else if (offsets.back() < static_cast<std::uint64_t>(ring_data.size())) {
            b.payload_data = ring_data[py::slice(0, static_cast<py::ssize_t>(offsets.back()), 1)];  // expired ones left room
        } else {
            b.payload_data = ring_data;
        }
        if (mapped != nullptr) {
            b.payload_offsets = numpy_copy(offsets);
            b.payload_states = numpy_copy(states);
        }
    }
    return py::cast(std::move(b));
}

}  // namespace evring::python
