// A named reader in a follow loop (named_reader.hpp): the lock and the mark,
// where to resume, commits.
#include "cursor/named_reader.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/chrono.h>
#include <fmt/format.h>

#include <cstring>
#include <ctime>

#include "cursor/named_reader_mark.hpp"
#include "evring/clock.hpp"
#include "evring/ring/shared_word.hpp"
#include "evring/source/durable_source.hpp"
#include "source/ring_set_source.hpp"

namespace evring {

std::string utc_text(std::uint64_t nanos) {
    const std::time_t seconds = static_cast<std::time_t>(nanos / 1'000'000'000);
    std::tm tm{};
    ::gmtime_r(&seconds, &tm);
    return fmt::format("{:%Y-%m-%dT%H:%M:%S}Z", tm);
}

Result<std::unique_ptr<NamedReader>> NamedReader::open(std::string_view name) {
    if (auto s = check_reader_name(name); !s) return std::move(s).error();
    auto dir = reader_state_dir();
    if (!dir) return std::move(dir).error();
    std::unique_ptr<NamedReader> reader(new NamedReader);
    reader->name_ = name;
    reader->dir_ = *dir;
    reader->file_ = named_position_path(*dir, name);
    const std::string lock = fmt::format("{}/{}.lock", *dir, name);
    reader->lock_fd_ = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0600);
    if (reader->lock_fd_ < 0) return Error::from_errno(errno, fmt::format("opening '{}'", lock));
    struct stat st {};
    if (::fstat(reader->lock_fd_, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != ::geteuid())
        return Error(EPERM, fmt::format("'{}' is not a regular file of this user: refused", lock));
    if (::flock(reader->lock_fd_, LOCK_EX | LOCK_NB) != 0)
        return Error(EBUSY, errno == EWOULDBLOCK
                                ? fmt::format("reader '{}' is in use by another process (it holds '{}')", name, lock)
                                : fmt::format("locking '{}': {}", lock, std::strerror(errno)));
    if (static_cast<std::size_t>(st.st_size) != kMarkFileSize && ::ftruncate(reader->lock_fd_, kMarkFileSize) != 0)
        return Error::from_errno(errno, fmt::format("sizing '{}'", lock));
    void* map = ::mmap(nullptr, kMarkFileSize, PROT_READ | PROT_WRITE, MAP_SHARED, reader->lock_fd_, 0);
    if (map == MAP_FAILED) return Error::from_errno(errno, fmt::format("mapping '{}'", lock));
    reader->mark_ = static_cast<Mark*>(map);
    // The mark only ever makes a notice more precise: one that is not ours
    // (a new file, another format) is ignored, never trusted.
    if (std::memcmp(reader->mark_->magic, kMarkMagic, sizeof kMarkMagic) == 0) {
        reader->prior_instance_ = reader->mark_->instance;
        reader->prior_written_ = reader->mark_->written;
        reader->prior_in_flight_ = reader->mark_->in_flight;
    }
    // A refused position is the error of resume(), unless --reset replaces it there.
    auto saved = load_named_position(*dir, name);
    if (!saved) reader->refused_ = std::move(saved).error();
    else if (*saved) reader->committed_ = std::move(**saved);
    return reader;
}

NamedReader::~NamedReader() {
    if (mark_ != nullptr) ::munmap(mark_, kMarkFileSize);
    if (lock_fd_ >= 0) ::close(lock_fd_);  // and with it the lock
}

Result<Position> NamedReader::start_over(const EventSource& source, const Position& start,
                                         std::vector<std::string>& notices, std::string why) {
    (void)source;
    notices.push_back(fmt::format("reader '{}': {}", name_, why));
    handing_ = 0;
    return start;
}

Status NamedReader::same_source() const {
    if (committed_.ring == ring_ && committed_.kind == kind_) return {};
    return Error(EINVAL, fmt::format("reader '{}' reads {} '{}', not {} '{}' (its position is in '{}'): use another "
                                     "name, or --reset to move it",
                                     name_, describe(committed_.kind), committed_.ring, describe(kind_), ring_, file_));
}

Result<Position> NamedReader::resume(EventSource& source, const Position& start, bool start_given, bool reset,
                                     std::vector<std::string>& notices) {
    const SourceIdentity& id = source.identity();
    if (refused_) {
        if (!reset) return *refused_;
        if (auto s = remove_named_position(dir_, name_); !s) return std::move(s).error();
        notices.push_back(fmt::format("reader '{}': its position was refused ({}); --reset removed it", name_,
                                      refused_->message()));
        refused_.reset();
    }
    if (auto* durable = dynamic_cast<DurableSource*>(&source); durable != nullptr)
        return resume_durable(source, *durable, start, start_given, reset, notices);
    // A recording of a ring set keeps the member of each event too.
    if (dynamic_cast<const RingSetSource*>(&source) != nullptr || (id.members && id.kind == SourceKind::Recording)) {
        if (reset) {
            if (auto s = remove_named_position(dir_, name_); !s) return std::move(s).error();
            committed_ = NamedPosition{};
        }
        return resume_set(source, start, start_given, reset, notices);
    }
    if (id.members)
        return Error(EINVAL, fmt::format("named reader: '{}' is a {} of a ring set; named readers of those are not built "
                                         "yet (they are of a live ring set)",
                                         id.location, describe(id.kind)));
    if (id.instance == 0 || id.path.empty())
        return Error(EINVAL, fmt::format("named reader: '{}' has no instance identity to resume by", id.location));
    ring_ = id.path;
    kind_ = id.kind;
    instance_ = id.instance;
    const bool saved = committed_.instance != 0;
    const std::uint64_t last = saved ? committed_.last_seqno[0] : 0;
    if (reset) {
        if (auto s = remove_named_position(dir_, name_); !s) return std::move(s).error();
        committed_ = NamedPosition{};
        return start_over(source, start, notices, "position forgotten (--reset); starting at --from");
    }
    if (!saved) return start_over(source, start, notices, "no position yet; starting at --from");
    if (auto s = same_source(); !s) return std::move(s).error();
    if (start_given)
        return start_over(source, start, notices,
                          fmt::format("an explicit --from starts over (the position after seqno {} is replaced at "
                                      "the next commit)",
                                      last));
    if (committed_.instance != instance_) {
        const std::string old_end =
            committed_.instance_ended
                ? fmt::format("was read to its end (seqno {})", last)
                : fmt::format("was read up to seqno {}; how many events it held after that is not known (it is "
                              "gone)",
                              last);
        return start_over(source, Position::oldest(), notices,
                          fmt::format("'{}' is a new ring instance; starting at its oldest event. The instance read "
                                      "before {}",
                                      ring_, old_end));
    }
    handing_ = last;
    std::string tail;
    if (prior_instance_ != instance_) {
        tail = "events written after that commit, if any, come again (no mark of the previous run's output)";
    } else {
        if (prior_written_ > last) {
            redo_first_ = last + 1;
            redo_last_ = prior_written_;
            tail = fmt::format("the previous run wrote seqno {}..{} after that commit: those events come again",
                               redo_first_, redo_last_);
        } else {
            tail = "nothing was written after that commit";
        }
        if (prior_in_flight_ > std::max(prior_written_, last))
            tail += fmt::format("; it was stopped while writing up to seqno {}, so events up to it may come again "
                                "too",
                                prior_in_flight_);
    }
    notices.push_back(fmt::format("reader '{}' resumes after seqno {} of {} '{}' (committed {}); {}", name_, last,
                                  describe(kind_), ring_, utc_text(committed_.commit_nanos), tail));
    return Position::after(last);
}

void NamedReader::started(const EventSource& source) {
    const SourceIdentity& id = source.identity();
    if (per_member_) {
        if (set_ != nullptr) set_ = dynamic_cast<const RingSetSource*>(&source);  // follow_name may have opened it again
        std::memcpy(mark_->magic, kMarkMagic, sizeof kMarkMagic);
        mark_->instance = id.instance;
        if (id.instance != instance_) {  // another set at the name: every member starts over
            instance_ = id.instance;
            members_.clear();
        }
        if (set_ != nullptr) sync_members();
        mark_members(false);
        mark_members(true);
        return;
    }
    if (id.instance != instance_) {  // follow_name: a new ring at the name
        instance_ = id.instance;
        ring_ = id.path;
        handing_ = 0;
        redo_first_ = 1;
        redo_last_ = 0;
    }
    std::memcpy(mark_->magic, kMarkMagic, sizeof kMarkMagic);
    shared::store_relaxed(mark_->instance, instance_);
    shared::store_relaxed(mark_->written, handing_);  // M1/M2's words (output_writing)
    shared::store_relaxed(mark_->in_flight, handing_);
}

// Plain stores to a shared mapping: the page cache keeps them when the
// process is killed, and the write(2) between writing() and written() is a
// call the compiler cannot move them across.
void NamedReader::writing() noexcept {
    if (per_member_) return mark_members(false);
    if (mark_ != nullptr) mark_->in_flight = handing_;
}

void NamedReader::written() noexcept {
    if (per_member_) return mark_members(true);
    if (mark_ != nullptr) mark_->written = handing_;
}

// M1 (output_writing) and M2 (output_written): relaxed stores of the
// output's thread. Nothing in this process reads the mark; the next process
// to take the lock reads it after this one is gone, when every store that
// happened is in the page cache, so no ordering is needed, only whole words
// (the follow loop's thread may store the same words in started()).
void NamedReader::output_writing(std::uint64_t seqno) noexcept {
    if (mark_ != nullptr) shared::store_relaxed(mark_->in_flight, seqno);
}

void NamedReader::output_written(std::uint64_t seqno) noexcept {
    if (mark_ != nullptr) shared::store_relaxed(mark_->written, seqno);
}

void NamedReader::output_member_writing(std::uint32_t member, std::uint64_t seqno) noexcept {
    if (mark_ != nullptr && member < detail::kMaxMembers) shared::store_relaxed(member_marks()[member].in_flight, seqno);
}

void NamedReader::output_member_written(std::uint32_t member, std::uint64_t seqno) noexcept {
    if (mark_ != nullptr && member < detail::kMaxMembers) shared::store_relaxed(member_marks()[member].written, seqno);
}

Status NamedReader::commit(bool ended) {
    if (durable_ != nullptr) return commit_durable();
    if (per_member_) return commit_set(ended);
    if (handing_ == 0) return {};  // nothing consumed: the next run is still a first run
    NamedPosition p;
    p.name = name_;
    p.ring = ring_;
    p.kind = kind_;
    p.instance = instance_;
    p.last_seqno = {handing_};
    p.instance_ended = ended;
    p.commit_nanos = wall_clock_nanos();
    if (auto s = commit_named_position(dir_, p); !s) return s;
    committed_ = std::move(p);
    return {};
}

std::string NamedReader::redelivered_words() const {
    if (per_member_) return set_redelivered_words();
    if (redo_last_ < redo_first_) return std::string();
    return fmt::format("reader '{}': {} events written again that the previous run had written after its last "
                       "commit (seqno {}..{})",
                       name_, redelivered_, redo_first_, redo_last_);
}

void CommitSink::started(const EventSource& source) {
    reader_.started(source);
    inner_.started(source);
}

bool CommitSink::event(const SourceEvent& event) {
    reader_.handing(event.descriptor.seqno, event.member);
    if (!inner_.event(event)) return false;
    // The clock is read every 256 events, not per event.
    if ((++since_check_ & 255u) != 0) return true;
    return commit_if_due();
}

bool CommitSink::taken(std::uint64_t first, std::uint64_t last) {
    reader_.handing_run(first, last);
    // As event(): the clock is read once 256 more events have gone.
    const std::uint32_t before = since_check_;
    since_check_ += static_cast<std::uint32_t>(last - first + 1);
    if ((before >> 8) == (since_check_ >> 8)) return true;
    return commit_if_due();
}

bool CommitSink::idle() {
    if (!inner_.idle()) return false;
    return commit_if_due();
}

bool CommitSink::commit_if_due() {
    if (interval_ == kAtEnd) return true;
    const auto now = std::chrono::steady_clock::now();
    if (now < next_commit_ || !reader_.dirty()) return true;
    next_commit_ = now + interval_;
    // Committed only once what it covers is written.
    if (!flush_()) return false;
    if (auto s = reader_.commit(); !s) {
        error_ = std::move(s).error();
        return false;
    }
    return true;
}

}  // namespace evring
