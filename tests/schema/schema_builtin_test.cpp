// The built-in Monad execution schemas: they parse, are found by the foreign
// hashes they declare, and give every event type the size the facts sheet
// (../shared/docs/monad-exec-events.md) gives.
#include "schema/schema_builtin.hpp"

#include <cstdlib>
#include <map>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace evring {
namespace {

constexpr const char* kV1Hash = "8933f907c432c98ac0c8db62f9aa164c0c3f1672f41290e4ea3408df6c6723f3";
constexpr const char* kOldHash = "ddc58d9afcabb6ae55d525d281ef9fd2f9b4dbceb27ac118067cdafd70e9016b";

struct Expected {
    std::uint16_t number;
    const char* name;
    std::uint32_t fixed_size;
    std::vector<std::pair<std::string, std::uint32_t>> trailing;  // name, element size
};

void expect_events(const Schema& schema, const std::vector<Expected>& table) {
    ASSERT_EQ(schema.events().size(), table.size());
    for (const Expected& x : table) {
        SCOPED_TRACE(x.name);
        const SchemaEvent* e = schema.event(x.number);
        ASSERT_NE(e, nullptr);
        EXPECT_EQ(e->name, x.name);
        EXPECT_EQ(schema.fixed_size(*e), x.fixed_size);
        const SchemaStruct* s = schema.payload_of(*e);
        const std::size_t trailing = s == nullptr ? 0 : s->trailing.size();
        ASSERT_EQ(trailing, x.trailing.size());
        for (std::size_t i = 0; i < trailing; ++i) {
            EXPECT_EQ(s->trailing[i].name, x.trailing[i].first);
            EXPECT_EQ(schema.type(s->trailing[i].element).size, x.trailing[i].second);
        }
    }
}

TEST(BuiltinSchemas, BothMonadSchemasAreBuiltInAndFoundByTheirForeignHash) {
    ASSERT_EQ(builtin_schemas().size(), 2u);
    for (const char* hex : {kV1Hash, kOldHash}) {
        auto found = find_builtin_schema(2, *parse_schema_hash(hex));
        ASSERT_TRUE(found.has_value()) << hex;
        ASSERT_EQ(found->describes().size(), 1u);
        EXPECT_EQ(schema_hash_hex(found->describes()[0]), hex);
        EXPECT_EQ(found->flow_tag("txn"), 1u);
        // Found by its own hash as well.
        EXPECT_TRUE(find_builtin_schema(2, found->hash()).has_value());
    }
    EXPECT_FALSE(find_builtin_schema(3, *parse_schema_hash(kV1Hash)).has_value());
    EXPECT_FALSE(find_builtin_schema(2, SchemaHash{}).has_value());
    // Their own hashes, as docs/schema.md ("Built-in schemas") states them: a change of a
    // built-in schema's meaning (its spans' positions included) must update the docs too.
    EXPECT_EQ(builtin_schema("monad-exec-v1")->hash_hex(),
              "40599a273bf765a47146d3ad0937045bf8bf3c92e5ea3e9864b0ca522105b50d");
    EXPECT_EQ(builtin_schema("monad-exec-old")->hash_hex(),
              "3163401190df4f40f26fd961373809a298bef6a1a20ac779789fe9179b62c2ae");
    auto missing = builtin_schema("nope");
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message().find("monad-exec-v1, monad-exec-old"), std::string::npos);
}

TEST(BuiltinSchemas, TheBuiltInTextIsTheFileInSchemas) {
    const char* dir = std::getenv("EVRING_SCHEMAS_DIR");
    if (dir == nullptr) GTEST_SKIP() << "EVRING_SCHEMAS_DIR is not set (meson sets it to schemas/)";
    for (const auto& b : builtin_schemas()) {
        auto file = Schema::parse_file(std::string(dir) + "/" + std::string(b.name) + ".toml");
        ASSERT_TRUE(file.ok()) << file.error().message();
        EXPECT_EQ(file->source(), b.source);
    }
}

