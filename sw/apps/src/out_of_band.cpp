// The launcher's key-value store (out_of_band.h).
#include "trn3/apps/out_of_band.h"

#include <cstring>
#include <stdexcept>

namespace trn3::apps {
namespace {

void put_u64(byte_buffer& b, std::uint64_t v) {
    const auto* p = reinterpret_cast<const std::uint8_t*>(&v);
    b.insert(b.end(), p, p + 8);
}

std::uint64_t get_u64(const byte_buffer& b, std::size_t& at) {
    if (b.size() - at < 8) throw std::logic_error("out_of_band: a record cut short");
    std::uint64_t v;
    std::memcpy(&v, b.data() + at, 8);
    at += 8;
    return v;
}

}  // namespace

void out_of_band::store(const std::string& key, std::vector<std::uint8_t> value, const sc_core::sc_time& visible) {
    values_[key][visible] = std::move(value);
}

void out_of_band::put(const std::string& key, std::vector<std::uint8_t> value) {
    const sc_core::sc_time visible = sc_core::sc_time_stamp() + latency_;
    // Record: visible time, key, value.
    put_u64(fresh_, visible.value());
    put_u64(fresh_, key.size());
    fresh_.insert(fresh_.end(), key.begin(), key.end());
    put_u64(fresh_, value.size());
    fresh_.insert(fresh_.end(), value.begin(), value.end());
    store(key, std::move(value), visible);
}

const std::vector<std::uint8_t>* out_of_band::find(const std::string& key) const {
    const auto k = values_.find(key);
    if (k == values_.end()) return nullptr;
    // The latest value visible now.
    const auto v = k->second.upper_bound(sc_core::sc_time_stamp());
    return v == k->second.begin() ? nullptr : &std::prev(v)->second;
}

byte_buffer out_of_band::take_new() {
    byte_buffer b;
    b.swap(fresh_);
    return b;
}

void out_of_band::add_remote(const byte_buffer& bytes) {
    std::size_t at = 0;
    while (at < bytes.size()) {
        const auto visible = sc_core::sc_time::from_value(get_u64(bytes, at));
        const auto key_bytes = get_u64(bytes, at);
        if (bytes.size() - at < key_bytes) throw std::logic_error("out_of_band: a record cut short");
        std::string key(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                        bytes.begin() + static_cast<std::ptrdiff_t>(at + key_bytes));
        at += key_bytes;
        const auto value_bytes = get_u64(bytes, at);
        if (bytes.size() - at < value_bytes) throw std::logic_error("out_of_band: a record cut short");
        std::vector<std::uint8_t> value(bytes.begin() + static_cast<std::ptrdiff_t>(at),
                                        bytes.begin() + static_cast<std::ptrdiff_t>(at + value_bytes));
        at += value_bytes;
        store(key, std::move(value), visible);
    }
}

}  // namespace trn3::apps
