// Decoding the real RING01 snapshots with the built-in Monad schemas: every
// event decodes with exactly its payload_size, block gas equals the sum of
// its transactions' gas, and field values checked by hand against the raw
// bytes come out right. Skipped (with the reason) when EVRING_CONFORMANCE_DIR
// is unset.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "evring/ring/iterator.hpp"
#include "evring/ring/payload.hpp"
#include "schema/schema_builtin.hpp"
#include "evring/schema/schema_render.hpp"
#include "ring/snapshot.hpp"

namespace evring {
namespace {

// Keeps the unsigned value of one field, named by its dotted path.
struct FieldCapture : FieldVisitor {
    std::string wanted;
    std::vector<std::string> path;
    std::optional<std::uint64_t> value;

    std::string full(std::string_view name) const {
        std::string out;
        for (const auto& p : path) out += p + ".";
        return out + std::string(name);
    }
    void begin_struct(std::string_view name, const SchemaStruct*) override { path.emplace_back(name); }
    void end_struct() override { path.pop_back(); }
    void begin_array(std::string_view, std::uint64_t) override {}
    void end_array() override {}
    void scalar(std::string_view name, const ScalarValue& v) override {
        if (full(name) == wanted) value = v.u;
    }
    void enumeration(std::string_view, const SchemaEnum&, const ScalarValue&, std::string_view) override {}
    void bytes(std::string_view, std::span<const std::byte>) override {}
    void wide_integer(std::string_view, Scalar, std::span<const std::byte>) override {}
};

std::uint64_t field_value(const Schema& schema, const EventDescriptor& event, std::span<const std::byte> payload,
                          const std::string& path) {
    FieldCapture capture;
    capture.wanted = "." + path;  // the payload itself is the unnamed outer struct
    EXPECT_TRUE(visit_payload(schema, event.event_type, payload, capture).ok());
    EXPECT_TRUE(capture.value.has_value()) << path;
    return capture.value.value_or(0);
}

struct SpotCheck {
    std::uint64_t seqno;
    const char* type_name;
    std::vector<std::string> json_parts;  // each must appear in the event's JSON
};

// Values read by hand from the raw payload bytes at the offsets of the facts
// sheet (little-endian): e.g. mdn seqno 17 bytes 32..39 = 03 00.. (block 3),
// bytes 224..231 = 80 d1 f0 08 00.. (gas limit 150000000), bytes 88.. = af 4e
// (chain 0x4eaf).
const std::map<std::string, std::vector<SpotCheck>> kSpotChecks = {
    {"mdn-500b-genesis.snapshot.zst",
     {{17, "BLOCK_START",
       {R"("block_tag":{"id":"0x624e668b02899013e0b6c05fa0bc551e19ca8c2ba6c3e78ce9fc235c431060de","block_number":3})",
        R"("chain_id":"0x4eaf")", R"("gas_limit":150000000)", R"("timestamp":1752777277)"}},
      {19, "ACCOUNT_ACCESS_LIST_HEADER", {R"({"entry_count":1,"access_context":"BLOCK_PROLOGUE"})"}}}},
    {"emn-1b-15m.snapshot.zst",
     {{32, "TXN_HEADER_START",
       {R"("sender":"0xf60c2ea62edbfe808163751dd0d8693dcb30019c")", R"("txn_type":"EIP1559")",
        R"("nonce":1189569,"gas_limit":207128)", R"("to":"0x514910771af9ca656af840dff83e8264ecf986ca")",
        R"("data_length":68)", R"("data":"0xa9059cbb000000000000000000000000cac0ca94535893250b7686d36d07c2fd)"}}}},
    {"emn-30b-15m.snapshot.zst",
     {{1, "BLOCK_START",
       {R"("beneficiary":"0x1ad91ee08f21be3de0ba2ba6918e714da6b45836")", R"("number":15000001,"gas_limit":30000000)",
        R"("extra_data_length":15)", R"("txn_count":229)"}},
      {236, "TXN_EVM_OUTPUT", {R"({"receipt":{"status":false,"log_count":0,"gas_used":30300},"call_frame_count":1})"}},
      {237, "TXN_CALL_FRAME",
       {R"("opcode":"CALL","value":"0x0","gas":30000000,"gas_used":30300,"evmc_status":2)",
        R"("input_length":644,"return_length":100)"}},
      {241, "STORAGE_ACCESS", {R"("access_context":"TRANSACTION","modified":false,"transient":false)"}}}},
};

void check_snapshot(const std::string& dir, const std::string& file) {
    SCOPED_TRACE(file);
    auto loaded = load_snapshot(dir + "/" + file);
    ASSERT_TRUE(loaded.ok()) << loaded.error().message();
    const MappedRing& ring = loaded->ring;
    const RingHeader& header = ring.header();
    auto schema = find_builtin_schema(header.content_type, header.schema_hash);
    ASSERT_TRUE(schema.has_value()) << "no built-in schema for hash " << schema_hash_hex(header.schema_hash);

    Iterator it(ring);
    const std::uint64_t oldest = it.oldest_seqno();
    it.seek(oldest);
    std::vector<std::byte> buffer(header.size.payload_buf_size);
    std::string json, text;
    std::map<std::uint64_t, std::uint64_t> txn_gas;  // by block (content_ext[0])
    std::uint64_t events = 0, blocks_checked = 0;
    const auto& spots = kSpotChecks.count(file) ? kSpotChecks.at(file) : std::vector<SpotCheck>{};
    EventDescriptor event;
    while (it.try_next(event) == NextResult::Success) {
        ASSERT_EQ(copy_payload(ring, event, buffer.data(), buffer.size()), PayloadResult::Ok);
        const std::span<const std::byte> payload(buffer.data(), event.payload_size);
        const DecodeError e = check_payload(*schema, event.event_type, payload);
        ASSERT_TRUE(e.ok()) << "seqno " << event.seqno << ": " << describe_decode_error(*schema, e);
        ASSERT_EQ(e.expected_size, event.payload_size) << event.seqno;
        json.clear();
        text.clear();
        ASSERT_TRUE(append_fields_json(*schema, event.event_type, payload, json).ok());
        ASSERT_TRUE(append_event_text(*schema, event.event_type, payload, text).ok());
        ++events;
        const std::string& name = schema->event(event.event_type)->name;
        EXPECT_EQ(text.substr(0, name.size()), name);
        if (name == "TXN_EVM_OUTPUT")
            txn_gas[event.content_ext[0]] += field_value(*schema, event, payload, "receipt.gas_used");
        if (name == "BLOCK_END" && event.content_ext[0] >= oldest) {  // the whole block is in the snapshot
            EXPECT_EQ(field_value(*schema, event, payload, "exec_output.gas_used"), txn_gas[event.content_ext[0]])
                << "block starting at seqno " << event.content_ext[0];
            ++blocks_checked;
        }
        for (const SpotCheck& spot : spots) {
            if (spot.seqno != event.seqno) continue;
            EXPECT_EQ(name, spot.type_name);
            for (const auto& part : spot.json_parts)
                EXPECT_NE(json.find(part), std::string::npos) << "seqno " << spot.seqno << " lacks " << part << "\n" << json;
        }
    }
    EXPECT_EQ(events, header.control.last_seqno - oldest + 1);
    EXPECT_GT(blocks_checked, 0u);
    std::printf("%s: %lu events decoded, gas of %lu blocks matched\n", file.c_str(),
                static_cast<unsigned long>(events), static_cast<unsigned long>(blocks_checked));
}

TEST(SchemaConformance, EveryEventOfTheRealSnapshotsDecodesWithItsExactSize) {
    const char* dir = std::getenv("EVRING_CONFORMANCE_DIR");
    if (dir == nullptr || *dir == '\0')
        GTEST_SKIP() << "EVRING_CONFORMANCE_DIR is not set (it names the folder of real RING01 snapshots; the "
                        "meson test sets it when ../shared/data/monad-snapshots exists beside the repository)";
    std::vector<std::string> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.path().extension() == ".zst") files.push_back(entry.path().filename());
    std::sort(files.begin(), files.end());
    if (files.empty()) GTEST_SKIP() << "no *.zst snapshots in EVRING_CONFORMANCE_DIR=" << dir;
    for (const auto& [file, spots] : kSpotChecks)
        EXPECT_TRUE(std::find(files.begin(), files.end(), file) != files.end()) << file << " is missing";
    for (const auto& file : files) check_snapshot(dir, file);
}

}  // namespace
}  // namespace evring
