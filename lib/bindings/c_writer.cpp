// The C ABI's writers: create, reserve, commit, abort, record (evring.h).
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <new>

#include "evring/schema/typed_publish.hpp"
#include "writer_handle.hpp"

using evring::bindings::guard;

namespace {

// The C++ reservation lives in the C struct's private bytes; it is trivially
// copyable, so the caller may copy the C struct around before committing.
static_assert(std::is_trivially_copyable_v<evring::Reservation>);
static_assert(sizeof(evring::Reservation) <= EVRING_RESERVATION_PRIVATE_SIZE);
static_assert(alignof(evring::Reservation) <= 64);

// evring_reservation's size when it was first versioned (ABI 2): a caller's
// struct_size may not be smaller (evring.h, "How the ABI grows").
constexpr std::size_t kReservationFirst = 320;
static_assert(sizeof(evring_reservation) == kReservationFirst);

evring::Reservation& held(evring_reservation* r) noexcept {
    return *std::launder(reinterpret_cast<evring::Reservation*>(r->private_));
}

// The caller's event type and flow tags into the staged descriptor.
void stage(evring_reservation* r) noexcept {
    evring::EventDescriptor& d = held(r).descriptor();
    d.event_type = r->event_type;
    for (std::size_t i = 0; i < 4; ++i) d.content_ext[i] = r->content_ext[i];
}

int writer_error(evring_writer* writer, int status, std::string_view message) noexcept {
    writer->errors.set(message);  // this thread's (evring.h: a handle is shared by threads)
    return status;
}

// A typed write the schema rules out: nothing is published.
int refused(evring_writer* writer, const std::string& why) noexcept {
    return writer_error(writer, EVRING_E_DECODE, why);
}

int too_large(evring_writer* writer, uint64_t size, const char* tail) noexcept {
    char message[256];
    std::snprintf(message, sizeof message, "a payload of %llu bytes is larger than this ring allows (%llu)%s",
                  static_cast<unsigned long long>(size),
                  static_cast<unsigned long long>(writer->publisher.max_payload_size()), tail);
    return writer_error(writer, EVRING_E_TOO_LARGE, message);
}

}  // namespace

