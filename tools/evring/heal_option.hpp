// tools/evring/heal_option.hpp — --heal and --heal-from: a reading command's
// lapped gaps healed from a recording (docs/healing.md), shared by watch,
// digest, stats and relay.
//
//     HealOption heal;
//     heal.add(*command);
//     ...
//     if (auto s = heal.apply(plan.source, named); !s) return usage_error(s.error());  // before opening
//
// Contract: without either option nothing changes, except for a named
// reader (--name), which heals as with --heal unless --no-heal, and only a
// live ring or ring set (HealOptions::when_live). --heal finds a running
// `evring record` of the ring in its reader registry; --heal-from PATH names
// the recording; --heal-wait bounds how long a recording that has not caught
// up is waited for. open_source (SourceOptions::heal) refuses them for
// anything but a live ring or ring set, naming it.
//
// Thread safety: plain values.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include <CLI/CLI.hpp>

#include "evring/error.hpp"
#include "evring/source/source_open.hpp"

namespace evring::cli {

class HealOption {
public:
    // `named`: the command takes --name, and so --no-heal.
    void add(CLI::App& command, bool named = true);
    // Puts the options into `source` (and so into follow's reopen options);
    // `named`: the reader has a --name.
    Status apply(SourceOptions& source, bool named) const;

private:
    bool find_ = false;
    bool no_heal_ = false;
    std::optional<std::string> from_;
    std::optional<std::string> wait_;
};

// A summary's words for the events healing read (SourceCounters::healed):
// " (N of the events read from the recording: the WHO was lapped)", or
// nothing when there were none.
std::string healed_words(std::uint64_t healed, std::string_view who);

}  // namespace evring::cli
