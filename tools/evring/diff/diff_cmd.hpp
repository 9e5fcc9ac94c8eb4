// tools/evring/diff/diff_cmd.hpp — `evring diff A B`: where two sources
// differ. Both are read as `evring digest` reads them (digest_read.hpp: the
// same options, the same open, the same follow loop), each in its own thread,
// and joined event by event (diff_compare.hpp). docs/cli.md, "evring diff".
//
// Exit status as cmp(1) and diff(1): 0 equal, 1 different, 2 trouble (a bad
// option, a source that cannot be opened, read or is damaged).
//
// Thread safety: the command runs one reading thread per source and compares
// on the calling thread.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "diff/diff_compare.hpp"
#include "digest_read.hpp"

namespace evring::cli {

struct DiffOptions {
    std::string a, b;
    ComparedReadOptions read;  // as digest's, less --name
    std::size_t max = 10;      // differences listed
    std::string by = "seqno";  // seqno: each differing event; member: counts per member too; SPAN: per span label
    std::string format = "text";
};

// What one side read, for the summary.
struct DiffSide {
    std::string path;
    std::uint64_t events = 0, gaps = 0, gap_seqnos = 0;
    bool set = false;
};

struct DiffReport {
    std::size_t max = 10;
    std::optional<Difference> first;
    std::vector<Difference> listed;
    std::uint64_t found = 0;
    bool more = false;     // a difference past --max was found
    bool partial = false;  // reading stopped there (--by seqno)
    std::array<DiffSide, 2> sides;
    std::map<std::uint32_t, MemberCounts> members;
    std::string span;  // --by SPAN: its name, and the counts per label
    std::map<std::optional<std::uint64_t>, MemberCounts> spans;
    const Schema* schema = nullptr;  // names types, flow tags and fields
    bool seqno_blanked = false;      // keys are ordinals (--blank-seqno)

    void add(const Difference& d) {
        ++found;
        if (!first) first = d;
        if (listed.size() < max) listed.push_back(d);
        else more = true;
    }
};

// The exit code (commands.hpp); add_diff registers the command.
int run_diff(DiffOptions& options);

// The report as text or one JSON object on stdout (diff_output.cpp).
void print_diff_text(const DiffReport& report, bool by_member);
void print_diff_json(const DiffReport& report, bool by_member);

}  // namespace evring::cli
