// Python arguments turned into C++ values (arguments.hpp).
#include "arguments.hpp"

#include <fmt/format.h>

#include <cmath>

#include "reader.hpp"
#include "util/text_escape.hpp"

namespace evring::python {
namespace {

constexpr Py_ssize_t kShownCharacters = 64;

// The first lone surrogate of `text` (a str), for the message.
Py_UCS4 first_surrogate(PyObject* text) {
    const Py_ssize_t n = PyUnicode_GetLength(text);
    for (Py_ssize_t i = 0; i < n; ++i) {
        const Py_UCS4 c = PyUnicode_ReadChar(text, i);
        if (c >= 0xd800 && c <= 0xdfff) return c;
    }
    return 0;
}

[[noreturn]] void refuse_surrogate(py::handle value, std::string_view what, std::string_view as) {
    PyErr_Clear();
    raise_error(fmt::format("{}: {} holds a lone surrogate (U+{:04X}), which {}", what, shown(value),
                            static_cast<unsigned>(first_surrogate(value.ptr())), as));
}

}  // namespace

std::string type_name_of(py::handle value) { return Py_TYPE(value.ptr())->tp_name; }

std::string described(py::handle value) {
    return value.is_none() ? std::string("None") : fmt::format("{} {}", type_name_of(value), shown(value));
}

std::string shown(py::handle value) {
    PyObject* repr = PyObject_Repr(value.ptr());
    if (repr == nullptr) {
        PyErr_Clear();
        return fmt::format("(a {})", type_name_of(value));
    }
    const py::object text = py::reinterpret_steal<py::object>(repr);
    const Py_ssize_t length = PyUnicode_GetLength(repr);
    // A repr() may hold any character (a user's __repr__ decides): keep the
    // first characters, then escape what a terminal should not see.
    PyObject* head = PyUnicode_Substring(repr, 0, std::min(length, kShownCharacters));
    if (head == nullptr) {
        PyErr_Clear();
        return fmt::format("(a {})", type_name_of(value));
    }
    const py::object kept = py::reinterpret_steal<py::object>(head);
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(head, &size);
    if (utf8 == nullptr) {  // a repr holding a lone surrogate
        PyErr_Clear();
        return fmt::format("(a {})", type_name_of(value));
    }
    std::string out = printable(std::string_view(utf8, static_cast<std::size_t>(size)));
    if (length > kShownCharacters) out += fmt::format("...({} characters)", length);
    return out;
}

std::string utf8_of(py::handle value, std::string_view what) {
    if (!PyUnicode_Check(value.ptr()))
        raise_error(fmt::format("{}: give a str, not {}", what, type_name_of(value)));
    Py_ssize_t size = 0;
    const char* utf8 = PyUnicode_AsUTF8AndSize(value.ptr(), &size);
    if (utf8 == nullptr) refuse_surrogate(value, what, "UTF-8 cannot hold");
    return std::string(utf8, static_cast<std::size_t>(size));
}

std::string path_of(py::handle value, std::string_view what) {
    if (PyBytes_Check(value.ptr()))
        return std::string(PyBytes_AS_STRING(value.ptr()), static_cast<std::size_t>(PyBytes_GET_SIZE(value.ptr())));
    if (!PyUnicode_Check(value.ptr()))
        raise_error(fmt::format("{}: give a path or a name (str, bytes or os.PathLike), not {}", what,
                                type_name_of(value)));
    PyObject* encoded = PyUnicode_EncodeFSDefault(value.ptr());
    if (encoded == nullptr) refuse_surrogate(value, what, "no file name can hold");
    const py::object bytes = py::reinterpret_steal<py::object>(encoded);
    return std::string(PyBytes_AS_STRING(encoded), static_cast<std::size_t>(PyBytes_GET_SIZE(encoded)));
}

std::uint64_t unsigned_of(py::handle value, std::string_view what, std::uint64_t max) {
    const std::string range = max == UINT64_MAX ? std::string("0..2^64-1") : fmt::format("0..{}", max);
    // An int, or what says it is one (__index__: numpy's integers); never a
    // bool, whose int() is 0 or 1, nor a float or a str.
    PyObject* index = PyBool_Check(value.ptr()) ? nullptr : PyNumber_Index(value.ptr());
    if (index == nullptr) {
        PyErr_Clear();
        raise_error(fmt::format("{}: give an int ({}), not {}", what, range, described(value)));
    }
    const py::object integer = py::reinterpret_steal<py::object>(index);
    const unsigned long long n = PyLong_AsUnsignedLongLong(index);
    if (n == static_cast<unsigned long long>(-1) && PyErr_Occurred() != nullptr) {
        PyErr_Clear();  // negative, or past 2^64 - 1
        raise_error(fmt::format("{} {} is not in {}", what, shown(integer), range));
    }
    if (n > max) raise_error(fmt::format("{} {} is not in {}", what, shown(integer), range));
    return n;
}

double seconds_of(py::handle value, std::string_view what) {
    const bool number = (PyLong_Check(value.ptr()) && !PyBool_Check(value.ptr())) || PyFloat_Check(value.ptr());
    if (!number)
        raise_error(fmt::format("bad {} {}: give seconds (an int or a float), not {}", what, shown(value),
                                type_name_of(value)));
    const bool negative = PyObject_RichCompareBool(value.ptr(), py::int_(0).ptr(), Py_LT) == 1;
    double seconds = PyFloat_AsDouble(value.ptr());
    if (seconds == -1.0 && PyErr_Occurred() != nullptr) {
        PyErr_Clear();  // an int past what a double holds: more than any wait, or less than none
        seconds = negative ? -HUGE_VAL : HUGE_VAL;
    }
    if (negative || !(seconds >= 0))  // NaN too
        raise_error(fmt::format("bad {} {}: give seconds, 0 or more", what, shown(value)));
    return seconds;
}

std::uint16_t event_type_of(py::handle value, const Schema* schema) {
    if (PyUnicode_Check(value.ptr())) {
        const std::string name = utf8_of(value, "event type");
        if (schema == nullptr)
            raise_error(fmt::format("event type '{}' given by name, but the ring has no schema",
                                    shortened(printable(name))));
        const SchemaEvent* e = schema->event(name);
        if (e == nullptr)
            raise_error(fmt::format("the schema has no event type named '{}'", shortened(printable(name))));
        return e->number;
    }
    // An int, or what says it is one (__index__: numpy's integers); not a bool.
    if (PyBool_Check(value.ptr()) || !PyIndex_Check(value.ptr()))
        raise_error(fmt::format("event type: give a number (0..65535) or a name from the schema, not {}",
                                described(value)));
    return static_cast<std::uint16_t>(unsigned_of(value, "event type", 0xffff));
}

}  // namespace evring::python
