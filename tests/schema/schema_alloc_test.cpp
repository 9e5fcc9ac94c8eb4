// Proof that decoding allocates nothing per event: this binary replaces the
// global operator new and counts calls while events are decoded into a
// reused string, into a caller's buffer, and through a visitor.
//
// AddressSanitizer owns operator new, so the proof runs in builds without it.
#include <atomic>
#include <new>
#include <string>

#include <gtest/gtest.h>

#include "schema/schema_builtin.hpp"
#include "evring/schema/schema_render.hpp"
#include "support/schema_payload.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define EVRING_COUNTING_ALLOCATOR 0
#else
#define EVRING_COUNTING_ALLOCATOR 1
#endif

#if EVRING_COUNTING_ALLOCATOR
// glibc's own entry points rather than malloc and free: g++ pairs those with
// new-expressions it inlines and, in the ThreadSanitizer build, calls the
// free in the sized delete below a mismatch (-Wmismatched-new-delete).
extern "C" void* __libc_malloc(std::size_t);
extern "C" void __libc_free(void*);
namespace {
std::atomic<long> g_allocations{0};
}
void* operator new(std::size_t size) {
    g_allocations.fetch_add(1, std::memory_order_relaxed);
    if (void* p = __libc_malloc(size == 0 ? 1 : size)) return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return operator new(size); }
void operator delete(void* p) noexcept { __libc_free(p); }
void operator delete[](void* p) noexcept { __libc_free(p); }
void operator delete(void* p, std::size_t) noexcept { __libc_free(p); }
void operator delete[](void* p, std::size_t) noexcept { __libc_free(p); }
#endif

namespace evring {
namespace {

struct Discard : FieldVisitor {
    std::uint64_t calls = 0;
    void begin_struct(std::string_view, const SchemaStruct*) override { ++calls; }
    void end_struct() override { ++calls; }
    void begin_array(std::string_view, std::uint64_t) override { ++calls; }
    void end_array() override { ++calls; }
    void scalar(std::string_view, const ScalarValue&) override { ++calls; }
    void enumeration(std::string_view, const SchemaEnum&, const ScalarValue&, std::string_view) override { ++calls; }
    void bytes(std::string_view, std::span<const std::byte>) override { ++calls; }
    void wide_integer(std::string_view, Scalar, std::span<const std::byte>) override { ++calls; }
};

TEST(SchemaAllocation, DecodingEventsAllocatesNothingOnceTheOutputHasGrown) {
#if !EVRING_COUNTING_ALLOCATOR
    GTEST_SKIP() << "AddressSanitizer replaces operator new, so the counting allocator is not installed; "
                    "the proof runs in the release build";
#else
    const Schema schema = builtin_schema("monad-exec-v1").value();
    // One payload of every event type: fixed part zeroed (counts 0), plus a
    // TXN_LOG with topics and data.
    std::vector<std::pair<std::uint16_t, test::PayloadBytes>> events;
    for (const auto& e : schema.events()) events.emplace_back(e.number, test::PayloadBytes(schema.fixed_size(e)));
    test::PayloadBytes log(32);
    log.put<std::uint8_t>(24, 2);
    log.put<std::uint32_t>(28, 40);
    log.bytes.resize(32 + 64 + 40, std::byte{0x5a});
    events.emplace_back(schema.event("TXN_LOG")->number, log);

    std::string line;
    line.reserve(1 << 16);
    std::vector<char> buffer(1 << 16);
    Discard visitor;
    const long before = g_allocations.load();
    for (int round = 0; round < 1000; ++round) {
        for (const auto& [type, payload] : events) {
            line.clear();
            ASSERT_TRUE(append_fields_json(schema, type, payload.span(), line).ok());
            line.clear();
            ASSERT_TRUE(append_event_text(schema, type, payload.span(), line).ok());
            std::size_t written = 0;
            ASSERT_TRUE(write_fields_json(schema, type, payload.span(), buffer, written).ok());
            ASSERT_TRUE(visit_payload(schema, type, payload.span(), visitor).ok());
        }
        // A refused payload costs nothing either (the reason goes to a buffer).
        const DecodeError e = check_payload(schema, 999, {});
        char reason[128];
        ASSERT_GT(format_decode_error(schema, e, reason), 0u);
    }
    EXPECT_EQ(g_allocations.load() - before, 0) << "allocations while decoding";
    EXPECT_GT(visitor.calls, 0u);
    // The counter does count: building a message (a std::string) allocates.
    const long probe = g_allocations.load();
    const std::string message = describe_decode_error(schema, check_payload(schema, 999, {}));
    EXPECT_GT(g_allocations.load(), probe) << message;
#endif
}

}  // namespace
}  // namespace evring
