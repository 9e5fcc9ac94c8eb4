// Private to the ring set's merge (ring_set_merge.cpp): a tournament tree
// over the members' heads (RingSetSourceOptions::MergeOrder::Tree).
//
// Slot i is the merge's i-th member (members_ is in ascending member
// index). A key orders two heads with one unsigned comparison: the head's
// time since the tree's base, shifted left past the slot bits, or'ed with
// the slot, so that ties go to the lower member index. kNoHead, above every
// key, is a slot that holds no event; kUnplaced, below it and above every
// head's key, marks a head the tree cannot place from its key alone: its
// run is used up (the member must be read first), or its time lies before
// the base (a clock stepped back) or further after it than a key holds (the
// merge then takes a full pass, which takes a new base).
//
// A loser tree: inner node n (1 is the root; the leaves are size + slot)
// keeps the key that lost there; the winner's key is the caller's. When the
// winner's head moves on, play() walks its leaf's path once: per level one
// load, one comparison and two conditional moves, no branch on the outcome
// (a coin toss when members interleave finely). The nodes on a path do not
// depend on the outcomes, so their loads overlap and only the comparisons
// chain. When the same slot wins again (a burst of one writer, likely to go
// on), the least key that lost to it on its path is the earliest other head:
// until the slot's keys reach it, play() compares once and walks nothing.
//
// next(slot) is the key of the slot's event after its head (kUnplaced when
// its run holds none): when the slot wins, its next key is known without
// reading the member, so that the merge's chain from one event to the next
// is the tree's comparisons and one load. The merge keeps it (take_head).
//
// Memory: three words per slot. Thread safety: one thread (the source's).
#pragma once

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

namespace evring {

class MergeTree {
public:
    static constexpr std::uint64_t kNoHead = ~std::uint64_t{0};
    static constexpr std::uint64_t kUnplaced = kNoHead - 1;
    static constexpr std::uint32_t kMaxSlots = 1024;  // a set's most members (kMaxSetMembers)

    // Starts a tree of `slots` leaves (1 to kMaxSlots) whose heads' times lie
    // in [first, last]; false when a key cannot hold last - first (2^54 ns,
    // 208 days, at 1024 members). Then every slot's leaf is set and seal()ed.
    bool reset(std::uint32_t slots, std::uint64_t first, std::uint64_t last) {
        if (slots > kMaxSlots) return false;
        size_ = std::bit_ceil(std::max<std::uint32_t>(slots, 1));
        shift_ = static_cast<std::uint32_t>(std::bit_width(size_ - 1));
        // The greatest key, span << shift | (size - 1), stays below kUnplaced.
        span_ = (kNoHead >> shift_) - 2;
        if (first <= last && last - first > span_) return false;
        base_ = first;
        leaves_.assign(2 * static_cast<std::size_t>(size_), kNoHead);
        next_.assign(size_, kUnplaced);
        losers_.resize(size_);
        return true;
    }

    // The key of a head at `nanos` in `slot`, or kUnplaced (see above).
    std::uint64_t key(std::uint64_t nanos, std::uint32_t slot) const noexcept {
        const std::uint64_t since = nanos - base_;  // wraps past span_ when before the base
        return since <= span_ ? since << shift_ | slot : kUnplaced;
    }

    // Before seal(): the slot's head key (kNoHead: it holds none) and the
    // key of its event after the head.
    void set_leaf(std::uint32_t slot, std::uint64_t head, std::uint64_t after) {
        leaves_[size_ + slot] = head;
        next_[slot] = after;
    }

    // Plays every inner node bottom-up, O(slots). Returns the winner's key.
    std::uint64_t seal() {
        for (std::uint32_t node = size_ - 1; node != 0; --node) {
            leaves_[node] = std::min(leaves_[2 * node], leaves_[2 * node + 1]);
            losers_[node] = std::max(leaves_[2 * node], leaves_[2 * node + 1]);
        }
        const std::uint64_t top = leaves_[1];  // size 1: the one leaf
        winner_ = static_cast<std::uint32_t>(top & (size_ - 1));
        stays_below_ = 0;
        return top;
    }

