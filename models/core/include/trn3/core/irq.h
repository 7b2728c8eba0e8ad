// irq_line: a level-sensitive interrupt wire between two models.
//
// The source drives the level; sinks register a handler that runs on every
// change. No SystemC signal is involved (no delta cycle per edge): an
// interrupt in this platform is an event the receiver handles at its own
// next synchronisation point.
//
//   irq_line mem_error;                          // in the source
//   mem_error.on_change([&](bool level) {...});  // in the builder, wiring the sink
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

namespace trn3 {

class irq_line {
public:
    using handler = std::function<void(bool level)>;

    void set(bool level) {
        if (level == level_) return;
        level_ = level;
        ++edges_;
        for (auto& h : sinks_) h(level_);
    }
    bool level() const { return level_; }
    std::uint64_t edges() const { return edges_; }
    void on_change(handler h) { sinks_.push_back(std::move(h)); }

private:
    bool level_ = false;
    std::uint64_t edges_ = 0;
    std::vector<handler> sinks_;
};

}  // namespace trn3
