// evring mirror: a relayed stream (the NATS event source) through the
// library's follow loop into a new local ring, so local programs read it
// with the ordinary reader API and CLI. The source is opened like every
// command's (open_source: a registered scheme such as nats://, or a ring,
// snapshot or recording); a live ring source registers the mirror as its reader.
//
// Sequence numbers: the mirror ring numbers its events itself, from 1, one
// after another; source gaps take no sequence numbers in it. Mirror seqno M
// is therefore source seqno M + OFFSET, where OFFSET changes only at a gap
// (or a new source ring instance); the mirror prints each "mirror seqno M =
// source seqno S" line on stderr, and with --seqno-tag INDEX each event also
// carries its source seqno in content_ext[INDEX] (docs/distributed.md).
//
// A stream relayed from a ring set: the mirror is one ring holding the set's
// merged stream in the stream's (time) order, and says once that member ids
// are not kept (the ring has no member column; --seqno-tag keeps the source
// seqno, not the member). Every member counts its own sequence numbers, so
// the lines say "mirror seqno M = member K seqno S", printed when member K's
// numbering jumps, and gaps name their member.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <bit>
#include <cstring>
#include <vector>

#include "commands.hpp"
#include "output/escape.hpp"
#include "evring/source/follow.hpp"
#include "evring/ring/publisher.hpp"
#include "registry/reader_kinds.hpp"
#include "sink/registering_sink.hpp"
#include "evring/ring/ring_writer.hpp"
#include "evring/schema/schema_resolve.hpp"
#include "nats_cmd.hpp"
#include "open.hpp"
#include "ops/stop.hpp"
#include "output/values.hpp"

namespace evring::cli {
namespace {

struct MirrorPlan {
    FollowOptions follow;
    RingConfig ring;
    bool sizes_given = false;
    int seqno_tag = -1;
    std::optional<Schema> schema;  // for --where
};

Result<MirrorPlan> plan_mirror(const MirrorOptions& options) {
    MirrorPlan plan;
    if (auto s = options.select.check_range(plan.follow); !s) return std::move(s).error();
    if (options.seqno_tag) {
        auto index = parse_int_in("--seqno-tag", *options.seqno_tag, 0, 3);
        if (!index) return std::move(index).error();
        plan.seqno_tag = *index;
    }
    auto config = parse_ring_config(options.to);
    if (!config) return Error(EINVAL, fmt::format("bad --to '{}': {}", printable(options.to), config.error().message()));
    plan.ring = *config;
    plan.sizes_given = options.to.find(':') != std::string::npos;
    plan.follow.payloads = PayloadRead::Copy;
    plan.follow.stop_flag = &stop_flag();
    return plan;
}

unsigned shift_of(std::uint64_t power_of_two, unsigned fallback) {
    return std::has_single_bit(power_of_two) ? static_cast<unsigned>(std::countr_zero(power_of_two)) : fallback;
}

// The mirror ring: the source ring's sizes unless given, its content type,
// schema hash and (when it embeds cleanly) its schema.
Result<RingWriter> create_mirror(const MirrorPlan& plan, const EventSource& source, bool keep) {
    RingConfig config = plan.ring;
    const SourceIdentity& id = source.identity();
    if (!plan.sizes_given && id.ring_size.descriptor_capacity != 0) {
        config.descriptor_shift = shift_of(id.ring_size.descriptor_capacity, config.descriptor_shift);
        config.payload_buf_shift = shift_of(id.ring_size.payload_buf_size, config.payload_buf_shift);
    }
    CreateOptions create;
    create.keep_on_close = keep;
    const auto blob = source.schema();
    RingContent content(id.content_type, id.schema_hash, {blob.begin(), blob.end()});
    auto writer = RingWriter::create(RingSpec(config, content), create);
    if (writer || blob.empty()) return writer;
    // A schema that does not embed (damaged, or another hash): the ring without it.
    fmt::print(stderr, "evring: the stream's schema cannot be embedded ({}); the mirror ring has none\n",
               printable(writer.error().message()));
    return RingWriter::create(RingSpec(config, RingContent(id.content_type, id.schema_hash)), create);
}

class MirrorSink final : public FollowSink {
public:
    MirrorSink(const MappedRing& ring, int seqno_tag, bool members)
        : publisher_(ring, WriterSharing::Exclusive), tag_(seqno_tag), members_(members) {}

    bool event(const SourceEvent& event) override {
        const EventDescriptor& d = event.descriptor;
        Reservation r = publisher_.reserve(d.payload_size);
        if (!r) {
            status_ = Error(EFBIG, fmt::format("source seqno {}: a {}-byte payload does not fit the mirror ring "
                                               "(at most {}): give --to NAME:DESC_SHIFT:PAYLOAD_SHIFT",
                                               d.seqno, d.payload_size, publisher_.max_payload_size()));
            return false;
        }
        EventDescriptor& staged = r.descriptor();
        staged.event_type = d.event_type;
        staged.record_epoch_nanos = d.record_epoch_nanos;
        staged.content_ext = d.content_ext;
        if (tag_ >= 0) staged.content_ext[static_cast<std::size_t>(tag_)] = d.seqno;
        if (d.payload_size > 0) std::memcpy(r.payload(), event.payload.data(), d.payload_size);
        std::uint64_t& last = last_source(event.member);
        if (d.seqno != last + 1) {
            if (members_)
                fmt::print(stderr, "evring: mirror seqno {} = member {} seqno {}\n", r.seqno(), event.member, d.seqno);
            else
                fmt::print(stderr, "evring: mirror seqno {} = source seqno {}\n", r.seqno(), d.seqno);
        }
        last = d.seqno;
        publisher_.commit(r);
        ++events_;
        return true;
    }