    // The winner's slot took `key` (its next head, or kNoHead): returns the
    // key that wins now (kNoHead: no slot holds an event), whose slot is
    // winner().
    std::uint64_t play(std::uint64_t key) noexcept {
        if (key < stays_below_) return key;  // still before every other head
        std::uint64_t* const losers = losers_.data();
        const std::uint32_t leaf = size_ + winner_;
        replay(losers, leaf >> 1, key);
        const auto winner = static_cast<std::uint32_t>(key & (size_ - 1));
        stays_below_ = 0;
        if (winner == winner_ && key != kNoHead) {
            stays_below_ = kNoHead;
            for (std::uint32_t node = leaf >> 1; node != 0; node >>= 1)
                stays_below_ = std::min(stays_below_, losers[node]);
        }
        winner_ = winner;
        return key;
    }

    std::uint32_t winner() const noexcept { return winner_; }
    std::uint64_t& next(std::uint32_t slot) noexcept { return next_[slot]; }

private:
    // The path from `node` (the leaf's parent) to the root, shift_ levels,
    // unrolled: a loop's counter and moves cost as much as the level itself.
    void replay(std::uint64_t* losers, std::uint64_t node, std::uint64_t& key) const noexcept {
        switch (shift_) {
        case 10: level(losers, node, key); [[fallthrough]];
        case 9: level(losers, node, key); [[fallthrough]];
        case 8: level(losers, node, key); [[fallthrough]];
        case 7: level(losers, node, key); [[fallthrough]];
        case 6: level(losers, node, key); [[fallthrough]];
        case 5: level(losers, node, key); [[fallthrough]];
        case 4: level(losers, node, key); [[fallthrough]];
        case 3: level(losers, node, key); [[fallthrough]];
        case 2: level(losers, node, key); [[fallthrough]];
        case 1: level(losers, node, key); [[fallthrough]];
        default: break;
        }
    }

    // One level: the earlier of `key` and node's loser goes on up in `key`,
    // the later stays in the node; then `node` moves to its parent.
    // Conditional moves (compilers keep a branch for std::min and std::max
    // here), and on x86-64 seven instructions with `key` and `node` kept in
    // their registers: written in C++, compilers copied both at every level.
    static void level(std::uint64_t* losers, std::uint64_t& node, std::uint64_t& key) noexcept {
#if defined(__x86_64__)
        std::uint64_t stays, came;
        asm("movq (%[losers],%[node],8), %[stays]\n\t"
            "movq %[key], %[came]\n\t"
            "cmpq %[stays], %[key]\n\t"
            "cmovaq %[stays], %[key]\n\t"
            "cmovaq %[came], %[stays]\n\t"
            "movq %[stays], (%[losers],%[node],8)\n\t"
            "shrq %[node]"
            : [key] "+r"(key), [node] "+r"(node), [stays] "=&r"(stays), [came] "=&r"(came)
            : [losers] "r"(losers)
            : "cc", "memory");
#else
        std::uint64_t& stays = losers[node];
        const std::uint64_t swap = (stays ^ key) & (0 - static_cast<std::uint64_t>(stays < key));
        stays ^= swap;
        key ^= swap;
        node >>= 1;
#endif
    }

    std::vector<std::uint64_t> losers_;  // [node]: the key that lost there
    std::vector<std::uint64_t> leaves_;  // seal()'s: the leaves and each node's winner
    std::vector<std::uint64_t> next_;    // [slot]: the key of its event after its head
    std::uint64_t base_ = 0;
    std::uint64_t span_ = 0;  // the latest time since base_ a key holds
    std::uint64_t stays_below_ = 0;  // a key below it still wins (0: not known)
    std::uint32_t shift_ = 0;
    std::uint32_t size_ = 1;
    std::uint32_t winner_ = 0;
};

}  // namespace evring
