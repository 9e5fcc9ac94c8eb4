// --heal, --heal-from and --heal-wait (heal_option.hpp).
#include "heal_option.hpp"

#include <fmt/format.h>

#include "export/export_cmd.hpp"

namespace evring::cli {

void HealOption::add(CLI::App& command, bool named) {
    command.add_flag("--heal", find_,
                     "Read events this reader was lapped past from the recording a running `evring record` of the "
                     "ring writes (docs/healing.md)");
    command.add_option("--heal-from", from_, "As --heal, from this recording of the ring")->type_name("FILE");
    command.add_option("--heal-wait", wait_,
                       "How long a recording that has not caught up is waited for (default 3s)")
        ->type_name("DURATION");
    if (!named) return;
    command.add_flag("--no-heal", no_heal_,
                     "A named reader (--name) heals as with --heal by default: leave its lapped gaps as gaps");
}

Status HealOption::apply(SourceOptions& source, bool named) const {
    if (find_ && from_) return Error(EINVAL, "--heal and --heal-from: give one (--heal-from names the recording)");
    if (no_heal_ && (find_ || from_ || wait_))
        return Error(EINVAL, "--no-heal goes with none of --heal, --heal-from, --heal-wait");
    if (no_heal_ && !named) return Error(EINVAL, "--no-heal goes with --name (only a named reader heals by default)");
    if (from_ && from_->empty()) return Error(EINVAL, "--heal-from: the recording's path is empty");
    if (wait_ && !find_ && !from_ && !named)
        return Error(EINVAL, "--heal-wait goes with --heal, --heal-from or --name");
    // Never lose: a named reader of a live ring reads what it was lapped past
    // from a running recorder's file, as --heal, when there is one.
    const bool implied = named && !no_heal_ && !find_ && !from_;
    source.heal.find = find_ || implied;
    source.heal.when_live = implied;
    source.heal.recording = from_.value_or("");
    if (wait_) {
        auto nanos = parse_duration_nanos("--heal-wait", *wait_);
        if (!nanos) return std::move(nanos).error();
        if (*nanos > std::uint64_t{3600} * 1000000000)
            return Error(EINVAL, fmt::format("bad --heal-wait '{}': at most an hour", *wait_));
        source.heal.patience = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::nanoseconds(*nanos));
    }
    return {};
}

std::string healed_words(std::uint64_t healed, std::string_view who) {
    if (healed == 0) return std::string();
    return fmt::format(" ({} of the events read from the recording: the {} was lapped)", healed, who);
}

}  // namespace evring::cli
