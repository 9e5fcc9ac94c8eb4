// `evring schema check|show|compile`, run as a program: exit codes, output,
// and the error lines users see.
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "support/evring_cli.hpp"
#include "support/schema_payload.hpp"

namespace evring {
namespace {

using test::Outcome;
using test::slurp;

class SchemaCli : public test::CliTest {
protected:
    std::string write(const std::string& name, const std::string& text) {
        const std::string path = dir_.file(name);
        std::ofstream(path) << text;
        return path;
    }

    std::string orders() const { return test::schema_test_dir() + "/orders.toml"; }
};

TEST_F(SchemaCli, CheckReportsTheHashOfAValidSchema) {
    const Schema schema = test::load_test_schema("orders.toml");
    const Outcome r = run("schema check '" + orders() + "'");
    EXPECT_EQ(r.code, 0) << r.err;
    EXPECT_NE(r.out.find(": ok: schema orders, content type 1001, 6 event types, hash " + schema.hash_hex()),
              std::string::npos)
        << r.out;
}

TEST_F(SchemaCli, CheckPrintsFileLineColumnAndReasonForABadSchema) {
    const std::string bad = write("bad.toml", "content_type = 5\ncontent_name = \"x\"\n[[event]]\nnumber = 2\n"
                                              "name = \"E\"\nfields = [{ name = \"a\", type = \"u9\" }]\n");
    const Outcome r = run("schema check '" + bad + "'");
    EXPECT_EQ(r.code, 1);
    EXPECT_EQ(r.err, "evring: " + bad + ":6:32: unknown type 'u9'\n");
    const Outcome missing = run("schema check /nonexistent.toml");
    EXPECT_EQ(missing.code, 1);
    EXPECT_NE(missing.err.find("/nonexistent.toml"), std::string::npos);
}

TEST_F(SchemaCli, ShowPrintsLayoutsWithPaddingOrJson) {
    const Outcome text = run("schema show '" + orders() + "'");
    EXPECT_EQ(text.code, 0) << text.err;
    EXPECT_NE(text.out.find("schema orders (content type 1001)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("   100   12  (padding)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("then  legs"), std::string::npos);
    EXPECT_NE(text.out.find("order: ORDER_NEW .. ORDER_CANCEL, matched by symbol,order"), std::string::npos);
    const Outcome json = run("schema show --json '" + orders() + "'");
    EXPECT_EQ(json.code, 0);
    // Where the schema came from first, then the schema itself.
    const std::string start = R"({"origin":"file","from":"schema file ')";
    EXPECT_EQ(json.out.substr(0, start.size()), start) << json.out;
    EXPECT_NE(json.out.find(R"(,"content_type":1001,"content_name":"orders",)"), std::string::npos) << json.out;
    EXPECT_NE(json.out.find(R"("fields":[{"name":"order_id","type":"u64","offset":0,"size":8,"doc":""})"),
              std::string::npos)
        << json.out;
    const Outcome builtin = run("schema show monad-exec-v1");
    EXPECT_EQ(builtin.code, 0) << builtin.err;
    EXPECT_NE(builtin.out.find("describes         8933f907c432c98ac0c8db62f9aa164c0c3f1672f41290e4ea3408df6c6723f3"),
              std::string::npos);
}

TEST_F(SchemaCli, CompileWritesAHeaderOrNothing) {
    const std::string header = dir_.file("orders.hpp");
    const Outcome r = run("schema compile '" + orders() + "' -o '" + header + "' --namespace feed::v1");
    EXPECT_EQ(r.code, 0) << r.err;
    const std::string text = slurp(header);
    EXPECT_NE(text.find("namespace feed::v1 {"), std::string::npos);
    EXPECT_NE(text.find("static_assert(offsetof(Fill, notional) == 48"), std::string::npos);
    const std::string bad = write("bad.toml", "content_type = 0\n");
    const std::string none = dir_.file("none.hpp");
    const Outcome failed = run("schema compile '" + bad + "' -o '" + none + "'");
    EXPECT_EQ(failed.code, 1);
    EXPECT_NE(failed.err.find(":1:16: content_type 0 is out of range"), std::string::npos) << failed.err;
    EXPECT_FALSE(std::ifstream(none).good());
    const Outcome unwritable = run("schema compile '" + orders() + "' -o /nonexistent/dir/x.hpp");
    EXPECT_EQ(unwritable.code, 1);
    EXPECT_NE(unwritable.err.find("/nonexistent/dir/x.hpp"), std::string::npos) << unwritable.err;
}

TEST_F(SchemaCli, UsageErrorsExitWithTwo) {
    EXPECT_EQ(run("schema").code, 2);
    EXPECT_EQ(run("schema compile '" + orders() + "'").code, 2);  // no -o
    EXPECT_EQ(run("schema frobnicate x").code, 2);
}

}  // namespace
}  // namespace evring
