// evring.Event and decoding payloads to Python values (event.hpp).
#include "event.hpp"

#include <fmt/format.h>
#include <structmember.h>

#include <algorithm>
#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

#include "evring/schema/schema_decode.hpp"

namespace evring::python {
namespace {

constexpr const char* kCapsuleName = "evring.DecodeContext";

PyTypeObject* g_event_type = nullptr;

struct EventObject {
    PyObject_HEAD
    unsigned long long seqno;
    unsigned long long record_epoch_nanos;
    unsigned long long content_ext[4];
    unsigned int payload_size;
    unsigned short event_type;
    unsigned int member;  // the ring set member it came from; 0 for other sources
    PyObject* payload;  // bytes, or None when it expired before it was read
    PyObject* context;  // the reader's DecodeContext capsule
};

py::str to_str(std::string_view text) { return py::str(text.data(), text.size()); }

const DecodeContext& context_of(const EventObject* e) {
    return *static_cast<const DecodeContext*>(PyCapsule_GetPointer(e->context, kCapsuleName));
}

// Builds the nested dicts and lists as the decoder walks the payload.
//
// Bounded like every rendering of a payload (schema_render.hpp): each value
// costs 1 and each dict or list kContainerCost, and past
// max(kMinBudget, payload size) the walk stops and the payload's dict gets
// the key "(truncated)": True. A schema of nested one-byte structs would
// otherwise make a 1 MB payload tens of millions of dicts.
class DictBuilder final : public FieldVisitor {
public:
    explicit DictBuilder(std::size_t payload_size) : budget_(std::max(kMinBudget, payload_size)) {}

    py::object result = py::none();

    bool full() override {
        if (spent_ < budget_) return false;
        truncated_ = true;
        return true;
    }
    void begin_struct(std::string_view name, const SchemaStruct*) override {
        spent_ += kContainerCost;
        open(name, py::dict());
    }
    void end_struct() override {
        if (stack_.size() == 1 && truncated_) put("(truncated)", py::bool_(true));
        stack_.pop_back();
    }
    void begin_array(std::string_view name, std::uint64_t) override {
        spent_ += kContainerCost;
        open(name, py::list());
    }
    void end_array() override { stack_.pop_back(); }
    void scalar(std::string_view name, const ScalarValue& v) override { put(name, scalar_value(v)); }
    void enumeration(std::string_view name, const SchemaEnum&, const ScalarValue& v,
                     std::string_view value_name) override {
        if (value_name.empty()) put(name, scalar_value(v));
        else put(name, to_str(value_name));
    }
    void bytes(std::string_view name, std::span<const std::byte> value) override {
        put(name, py::bytes(reinterpret_cast<const char*>(value.data()), value.size()));
    }
    // char[N]: a str, invalid UTF-8 bytes replaced by U+FFFD as in JSON.
    void text(std::string_view name, std::string_view value, std::span<const std::byte>) override {
        PyObject* s = PyUnicode_DecodeUTF8(value.data(), static_cast<Py_ssize_t>(value.size()), "replace");
        if (s == nullptr) throw py::error_already_set();
        put(name, py::reinterpret_steal<py::object>(s));
    }
    void wide_integer(std::string_view name, Scalar, std::span<const std::byte> little_endian) override {
        PyObject* value = _PyLong_FromByteArray(reinterpret_cast<const unsigned char*>(little_endian.data()),
                                                little_endian.size(), /*little_endian=*/1, /*is_signed=*/0);
        if (value == nullptr) throw py::error_already_set();
        put(name, py::reinterpret_steal<py::object>(value));
    }

private:
    static py::object scalar_value(const ScalarValue& v) {
        switch (v.type) {
        case Scalar::I8:
        case Scalar::I16:
        case Scalar::I32:
        case Scalar::I64: return py::int_(v.i);
        case Scalar::F32:
        case Scalar::F64: return py::float_(v.f);
        case Scalar::Bool:
            if (v.u <= 1) return py::bool_(v.u == 1);
            return py::int_(v.u);  // a byte that is no bool: shown as its number
        default: return py::int_(v.u);
        }
    }
    void open(std::string_view name, py::object container) {
        if (stack_.empty()) result = container;
        else put(name, container);
        stack_.push_back(std::move(container));
    }
    static constexpr std::size_t kContainerCost = 16;
    static constexpr std::size_t kMinBudget = std::size_t{1} << 16;

