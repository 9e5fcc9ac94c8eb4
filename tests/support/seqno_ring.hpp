// Test support: a small live ring in a temporary directory whose every event
// carries its own seqno as its 8-byte payload (so a reader can check that a
// payload travels with its event), written by this process.
#pragma once

#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>

#include "evring/ring/publisher.hpp"
#include "evring/ring/ring_reader.hpp"
#include "evring/ring/ring_writer.hpp"
#include "source/ring_source.hpp"
#include "support/temp_ring.hpp"

namespace evring::test {

struct SeqnoRing {
    explicit SeqnoRing(unsigned descriptor_shift = 6) : path(dir.file("ring")) {
        CreateOptions options;
        options.keep_on_close = true;
        auto made = RingWriter::create(small_spec(path, descriptor_shift, 16), options);
        if (!made) ADD_FAILURE() << made.error().message();
        writer.emplace(std::move(made).value());
    }
    // `n` events of types 2, 3, 4 in turn; stamped `stamp_from` + 10 * seqno
    // when given, else by the publisher's clock.
    void publish(std::uint64_t n, std::uint64_t stamp_from = 0) {
        Publisher publisher(writer->ring());
        for (std::uint64_t i = 0; i < n; ++i) {
            Reservation r = publisher.reserve(8);
            const std::uint64_t value = r.descriptor().seqno;
            std::memcpy(r.payload(), &value, 8);
            r.descriptor().event_type = static_cast<std::uint16_t>(2 + value % 3);
            if (stamp_from != 0) r.descriptor().record_epoch_nanos = stamp_from + value * 10;
            publisher.commit(r);
        }
    }
    std::unique_ptr<RingSource> open() {
        auto reader = RingReader::open(path);
        EXPECT_TRUE(reader.ok());
        auto source = RingSource::open_live(std::move(reader).value(), path);
        EXPECT_TRUE(source.ok());
        return std::move(source).value();
    }
    TempDir dir;
    std::string path;
    std::optional<RingWriter> writer;
};

}  // namespace evring::test
