// A registry of named things that register themselves from static objects
// in their own files (platforms, host programs), so that adding one touches
// no central list. `Info` has a `std::string name`.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace trn3 {

template <typename Info>
class named_registry {
public:
    // `what` names the kind in errors ("platform", "host program").
    explicit named_registry(std::string what) : what_(std::move(what)) {}

    void add(Info info) {
        if (find(info.name)) throw std::logic_error(what_ + " " + info.name + " registered twice");
        entries_.push_back(std::move(info));
    }
    const Info* find(const std::string& name) const {
        for (const auto& e : entries_)
            if (e.name == name) return &e;
        return nullptr;
    }
    std::vector<const Info*> all() const {  // sorted by name
        std::vector<const Info*> out;
        for (const auto& e : entries_) out.push_back(&e);
        std::sort(out.begin(), out.end(), [](const Info* a, const Info* b) { return a->name < b->name; });
        return out;
    }
    std::vector<std::string> names() const {  // sorted
        std::vector<std::string> out;
        for (const Info* e : all()) out.push_back(e->name);
        return out;
    }

private:
    std::string what_;
    std::vector<Info> entries_;
};

}  // namespace trn3
