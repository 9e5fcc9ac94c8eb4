// NATS streams for the C ABI (evring.h, evring_source_open) and the Python
// package: a libevring.so or _evring module built with libnats reads
// "nats://HOST[:PORT]/STREAM", a stream a relay wrote (docs/distributed.md),
// as the evring program does. Compiled into those two only, and only when
// libnats is found (lib/bindings/meson.build, python/evring/meson.build): the
// static libraries stay free of libnats.
//
// The scheme is registered when the library is loaded, before any caller can
// open a source: register_source_scheme's table is a function-local static
// behind a mutex (source_open.cpp), so registering from a static initializer
// is safe whatever the order of initialisation.
#include "evring/nats/nats_source.hpp"

namespace {

const bool g_nats_scheme_registered = [] {
    evring::nats::register_nats_source_scheme();
    return true;
}();

}  // namespace
