// Named readers on evring.Reader (docs/python.md, "Named readers"): the
// bindings' named session (lib/bindings/named_session.hpp), the same as the
// C ABI's evring_source_resume_named and evring_source_commit.
#include <pybind11/pybind11.h>

#include <string>

#include "arguments.hpp"
#include "bindings/named_session.hpp"
#include "reader.hpp"

namespace evring::python {
namespace {

// evring.open(named=..., start=..., reset=...) calls it right after the open.
void resume_named(Reader& r, const py::object& name, const py::object& start, bool reset) {
    r.check_not_busy();
    const std::string text = utf8_of(name, "named");
    const std::string first = start.is_none() ? std::string("oldest")
                              : py::isinstance<py::int_>(start) && !py::isinstance<py::bool_>(start)
                                  ? py::str(start).cast<std::string>()
                                  : utf8_of(start, "start");
    evring_source& handle = r.handle();
    if (auto s = bindings::resume_named(handle, text, first, reset, "named"); !s) raise_error(s.error().message());
    // Resume's notices go to `notices` now, not when the first event is read.
    for (const std::string& notice : handle.held_notices) r.note(notice);
    handle.held_notices.clear();
}

void commit(Reader& r) {
    r.check_not_busy();
    if (auto s = bindings::commit_named(r.handle(), "commit"); !s) raise_error(s.error().message());
}

const NamedReader* named_of(Reader& r) { return r.closed() ? nullptr : r.handle().named.get(); }

}  // namespace

void register_named(py::module_& m) {
    auto reader = py::reinterpret_borrow<py::class_<Reader>>(m.attr("Reader"));
    reader.def("_resume_named", &resume_named, py::arg("name"), py::arg("start"), py::arg("reset"))
        .def("commit", &commit,
             "Makes the last event handed out (by iteration, try_next, next, or the last event of "
             "read_batch's batch) this named reader's committed position: the next run resumes after it.")
        .def_property_readonly(
            "named",
            [](Reader& r) -> py::object {
                const NamedReader* n = named_of(r);
                if (n == nullptr) return py::none();
                return py::str(n->name());
            },
            "the durable name (evring.open(named=...)), or None")
        .def_property_readonly(
            "committed",
            [](Reader& r) -> py::object {
                const NamedReader* n = named_of(r);
                if (n == nullptr) return py::none();
                return py::int_(n->last_committed());
            },
            "a named reader's last committed seqno (0: none yet), or None")
        .def_property_readonly(
            "redelivered",
            [](Reader& r) -> std::uint64_t {
                const NamedReader* n = named_of(r);
                return n == nullptr ? 0 : n->redelivered();
            },
            "events this run handed out again that the previous run had been handed after its last commit")
        .def_property_readonly(
            "redelivery",
            [](Reader& r) -> py::object {
                const NamedReader* n = named_of(r);
                if (n == nullptr || n->redelivery_first() > n->redelivery_last()) return py::none();
                return py::make_tuple(n->redelivery_first(), n->redelivery_last());
            },
            "(first, last): the seqnos the previous run was handed after its last commit, which come "
            "again; None when none are known");
}

}  // namespace evring::python
