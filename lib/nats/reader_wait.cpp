// A stream's answer to a wait set (wait_set.hpp, EventSource::prepare_wait).
//
// The lanes' subscriptions are libnats sync subscriptions, which offer no
// descriptor and no callback: libnats queues what the server pushes, and
// natsSubscription_GetPending (thread-safe) counts it. So the set's thread
// looks at those counts every 100 ms (the pace of the follow loop's own
// looks), and a message reaches the set's descriptor within that; the
// stream's own check for a deleted or re-created stream runs on the
// NotReady path every 2 s, so the set looks again at that pace. The probe
// shares the subscriptions' owner (impl_), so a seek that replaces it while
// the set sleeps leaves the old subscriptions alive until the set lets go.
#include <chrono>
#include <memory>
#include <vector>

#include "evring/source/wait_set.hpp"
#include "nats/reader_impl.hpp"

namespace evring::nats {
namespace {

using namespace std::chrono_literals;

constexpr auto kPendingLook = 100ms;
constexpr auto kStreamLook = 2s;  // reader_merge.cpp's kStreamCheckInterval

}  // namespace

void StreamReader::prepare_wait(WaitArm& arm) {
    // Not subscribed yet (the first read subscribes), failed, or a message
    // half handed out: next() has something.
    if (!impl_ || impl_->failed || impl_->have_current) return arm.set_ready();
    std::vector<natsSubscription*> subscriptions;
    for (const ReaderLane& lane : impl_->lanes)
        if (lane.subscription != nullptr) subscriptions.push_back(lane.subscription);
    arm.watch(kPendingLook, [owner = std::shared_ptr<const Impl>(impl_), subscriptions] {
        for (natsSubscription* subscription : subscriptions) {
            int messages = 0;
            if (natsSubscription_GetPending(subscription, &messages, nullptr) != NATS_OK || messages > 0)
                return true;  // a message, or a subscription gone wrong: next() tells
        }
        return false;
    });
    arm.recheck_within(kStreamLook);
}

}  // namespace evring::nats
