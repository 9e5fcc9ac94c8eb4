// RegisteringSink (registering_sink.hpp): attach on start, publish on idle,
// re-attach on a new ring.
#include "evring/registry/registering_sink.hpp"

#include "evring/source/ring_source.hpp"

namespace evring {

void RegisteringSink::started(const EventSource& source) {
    source_ = nullptr;
    registration_ = ReaderRegistration();
    if (enabled_ && source.kind() == SourceKind::Ring) {
        const auto* ring_source = dynamic_cast<const RingSource*>(&source);
        const RingReader* reader = ring_source != nullptr ? ring_source->reader() : nullptr;
        if (reader != nullptr) {
            registration_ = ReaderRegistration::attach(*reader, info_);
            if (registration_.registered()) {
                source_ = &source;
                registration_.update(source.next_seqno(), source.counters().lost, source.counters().abandoned);
            }
        }
    }
    inner_.started(source);
}

bool RegisteringSink::idle() {
    keep_alive();
    return inner_.idle();
}

void RegisteringSink::keep_alive() {
    if (source_ != nullptr)
        registration_.on_idle(source_->next_seqno(), source_->counters().lost,
                              source_->counters().abandoned);
}

void RegisteringSink::replaced(const EventSource& old_source, const EventSource& new_source) {
    // The old source is about to go: stop reading it before started() registers the new one.
    source_ = nullptr;
    registration_.unregister();
    inner_.replaced(old_source, new_source);
}

}  // namespace evring
