// The bindings' writer handle (lib/bindings/writer_handle.hpp): the publisher
// behind evring_writer_record and Python's Writer.record. A handle is used by
// any number of threads at once (evring.h), yet one thread alone pays no
// atomic instruction: it reserves on the writer claim's plain path, and the
// first other thread revokes that (writer_claim.hpp). Issue 32, defect 1: the
// handle's publisher was Exclusive, whose plain stores from two threads hand
// out one seqno twice; tests/c/c_writer_threads_test shows that with threads
// at once, this shows the publisher's mode deterministically.
#include <unistd.h>

#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "bindings/writer_handle.hpp"

namespace evring {
namespace {

std::string ring_name(const char* what) {
    return "/dev/shm/evring-writer-handle-test-" + std::to_string(::getpid()) + "-" + what;
}

std::unique_ptr<evring_writer> make_handle(const char* what, bool shared) {
    bindings::WriterSettings settings;
    settings.name = ring_name(what);
    settings.descriptor_shift = 8;
    settings.payload_shift = 16;
    settings.shared = shared;
    auto handle = bindings::create_writer_handle(settings);
    EXPECT_TRUE(handle.ok()) << handle.error().message();
    return handle.ok() ? std::move(*handle) : nullptr;
}

std::uint64_t record_one(evring_writer& w) {
    Reservation r = w.publisher.reserve(8);
    EXPECT_TRUE(r);
    w.publisher.commit(r);
    return r.seqno();
}

TEST(WriterHandle, OneThreadReservesOnThePlainPath) {
    auto w = make_handle("one", false);
    ASSERT_NE(w, nullptr);
    EXPECT_TRUE(w->publisher.holds_claim());
    for (std::uint64_t i = 1; i <= 100; ++i) EXPECT_EQ(record_one(*w), i);
    EXPECT_TRUE(w->publisher.holds_claim());  // still the plain path: no atomic instruction per event
}

TEST(WriterHandle, ASecondThreadRevokesThePlainPathOnceAndSeqnosGoOn) {
    auto w = make_handle("two", false);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(record_one(*w), 1u);
    std::uint64_t other = 0;
    std::thread([&] { other = record_one(*w); }).join();
    EXPECT_EQ(other, 2u);
    EXPECT_FALSE(w->publisher.holds_claim());  // every thread now reserves atomically
    EXPECT_EQ(record_one(*w), 3u);
}

TEST(WriterHandle, ARingSharedByProcessesNeverTakesThePlainPath) {
    auto w = make_handle("shared", true);
    ASSERT_NE(w, nullptr);
    EXPECT_EQ(record_one(*w), 1u);
    EXPECT_FALSE(w->publisher.holds_claim());
}

}  // namespace
}  // namespace evring
