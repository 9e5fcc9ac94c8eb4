// Event loops from Python (docs/event-loops.md): Reader.fileno() and
// Reader.try_next() for select, poll and selectors; `await reader.next()` and
// `async for event in reader` for asyncio (evring/_aio.py, over fileno); and
// evring.WaitSet, one wait over many readers. The reader session's
// descriptor and wait sets are the C ABI's (bindings/wait_handle.hpp).
#include <pybind11/pybind11.h>

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <memory>
#include <vector>

#include "bindings/wait_handle.hpp"
#include "reader.hpp"

namespace evring::python {
namespace {

// How long a wait blocks with the GIL released before it looks for signals
// (Ctrl-C), as follow() does.
constexpr auto kSlice = std::chrono::milliseconds(100);

// The next event if one is ready now, else None: then fileno() sleeps until
// one may be (the session arms it when it finds nothing), or the source
// ended (`ended` says which).
py::object try_next(Reader& reader) {
    reader.check_not_busy();
    evring_source& handle = reader.handle();
    reader.set_ended(false);
    SourceItem item;
    for (;;) {
        switch (bindings::next_item(handle, item, PayloadRead::Copy)) {
        case SourceStep::Event: {
            PyObject* event = make_event(reader, item.event);
            if (event == nullptr) throw py::error_already_set();
            return py::reinterpret_steal<py::object>(event);
        }
        case SourceStep::Gap: break;  // counted by the source
        case SourceStep::Notice: reader.note(item.notice); break;
        case SourceStep::NotReady: return py::none();
        case SourceStep::End: reader.set_ended(true); return py::none();
        case SourceStep::Failed: raise_error(handle.source->error().message());
        }
    }
}

int fileno_of(Reader& reader) {
    reader.check_not_busy();
    auto fd = bindings::source_descriptor(reader.handle());
    if (!fd) raise_error(fd.error().message());
    return *fd;
}

// None: no limit.
std::chrono::nanoseconds timeout_of(const py::object& timeout) {
    if (timeout.is_none()) return std::chrono::nanoseconds::max();
    const double seconds = timeout.cast<double>();
    if (!(seconds >= 0) || !std::isfinite(seconds))
        raise_error(fmt::format("bad timeout {}: give seconds, 0 or more, or None to wait forever", seconds));
    if (seconds >= 9.2e9) return std::chrono::nanoseconds::max();  // past 2^63 ns
    return std::chrono::nanoseconds(static_cast<std::int64_t>(seconds * 1e9));
}

// evring.WaitSet: the readers' handles in a bindings wait set, and the Reader
// objects themselves (kept alive while members, handed back by wait()).
class WaitSetObject {
public:
    WaitSetObject() : set_(std::make_unique<evring_waitset>()) {}
    ~WaitSetObject() { close(); }

    void add(const py::object& reader_object) {
        Reader& reader = reader_object.cast<Reader&>();
        reader.check_not_busy();
        if (auto added = bindings::waitset_add(open_set(), reader.handle()); !added)
            raise_error(added.error().message());
        readers_.push_back(reader_object);
    }

    void remove(const py::object& reader_object) {
        Reader& reader = reader_object.cast<Reader&>();
        reader.check_not_busy();
        if (!bindings::waitset_remove(open_set(), reader.handle())) raise_error("the reader is not in this wait set");
        forget(reader);
    }

    py::list wait(const py::object& timeout_object) {
        evring_waitset& set = open_set();
        forget_closed();
        const auto timeout = timeout_of(timeout_object);
        const auto start = std::chrono::steady_clock::now();
        for (;;) {
            const auto waited = std::chrono::steady_clock::now() - start;
            const auto left = timeout == std::chrono::nanoseconds::max() ? timeout : timeout - waited;
            const auto slice = std::max(std::chrono::nanoseconds::zero(),
                                        std::min<std::chrono::nanoseconds>(left, kSlice));
            std::vector<std::unique_ptr<Reader::Busy>> busy;  // no reader closes under the wait
            for (const py::object& r : readers_) busy.push_back(std::make_unique<Reader::Busy>(r.cast<Reader&>()));
            const std::vector<evring_source*>* found = nullptr;
            {
                py::gil_scoped_release unlocked;
                found = &bindings::waitset_wait(set, slice);
            }
            busy.clear();
            if (!found->empty() || left <= kSlice) return readers_of(*found);
            if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        }
    }

    int fileno() {
        auto fd = open_set().set.fd();
        if (!fd) raise_error(fd.error().message());
        return *fd;
    }

    std::size_t size() {
        forget_closed();
        return readers_.size();
    }

    void close() {
        if (!set_) return;
        bindings::waitset_detach(*set_);
        set_.reset();  // stops its thread, closes its descriptor
        readers_.clear();
    }

private:
    evring_waitset& open_set() {
        if (!set_) raise_error("the wait set is closed");
        return *set_;
    }
    // Readers closed since they were added have left the set already.
    void forget_closed() {
        std::erase_if(readers_, [](const py::object& r) { return r.cast<Reader&>().closed(); });
    }
    void forget(Reader& reader) {
        std::erase_if(readers_, [&](const py::object& r) { return &r.cast<Reader&>() == &reader; });
    }
    py::list readers_of(const std::vector<evring_source*>& handles) {
        py::list out;
        for (evring_source* handle : handles)
            for (const py::object& r : readers_) {
                Reader& reader = r.cast<Reader&>();
                if (!reader.closed() && &reader.handle() == handle) out.append(r);
            }
        return out;
    }

    std::unique_ptr<evring_waitset> set_;
    std::vector<py::object> readers_;
};

py::object aio(const char* function) { return py::module_::import("evring._aio").attr(function); }

}  // namespace

void register_wait(py::module_& m) {
    auto reader = py::reinterpret_borrow<py::class_<Reader>>(m.attr("Reader"));
    reader
        .def("fileno", &fileno_of,
             "A descriptor that is readable while try_next() may have something (select, poll, "
             "selectors, loop.add_reader); owned by the reader, closed with it.")
        .def("try_next", &try_next,
             "The next event if one is ready now; None when none is (fileno() becomes readable when "
             "one may be) or the source ended (then `ended` is True).")
        .def_property_readonly("ended", &Reader::ended, "whether the last try_next() met the source's end")
        .def(
            "next", [](const py::object& self) { return aio("next_event")(self); },
            "A coroutine (asyncio): the next event, waiting for it without blocking the loop; None once "
            "the source ended.")
        .def("__aiter__", [](const py::object& self) { return self; })
        .def("__anext__", [](const py::object& self) { return aio("anext")(self); });

    py::class_<WaitSetObject>(m, "WaitSet", "One wait over many readers (rings, ring sets, streams).")
        .def(py::init<>())
        .def("add", &WaitSetObject::add, py::arg("reader"))
        .def("remove", &WaitSetObject::remove, py::arg("reader"))
        .def("wait", &WaitSetObject::wait, py::arg("timeout") = py::none(),
             "The readers that are ready (try_next has something for them), waiting up to `timeout` "
             "seconds (None: no limit; 0: only look) with the GIL released; [] when none was in time.")
        .def("fileno", &WaitSetObject::fileno,
             "A descriptor readable while a reader may be ready; call wait(0) when it is.")
        .def("close", &WaitSetObject::close)
        .def("__len__", &WaitSetObject::size)
        .def("__enter__", [](const py::object& self) { return self; })
        .def("__exit__", [](WaitSetObject& s, const py::args&) { s.close(); });
}

}  // namespace evring::python
