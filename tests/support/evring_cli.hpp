// Test support for GoogleTest suites that run the built evring as a program
// (meson passes its path in EVRING_BIN): one command line through the shell,
// bounded in time, with its exit code, standard output and standard error.
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "support/temp_ring.hpp"

namespace evring::test {

struct Outcome {
    int code = -1;  // the exit code; -1 when killed by a signal
    std::string out, err;
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

// A fixture whose tests run evring, in a folder of their own; skipped where
// EVRING_BIN is unset. A fixture that derives from it and has more to set up
// calls CliTest::SetUp() first and returns when IsSkipped().
class CliTest : public ::testing::Test {
protected:
    void SetUp() override {
        const char* bin = std::getenv("EVRING_BIN");
        if (bin == nullptr) GTEST_SKIP() << "EVRING_BIN is not set (meson sets it to the built evring)";
        bin_ = bin;
    }

    // `evring ARGS` through the shell (the caller quotes what needs it). A
    // command that hangs is killed after 30 s and exits with 124 (timeout(1)),
    // so a broken command fails its test instead of stalling the suite.
    Outcome run(const std::string& args) {
        const std::string out = dir_.file("out"), err = dir_.file("err");
        const std::string command = "timeout 30 '" + bin_ + "' " + args + " >'" + out + "' 2>'" + err + "'";
        const int status = std::system(command.c_str());
        Outcome r;
        r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = slurp(out);
        r.err = slurp(err);
        return r;
    }

    std::string bin_;
    TempDir dir_;
};

}  // namespace evring::test