TEST(BuiltinSchemas, V1GivesEveryEventTypeItsSizeFromTheFactsSheet) {
    const Schema v1 = builtin_schema("monad-exec-v1").value();
    EXPECT_EQ(v1.payload_alignment(), 16u);
    expect_events(v1, {
        {1, "RECORD_ERROR", 16, {{"truncated_payload", 1}}},
        {2, "BLOCK_START", 528, {}},
        {3, "BLOCK_REJECT", 4, {}},
        {4, "BLOCK_PERF_EVM_ENTER", 0, {}},
        {5, "BLOCK_PERF_EVM_EXIT", 0, {}},
        {6, "BLOCK_END", 360, {}},
        {7, "BLOCK_QC", 56, {}},
        {8, "BLOCK_FINALIZED", 40, {}},
        {9, "BLOCK_VERIFIED", 8, {}},
        {10, "TXN_HEADER_START", 352, {{"data", 1}, {"blob_versioned_hashes", 32}}},
        {11, "TXN_ACCESS_LIST_ENTRY", 28, {{"storage_keys", 32}}},
        {12, "TXN_AUTH_LIST_ENTRY", 168, {}},
        {13, "TXN_HEADER_END", 0, {}},
        {14, "TXN_REJECT", 4, {}},
        {15, "TXN_PERF_EVM_ENTER", 0, {}},
        {16, "TXN_PERF_EVM_EXIT", 0, {}},
        {17, "TXN_EVM_OUTPUT", 24, {}},
        {18, "TXN_LOG", 32, {{"topics", 32}, {"data", 1}}},
        {19, "TXN_CALL_FRAME", 128, {{"input", 1}, {"return_data", 1}}},
        {20, "TXN_END", 0, {}},
        {21, "ACCOUNT_ACCESS_LIST_HEADER", 8, {}},
        {22, "ACCOUNT_ACCESS", 152, {}},
        {23, "STORAGE_ACCESS", 124, {}},
        {24, "EVM_ERROR", 16, {}},
    });
    // Spot layouts of the sheet: the 16-aligned u128, the 33-byte key, the 16-aligned record error.
    const SchemaEvent& start = *v1.event("BLOCK_START");
    EXPECT_EQ(v1.find_field(start, "proposal_epoch_nanos")->offset, 64u);
    EXPECT_EQ(v1.find_field(start, "author")->offset, 112u);
    EXPECT_EQ(v1.find_field(start, "parent_eth_hash")->offset, 145u);
    EXPECT_EQ(v1.find_field(start, "eth_block_input.base_fee_per_gas")->offset, 184u + 200u);
    EXPECT_EQ(v1.find_struct("secp256k1_pubkey")->size, 33u);
    EXPECT_EQ(v1.find_struct("record_error")->align, 16u);
    EXPECT_EQ(v1.find_field(*v1.event("TXN_HEADER_START"), "txn_header.max_fee_per_blob_gas")->offset, 56u + 248u);
    EXPECT_EQ(v1.find_field(*v1.event("STORAGE_ACCESS"), "end_value")->offset, 91u);
    EXPECT_EQ(v1.find_enum("txn_type")->name_of(4), "EIP7702");
}

TEST(BuiltinSchemas, OldGivesEveryEventTypeItsSizeFromTheFactsSheet) {
    const Schema old = builtin_schema("monad-exec-old").value();
    EXPECT_EQ(old.payload_alignment(), 8u);
    expect_events(old, {
        {1, "BLOCK_START", 392, {}},
        {2, "BLOCK_REJECT", 4, {}},
        {3, "BLOCK_PERF_EVM_ENTER", 0, {}},
        {4, "BLOCK_PERF_EVM_EXIT", 0, {}},
        {5, "BLOCK_END", 360, {}},
        {6, "BLOCK_QC", 56, {}},
        {7, "BLOCK_FINALIZED", 40, {}},
        {8, "BLOCK_VERIFIED", 8, {}},
        {9, "TXN_START", 320, {{"data", 1}}},
        {10, "TXN_REJECT", 4, {}},
        {11, "TXN_PERF_EVM_ENTER", 0, {}},
        {12, "TXN_PERF_EVM_EXIT", 0, {}},
        {13, "TXN_EVM_OUTPUT", 24, {}},
        {14, "TXN_LOG", 32, {{"topics", 32}, {"data", 1}}},
        {15, "TXN_CALL_FRAME", 128, {{"input", 1}, {"return_data", 1}}},
        {16, "TXN_END", 0, {}},
        {17, "ACCOUNT_ACCESS_LIST_HEADER", 8, {}},
        {18, "ACCOUNT_ACCESS", 152, {}},
        {19, "STORAGE_ACCESS", 124, {}},
        {20, "EVM_ERROR", 16, {}},
    });
    const SchemaEvent& txn = *old.event("TXN_START");
    EXPECT_EQ(old.find_field(txn, "txn_header.data_length")->offset, 64u + 244u);
    EXPECT_EQ(old.find_field(*old.event("BLOCK_START"), "exec_input.txn_count")->offset, 120u + 264u);
    EXPECT_EQ(old.find_enum("txn_type")->name_of(3), "");  // no EIP-4844 in the old schema
}

}  // namespace
}  // namespace evring
