// The peer processes of the cross-process harness. Each run_* function is the
// whole life of one exec'd peer: it reads its options (key=value words), prints
// "ready" once it can receive (readers), does its run, prints one result line
// and returns the process exit code.
#pragma once

#include "ipc/common.hpp"

namespace evring::ipc {

int run_evring_writer(const PeerOptions& options);
int run_evring_reader(const PeerOptions& options);

// The classic RING01 peer (classic_peer.cpp): the reference's protocol,
// written from the format description.
int run_classic_writer(const PeerOptions& options);
int run_classic_reader(const PeerOptions& options);

// The plain-stores floor (floor_peer.cpp): same ring file, no protocol.
int run_floor_writer(const PeerOptions& options);
int run_floor_reader(const PeerOptions& options);

// transport= pipe | unix | posixmq | boostmq; role= writer | reader.
int run_baseline_peer(const PeerOptions& options);

}  // namespace evring::ipc
