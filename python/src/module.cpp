// The _evring extension module: evring's Python package, over the same C++
// library as the C ABI (lib/bindings: opening a source with its schema,
// creating a writer with one). pybind11 over the C++ API rather than ctypes
// over the C ABI because the per-event path must be fast: measured here, a
// ctypes call costs about 150 ns and reading a descriptor's fields back
// through ctypes about 560 ns, most of a microsecond per event before any
// Python object exists, while here an Event is built in C++ in one call
// (about 80 ns per event in all) and batches fill numpy arrays directly.
#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "evring/source/follow.hpp"
#include "registry/reader_kinds.hpp"

#include "arguments.hpp"
#include "batch.hpp"
#include "event.hpp"
#include "module.hpp"
#include "reader.hpp"
#include "bindings/source_handle.hpp"
#include "without_gil.hpp"

namespace py = pybind11;

namespace evring::python {
namespace {

// Every argument is checked before anything is opened: a refusal names it (arguments.hpp).
Reader open(const py::object& source, const py::object& schema, const py::object& max_snapshot_size,
            bool register_reader, const py::object& name, const py::object& detail, const py::object& keywords,
            const py::object& level, const py::object& heal, double heal_wait, std::uint32_t kind) {
    const std::string location = path_of(source, "source");
    bindings::OpenSettings settings;
    // heal: True finds the recorder (the registry), a path names the recording (docs/healing.md).
    if (py::isinstance<py::bool_>(heal)) settings.source.heal.find = heal.cast<bool>();
    else if (!heal.is_none()) settings.source.heal.recording = path_of(heal, "heal");
    if (heal_wait > 0)
        settings.source.heal.patience = std::chrono::duration_cast<std::chrono::milliseconds>(
            std::chrono::duration<double>(std::min(heal_wait, 3600.0)));
    if (!schema.is_none()) settings.schema_path = path_of(schema, "schema");
    if (const std::uint64_t most = unsigned_of(max_snapshot_size, "max_snapshot_size", UINT64_MAX); most != 0)
        settings.source.max_snapshot_size = most;
    const std::string reader_name = utf8_of(name, "name");
    const std::string reader_detail = utf8_of(detail, "detail");
    bindings::InterestRequest asked;
    if (!keywords.is_none()) asked.keywords = utf8_of(keywords, "keywords");
    if (!level.is_none()) asked.level = static_cast<unsigned>(unsigned_of(level, "level", kMaxInterestLevel));
    auto handle = bindings::open_source_handle(location, settings);
    if (!handle) raise_error(handle.error().message());
    auto interest = bindings::interest_for(**handle, asked, register_reader);
    if (!interest) raise_error(interest.error().message());
    Reader reader(std::move(*handle));
    if (register_reader) reader.register_as({reader_name, kind, reader_detail}, *interest);
    // A file (snapshot, recording) starts at its oldest event, as the CLI's
    // stats, digest and record read one; a live ring or a stream at its newest.
    if (reads_a_file(reader)) reader.seek(py::str("oldest"));
    return reader;
}

// True once `location` names something, false after `seconds` without it
// (follow.hpp's wait_for_name), the GIL released meanwhile. evring.open's
// wait= calls it in short slices so that Ctrl-C is seen between them.
bool wait_for_name(const py::object& source, double seconds) {
    const std::string location = path_of(source, "source");
    const auto timeout = std::chrono::duration_cast<std::chrono::nanoseconds>(
        std::chrono::duration<double>(std::max(seconds, 0.0)));
    return without_gil([&] { return evring::wait_for_name(location, FollowOptions{}, nullptr, timeout); });
}

}  // namespace
}  // namespace evring::python

PYBIND11_MODULE(_evring, m) {
    using namespace evring::python;
    m.doc() = "evring: shared-memory event rings (the C++ library's Python binding)";
    py::object error = py::reinterpret_steal<py::object>(
        PyErr_NewExceptionWithDoc("evring.Error", "An evring operation failed; the message says why.",
                                  PyExc_RuntimeError, nullptr));
    m.attr("Error") = error;
    set_error_type(error);
    register_event(m);
    register_batch(m);
    register_reader(m);
    register_named(m);
    register_blocks(m);
    register_record(m);
    register_wait(m);
    register_writer(m);
    m.def("open", &open, py::arg("source"), py::arg("schema") = py::none(), py::arg("max_snapshot_size") = 0,
          py::arg("register") = true, py::arg("name") = "python", py::arg("detail") = "",
          py::arg("keywords") = py::none(), py::arg("level") = py::none(), py::arg("heal") = py::none(),
          py::arg("heal_wait") = 0.0, py::arg("kind") = evring::reader_kinds::kPython,
          "Opens a ring (name or path), a snapshot or a recording, as the evring CLI does.");
    m.def("_wait_for_name", &wait_for_name, py::arg("location"), py::arg("seconds"),
          "Waits up to `seconds` for `location` to name a ring; True once it does.");
    m.attr("__version__") = EVRING_VERSION_STRING;
    // The registry's kind of a recorder (evring.record): lapped readers heal from what it lists.
    m.attr("_KIND_RECORD") = evring::reader_kinds::kRecord;
    // Whether evring.open reads "nats://HOST[:PORT]/STREAM" (built with libnats).
    m.attr("READS_STREAMS") = static_cast<bool>(EVRING_PYTHON_STREAMS);
}
