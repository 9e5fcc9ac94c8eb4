// RecordingSource across the files of a rotated series (recording_source.hpp):
// going on in the next file, and past a file that is missing, unreadable,
// foreign or cut short, so one bad file never hides the intact ones after it.
#include <dirent.h>

#include <algorithm>
#include <string_view>

#include <fmt/format.h>

#include "source/recording_source.hpp"
#include "recording/recording_writer.hpp"

namespace evring {
namespace {

// The indices N > `after` for which `<base>.N` is in base's directory, in
// order. Only names the directory really holds are tried, so a gap of any
// width costs one directory read, never a probe per missing index.
std::vector<std::uint32_t> later_indices(const std::string& base, std::uint32_t after) {
    const auto slash = base.rfind('/');
    const std::string dir =
        slash == std::string::npos ? "." : base.substr(0, slash == 0 ? 1 : slash);
    const std::string prefix = (slash == std::string::npos ? base : base.substr(slash + 1)) + ".";
    std::vector<std::uint32_t> found;
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return found;
    while (const dirent* entry = ::readdir(d)) {
        const std::string_view name(entry->d_name);
        if (!name.starts_with(prefix)) continue;
        const std::string_view digits = name.substr(prefix.size());
        // At most 9 digits: fits a uint32; a leading 0 is not a name the writer makes.
        if (digits.empty() || digits.size() > 9 || digits[0] == '0') continue;
        if (!std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
            continue;
        std::uint32_t index = 0;
        for (char c : digits) index = index * 10 + static_cast<std::uint32_t>(c - '0');
        if (index > after) found.push_back(index);
    }
    ::closedir(d);
    std::sort(found.begin(), found.end());
    return found;
}

std::string quoted_list(const std::vector<std::string>& names) {
    std::string text;
    for (std::size_t i = 0; i < names.size() && i < 3; ++i) text += (i == 0 ? "" : ", ") + names[i];
    if (names.size() > 3) text += fmt::format(" and {} more", names.size() - 3);
    return text;
}

}  // namespace

struct RecordingSource::Successor {
    std::optional<RecordingReader> reader;
    std::uint32_t index = 0;
    std::string first_problem;         // why the expected next file was not used
    std::vector<std::string> skipped;  // "'FILE.N' (why)" for each file passed over
};

RecordingSource::Successor RecordingSource::find_successor() {
    Successor next;
    const std::uint32_t expected = file_index_ + 1;
    std::vector<std::uint32_t> candidates = later_indices(base_, file_index_);
    if (candidates.empty() || candidates.front() != expected) {
        next.first_problem = "it does not exist";
        if (continued_ || !candidates.empty())
            next.skipped.push_back(fmt::format("'{}' (missing)", rotated_path(base_, expected)));
    }
    for (const std::uint32_t index : candidates) {
        const std::string path = rotated_path(base_, index);
        auto reader = RecordingReader::open(path, follow_);
        std::string problem;
        if (!reader)
            problem = reader.error().message();
        else if (series_id_ != 0 && reader->header().series_id != series_id_)
            problem =
                fmt::format("that file belongs to another recording (series {:016x}, not {:016x})",
                            reader->header().series_id, series_id_);
        if (problem.empty()) {
            next.reader.emplace(std::move(reader).value());
            next.index = index;
            return next;
        }
        if (next.first_problem.empty()) next.first_problem = problem;
        next.skipped.push_back(fmt::format("'{}' ({})", path, problem));
    }
    return next;
}

void RecordingSource::adopt_next_file(RecordingReader next, std::uint32_t index) {
    reader_.emplace(std::move(next));
    file_index_ = index;
    ++files_;
    status_.reset();
    continued_ = false;
    phase_ = Phase::Reading;
}

SourceStep RecordingSource::next_file(SourceItem& item) {
    const std::string current = reader_->path();
    const std::string expected = rotated_path(base_, file_index_ + 1);
    const bool cut = status_ == ReadStatus::Truncated;
    Successor next = find_successor();
    if (!next.reader) {
        phase_ = Phase::Done;
        if (!continued_ && next.skipped.empty())
            return SourceStep::End;  // a cut last file: said already
        damaged_ = true;
        if (continued_ && next.skipped.size() == 1) {
            ended_ = fmt::format("end of the recording ('{}' cannot be read)", expected);
            notice_ = fmt::format("recording '{}' continues in '{}', which cannot be read: {}",
                                  current, expected, next.first_problem);
        } else {
            ended_ = fmt::format("end of the recording (no readable file after '{}')", current);
            notice_ = fmt::format(
                "recording '{}' {}; no later file of the recording can be read: {}", current,
                continued_ ? "continues" : "was cut short", quoted_list(next.skipped));
        }
        item.notice = notice_;
        return SourceStep::Notice;
    }
    const std::string path = next.reader->path();
    adopt_next_file(std::move(*next.reader), next.index);
    if (next.skipped.empty() && !cut) {
        notice_ = fmt::format("recording '{}' continues in '{}'", current, path);
    } else {
        damaged_ = true;
        // A cut file was counted by its own Damage report; skipped files are a damaged part of
        // their own.
        if (!next.skipped.empty()) ++counters_.damage_reports;
        bridge_ = next.skipped.empty() ? fmt::format("at the cut end of recording '{}'", current)
                                       : fmt::format("with {}", quoted_list(next.skipped));
        notice_ =
            next.skipped.empty()
                ? fmt::format("recording '{}' was cut short; going on with '{}'", current, path)
                : fmt::format(
                      "recording '{}' {}, but {}; skipping {} file(s) and going on with '{}'",
                      current, cut ? "was cut short" : fmt::format("continues in '{}'", expected),
                      next.skipped.size() == 1
                          ? fmt::format("'{}' cannot be read: {}", expected, next.first_problem)
                          : "later files cannot be read: " + quoted_list(next.skipped),
                      next.skipped.size(), path);
    }
    item.notice = notice_;
    return SourceStep::Notice;
}

void RecordingSource::account(std::uint64_t last_seqno) noexcept {
    accounted_ = std::max(accounted_, last_seqno);
}

bool RecordingSource::bridge(std::uint64_t seqno, SourceItem& item) {
    if (bridge_.empty()) return false;
    const std::string where = std::move(bridge_);
    bridge_.clear();
    // Nothing seen before the skip (the first file was cut before its first
    // block) or files out of order: no range is known.
    if (accounted_ == 0 || seqno <= accounted_ + 1) return false;
    const SourceGap gap{accounted_ + 1, seqno - accounted_ - 1, GapReason::LostToDamage, {}};
    account(seqno - 1);
    if (skip_events_ > index_ || !started_ || gap.last_seqno() < min_seqno_)
        return false;  // before the start
    bridge_detail_ = gap.count == 1
                         ? fmt::format("lost 1 event (seqno {}) {}", gap.first_seqno, where)
                         : fmt::format("lost {} events (seqno {}..{}) {}", gap.count,
                                       gap.first_seqno, gap.last_seqno(), where);
    item.gap = gap;
    item.gap.detail = bridge_detail_;
    replay_record_ = true;
    return true;
}

}  // namespace evring
