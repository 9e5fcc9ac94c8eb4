// tools/evring/schema_cmd.hpp — `evring schema check|show|compile`.
//
// main.cpp registers the command with add_schema_command and, when one of its
// subcommands was chosen, returns run_schema_command's exit code (0 success,
// 1 an invalid schema, a source without a schema or an unwritable output,
// 2 usage). `show` takes a source (ring, snapshot, recording: the schema
// schema_resolve.hpp finds for it, and its origin), a schema file or the name
// of a built-in schema.
#pragma once

#include <memory>
#include <string>

namespace CLI {
class App;
}

namespace evring::cli {

struct SchemaCommand {
    CLI::App* command = nullptr;
    CLI::App* check = nullptr;
    CLI::App* show = nullptr;
    CLI::App* compile = nullptr;
    std::string file;
    std::string output;
    std::string namespace_name;
    bool json = false;

    bool chosen() const;
};

// Adds the subcommands to `app`; the returned object holds their options.
std::unique_ptr<SchemaCommand> add_schema_command(CLI::App& app);
int run_schema_command(const SchemaCommand& command);

}  // namespace evring::cli
