// Reader.blocks(span="block", stage=None, start="oldest"): whole span
// instances (evring/query/span_reader.hpp), as `evring watch --assemble` prints
// them, one dict each (docs/python.md, "Assembled blocks").
//
// The iterator owns its SpanReader; each next() reads events (the reader's
// session: set_where and the registry as for replay) until an instance is
// ready, and ends at the newest event there now, as replay() does (what is
// still open then is counted in the iterator's `counts`, not handed out).
#include <optional>

#include "event.hpp"
#include "evring/query/span_reader.hpp"
#include "reader.hpp"

namespace evring::python {
namespace {

py::object event_of(Reader& reader, const AssembledEvent& e) {
    SourceEvent view;
    view.descriptor = e.descriptor;
    view.member = e.member;
    view.payload_state = e.payload_state;
    view.payload = e.payload;
    PyObject* event = make_event(reader, view);
    if (event == nullptr) throw py::error_already_set();
    return py::reinterpret_steal<py::object>(event);
}

py::dict dict_of(Reader& reader, const AssembledSpan& s) {
    py::dict d;
    d["span"] = s.span->name;
    d["label"] = s.label;
    d["state"] = to_string(s.state);
    d["id"] = s.id.empty() ? py::object(py::none())
                           : py::bytes(reinterpret_cast<const char*>(s.id.data()), s.id.size());
    py::list stages;
    for (const AssembledStage& st : s.stages) stages.append(py::make_tuple(st.name, st.seqno, st.nanos));
    d["stages"] = stages;
    py::list events;
    for (const AssembledEvent& e : s.events) events.append(event_of(reader, e));
    d["events"] = events;
    py::dict nested;  // span name -> {key: [events]}
    for (const AssembledNested& n : s.nested) {
        py::str name(n.span->name);
        if (!nested.contains(name)) nested[name] = py::dict();
        py::list of;
        for (std::size_t i : n.events) of.append(events[i]);
        nested[name].cast<py::dict>()[py::int_(n.key)] = of;
    }
    d["nested"] = nested;
    if (s.state == AssembledSpan::State::Broken) d["lost"] = py::make_tuple(s.lost_first, s.lost_count);
    return d;
}

struct Blocks {
    py::object reader_object;
    Reader* reader = nullptr;
    std::optional<SpanReader> spans;

    // What the reader has now: a NotReady ends the instances, as the source's
    // end would (blocks() reads to the newest event there now).
    SourceStep pull(SourceItem& item) {
        if (reader->closed()) return SourceStep::End;
        reader->check_not_busy();
        if (PyErr_CheckSignals() != 0) throw py::error_already_set();
        const SourceStep step = bindings::next_item(reader->handle(), item, PayloadRead::Copy);
        return step == SourceStep::NotReady ? SourceStep::End : step;
    }

    py::object next() {
        for (SourceItem item;;) {
            AssembledSpan s;
            switch (spans->next_span([this](SourceItem& i) { return pull(i); }, s, item)) {
            case SourceStep::Event: return dict_of(*reader, s);
            case SourceStep::Notice: reader->note(item.notice); break;
            case SourceStep::Gap: break;  // its instances come out broken, naming the seqnos
            case SourceStep::Failed: raise_error(reader->source().error().message());
            default: throw py::stop_iteration();  // End (NotReady is End here)
            }
        }
    }
    py::dict counts() const {
        const AssemblerCounts& c = spans->counts();
        py::dict d;
        d["handed_out"] = c.handed_out;
        d["abandoned"] = c.abandoned;
        d["broken"] = c.broken;
        d["unfinished"] = c.unfinished;
        d["unassembled"] = c.unassembled;
        return d;
    }
};

}  // namespace

void register_blocks(py::module_& m) {
    py::class_<Blocks>(m, "BlockIterator", "Whole span instances of a Reader (Reader.blocks).")
        .def("__iter__", [](py::object self) { return self; })
        .def("__next__", &Blocks::next)
        .def_property_readonly("counts", &Blocks::counts,
                               "handed_out, abandoned, broken, unfinished (open or waiting for their stage at the "
                               "end) and unassembled (events of instances begun before reading)");
    auto reader = py::reinterpret_borrow<py::class_<Reader>>(m.attr("Reader"));
    reader.def(
            "blocks",
            [](py::object self, const std::string& span, py::object stage, py::object start) {
                Reader& r = self.cast<Reader&>();
                r.check_not_busy();
                if (r.closed()) raise_error("blocks: the reader is closed");
                const std::optional<Schema>& schema = r.handle().schema.schema;
                if (!schema) raise_error("blocks: the reader has no schema to find spans in");
                if (r.handle().where) raise_error("blocks: whole instances with set_where would leave events out");
                const std::string stage_name = stage.is_none() ? std::string() : stage.cast<std::string>();
                auto made = SpanReader::make(*schema, span, stage_name);
                if (!made) raise_error("blocks: " + made.error().message());
                r.seek(start);
                Blocks b;
                b.reader_object = self;
                b.reader = &r;
                b.spans.emplace(std::move(*made));
                return b;
            },
            py::arg("span") = "block", py::arg("stage") = py::none(), py::arg("start") = "oldest",
            "Whole instances of `span` (a block with its transactions and stages), from `start` to the newest "
            "event there now, each a dict: span, label, state (complete, abandoned, broken), id, stages "
            "[(name, seqno, nanos)], events, nested {span: {key: events}} and, when broken, lost (first, count). "
            "With `stage` (\"finalized\"), an instance once it reaches that stage.");
}

}  // namespace evring::python
