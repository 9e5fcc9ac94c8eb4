// evring.Reader and its iterators (reader.hpp).
#include "reader.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "evring/ring/ring.hpp"
#include "source/ring_source.hpp"
#include "evring/schema/schema_render.hpp"
#include "query/where.hpp"
#include "arguments.hpp"
#include "bindings/error_text.hpp"
#include "bindings/source_handle.hpp"
#include "without_gil.hpp"

namespace evring::python {
namespace {

// evring.Error; a strong reference never released (the interpreter outlives its use).
PyObject* g_error_type = nullptr;

constexpr auto kMaxSleep = std::chrono::milliseconds(100);

// One pass over a reader: replay (ends when nothing more is ready now) or
// follow (waits for more; ends at the source's end or after `idle_timeout`
// with no event). A plain CPython type with tp_iternext, like Event: the
// per-event call must not go through pybind11's dispatcher.
struct IteratorObject {
    PyObject_HEAD
    PyObject* reader_object;  // the Reader (owned), which keeps `reader` alive
    Reader* reader;
    bool follow;
    bool done;
    bool has_timeout;
    std::int64_t idle_timeout_nanos;
};

PyTypeObject* g_iterator_type = nullptr;

// Sleeps on the doorbell without the GIL; false once the idle timeout passed.
bool wait_for_more(IteratorObject* it, EventSource& source, std::chrono::steady_clock::time_point& idle_since) {
    const auto now = std::chrono::steady_clock::now();
    if (idle_since == std::chrono::steady_clock::time_point{}) idle_since = now;
    std::chrono::nanoseconds slice = kMaxSleep;
    if (it->has_timeout) {
        const auto left = std::chrono::nanoseconds(it->idle_timeout_nanos) - (now - idle_since);
        if (left <= std::chrono::nanoseconds::zero()) return false;
        slice = std::min(slice, std::chrono::duration_cast<std::chrono::nanoseconds>(left));
    }
    {
        Reader::Busy busy(*it->reader);
        without_gil([&] { source.wait(slice); });
    }
    if (PyErr_CheckSignals() != 0) throw py::error_already_set();
    return true;
}

}  // namespace

PyObject* make_event(Reader& reader, const SourceEvent& e) {
    if (e.payload_state != PayloadState::Ok) return new_event(e.descriptor, Py_None, reader.context(), e.member);
    PyObject* payload = PyBytes_FromStringAndSize(reinterpret_cast<const char*>(e.payload.data()),
                                                  static_cast<Py_ssize_t>(e.payload.size()));
    if (payload == nullptr) return nullptr;
    PyObject* event = new_event(e.descriptor, payload, reader.context(), e.member);
    Py_DECREF(payload);
    return event;
}

namespace {

// nullptr without an error set: the iteration is over.
PyObject* next_event(IteratorObject* it) {
    if (it->done || it->reader->closed()) return nullptr;
    it->reader->check_not_busy();
    EventSource& source = it->reader->source();
    auto idle_since = std::chrono::steady_clock::time_point{};
    SourceItem item;
    for (;;) {
        // The session passes over what Reader.set_where drops and keeps the registry told.
        switch (bindings::next_item(it->reader->handle(), item, PayloadRead::Copy)) {
        case SourceStep::Event: return make_event(*it->reader, item.event);
        case SourceStep::Gap: break;  // counted by the source
        case SourceStep::Notice: it->reader->note(item.notice); break;
        case SourceStep::NotReady:
            if (it->follow && wait_for_more(it, source, idle_since)) break;
            it->done = true;
            return nullptr;
        case SourceStep::End: it->done = true; return nullptr;
        case SourceStep::Failed: it->done = true; raise_error(source.error().message());
        }
    }
}

PyObject* iterator_next(PyObject* self) {
    try {
        return next_event(reinterpret_cast<IteratorObject*>(self));
    } catch (py::error_already_set& e) {
        e.restore();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    }
    return nullptr;
}

void iterator_dealloc(PyObject* self) {
    Py_XDECREF(reinterpret_cast<IteratorObject*>(self)->reader_object);
    PyTypeObject* type = Py_TYPE(self);
    type->tp_free(self);
    Py_DECREF(type);
}

PyType_Slot iterator_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(iterator_dealloc)},
    {Py_tp_iter, reinterpret_cast<void*>(PyObject_SelfIter)},
    {Py_tp_iternext, reinterpret_cast<void*>(iterator_next)},
    {Py_tp_doc, const_cast<char*>("Events of a Reader (Reader.replay, Reader.follow).")},
    {0, nullptr},
};

PyType_Spec iterator_spec = {"evring.EventIterator", sizeof(IteratorObject), 0, Py_TPFLAGS_DEFAULT, iterator_slots};

