// Replays files through a fuzz target without libFuzzer, so the committed
// corpus runs as a regression test in every build (and under the sanitizers
// of the ASan/UBSan build). Usage: <target>_replay FILE-OR-DIRECTORY...
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

namespace {

bool replay(const std::filesystem::path& file) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
        std::fprintf(stderr, "cannot read %s\n", file.c_str());
        return false;
    }
    std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(bytes.data(), bytes.size());
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    int files = 0;
    bool ok = true;
    for (int i = 1; i < argc; ++i) {
        const std::filesystem::path arg(argv[i]);
        if (std::filesystem::is_directory(arg)) {
            for (const auto& entry : std::filesystem::directory_iterator(arg))
                if (entry.is_regular_file()) ok = replay(entry.path()) && ok, ++files;
        } else {
            ok = replay(arg) && ok;
            ++files;
        }
    }
    std::printf("replayed %d inputs\n", files);
    // A target that finds a violated invariant traps or a sanitizer aborts;
    // reaching here means every input was handled.
    return ok && files > 0 ? 0 : 1;
}
