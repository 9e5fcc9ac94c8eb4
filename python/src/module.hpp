// python/src/module.hpp — the parts of the _evring extension module.
#pragma once

#include <pybind11/pybind11.h>

namespace evring::python {

void register_writer(pybind11::module_& m);

}  // namespace evring::python