py::object new_iterator(const py::object& reader_object, bool follow,
                         std::optional<std::chrono::nanoseconds> idle_timeout) {
    auto* it = PyObject_New(IteratorObject, g_iterator_type);
    if (it == nullptr) throw py::error_already_set();
    it->reader_object = reader_object.inc_ref().ptr();
    it->reader = &reader_object.cast<Reader&>();
    it->follow = follow;
    it->done = false;
    it->has_timeout = idle_timeout.has_value();
    it->idle_timeout_nanos = idle_timeout ? idle_timeout->count() : 0;
    return py::reinterpret_steal<py::object>(reinterpret_cast<PyObject*>(it));
}

std::optional<std::chrono::nanoseconds> timeout_of(const py::object& timeout) {
    if (timeout.is_none()) return std::nullopt;
    const double seconds = seconds_of(timeout, "timeout");
    // At most 2^63 ns (292 years): a longer one is None.
    if (seconds >= 9.2e9) return std::nullopt;
    return std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9));
}

py::dict counters_of(Reader& r) {
    const bindings::SessionCounters session = bindings::counters_of(r.handle());
    const SourceCounters& c = session.source;
    py::dict d;
    d["events"] = c.events;
    d["lost"] = c.lost;
    d["gaps"] = c.gaps;
    d["abandoned"] = c.abandoned;
    d["never_committed"] = c.never_committed;
    d["damaged"] = c.damaged;
    d["replaced"] = c.replaced;
    d["damage_reports"] = c.damage_reports;
    d["records_lost_to_damage"] = c.records_lost_to_damage;
    d["foreign"] = c.foreign;
    d["late_events"] = session.late_events;
    d["healed"] = session.source.healed;
    return d;
}

}  // namespace

void set_error_type(py::object type) { g_error_type = type.release().ptr(); }

void raise_error(const std::string& message) {
    // Escaped and bounded (error_text.hpp): a message may echo anything a caller gave.
    PyErr_SetString(g_error_type, bindings::error_text(message).c_str());
    throw py::error_already_set();
}

Reader::Reader(std::unique_ptr<evring_source> handle) : handle_(std::move(handle)) {
    context_ = make_context_capsule(DecodeContext{handle_->schema.schema});
    if (!handle_->schema.warning.empty()) note(handle_->schema.warning);
}

void Reader::register_as(const ReaderInfo& info, std::uint64_t interest) {
    // Kept in `notices`: why it could not register, or a registry it replaced.
    if (std::string told = bindings::register_reader(handle(), info, interest); !told.empty()) note(told);
}

py::object Reader::schema_dict() {
    if (!schema_dict_) {
        const auto& schema = handle().schema.schema;
        schema_dict_ = schema ? py::module_::import("json").attr("loads")(schema_to_json(*schema)) : py::none();
    }
    return schema_dict_;
}

void Reader::check_not_busy() const {
    if (busy_ > 0) raise_error("the reader is in use by another thread (follow or read_batch): use one reader per thread");
}

void Reader::close() {
    check_not_busy();
    handle_.reset();  // frees the registry slot, then closes the source
}

evring_source& Reader::handle() {
    if (!handle_) raise_error("the reader is closed");
    return *handle_;
}

EventSource& Reader::source() { return *handle().source; }

void Reader::seek(const py::object& start) {
    if (start.is_none()) return;
    if (named())
        raise_error(fmt::format("start: reader '{}' resumes after its committed position; give the first run's "
                                "start to evring.open(named=..., start=...), or reset=True to start over",
                                handle_->named->name()));
    // An int is spelled out (any size: the resolver refuses what no ring reaches); everything
    // else must be a str, resolved by the one position resolver (position.hpp) as the CLI's --from.
    if (!py::isinstance<py::str>(start) && (!py::isinstance<py::int_>(start) || py::isinstance<py::bool_>(start)))
        raise_error(fmt::format("bad start {}: give \"oldest\", \"latest\", a seqno, \"-N\" or a time",
                                py::repr(start).cast<std::string>()));
    const std::string position = py::isinstance<py::int_>(start) ? py::str(start).cast<std::string>()
                                                                 : utf8_of(start, "start");
    if (auto s = bindings::seek_source(handle(), position, "start"); !s) raise_error(s.error().message());
    if (!handle_->notice.empty()) note(handle_->notice);
}

namespace {

// replay() and follow()'s default starts: these very objects, told apart
// from a caller's equal str by identity, so that a named reader, which
// starts where its position says, stays there unless a start is given.
// Made by PyUnicode_FromString, never interned. Kept for the module's life.
PyObject* g_default_oldest = nullptr;
PyObject* g_default_latest = nullptr;

const py::object& start_or_resumed(Reader& r, const py::object& start, const py::object& none) {
    const bool defaulted = start.ptr() == g_default_oldest || start.ptr() == g_default_latest;
    return defaulted && r.named() ? none : start;
}

// follow()'s default start: a file is followed from its oldest event.
py::object follow_start(Reader& r, const py::object& start) {
    if (start.ptr() == g_default_latest && !r.named() && reads_a_file(r)) return py::str("oldest");
    return start;
}

}  // namespace

