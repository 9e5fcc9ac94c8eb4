// python/src/reader.hpp — evring.Reader: any source, iterated or in batches.
//
// replay() and follow() yield Event objects in sequence order; gaps are not
// yielded but counted exactly (lost, gaps, counters: the C++ source's
// counters, equal to what the C++ iterator counts), notices are kept in
// `notices`. follow() sleeps on the ring's doorbell with the GIL released,
// in slices of at most 100 ms so Ctrl-C (KeyboardInterrupt) is seen.
// read_batch() hands out descriptors as a numpy structured array and
// payloads as one byte array plus offsets: no Python object per event.
//
// A Reader is the bindings' reader session (lib/bindings/reader_session.hpp),
// the same as a C reader's: a reader of a live ring registers in the ring's
// reader registry (docs/operations.md) unless opened with register=False, so
// `evring readers` shows it; it publishes its position every so many events
// and when it finds nothing new, and frees its slot when closed (or
// collected).
//
// Thread safety: a Reader is used by one thread at a time (the GIL, and
// the source's own contract: event_source.hpp).
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>

#include "event.hpp"
#include "registry/reader_registration.hpp"
#include "bindings/handles.hpp"
#include "bindings/reader_session.hpp"

namespace evring::python {

namespace py = pybind11;

class Reader {
public:
    explicit Reader(std::unique_ptr<evring_source> handle);
    // Announces the reader when its source is a live ring (see above).
    void register_as(const ReaderInfo& info, std::uint64_t interest = kInterestEverything);
    bool registered() const noexcept { return handle_ && bindings::registered(*handle_); }
    // The schema as a dict (schema_to_json), or None; made once.
    py::object schema_dict();

    EventSource& source();
    // The capsule every event of this reader references (event.hpp).
    PyObject* context() const { return context_.ptr(); }
    evring_source& handle();
    // Positions the source ("oldest", "latest", a seqno, "-N", a time); None: stay.
    void seek(const py::object& start);
    void note(std::string_view notice) { notices_.append(py::str(notice.data(), notice.size())); }
    // Refused while another thread waits in follow() or reads a batch with
    // the GIL released: the source must outlive that call.
    void close();
    // Raises evring.Error when another thread is inside a call on this reader
    // (a source is used by one thread at a time: event_source.hpp).
    void check_not_busy() const;
    // Held around every stretch that runs without the GIL.
    class Busy {
    public:
        explicit Busy(Reader& r) : reader_(r) { ++reader_.busy_; }
        ~Busy() { --reader_.busy_; }
        Busy(const Busy&) = delete;
        Busy& operator=(const Busy&) = delete;

    private:
        Reader& reader_;
    };
    bool closed() const { return !handle_; }
    // A named reader (evring.open(named=...)): it starts where its position says.
    bool named() const noexcept { return handle_ && handle_->named; }
    // Whether the last try_next() met the source's end (wait.cpp).
    bool ended() const noexcept { return ended_; }
    void set_ended(bool ended) noexcept { ended_ = ended; }
    py::list notices() const { return notices_; }

private:
    std::unique_ptr<evring_source> handle_;
    py::object context_;
    py::list notices_;
    py::object schema_dict_;  // null until asked for
    int busy_ = 0;  // changed only under the GIL
    bool ended_ = false;
};

// A snapshot or a recording (a set's too): nothing writes it while it is read.
bool reads_a_file(Reader& reader);

// The Python error evring.Error, raised with the library's message.
[[noreturn]] void raise_error(const std::string& message);
void set_error_type(py::object type);

void register_reader(py::module_& m);
// Reader.commit, named, committed, redelivered, redelivery (reader_named.cpp).
void register_named(py::module_& m);
// Reader.blocks: whole span instances (reader_blocks.cpp).
void register_blocks(py::module_& m);
// Reader.record: into a recording file (reader_record.cpp).
void register_record(py::module_& m);
// An evring.Event of the reader's event: its payload copied when read, else None.
PyObject* make_event(Reader& reader, const SourceEvent& e);
// Reader.fileno, try_next, next and async iteration; evring.WaitSet (wait.cpp).
void register_wait(py::module_& m);
// Reader.read_batch and evring.Batch (reader_batch.cpp).
py::object read_batch(Reader& reader, std::size_t max_events, bool payloads);
void register_batch(py::module_& m);

}  // namespace evring::python
