// Filter expressions (where.hpp): the lexer and the recursive-descent parser.
// Every loop is bounded by the text's length, the recursion by
// kMaxWhereDepth, the tree by kMaxWhereNodes.
#include <fmt/format.h>

#include <cctype>
#include <cstdlib>

#include "query/where.hpp"
#include "query/where_ast.hpp"

namespace evring::detail {
namespace {

struct Token {
    enum class Kind : std::uint8_t { End, Name, Number, String, Op };
    Kind kind = Kind::End;
    std::string text;  // Name, Op: as written; String: the decoded bytes
    std::size_t at = 0;
};

bool name_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool name_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Parser {
public:
    Parser(std::string_view text, std::string_view option) : text_(text), option_(option) {}

    Result<std::unique_ptr<WhereNode>> run() {
        if (text_.size() > kMaxWhereBytes)
            return where_error(option_, text_, 1, fmt::format("an expression is at most {} bytes; this one is {}",
                                                              kMaxWhereBytes, text_.size()));
        if (!lex()) return std::move(*error_);
        auto node = parse_or(0);
        if (!node) return std::move(*error_);
        if (peek().kind != Token::Kind::End) return fail(peek().at, fmt::format("unexpected '{}'", peek().text));
        return node;
    }

private:
    Error fail(std::size_t at, std::string_view reason) {
        if (!error_) error_ = where_error(option_, text_, at, reason);
        return *error_;
    }

    bool lex() {
        std::size_t i = 0;
        while (i < text_.size()) {
            const char c = text_[i];
            const std::size_t at = i + 1;
            if (c == ' ' || c == '\t' || c == '\n' || c == '\r') { ++i; continue; }
            if (name_start(c)) {
                std::size_t j = i;
                while (j < text_.size() && name_char(text_[j])) ++j;
                tokens_.push_back({Token::Kind::Name, std::string(text_.substr(i, j - i)), at});
                i = j;
            } else if (std::isdigit(static_cast<unsigned char>(c))) {
                std::size_t j = i;
                while (j < text_.size() && (name_char(text_[j]))) ++j;
                // A fraction (2.5) for floating fields; "0x" numbers have none.
                if (j + 1 < text_.size() && text_[j] == '.' && std::isdigit(static_cast<unsigned char>(text_[j + 1])) &&
                    text_.substr(i, 2) != "0x" && text_.substr(i, 2) != "0X") {
                    ++j;
                    while (j < text_.size() && std::isdigit(static_cast<unsigned char>(text_[j]))) ++j;
                }
                tokens_.push_back({Token::Kind::Number, std::string(text_.substr(i, j - i)), at});
                i = j;
            } else if (c == '"') {
                std::string value;
                std::size_t j = i + 1;
                for (; j < text_.size() && text_[j] != '"'; ++j) {
                    if (text_[j] == '\\' && j + 1 < text_.size()) ++j;
                    value += text_[j];
                }
                if (j >= text_.size()) { fail(at, "a string is not closed (\")"); return false; }
                tokens_.push_back({Token::Kind::String, std::move(value), at});
                i = j + 1;
            } else {
                static constexpr std::string_view kTwo[] = {"==", "!=", "<=", ">=", "&&", "||", "^="};
                std::string op(1, c);
                for (auto two : kTwo)
                    if (text_.substr(i, 2) == two) op = two;
                if (op.size() == 1 && std::string_view("<>!(){},[].-").find(c) == std::string_view::npos) {
                    fail(at, fmt::format("unexpected character '{}'", std::isprint(static_cast<unsigned char>(c))
                                                                            ? std::string(1, c)
                                                                            : fmt::format("\\x{:02x}", static_cast<unsigned char>(c))));
                    return false;
                }
                tokens_.push_back({Token::Kind::Op, op, at});
                i += op.size();
            }
        }
        tokens_.push_back({Token::Kind::End, "the end", text_.size() + 1});
        return true;
    }

    const Token& peek() const { return tokens_[pos_]; }
    bool is_op(std::string_view op) const { return peek().kind == Token::Kind::Op && peek().text == op; }
    bool is_word(std::string_view w) const { return peek().kind == Token::Kind::Name && peek().text == w; }

    std::unique_ptr<WhereNode> make(WhereNode::Kind kind) {
        if (++nodes_ > kMaxWhereNodes) {
            fail(peek().at, fmt::format("more than {} tests and operators", kMaxWhereNodes));
            return nullptr;
        }
        auto n = std::make_unique<WhereNode>();
        n->kind = kind;
        return n;
    }

    std::unique_ptr<WhereNode> binary(WhereNode::Kind kind, std::unique_ptr<WhereNode> a, std::unique_ptr<WhereNode> b) {
        auto n = make(kind);
        if (!n) return nullptr;
        n->a = std::move(a);
        n->b = std::move(b);
        return n;
    }

    std::unique_ptr<WhereNode> parse_or(int depth) {
        auto left = parse_and(depth);
        while (left && (is_op("||") || is_word("or"))) {
            ++pos_;
            auto right = parse_and(depth);
            if (!right) return nullptr;
            left = binary(WhereNode::Kind::Or, std::move(left), std::move(right));
        }
        return left;
    }

    std::unique_ptr<WhereNode> parse_and(int depth) {
        auto left = parse_unary(depth);
        while (left && (is_op("&&") || is_word("and"))) {
            ++pos_;
            auto right = parse_unary(depth);
            if (!right) return nullptr;
            left = binary(WhereNode::Kind::And, std::move(left), std::move(right));
        }
        return left;
    }

    std::unique_ptr<WhereNode> parse_unary(int depth) {
        if (depth >= kMaxWhereDepth) {
            fail(peek().at, fmt::format("nested more than {} deep", kMaxWhereDepth));
            return nullptr;
        }
        if (is_op("!") || is_word("not")) {
            ++pos_;
            auto inner = parse_unary(depth + 1);
            if (!inner) return nullptr;
            auto n = make(WhereNode::Kind::Not);
            if (n) n->a = std::move(inner);
            return n;
        }
        if (is_op("(")) {
            ++pos_;
            auto inner = parse_or(depth + 1);
            if (!inner) return nullptr;
            if (!is_op(")")) {
                fail(peek().at, fmt::format("expected ')' but found '{}'", peek().text));
                return nullptr;
            }
            ++pos_;
            return inner;
        }
        return parse_test();
    }

    std::unique_ptr<WhereNode> parse_test() {
        if (peek().kind != Token::Kind::Name) {
            fail(peek().at, fmt::format("expected a field, a flow tag or 'type' but found '{}'", peek().text));
            return nullptr;
        }
        auto n = make(WhereNode::Kind::Test);
        if (!n) return nullptr;
        n->at = peek().at;
        const std::size_t start = peek().at - 1;
        std::size_t end = start;
        for (;;) {
            if (peek().kind == Token::Kind::Name) {
                n->path.push_back({peek().text, false, 0});
                end = peek().at - 1 + peek().text.size();
                ++pos_;
            } else {
                fail(peek().at, fmt::format("expected a name but found '{}'", peek().text));
                return nullptr;
            }
            while (is_op("[")) {
                ++pos_;
                std::uint64_t i = 0;
                const Token& t = peek();
                if (t.kind != Token::Kind::Number || !parse_decimal(t.text, i)) {
                    fail(t.at, fmt::format("expected an index (a whole number) but found '{}'", t.text));
                    return nullptr;
                }
                ++pos_;
                if (!is_op("]")) {
                    fail(peek().at, fmt::format("expected ']' but found '{}'", peek().text));
                    return nullptr;
                }
                end = peek().at;
                ++pos_;
                n->path.push_back({std::string(), true, i});
            }
            if (!is_op(".")) break;
            ++pos_;
        }
        n->operand = std::string(text_.substr(start, end - start));
        static constexpr std::pair<std::string_view, WhereOp> kOps[] = {
            {"==", WhereOp::Eq}, {"!=", WhereOp::Ne}, {"<", WhereOp::Lt}, {"<=", WhereOp::Le},
            {">", WhereOp::Gt},  {">=", WhereOp::Ge}, {"^=", WhereOp::Prefix}};
        for (auto [text, op] : kOps) {
            if (!is_op(text)) continue;
            ++pos_;
            n->op = op;
            auto lit = parse_literal();
            if (!lit) return nullptr;
            n->literals.push_back(std::move(*lit));
            return n;
        }
        if (is_word("in")) {
            ++pos_;
            n->op = WhereOp::In;
            if (!is_op("{")) {
                fail(peek().at, fmt::format("expected '{{' after 'in' but found '{}'", peek().text));
                return nullptr;
            }
            ++pos_;
            for (;;) {
                auto lit = parse_literal();
                if (!lit) return nullptr;
                n->literals.push_back(std::move(*lit));
                if (++nodes_ > kMaxWhereNodes) {
                    fail(peek().at, fmt::format("more than {} tests, operators and set members", kMaxWhereNodes));
                    return nullptr;
                }
                if (is_op(",")) { ++pos_; continue; }
                if (is_op("}")) { ++pos_; break; }
                fail(peek().at, fmt::format("expected ',' or '}}' but found '{}'", peek().text));
                return nullptr;
            }
        }
        return n;
    }

    static bool parse_decimal(std::string_view s, std::uint64_t& v) {
        if (s.empty() || s.size() > 19) return false;
        v = 0;
        for (char c : s) {
            if (c < '0' || c > '9') return false;
            v = v * 10 + static_cast<std::uint64_t>(c - '0');
        }
        return true;
    }

    std::optional<WhereLiteral> parse_literal() {
        WhereLiteral lit;
        lit.at = peek().at;
        if (is_op("-")) {
            lit.negative = true;
            ++pos_;
            if (peek().kind != Token::Kind::Number) {
                fail(peek().at, fmt::format("expected a number after '-' but found '{}'", peek().text));
                return std::nullopt;
            }
        }
        const Token& t = peek();
        lit.name = t.text;
        switch (t.kind) {
        case Token::Kind::Name: lit.kind = WhereLiteral::Kind::Name; break;
        case Token::Kind::String:
            lit.kind = WhereLiteral::Kind::String;
            lit.bytes.assign(t.text.begin(), t.text.end());
            break;
        case Token::Kind::Number:
            if (!number(t, lit)) return std::nullopt;
            break;
        default:
            fail(t.at, fmt::format("expected a value (a number, 0xHEX, \"text\" or a name) but found '{}'", t.text));
            return std::nullopt;
        }
        ++pos_;
        return lit;
    }

    bool number(const Token& t, WhereLiteral& lit) {
        lit.kind = WhereLiteral::Kind::Number;
        std::string_view s = t.text;
        if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
            lit.is_hex = true;
            s.remove_prefix(2);
            if (s.size() > 64) lit.fits = false;
            for (std::size_t i = 0; i < s.size(); ++i) {
                const char c = s[i];
                const int d = std::isdigit(static_cast<unsigned char>(c)) ? c - '0'
                              : (c >= 'a' && c <= 'f') ? c - 'a' + 10 : (c >= 'A' && c <= 'F') ? c - 'A' + 10 : -1;
                if (d < 0) {
                    fail(t.at, fmt::format("'{}' is not a hex number", t.text));
                    return false;
                }
                if (lit.fits) shift_add(lit.number, 16, static_cast<std::uint64_t>(d), lit.fits);
                if (i % 2 == 1) lit.bytes.push_back(static_cast<std::uint8_t>(hexval(s[i - 1]) * 16 + d));
            }
            if (s.size() % 2 == 1) lit.bytes.clear();
            return true;
        }
        if (const auto dot = s.find('.'); dot != std::string_view::npos) {
            lit.fraction = true;
            lit.real = std::strtod(std::string(s).c_str(), nullptr);
            if (lit.negative) lit.real = -lit.real;
            s = s.substr(0, dot);
        }
        for (char c : s) {
            if (c < '0' || c > '9') {
                fail(t.at, fmt::format("'{}' is not a number", t.text));
                return false;
            }
            shift_add(lit.number, 10, static_cast<std::uint64_t>(c - '0'), lit.fits);
        }
        return true;
    }

