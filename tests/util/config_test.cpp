#include "evring/config.hpp"

#include <gtest/gtest.h>

namespace evring {
namespace {

TEST(ParseRingConfig, NameAloneTakesDefaultShifts) {
    auto config = parse_ring_config("my-ring");
    ASSERT_TRUE(config.ok());
    EXPECT_EQ(config->name_or_path, "my-ring");
    EXPECT_EQ(config->descriptor_shift, kDefaultDescriptorShift);
    EXPECT_EQ(config->payload_buf_shift, kDefaultPayloadBufShift);
    EXPECT_TRUE(config->is_pure_name());
}

TEST(ParseRingConfig, PathWithBothShifts) {
    auto config = parse_ring_config("/dev/shm/x:16:24");
    ASSERT_TRUE(config.ok());
    EXPECT_EQ(config->name_or_path, "/dev/shm/x");
    EXPECT_EQ(config->descriptor_shift, 16u);
    EXPECT_EQ(config->payload_buf_shift, 24u);
    EXPECT_FALSE(config->is_pure_name());
}

TEST(ParseRingConfig, EmptyFieldsMeanDefaults) {
    auto config = parse_ring_config("r::");
    ASSERT_TRUE(config.ok());
    EXPECT_EQ(config->descriptor_shift, kDefaultDescriptorShift);
    EXPECT_EQ(config->payload_buf_shift, kDefaultPayloadBufShift);
    auto only_payload = parse_ring_config("r::22");
    ASSERT_TRUE(only_payload.ok());
    EXPECT_EQ(only_payload->descriptor_shift, kDefaultDescriptorShift);
    EXPECT_EQ(only_payload->payload_buf_shift, 22u);
}

TEST(ParseRingConfig, RejectsGarbageNamingTheField) {
    auto bad = parse_ring_config("r:1x:20");
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message().find("descriptor shift '1x'"), std::string::npos)
        << bad.error().message();
    auto bad_payload = parse_ring_config("r:20:abc");
    ASSERT_FALSE(bad_payload.ok());
    EXPECT_NE(bad_payload.error().message().find("payload buffer shift 'abc'"), std::string::npos)
        << bad_payload.error().message();
}

TEST(ParseRingConfig, RejectsWrongFieldCountAndEmptyName) {
    EXPECT_FALSE(parse_ring_config("r:20").ok());
    EXPECT_FALSE(parse_ring_config("r:20:20:20").ok());
    auto empty = parse_ring_config(":20:20");
    ASSERT_FALSE(empty.ok());
    EXPECT_NE(empty.error().message().find("name is empty"), std::string::npos);
}

TEST(ParseRingConfig, RejectsShiftsOutOfRangeWithTheRange) {
    auto small = parse_ring_config("r:5:20");
    ASSERT_FALSE(small.ok());
    EXPECT_NE(small.error().message().find("descriptor shift 5 is out of range: allowed 6 to 32"),
              std::string::npos)
        << small.error().message();
    auto big = parse_ring_config("r:20:41");
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.error().message().find("payload buffer shift 41 is out of range"),
              std::string::npos);
    EXPECT_FALSE(parse_ring_config("r:99999999999999999999:20").ok());
}

TEST(ValidateRingSize, AcceptsSmallRingsOnBasePages) {
    EXPECT_TRUE(validate_ring_size({64, 4096, 0}, 4096).ok());
}

TEST(ValidateRingSize, RequiresWholeHugePages) {
    const std::uint64_t huge = 2u << 20;
    auto descriptors = validate_ring_size({1u << 10, 1u << 21, 0}, huge);
    ASSERT_FALSE(descriptors.ok());
    EXPECT_NE(descriptors.error().message().find("descriptor shift of at least 15"),
              std::string::npos)
        << descriptors.error().message();
    auto payload = validate_ring_size({1u << 15, 1u << 20, 0}, huge);
    ASSERT_FALSE(payload.ok());
    EXPECT_NE(payload.error().message().find("payload buffer shift of at least 21"),
              std::string::npos)
        << payload.error().message();
    EXPECT_TRUE(validate_ring_size({1u << 15, 1u << 21, 2u << 20}, huge).ok());
}

TEST(ValidateRingSize, RejectsNonPowersOfTwoAndOddContextAreas) {
    EXPECT_FALSE(validate_ring_size({100, 4096, 0}, 4096).ok());
    EXPECT_FALSE(validate_ring_size({64, 5000, 0}, 4096).ok());
    auto context = validate_ring_size({64, 4096, 4096}, 4096);
    ASSERT_FALSE(context.ok());
    EXPECT_NE(context.error().message().find("context area"), std::string::npos);
}

TEST(ValidateRingSize, RefusesPagesLargerThanTheHeaderSection) {
    // Sections follow the 2 MiB header section unpadded: 1 GiB pages cannot hold them.
    auto gigantic = validate_ring_size({1u << 24, 1u << 30, 0}, std::uint64_t{1} << 30);
    ASSERT_FALSE(gigantic.ok());
    EXPECT_NE(gigantic.error().message().find("2 MiB header section"), std::string::npos)
        << gigantic.error().message();
}

TEST(ValidateRingSize, ContextAreaThatWouldWrapTheLayoutIsRefusedNamingTheField) {
    // 2 MiB + 4 KiB + 4 KiB + this wraps past 2^64 to a 4 MiB file.
    const std::uint64_t wrapping = (std::uint64_t{0} - (std::uint64_t{2} << 20)) & ~((std::uint64_t{2} << 20) - 1);
    auto s = validate_ring_size({64, 4096, wrapping}, 4096);
    ASSERT_FALSE(s.ok());
    EXPECT_NE(s.error().message().find("context area size " + std::to_string(wrapping)), std::string::npos)
        << s.error().message();
    EXPECT_TRUE(validate_ring_size({64, 4096, kMaxContextAreaSize}, 4096).ok());
}

TEST(RingLayout, SectionsFollowEachOtherUnpadded) {
    const RingLayout layout = RingLayout::of({64, 4096, 2u << 20});
    EXPECT_EQ(layout.descriptors_offset, 2u << 20);
    EXPECT_EQ(layout.payload_offset, (2u << 20) + 64 * 64);
    EXPECT_EQ(layout.context_offset, (2u << 20) + 64 * 64 + 4096);
    EXPECT_EQ(layout.file_size, (4u << 20) + 64 * 64 + 4096);
}

TEST(WindowIncrement, ScalesWithBufferAndIsCapped) {
    EXPECT_EQ(window_increment_for(std::uint64_t{1} << 16), std::uint64_t{1} << 12);
    EXPECT_EQ(window_increment_for(std::uint64_t{1} << 30), std::uint64_t{16} << 20);
    EXPECT_EQ(max_payload_size_for(std::uint64_t{1} << 16), (std::uint64_t{1} << 16) - 4096);
}

}  // namespace
}  // namespace evring

namespace evring {
namespace {

TEST(RingSpec, CarriesTheShiftsOfTheConfigurationWithTheContent) {
    auto config = parse_ring_config("r:16:22");
    ASSERT_TRUE(config.ok());
    RingContent content;
    content.content_type = 7;
    content.schema_hash[0] = 9;
    const RingSpec spec(*config, content);
    const RingParams params = spec.params();
    EXPECT_EQ(params.size().descriptor_capacity, 1u << 16);
    EXPECT_EQ(params.size().payload_buf_size, 1u << 22);
    EXPECT_EQ(params.content.content_type, 7);
    EXPECT_EQ(params.content.schema_hash[0], 9);
    EXPECT_EQ(spec.config.name_or_path, "r");
}

}  // namespace
}  // namespace evring
