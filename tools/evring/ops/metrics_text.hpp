// tools/evring/ops/metrics_text.hpp — the Prometheus text exposition (format
// 0.0.4) of rings, for `evring metrics`.
//
// Every family is written once with its HELP and TYPE lines, then one sample
// per ring (and per event type or reader); label values are escaped (\\, \",
// \n). Counters end in _total. docs/operations.md lists the names.
//
// Thread safety: one thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ops/ring_view.hpp"

namespace evring::cli {

// A ring as the exporter knows it: opened (view) or not (why).
struct MetricsTarget {
    std::string location;
    std::unique_ptr<RingView> view;  // null: not open (error says why)
    std::string error;
};

// "a\"b" for a"b: a label value as the exposition format wants it.
std::string escape_label(std::string_view value);

// Refreshes every target (opening the ones not open yet, and moving to the
// ring now at a target's name when its writer made a new one) and renders them.
std::string render_metrics(std::vector<MetricsTarget>& targets);

}  // namespace evring::cli