extern "C" {

void evring_writer_options_init(evring_writer_options* options) {
    if (options == nullptr) return;
    *options = evring_writer_options{};
    options->struct_size = sizeof(evring_writer_options);
    options->descriptor_shift = evring::kDefaultDescriptorShift;
    options->payload_shift = evring::kDefaultPayloadBufShift;
    options->file_mode = 0664;
}

evring_writer* evring_writer_create(const evring_writer_options* options) {
    using evring::bindings::set_last_error;
    // check_raw came last: a caller built against the header before it passes a smaller struct.
    constexpr std::size_t kBeforeCheckRaw = offsetof(evring_writer_options, check_raw);
    if (options == nullptr || options->struct_size < kBeforeCheckRaw) {
        set_last_error(evring::Error(EINVAL, "evring_writer_create: options not initialised "
                                             "(call evring_writer_options_init)"));
        return nullptr;
    }
    return guard(
        [&]() -> evring_writer* {
            evring::bindings::WriterSettings settings;
            if (options->name != nullptr) settings.name = options->name;
            settings.descriptor_shift = options->descriptor_shift;
            settings.payload_shift = options->payload_shift;
            if (options->content_type != 0) settings.content_type = options->content_type;
            if (options->schema_path != nullptr && options->schema_text != nullptr) {
                set_last_error(evring::Error(EINVAL, "evring_writer_create: give schema_path or schema_text, not both"));
                return nullptr;
            }
            if (options->schema_path != nullptr) settings.schema = options->schema_path;
            if (options->schema_text != nullptr) {
                settings.schema = options->schema_text;
                if (settings.schema.find('\n') == std::string::npos) settings.schema += '\n';
            }
            settings.shared = options->shared != 0;
            settings.keep = options->keep != 0;
            settings.file_mode = static_cast<mode_t>(options->file_mode);
            settings.check_raw = options->struct_size >= sizeof(evring_writer_options) && options->check_raw != 0;
            auto writer = evring::bindings::create_writer_handle(settings);
            if (!writer) {
                set_last_error(writer.error());
                return nullptr;
            }
            return writer->release();
        },
        [&](int, const char* message) -> evring_writer* {
            set_last_error(evring::Error(ENOMEM, message));
            return nullptr;
        });
}

void evring_writer_close(evring_writer* writer) { delete writer; }

const char* evring_writer_error(const evring_writer* writer) {
    return writer == nullptr ? "no writer (NULL handle)" : writer->errors.get();
}

const char* evring_writer_path(const evring_writer* writer) {
    return writer == nullptr ? "" : writer->writer.path().c_str();
}

uint64_t evring_writer_max_payload(const evring_writer* writer) {
    return writer == nullptr ? 0 : writer->publisher.max_payload_size();
}

int evring_writer_reserve(evring_writer* writer, uint64_t payload_size, evring_reservation* reservation) {
    if (writer == nullptr || reservation == nullptr) return EVRING_E_INVALID;
    if (!evring::bindings::big_enough(reservation, kReservationFirst)) {
        const std::string why = evring::bindings::size_message("evring_writer_reserve", "evring_reservation",
                                                               reservation->struct_size);
        return writer_error(writer, EVRING_E_INVALID, why);
    }
    // The library's part only; a newer caller's larger struct keeps its tail.
    std::memset(reinterpret_cast<unsigned char*>(reservation) + sizeof reservation->struct_size, 0,
                sizeof *reservation - sizeof reservation->struct_size);
    reservation->struct_size = sizeof *reservation;
    evring::Reservation& r = *new (reservation->private_) evring::Reservation(writer->publisher.reserve(payload_size));
    if (!r) {
        return too_large(writer, payload_size, "");
    }
    reservation->payload = r.payload();
    reservation->seqno = r.seqno();
    reservation->payload_size = r.descriptor().payload_size;
    return EVRING_OK;
}

int evring_writer_commit(evring_writer* writer, evring_reservation* reservation) {
    if (writer == nullptr || reservation == nullptr) return EVRING_E_INVALID;
    if (!held(reservation)) return writer_error(writer, EVRING_E_INVALID, "commit: the reservation is empty");
    stage(reservation);
    if (writer->check_raw) {
        const std::string why = evring::bindings::refusal(*writer, reservation->event_type, reservation->payload,
                                                          held(reservation).descriptor().payload_size);
        if (!why.empty()) {  // a reservation must end: a RECORD_ERROR takes its place
            writer->publisher.abort(held(reservation));
            held(reservation) = evring::Reservation();
            return refused(writer, "commit refused, a RECORD_ERROR was recorded instead: " + why);
        }
    }
    writer->publisher.commit(held(reservation));
    held(reservation) = evring::Reservation();  // a second commit or abort does nothing
    return EVRING_OK;
}

int evring_writer_abort(evring_writer* writer, evring_reservation* reservation) {
    if (writer == nullptr || reservation == nullptr) return EVRING_E_INVALID;
    if (!held(reservation)) return writer_error(writer, EVRING_E_INVALID, "abort: the reservation is empty");
    stage(reservation);
    writer->publisher.abort(held(reservation));
    return EVRING_OK;
}

int evring_writer_record(evring_writer* writer, uint16_t event_type, const void* payload, uint64_t payload_size,
                         const uint64_t flow[4], uint64_t* seqno) {
    if (writer == nullptr || (payload == nullptr && payload_size > 0)) return EVRING_E_INVALID;
    evring::FlowTags tags{};
    if (flow != nullptr) std::memcpy(tags.data(), flow, sizeof tags);
    if (writer->schema) {
        const std::string why = evring::bindings::refusal(*writer, event_type, payload, payload_size);
        if (!why.empty()) {
            if (seqno != nullptr) *seqno = 0;
            return refused(writer, why);
        }
        // Checked first, so a bad event is reported whoever listens; then
        // skipped when no registered reader wants it.
        if (!evring::bindings::wanted(*writer, event_type)) {
            if (seqno != nullptr) *seqno = 0;
            return EVRING_NOT_WANTED;
        }
    }
    evring::Reservation r = writer->publisher.reserve(payload_size);
    if (!r) {
        evring::detail::publish_oversized(writer->publisher, event_type, payload_size, payload, payload_size, tags);
        if (seqno != nullptr) *seqno = 0;
        return too_large(writer, payload_size, "; a RECORD_ERROR was recorded instead");
    }
    r.descriptor().event_type = event_type;
    r.descriptor().content_ext = tags;
    if (payload_size > 0) std::memcpy(r.payload(), payload, payload_size);
    writer->publisher.commit(r);
    if (seqno != nullptr) *seqno = r.seqno();
    return EVRING_OK;
}

int evring_writer_wants(const evring_writer* writer, uint16_t event_type) {
    if (writer == nullptr) return 0;
    return evring::bindings::wanted(*writer, event_type) ? 1 : 0;
}

}  // extern "C"