bool reads_a_file(Reader& reader) {
    if (reader.closed()) return false;
    const SourceKind kind = reader.source().kind();
    return kind == SourceKind::Snapshot || kind == SourceKind::Recording ||
           (kind == SourceKind::RingSet && !reader.source().live());
}

void register_reader(py::module_& m) {
    g_default_oldest = PyUnicode_FromString("oldest");
    g_default_latest = PyUnicode_FromString("latest");
    if (g_default_oldest == nullptr || g_default_latest == nullptr) throw py::error_already_set();
    const py::object default_oldest = py::reinterpret_borrow<py::object>(g_default_oldest);
    const py::object default_latest = py::reinterpret_borrow<py::object>(g_default_latest);
    PyObject* type = PyType_FromSpec(&iterator_spec);
    if (type == nullptr) throw py::error_already_set();
    g_iterator_type = reinterpret_cast<PyTypeObject*>(type);  // kept for the module's life
    m.attr("EventIterator") = py::reinterpret_borrow<py::object>(type);

    py::class_<Reader>(m, "Reader", "Events of a ring, snapshot or recording (evring.open).")
        .def(
            "replay",
            [](py::object self, py::object start) {
                Reader& r = self.cast<Reader&>();
                r.seek(start_or_resumed(r, start, py::none()));
                return new_iterator(self, false, std::nullopt);
            },
            py::arg("start") = default_oldest,
            "Events from `start` (\"oldest\", \"latest\", a seqno, \"-N\", a time; None: where the "
            "reader is) to the newest one there now: the end of a snapshot or recording.")
        .def(
            "follow",
            [](py::object self, py::object start, py::object timeout) {
                auto idle = timeout_of(timeout);
                Reader& r = self.cast<Reader&>();
                r.seek(start_or_resumed(r, follow_start(r, start), py::none()));
                return new_iterator(self, true, idle);
            },
            py::arg("start") = default_latest, py::arg("timeout") = py::none(),
            "Events from `start`, waiting for new ones (the GIL is released while waiting) until the "
            "source ends (a ring's writer exited) or, with `timeout`, no event came for that many seconds.")
        .def(
            "read_batch",
            [](Reader& r, const py::object& max_events, bool payloads) {
                return read_batch(r, unsigned_of(max_events, "max_events", PY_SSIZE_T_MAX), payloads);
            },
            py::arg("max_events"), py::arg("payloads") = true,
             "Up to `max_events` events available now, as an evring.Batch: descriptors as a numpy array "
             "(DESCRIPTOR_DTYPE), each event's ring set member, the payloads as one byte array with offsets. "
             "No Python object per event.")
        .def("seek", &Reader::seek, py::arg("start"))
        .def(
            "set_where",
            [](Reader& r, py::object expression) {
                r.check_not_busy();
                const std::string text = expression.is_none() ? std::string() : utf8_of(expression, "expression");
                if (auto set = bindings::set_where(r.handle(), text, "set_where"); !set) raise_error(set.error().message());
            },
            py::arg("expression"),
            "From now on replay() and follow() hand out only the events this filter expression keeps "
            "(docs/cli.md, \"Filter expressions\"); None removes it. read_batch refuses while one is set.")
        .def_property_readonly("lost", [](Reader& r) { return r.source().counters().lost; })
        .def_property_readonly("gaps", [](Reader& r) { return r.source().counters().gaps; })
        .def_property_readonly("counters", &counters_of)
        .def_property_readonly("notices", &Reader::notices)
        .def_property_readonly("next_seqno", [](Reader& r) { return r.source().next_seqno(); })
        .def_property_readonly("kind", [](Reader& r) { return std::string(to_string(r.source().kind())); })
        .def_property_readonly("path", [](Reader& r) { return r.source().identity().path; })
        .def_property_readonly("live", [](Reader& r) { return r.source().live(); })
        .def_property_readonly("registered", &Reader::registered,
                               "whether the reader is listed in the ring's reader registry (evring readers)")
        .def_property_readonly("content_type", [](Reader& r) { return r.source().identity().content_type; })
        .def_property_readonly("schema_hash", [](Reader& r) { return hex_string(r.source().identity().schema_hash); })
        .def_property_readonly("schema", &Reader::schema_dict, "the schema as a dict (schema_to_json), or None")
        .def_property_readonly("member_ids", [](Reader& r) { return r.source().identity().members; },
                               "whether events carry ring set member ids (a ring set, or a recording of one)")
        .def_property_readonly("schema_origin", [](Reader& r) { return r.handle().schema.origin; })
        .def("close", &Reader::close)
        .def("__enter__", [](py::object self) { return self; })
        .def("__exit__", [](Reader& r, py::args) { r.close(); });
}

}  // namespace evring::python
