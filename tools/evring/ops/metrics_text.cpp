// Rendering rings as Prometheus metrics: gather every family's samples, then
// write each family once.
#include "ops/metrics_text.hpp"

#include <fmt/format.h>

#include <map>

#include "cursor/named_position.hpp"
#include "registry/reader_kinds.hpp"
#include "evring/ring/ring_reader.hpp"
#include "util/text_escape.hpp"

namespace evring::cli {
namespace {

struct Family {
    const char* help;
    const char* type;
    std::string samples;
};

// Families in the order they are written.
class Exposition {
public:
    void add(const std::string& name, const char* type, const char* help, const std::string& labels, double value) {
        auto [it, fresh] = families_.try_emplace(name, Family{help, type, {}});
        if (fresh) order_.push_back(name);
        it->second.samples += fmt::format("{}{{{}}} {}\n", name, labels, value);
    }
    std::string text() const {
        std::string out;
        for (const std::string& name : order_) {
            const Family& f = families_.at(name);
            out += fmt::format("# HELP {} {}\n# TYPE {} {}\n{}", name, f.help, name, f.type, f.samples);
        }
        return out;
    }

private:
    std::vector<std::string> order_;
    std::map<std::string, Family> families_;
};

const char* const kUpHelp = "1 when the ring could be read, 0 otherwise.";

// `ring`: the sample's labels (`ring="NAME"`, and `member="N"` for a set's member).
void add_ring(Exposition& e, RingView& view, const RingRefresh& r, const std::string& ring) {
    const RingSample& s = r.sample;
    const RingSize& size = view.ring().header().size;
    e.add("evring_up", "gauge", kUpHelp, ring, 1);
    e.add("evring_events_total", "counter", "Events published into the ring since it was created (its last sequence number).",
          ring, static_cast<double>(s.newest_seqno));
    e.add("evring_payload_bytes_total", "counter", "Payload bytes published into the ring since it was created.", ring,
          static_cast<double>(s.next_payload_byte));
    e.add("evring_last_seqno", "gauge", "The ring's last sequence number handed to a writer.", ring,
          static_cast<double>(s.newest_seqno));
    e.add("evring_events_in_ring", "gauge", "Events whose descriptors are still in the ring.", ring,
          static_cast<double>(s.events_in_ring));
    e.add("evring_descriptor_capacity", "gauge", "Descriptor slots of the ring.", ring,
          static_cast<double>(size.descriptor_capacity));
    e.add("evring_payload_window_bytes", "gauge", "Payload bytes of the events still in the ring.", ring,
          static_cast<double>(s.payload_in_use));
    e.add("evring_payload_buffer_bytes", "gauge", "Size of the ring's payload buffer.", ring,
          static_cast<double>(size.payload_buf_size));
    e.add("evring_payload_window_ratio", "gauge", "Share of the payload buffer holding events still in the ring.",
          ring, size.payload_buf_size == 0 ? 0.0
                                           : static_cast<double>(s.payload_in_use) /
                                                 static_cast<double>(size.payload_buf_size));
    e.add("evring_writer_alive", "gauge", "1 while a writer holds the ring open.", ring, r.writer_alive ? 1 : 0);
    e.add("evring_writers", "gauge", "Writer processes holding the ring (in this pid namespace).", ring,
          static_cast<double>(r.writer_pids));
    e.add("evring_abandoned_reservations_total", "counter",
          "Reservations seen never committed (their writer gave them up), since the exporter started.", ring,
          static_cast<double>(view.sampler().abandoned()));
    for (const auto& [type, tally] : view.sampler().totals()) {
        const std::string labels = fmt::format("{},type=\"{}\",type_number=\"{}\"", ring,
                                               escape_label(view.type_name(type)), type);
        e.add("evring_type_events_total", "counter",
              "Events by type seen since the exporter started (scaled from a sample when the ring outran it).",
              labels, tally.events);
        e.add("evring_type_payload_bytes_total", "counter", "Payload bytes by event type since the exporter started.",
              labels, tally.bytes);
    }
    e.add("evring_registry_ok", "gauge", "1 when the reader registry is missing or valid, 0 when it is unusable.",
          ring, r.registry_problem.empty() ? 1 : 0);
    if (!r.readers) return;
    std::map<std::string, int> by_liveness{{"alive", 0}, {"stale", 0}, {"dead", 0}};
    for (const ReaderEntry& reader : r.readers->readers) {
        ++by_liveness[to_string(reader.liveness)];
        const std::string labels =
            fmt::format("{},reader=\"{}\",kind=\"{}\",pid=\"{}\",slot=\"{}\"", ring, escape_label(reader.name),
                        reader_kinds::name(reader.kind), reader.pid, reader.slot);
        e.add("evring_reader_alive", "gauge", "1 while the registered reader's process lives and publishes.", labels,
              reader.liveness == ReaderLiveness::Alive ? 1 : 0);
        if (reader.lag) {
            e.add("evring_reader_lag_events", "gauge", "Events published that the reader has not read yet.", labels,
                  static_cast<double>(reader.lag->events));
            if (reader.lag->bytes)
                e.add("evring_reader_lag_bytes", "gauge", "Payload bytes of the events the reader has not read.",
                      labels, static_cast<double>(*reader.lag->bytes));
            if (reader.lag->nanos)
                e.add("evring_reader_lag_seconds", "gauge",
                      "How much older the reader's next event is than the ring's newest.", labels,
                      static_cast<double>(*reader.lag->nanos) / 1e9);
        }
        e.add("evring_reader_lost_events_total", "counter", "Events the reader lost by falling behind the writer.",
              labels, static_cast<double>(reader.lost));
        e.add("evring_reader_abandoned_total", "counter", "Reservations the reader skipped as abandoned.", labels,
              static_cast<double>(reader.abandoned));
    }
    for (const auto& [liveness, count] : by_liveness)
        e.add("evring_readers", "gauge", "Registered readers by liveness.",
              fmt::format("{},liveness=\"{}\"", ring, liveness), count);
}

// Named readers (docs/named-readers.md) whose position is of this ring's
// path: the position, the lag while the position is of this ring instance
// (a new instance is read from its oldest event: no lag to speak of), and
// the last commit. They are read from their files, not from the ring.
void add_named_readers(Exposition& e, const RingView& view, const RingSample& s, const std::string& ring,
                       const std::vector<NamedPosition>& named) {
    for (const NamedPosition& p : named) {
        if (p.kind != SourceKind::Ring || p.ring != view.identity().path || p.last_seqno.empty()) continue;
        const std::string labels = fmt::format("{},named_reader=\"{}\"", ring, escape_label(p.name));
        const std::uint64_t last = p.last_seqno[0];
        e.add("evring_named_reader_position", "gauge", "The last sequence number a named reader committed.", labels,
              static_cast<double>(last));
        if (p.instance == view.identity().instance)
            e.add("evring_named_reader_lag_events", "gauge",
                  "Events published after a named reader's committed position in this ring instance.", labels,
                  static_cast<double>(s.newest_seqno > last ? s.newest_seqno - last : 0));
        e.add("evring_named_reader_last_commit_timestamp_seconds", "gauge",
              "When a named reader last committed, in seconds since the Unix epoch.", labels,
              static_cast<double>(p.commit_nanos) / 1e9);
    }
}

// A writer that restarted under the name made a new ring file: scrape that
// one from now on (its counters start again, which Prometheus reads as a
// reset), as `watch --follow-name` would follow it.
void follow_name(MetricsTarget& t) {
    auto moved = t.view->reopen_if_renamed();
    if (!moved) {
        t.error = moved.error().message();
        t.view.reset();  // reopened at the next scrape
    } else if (*moved) {
        t.view = std::move(*moved);
    } else if (t.view->removed()) {
        // Nothing at the name: the ring is down until one appears there.
        t.error = fmt::format("ring '{}' was removed", t.location);
        t.view.reset();
    }
}

// A ring set: every member as a ring labelled with its member index, then
// the set's own totals over the members read.
void add_set(Exposition& e, MetricsTarget& t) {
    const std::string ring = fmt::format("ring=\"{}\"", escape_label(t.location));
    if (auto s = t.set->refresh(); !s) {
        t.error = s.error().message();
        t.set.reset();  // reopened at the next scrape
        e.add("evring_up", "gauge", kUpHelp, ring, 0);
        return;
    }
    double events = 0;
    double bytes = 0;
    double alive = 0;
    for (RingSetView::Member& m : t.set->members()) {
        const std::string labels = fmt::format("{},member=\"{}\"", ring, m.index);
        if (!m.latest) {
            e.add("evring_up", "gauge", kUpHelp, labels, 0);
            continue;
        }
        add_ring(e, *m.view, *m.latest, labels);
        events += static_cast<double>(m.latest->sample.newest_seqno);
        bytes += static_cast<double>(m.latest->sample.next_payload_byte);
        alive += m.latest->writer_alive ? 1 : 0;
    }
    e.add("evring_up", "gauge", kUpHelp, ring, 1);
    e.add("evring_set_members", "gauge", "Members a ring set's manifest lists.", ring,
          static_cast<double>(t.set->members().size()));
    e.add("evring_set_max_members", "gauge", "Members a ring set can have.", ring,
          static_cast<double>(t.set->max_members()));
    e.add("evring_set_members_with_writer", "gauge", "Members of a ring set whose writer holds them open.", ring,
          alive);
    e.add("evring_set_events_total", "counter",
          "Events published into a ring set's members read by this scrape (the sum of their last sequence numbers).",
          ring, events);
    e.add("evring_set_payload_bytes_total", "counter", "Payload bytes published into a ring set's members read.", ring,
          bytes);
}

}  // namespace

std::string escape_label(std::string_view value) {
    // Label values must be UTF-8, or promtool and Prometheus reject the whole
    // scrape: a ring path need not be (text_escape.hpp).
    const std::string text = valid_utf8(value);
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

std::string render_metrics(std::vector<MetricsTarget>& targets) {
    Exposition e;
    // Once per scrape; damaged files are `evring readers --named`'s to report.
    std::vector<NamedPosition> named;
    if (auto dir = reader_state_dir(false); dir) {
        std::vector<std::string> problems;
        named = list_named_positions(*dir, problems);
    }
    for (MetricsTarget& t : targets) {
        if (!t.view && !t.set) {
            auto set = RingSetView::open_if_set(t.location);
            if (set && *set) {
                t.set = std::move(*set);
                t.error.clear();
            }
        }
        if (t.set) {
            add_set(e, t);
            continue;
        }
        if (!t.view) {
            auto view = RingView::open(t.location);
            if (view) {
                t.view = std::move(*view);
                t.error.clear();
            } else {
                t.error = view.error().message();
            }
        }
        if (t.view) follow_name(t);
        if (t.view) {
            auto refresh = t.view->refresh();
            if (refresh) {
                const std::string ring = fmt::format("ring=\"{}\"", escape_label(t.location));
                add_ring(e, *t.view, *refresh, ring);
                add_named_readers(e, *t.view, refresh->sample, ring, named);
                continue;
            }
            t.error = refresh.error().message();
            t.view.reset();  // reopened at the next scrape
        }
        e.add("evring_up", "gauge", kUpHelp, fmt::format("ring=\"{}\"", escape_label(t.location)), 0);
    }
    return e.text();
}

}  // namespace evring::cli
