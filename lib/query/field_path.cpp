// A field path written as text (field_path.hpp).
#include "query/field_path.hpp"

namespace evring::detail {

Result<std::vector<WherePathStep>> parse_field_path(std::string_view text, std::string_view option) {
    // A bare operand is a whole filter expression (a test for non-zero): the
    // filter's parser reads it, and anything more than an operand is refused.
    auto tree = parse_where(text, option);
    if (!tree) return std::move(tree).error();
    const WhereNode& n = **tree;
    if (n.kind != WhereNode::Kind::Test || n.op != WhereOp::Truth || !n.literals.empty() || n.path.empty())
        return where_error(option, text, 1, "a field path is names and indexes only: a.b[2].c");
    return n.path;
}

}  // namespace evring::detail
