// lib/bindings/handles.hpp — what the C ABI's opaque handles hold, and the error plumbing.
//
// Each C entry point converts: C++ errors (evring::Error) become a status
// plus the handle's message; exceptions (std::bad_alloc) are caught at the
// boundary (guard()) and become EVRING_E_NOMEM. Nothing C++ escapes.
//
// Thread safety: as evring.h (a source by one thread at a time; a writer's
// publishing calls from any thread at once: its publisher is shared-safe and
// its messages are per thread).
#pragma once

#include <algorithm>
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <vector>

#include "cursor/named_reader.hpp"
#include "evring/error.hpp"
#include "evring/evring.h"
#include "schema/schema_write_check.hpp"
#include "source/event_predicate.hpp"
#include "evring/source/event_source.hpp"
#include "evring/source/source_open.hpp"
#include "evring/source/wait_set.hpp"
#include "evring/ring/publisher.hpp"
#include "sink/registering_sink.hpp"
#include "registry/reader_registration.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/schema/schema.hpp"
#include "error_text.hpp"
#include "source_schema.hpp"

// A reader session: the bindings read through reader_session.hpp.
struct evring_source {
    std::unique_ptr<evring::EventSource> source;
    evring::SourceOptions open_options;  // how `source` was opened (a second source opens alike)
    evring::bindings::SourceSchema schema;
    // mutable: calls on a const handle (get_counters) report failures too.
    mutable std::string error;
    mutable int error_errno = 0;
    std::string notice;     // of the last seek
    std::string item_text;  // NUL-terminated copy of an item's text
    std::string schema_json;
    std::string decoded;    // a decode's JSON before it is copied out
    // next_batch's staging area: EventDescriptor is 64-byte aligned, the
    // caller's array need not be.
    std::vector<evring::EventDescriptor> batch;
    std::vector<std::uint32_t> batch_members;  // next_batch_members' staging area
    std::unique_ptr<evring::EventPredicate> where;  // evring_source_set_where
    // Declared after `source`: the slots are freed before the source closes.
    // A ring's reader has one registration, a ring set's one per member
    // (registering_sink.hpp); null when the reader does not register.
    std::unique_ptr<evring::RegisteringSink> registration;
    std::vector<std::string> held_notices;     // handed out first by next_item
    // A named reader (named_session.hpp): its lock, position and mark; the
    // notices its resume gave, one a line; whether the source has ended.
    std::unique_ptr<evring::NamedReader> named;
    std::string named_notices;
    bool named_ended = false;
    // A named reader of a ring set marks (member, seqno): a batch read
    // without a members array gets its members here.
    std::vector<std::uint32_t> named_members;
    // Event loops (wait_handle.hpp): the wait set behind the handle's
    // descriptor (evring_source_fd), declared after `source` so that its
    // thread stops before the source closes, and the wait sets the handle is in.
    std::unique_ptr<evring::WaitSet> wait_set;
    std::vector<evring_waitset*> in_wait_sets;
    evring_source() = default;
    ~evring_source();  // leaves its wait sets first (wait_handle.cpp)
    evring_source(const evring_source&) = delete;
    evring_source& operator=(const evring_source&) = delete;
};

struct evring_writer {
    evring::RingWriter writer;
    // Auto (or Shared for a ring shared by processes): reserves from any
    // number of threads at once (writer_handle.cpp).
    evring::Publisher publisher;
    // evring_writer_error: each thread's last failure (error_text.hpp).
    evring::bindings::ThreadMessages errors;
    // The ring's schema when it was created with one: typed writes
    // (evring_writer_record, Python's Writer.record) are checked against it,
    // and raw commits too when check_raw is set (writer_handle.hpp).
    std::optional<evring::Schema> schema;
    evring::WriteRules rules;  // schema's fast verdicts, built with it
    bool check_raw = false;
    evring_writer(evring::RingWriter w, evring::WriterSharing sharing)
        : writer(std::move(w)), publisher(writer.ring(), sharing) {}
};

namespace evring::bindings {

// The C status for a C++ error (its errno decides).
int status_of(const Error& error) noexcept;
// This thread's last open/create failure ("" when none).
const char* last_error_text() noexcept;
// Keeps `error` as this thread's last error; returns its status.
int set_last_error(const Error& error) noexcept;
// Keeps `error` as the handle's message; returns its status.
int set_error(const evring_source* source, const Error& error) noexcept;
int set_error(const evring_source* source, int status, std::string message) noexcept;

// The struct_size rule (evring.h, "How the ABI grows"): a caller's struct
// must be at least `first_size` bytes, the struct's size when it was first
// versioned (ABI 2). Results are built whole, then only the caller's first
// struct_size bytes are written, and struct_size says how many.
template <class T>
bool big_enough(const T* caller, std::size_t first_size) noexcept {
    return caller != nullptr && caller->struct_size >= first_size;
}
template <class T>
void deliver(T* caller, T& result) noexcept {
    const std::size_t n = std::min<std::size_t>(caller->struct_size, sizeof(T));
    result.struct_size = static_cast<std::uint32_t>(n);
    std::memcpy(static_cast<void*>(caller), &result, n);
}
// "evring_counters.struct_size is 0: set it to sizeof(evring_counters) ..."
std::string size_message(const char* function, const char* type, std::uint32_t given);

// Runs `body`; an exception becomes EVRING_E_NOMEM (std::bad_alloc) or
// EVRING_E_INVALID, and its message goes to `on_error`.
template <class Body, class OnError>
auto guard(Body&& body, OnError&& on_error) noexcept -> decltype(body()) {
    try {
        return body();
    } catch (const std::bad_alloc&) {
        return on_error(EVRING_E_NOMEM, "out of memory");
    } catch (const std::exception& e) {
        return on_error(EVRING_E_INVALID, e.what());
    } catch (...) {
        return on_error(EVRING_E_INVALID, "an unexpected C++ exception");
    }
}

}  // namespace evring::bindings
