// What `evring schema check` warns about (schema_lint.hpp): reserved content
// types and event type 1, and names that are standard library macros.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "evring/schema/schema.hpp"
#include "schema/schema_lint.hpp"
#include "schema/schema_std_macros.hpp"
#include "support/schema_payload.hpp"

namespace evring {
namespace {

Schema parse(const std::string& text) {
    auto s = Schema::parse(text, "l.toml");
    if (!s) {
        ADD_FAILURE() << s.error().message();
        std::abort();
    }
    return std::move(s).value();
}

std::string all(const Schema& s) {
    std::string out;
    for (const auto& w : schema_warnings(s)) out += w + "\n";
    return out;
}

TEST(SchemaLint, ReservedContentTypesAndEventTypeOneAreNamed) {
    const std::string text = all(parse("content_type = 2\ncontent_name = \"mine\"\n"
                                       "[[event]]\nnumber = 1\nname = \"HELLO\"\n"));
    EXPECT_NE(text.find("content type 2 is the execution events of the reference system"), std::string::npos) << text;
    EXPECT_NE(text.find("event type 1 is 'HELLO', but every ring evring writes uses 1 for RECORD_ERROR"),
              std::string::npos) << text;
    EXPECT_NE(all(parse("content_type = 1\ncontent_name = \"t\"\n")).find("content type 1 is reserved"),
              std::string::npos);
    // A schema of another implementation's rings says so with `describes`: no warning.
    EXPECT_EQ(all(parse("content_type = 2\ncontent_name = \"m\"\ndescribes = [\"" + std::string(64, 'a') +
                        "\"]\n[[event]]\nnumber = 1\nname = \"BLOCK_START\"\n")), "");
    EXPECT_EQ(all(test::load_test_schema("orders.toml")), "");
}

TEST(SchemaLint, MacroNamesAreNamedWithWhatTheHeaderCallsThem) {
    const std::string text = all(parse("content_type = 900\ncontent_name = \"NULL\"\nflow_tags = [\"errno\"]\n"
                                       "[[event]]\nnumber = 2\nname = \"EOF\"\n"
                                       "fields = [{ name = \"stdout\", type = \"u8\" }]\n"
                                       "[enum.e]\ntype = \"u8\"\nvalues = { INT_MAX = 1, fine = 2 }\n"));
    EXPECT_NE(text.find("content_name 'NULL' is a macro of the C/C++ standard library, so it cannot be a generated "
                        "header's namespace"), std::string::npos) << text;
    EXPECT_NE(text.find("event 'EOF' is a macro of the C/C++ standard library; a generated header names it 'EOF_'"),
              std::string::npos) << text;
    EXPECT_NE(text.find("field eof 'stdout'"), std::string::npos) << text;
    EXPECT_NE(text.find("enum e value 'INT_MAX'"), std::string::npos) << text;
    EXPECT_NE(text.find("flow tag 'errno'"), std::string::npos) << text;
    EXPECT_EQ(text.find("fine"), std::string::npos);
}

// RECORD_ERROR is implied (lib/schema/schema_record_error.cpp) exactly as the lines a schema used to copy.
TEST(SchemaRecordError, IsImpliedExactlyAsDeclared) {
    const std::string head = "content_type = 900\ncontent_name = \"r\"\n[[event]]\nnumber = 2\nname = \"E\"\n";
    const Schema implied = parse(head);
    const SchemaEvent* e = implied.event(1);
    ASSERT_NE(e, nullptr);
    EXPECT_EQ(e->name, "RECORD_ERROR");
    EXPECT_EQ(implied.fixed_size(*e), 16u);
    const std::string declared_text = head + R"(
[[event]]
number = 1
name = "RECORD_ERROR"
payload = "record_error"
[enum.record_error_type]
type = "u16"
values = { NONE = 0, OVERFLOW_4GB = 1, OVERFLOW_EXPIRE = 2, MISSING_EVENT = 3 }
[struct.record_error]
fields = [
  { name = "error_type",             type = "record_error_type" },
  { name = "dropped_event_type",     type = "u16" },
  { name = "truncated_payload_size", type = "u32" },
  { name = "requested_payload_size", type = "u64" },
  { name = "truncated_payload",      type = "bytes[truncated_payload_size]" },
]
)";
    EXPECT_EQ(parse(declared_text).canonical_form(), implied.canonical_form());
    // Not implied: an event type 1 of the schema's own, a name it uses, foreign hashes.
    EXPECT_EQ(parse(head + "[[event]]\nnumber = 1\nname = \"BLOCK\"\n").event(1)->name, "BLOCK");
    EXPECT_EQ(parse(head + "[struct.record_error]\nfields = [{ name = \"x\", type = \"u8\" }]\n").event(1), nullptr);
    EXPECT_EQ(parse(head + "[[event]]\nnumber = 5\nname = \"Record_Error\"\nfields = [{ name = \"x\", type = \"u8\" }]\n")
                  .event(1), nullptr);  // its inline struct would be record_error
    EXPECT_EQ(parse("describes = [\"" + std::string(64, 'b') + "\"]\n" + head).event(1), nullptr);
}

TEST(SchemaLint, TheMacroTableIsSortedForItsBinarySearch) {
    EXPECT_TRUE(detail::standard_macros_are_sorted());
    EXPECT_TRUE(detail::is_standard_macro("EOF"));
    EXPECT_TRUE(detail::is_standard_macro("errno"));
    EXPECT_FALSE(detail::is_standard_macro("eof"));
}

}  // namespace
}  // namespace evring
