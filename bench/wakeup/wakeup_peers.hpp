// The two peer processes of one evring-wakeup run (wakeup_peers.cpp): a
// writer that publishes events at a paced rate, each stamped just before its
// commit, and wakes the reader by the run's variant (wake_channel.hpp); a
// reader that sleeps by the variant whenever it has drained the ring and
// records, for every event, the time from that stamp to the moment it has
// the event. Options are key=value words (ipc/common.hpp's PeerOptions):
// variant=, path=, events=, rate=, samples= (the reader's file of samples),
// gate= (the writer), fd0= and fd1= (the variant's descriptors).
#pragma once

#include "ipc/common.hpp"

namespace evring::wakeup {

int run_wakeup_writer(const ipc::PeerOptions& options);
int run_wakeup_reader(const ipc::PeerOptions& options);

}  // namespace evring::wakeup
