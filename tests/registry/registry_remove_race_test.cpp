// Registrants racing a remover (lib/registry/registry_remove.cpp): a remover that
// keeps trying to remove the registry never removes it from under a reader,
// whether the reader is registered or between attaching and claiming its
// slot. A registration that succeeded is always in the registry at the name.
#include <atomic>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "registry/registry_file.hpp"
#include "registry/registry_identity.hpp"
#include "support/registry_ring.hpp"

namespace evring::test {
namespace {

bool listed(const RegistryRing& ring, const std::string& name) {
    auto listing = list_readers(*ring.reader);
    if (!listing) return false;
    for (const ReaderEntry& r : listing->readers)
        if (r.name == name && r.liveness == ReaderLiveness::Alive) return true;
    return false;
}

TEST(RegistryRemoveRace, ARegisteredReaderIsNeverRemovedFromTheName) {
    RegistryRing ring;
    const RingIdentity identity =
        detail::ring_identity_of(ring.reader->fd(), ring.reader->ring().header()).value();
    std::atomic<bool> done{false};
    std::atomic<int> removed{0};
    std::thread remover([&] {
        while (!done.load(std::memory_order_relaxed)) {
            auto r = detail::remove_unused_registry(ring.registry_path(), identity,
                                                    detail::RegistryOwner::ThisInstance);
            if (r && *r) removed.fetch_add(1, std::memory_order_relaxed);
        }
    });
    constexpr int kRounds = 300;
    int lost = 0;
    for (int i = 0; i < kRounds; ++i) {
        const std::string name = "r" + std::to_string(i);
        ReaderRegistration r = attach(ring, name);
        ASSERT_TRUE(r.registered()) << r.warning();
        if (!listed(ring, name)) ++lost;  // registered into a file no longer at the name
        r.unregister();
    }
    done.store(true, std::memory_order_relaxed);
    remover.join();
    EXPECT_EQ(lost, 0) << "of " << kRounds << " registrations";
    EXPECT_GT(removed.load(), 0) << "the remover never removed the unused registry: the race was not run";
}

}  // namespace
}  // namespace evring::test
