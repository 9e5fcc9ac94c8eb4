// The one read pipeline (reading.hpp).
#include "read/reading.hpp"

#include <fmt/format.h>

namespace evring {
namespace {

// Whether the selection or the interest names something only a schema
// knows: type and flow tag names, --where, a span position, keywords.
bool needs_schema(const ReadRequest& request, const FollowOptions& follow) {
    const Selection* s = request.selection;
    const bool spans = request.scope == SelectionScope::Whole &&
                       (follow.start.kind == Position::Kind::Span || follow.stop.kind == Position::Kind::Span);
    const bool selection = s != nullptr && (s->has_names() || s->where || spans);
    return selection || request.interest.keywords.has_value();
}

}  // namespace

Result<std::unique_ptr<Reading>> Reading::open(ReadRequest request, FollowOptions follow) {
    std::unique_ptr<Reading> reading(new Reading());
    reading->request_ = std::move(request);
    reading->follow_ = std::move(follow);
    auto source = open_source(reading->request_.location, reading->request_.source);
    if (!source) return std::move(source).error();
    reading->source_ = std::move(*source);
    return reading;
}

Status Reading::find_schema() {
    const bool needed = request_.schema == SchemaNeed::Always || needs_schema(request_, follow_);
    if (!needed && request_.schema == SchemaNeed::WhenAsked) return {};
    SchemaResolveOptions options;
    if (request_.schema_file) options.schema_file = *request_.schema_file;
    auto found = resolve_schema(*source_, options);
    if (!found) {
        if (needed) return std::move(found).error();
        return {};  // Quiet: without a schema, only what needs one fails
    }
    found_ = std::move(*found);
    return {};
}

Status Reading::select() {
    if (const Selection* selection = request_.selection) {
        const Status resolved = request_.scope == SelectionScope::Whole
                                    ? selection->resolve(follow_, schema(), *source_, kept_)
                                    : selection->resolve_filters(follow_, schema(), *source_, kept_);
        if (!resolved) return resolved;
    }
    InterestContext context{.registering = request_.reader.has_value(), .location = request_.location,
                            .names = request_.interest_names};
    auto interest = resolve_interest(request_.interest, schema(), *source_, context);
    if (!interest) return std::move(interest).error();
    interest_ = *interest;
    if (interest_ && request_.narrow_to_interest) narrow_to_interest(*interest_, schema(), follow_.filter.types);
    return {};
}

Status Reading::resume_named(std::vector<std::string>& notices) {
    if (request_.selection == nullptr) return {};
    auto named = request_.selection->resume_named(follow_, *source_, notices);
    if (!named) return std::move(named).error();
    named_ = std::move(*named);
    return {};
}

Result<FollowResult> Reading::run(FollowSink& sink, std::function<bool()> flush,
                                  std::chrono::nanoseconds commit_every) {
    registration_.emplace(sink, request_.reader.value_or(ReaderInfo{}), request_.reader.has_value());
    if (interest_) registration_->set_interest(*interest_);
    FollowSink* outer = &*registration_;
    if (named_) {
        if (!flush) flush = [] { return true; };
        committing_.emplace(*registration_, *named_, std::move(flush), commit_every);
        outer = &*committing_;
    }
    return evring::follow(source_, follow_, *outer);
}

const std::optional<Error>& Reading::commit_error() const noexcept {
    static const std::optional<Error> none;
    return committing_ ? committing_->error() : none;
}

}  // namespace evring
