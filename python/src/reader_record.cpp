// Reader.record: what the reader would hand out, into a recording file, by
// the bindings' record session (lib/bindings/record_session.hpp), the one
// the C ABI's evring_source_record runs. evring.record (python/evring) opens
// a reader registered as a recorder and calls it.
//
// The recording runs without the GIL; about every 50 ms it takes the GIL to
// let Python see signals, so Ctrl-C ends it (the file gets its end record)
// and then raises KeyboardInterrupt.
#include <pybind11/pybind11.h>

#include "bindings/record_session.hpp"
#include "arguments.hpp"
#include "reader.hpp"
#include "without_gil.hpp"

namespace evring::python {
namespace {

const char* ended_text(const Recorded& r) {
    switch (record_end(r)) {
    case RecordEnd::Count: return "count";
    case RecordEnd::Until: return "until";
    case RecordEnd::Stopped: return "stopped";
    case RecordEnd::Failed: return "failed";
    case RecordEnd::End: break;
    }
    return "end";
}

py::dict totals_of(const Recorded& r) {
    py::dict d;
    d["events"] = r.totals.events;
    d["expired"] = r.totals.expired;
    d["lost"] = r.totals.lost;
    d["gaps"] = r.totals.gaps;
    d["files"] = r.totals.files;
    d["last_file"] = r.last_file;
    d["ended"] = ended_text(r);
    return d;
}

// Signals seen with the GIL taken for a moment; false (stop) once one raised.
bool signals_quiet(bool& interrupted) {
    if (detail::finalizing()) return true;  // nothing to tell: the process is ending
    PyGILState_STATE gil = PyGILState_Ensure();
    interrupted = PyErr_CheckSignals() != 0;  // the exception stays set for the caller
    PyGILState_Release(gil);
    return !interrupted;
}

py::dict record(Reader& reader, const py::object& output, const py::object& count, const py::object& until,
                bool compress, const py::object& level, const py::object& rotate_size, const py::object& threads) {
    reader.check_not_busy();
    if (reader.closed()) raise_error("record: the reader is closed");
    bindings::RecordRequest request;
    request.caller = "record";
    request.output = path_of(output, "output");
    if (!count.is_none()) request.count = unsigned_of(count, "count", UINT64_MAX);
    if (!until.is_none()) request.until = py::isinstance<py::int_>(until) ? py::str(until).cast<std::string>()
                                                                          : utf8_of(until, "until");
    request.compress = compress;
    if (!level.is_none()) request.level = static_cast<int>(unsigned_of(level, "level", 19));
    if (!rotate_size.is_none()) request.rotate_bytes = unsigned_of(rotate_size, "rotate_size", UINT64_MAX);
    if (!threads.is_none()) request.threads = static_cast<unsigned>(unsigned_of(threads, "threads", 64));
    bool interrupted = false;
    request.keep_going = [&interrupted] { return signals_quiet(interrupted); };
    Reader::Busy busy(reader);
    auto recorded = without_gil([&] { return bindings::record_handle(reader.handle(), request); });
    if (interrupted) throw py::error_already_set();
    if (!recorded) raise_error(recorded.error().message());
    if (!recorded->written) raise_error(recorded->written.error().message());
    return totals_of(*recorded);
}

}  // namespace

void register_record(py::module_& m) {
    auto reader = py::reinterpret_borrow<py::class_<Reader>>(m.attr("Reader"));
    reader.def("record", &record, py::arg("output"), py::kw_only(), py::arg("count") = py::none(),
             py::arg("until") = py::none(), py::arg("compress") = true, py::arg("level") = py::none(),
             py::arg("rotate_size") = py::none(), py::arg("threads") = py::none(),
             "Writes what this reader would hand out, from where it stands, into a new recording file "
             "`output` (as `evring record`), until `count` events, the `until` position, the end of a file, "
             "or Ctrl-C. Returns the totals: events, expired, lost, gaps, files, last_file, ended.");
}

}  // namespace evring::python