    void put(std::string_view name, const py::object& value) {
        ++spent_;
        PyObject* top = stack_.back().ptr();
        const int failed = PyDict_Check(top) ? PyDict_SetItem(top, to_str(name).ptr(), value.ptr())
                                             : PyList_Append(top, value.ptr());
        if (failed != 0) throw py::error_already_set();
    }
    std::vector<py::object> stack_;
    std::size_t budget_;
    std::size_t spent_ = 0;
    bool truncated_ = false;
};

std::span<const std::byte> payload_bytes(const EventObject* e) {
    return {reinterpret_cast<const std::byte*>(PyBytes_AS_STRING(e->payload)),
            static_cast<std::size_t>(PyBytes_GET_SIZE(e->payload))};
}

// Runs a getter body, turning C++ exceptions into Python errors.
template <class Body>
PyObject* guarded(Body&& body) noexcept {
    try {
        return body().release().ptr();
    } catch (py::error_already_set& e) {
        e.restore();
    } catch (const std::exception& e) {
        PyErr_SetString(PyExc_RuntimeError, e.what());
    }
    return nullptr;
}

PyObject* get_fields(PyObject* self, void*) {
    return guarded([&]() -> py::object {
        auto* e = reinterpret_cast<EventObject*>(self);
        if (e->payload == Py_None) return py::none();
        return decode_fields(context_of(e), e->event_type, payload_bytes(e));
    });
}

PyObject* get_decode_error(PyObject* self, void*) {
    return guarded([&]() -> py::object {
        auto* e = reinterpret_cast<EventObject*>(self);
        const DecodeContext& context = context_of(e);
        if (!context.schema) return py::str("the source has no schema");
        if (e->payload == Py_None) return py::str("the payload expired before it could be read");
        const DecodeError error = check_payload(*context.schema, e->event_type, payload_bytes(e));
        if (error.ok()) return py::none();
        return py::str(describe_decode_error(*context.schema, error));
    });
}

PyObject* get_type_name(PyObject* self, void*) {
    return guarded([&]() -> py::object {
        auto* e = reinterpret_cast<EventObject*>(self);
        const DecodeContext& context = context_of(e);
        const SchemaEvent* event = context.schema ? context.schema->event(e->event_type) : nullptr;
        if (event == nullptr) return py::none();
        return to_str(event->name);
    });
}

PyObject* get_content_ext(PyObject* self, void*) {
    auto* e = reinterpret_cast<EventObject*>(self);
    return Py_BuildValue("(KKKK)", e->content_ext[0], e->content_ext[1], e->content_ext[2], e->content_ext[3]);
}

PyObject* event_repr(PyObject* self) {
    return guarded([&]() -> py::object {
        auto* e = reinterpret_cast<EventObject*>(self);
        const DecodeContext& context = context_of(e);
        const SchemaEvent* event = context.schema ? context.schema->event(e->event_type) : nullptr;
        return py::str(fmt::format("<evring.Event seqno={} type={} ({}) size={}>", e->seqno, e->event_type,
                                   event == nullptr ? "?" : event->name, e->payload_size));
    });
}

void event_dealloc(PyObject* self) {
    auto* e = reinterpret_cast<EventObject*>(self);
    Py_XDECREF(e->payload);
    Py_XDECREF(e->context);
    PyTypeObject* type = Py_TYPE(self);
    type->tp_free(self);
    Py_DECREF(type);  // heap types are referenced by their instances
}

PyMemberDef event_members[] = {
    {"seqno", T_ULONGLONG, offsetof(EventObject, seqno), READONLY, "sequence number"},
    {"event_type", T_USHORT, offsetof(EventObject, event_type), READONLY, "event type number"},
    {"record_epoch_nanos", T_ULONGLONG, offsetof(EventObject, record_epoch_nanos), READONLY,
     "when it was recorded, ns since the Unix epoch"},
    {"payload_size", T_UINT, offsetof(EventObject, payload_size), READONLY, "the descriptor's payload size"},
    {"member", T_UINT, offsetof(EventObject, member), READONLY,
     "the ring set member the event came from (0 for a ring, snapshot or recording)"},
    {"payload", T_OBJECT, offsetof(EventObject, payload), READONLY,
     "the payload (bytes), or None when it was overwritten before it could be read"},
    {nullptr, 0, 0, 0, nullptr},
};

PyGetSetDef event_getset[] = {
    {"content_ext", get_content_ext, nullptr, "the four flow tags (a tuple)", nullptr},
    {"type_name", get_type_name, nullptr, "the event type's name in the schema, or None", nullptr},
    {"fields", get_fields, nullptr,
     "the payload decoded with the schema (a dict; nested structs as dicts, arrays as lists, enums as "
     "names, u128/u256 as int, byte arrays as bytes), or None (see decode_error)",
     nullptr},
    {"decode_error", get_decode_error, nullptr, "why fields is None, or None", nullptr},
    {nullptr, nullptr, nullptr, nullptr, nullptr},
};

PyType_Slot event_slots[] = {
    {Py_tp_dealloc, reinterpret_cast<void*>(event_dealloc)},
    {Py_tp_repr, reinterpret_cast<void*>(event_repr)},
    {Py_tp_members, event_members},
    {Py_tp_getset, event_getset},
    {Py_tp_doc, const_cast<char*>("One event: its descriptor, its payload bytes and, with a schema, its fields.")},
    {0, nullptr},
};

PyType_Spec event_spec = {"evring.Event", sizeof(EventObject), 0, Py_TPFLAGS_DEFAULT, event_slots};

}  // namespace

py::object make_context_capsule(DecodeContext context) {
    auto* owned = new DecodeContext(std::move(context));
    PyObject* capsule = PyCapsule_New(owned, kCapsuleName, [](PyObject* c) {
        delete static_cast<DecodeContext*>(PyCapsule_GetPointer(c, kCapsuleName));
    });
    if (capsule == nullptr) {
        delete owned;
        throw py::error_already_set();
    }
    return py::reinterpret_steal<py::object>(capsule);
}

PyObject* new_event(const EventDescriptor& d, PyObject* payload, PyObject* context_capsule,
                    std::uint32_t member) noexcept {
    auto* e = PyObject_New(EventObject, g_event_type);
    if (e == nullptr) return nullptr;
    e->member = member;
    e->seqno = d.seqno;
    e->record_epoch_nanos = d.record_epoch_nanos;
    for (std::size_t i = 0; i < 4; ++i) e->content_ext[i] = d.content_ext[i];
    e->payload_size = d.payload_size;
    e->event_type = d.event_type;
    Py_INCREF(payload);
    e->payload = payload;
    Py_INCREF(context_capsule);
    e->context = context_capsule;
    return reinterpret_cast<PyObject*>(e);
}

const DecodeContext& decode_context(PyObject* capsule) {
    return *static_cast<const DecodeContext*>(PyCapsule_GetPointer(capsule, kCapsuleName));
}

py::object decode_fields(const DecodeContext& context, std::uint16_t event_type, std::span<const std::byte> payload) {
    if (!context.schema) return py::none();
    DictBuilder builder(payload.size());
    if (!visit_payload(*context.schema, event_type, payload, builder).ok()) return py::none();
    return builder.result;
}

void register_event(py::module_& m) {
    PyObject* type = PyType_FromSpec(&event_spec);
    if (type == nullptr) throw py::error_already_set();
    g_event_type = reinterpret_cast<PyTypeObject*>(type);  // the module and this pointer share the reference
    m.attr("Event") = py::reinterpret_borrow<py::object>(type);
    // Not "evring._evring": instances print and pickle-name as evring.Event.
}

}  // namespace evring::python