    bool gap(const SourceGap& gap) override {
        fmt::print(stderr, "evring: source {}seqno {}..{} ({} events) not in the mirror: {}\n",
                   members_ ? fmt::format("member {} ", gap.member) : std::string(), gap.first_seqno,
                   gap.last_seqno(), gap.count, describe(gap.reason));
        if (!gap.detail.empty()) fmt::print(stderr, "evring: {}\n", printable(gap.detail));
        return true;
    }

    void notice(std::string_view text) override {
        fmt::print(stderr, "evring: {}\n", printable(text));
        last_source_.assign(last_source_.size(), 0);  // a new ring instance numbers from its own start
    }

    const Status& status() const { return status_; }
    std::uint64_t events() const { return events_; }

private:
    // The last source seqno mirrored, per member (one entry for a ring; a set
    // has at most 1024 members, the stream reader's bound).
    std::uint64_t& last_source(std::uint32_t member) {
        if (last_source_.size() <= member) last_source_.resize(std::size_t{member} + 1, 0);
        return last_source_[member];
    }

    Publisher publisher_;
    int tag_;
    bool members_;
    std::vector<std::uint64_t> last_source_ = std::vector<std::uint64_t>(1, 0);
    std::uint64_t events_ = 0;
    Status status_;
};

}  // namespace

int run_mirror(const MirrorOptions& options) {
    auto plan = plan_mirror(options);
    if (!plan) return usage_error(plan.error());
    auto source = open_for_command(options.stream, {});
    if (!source) return runtime_error(source.error());
    std::unique_ptr<EventPredicate> where;
    if (options.where || options.interest.given()) {
        auto found = resolve_schema(**source, {.schema_file = options.schema_file});
        if (!found) return runtime_error(found.error());
        if (!found->warning.empty()) report_error(found->warning);
        plan->schema = std::move(found->schema);
    }
    const Schema* schema = plan->schema ? &*plan->schema : nullptr;
    auto interest = options.interest.resolve(schema, **source, options.stream, options.no_register);
    if (!interest) return usage_error(interest.error());
    // Mirror what we asked for, whoever else listens.
    if (*interest) InterestOption::narrow(**interest, schema, plan->follow.filter.types);
    if (options.where) {
        if (auto s = compile_where_option(plan->follow, options.where, plan->schema ? &*plan->schema : nullptr, where,
                                          source->get());
            !s)
            return usage_error(s.error());
    }
    auto writer = create_mirror(*plan, **source, options.keep);
    if (!writer) return runtime_error(writer.error());
    fmt::print(stderr, "evring: mirroring {} into ring file {}\n", printable((*source)->identity().path),
               printable(writer->path()));
    if ((*source)->identity().members)
        fmt::print(stderr,
                   "evring: {} comes from a ring set: the mirror holds its merged events without their member "
                   "ids (watch or record the stream to keep them)\n",
                   printable((*source)->identity().path));
    install_stop_handlers();
    MirrorSink sink(writer->ring(), plan->seqno_tag, (*source)->identity().members);
    RegisteringSink seen(sink, {"mirror", reader_kinds::kMirror, fmt::format("-> {}", writer->path())},
                         !options.no_register);
    if (*interest) seen.set_interest(**interest);
    auto result = follow(*source, plan->follow, seen);
    if (!result) return runtime_error(result.error());
    if (!sink.status()) return runtime_error(sink.status().error());
    const std::uint64_t foreign = result->counters.foreign;
    fmt::print(stderr, "evring: mirrored {} events{}\n", sink.events(),
               foreign == 0 ? std::string() : fmt::format(" ({} messages not evring's skipped)", foreign));
    return kExitOk;
}

Command add_mirror(CLI::App& app) {
    auto options = std::make_shared<MirrorOptions>();
    MirrorOptions& m = *options;
    auto* mirror = app.add_subcommand("mirror", "Write a relayed JetStream stream (or any source) into a local ring");
    mirror->add_option("SOURCE", m.stream,
                         "nats://HOST[:PORT]/STREAM, or a ring name or path, a snapshot or a recording")
        ->required();
    mirror->add_option("--to", m.to, "Ring to create: NAME or PATH, optionally NAME:DESC_SHIFT:PAYLOAD_SHIFT")
        ->required();
    m.select.add_range(*mirror, {.from = "oldest (default), latest, SEQNO, -N or a time", .until = nullptr});
    mirror->add_option("--seqno-tag", m.seqno_tag, "Store the source seqno in content_ext[INDEX]")
        ->type_name("INDEX");
    mirror->add_flag("--keep", m.keep, "Leave the ring file when the mirror exits");
    mirror->add_flag("--no-register", m.no_register,
                       "Do not announce this reader in the source ring's reader registry");
    mirror->add_option("--where", m.where, "Mirror only events this expression keeps (docs/cli.md)")->type_name("EXPR");
    mirror->add_option("--schema", m.schema_file, "Schema file for --where and --keywords when the source has none")
        ->type_name("FILE");
    m.interest.add(*mirror);
    return {mirror, [options] { return run_mirror(*options); }};
}

}  // namespace evring::cli