    static int hexval(char c) {
        if (c >= '0' && c <= '9') return c - '0';
        if (c >= 'a' && c <= 'f') return c - 'a' + 10;
        return c - 'A' + 10;
    }

    // number = number * base + digit, remembering an overflow past 2^256.
    static void shift_add(U256& n, std::uint64_t base, std::uint64_t digit, bool& fits) {
        UInt128 carry = digit;
        for (auto& limb : n) {
            const UInt128 v = static_cast<UInt128>(limb) * base + carry;
            limb = static_cast<std::uint64_t>(v);
            carry = v >> 64;
        }
        if (carry != 0) fits = false;
    }

    std::string_view text_;
    std::string_view option_;
    std::vector<Token> tokens_;
    std::size_t pos_ = 0;
    std::size_t nodes_ = 0;
    std::optional<Error> error_;
};

}  // namespace

Error where_error(std::string_view option, std::string_view text, std::size_t at, std::string_view reason) {
    std::string shown;
    for (char c : text.substr(0, 80)) shown += std::isprint(static_cast<unsigned char>(c)) ? c : '?';
    if (text.size() > 80) shown += "...";
    return Error(EINVAL, fmt::format("bad {} '{}': at {}: {}", option, shown, at, reason));
}

Result<std::unique_ptr<WhereNode>> parse_where(std::string_view text, std::string_view option) {
    return Parser(text, option).run();
}

}  // namespace evring::detail
