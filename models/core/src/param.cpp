#include "trn3/core/param.h"

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fnmatch.h>
#include <limits>

#include <fmt/format.h>

#include "trn3/core/user_file.h"

namespace trn3 {

// ---- value types --------------------------------------------------------

namespace {
std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    return s;
}

template <typename I>
I parse_integer(const std::string& text) {
    errno = 0;
    char* end = nullptr;
    const char* s = text.c_str();
    if constexpr (std::is_signed_v<I>) {
        long long v = std::strtoll(s, &end, 0);
        if (end == s || *end != '\0' || errno == ERANGE) throw config_error("'" + text + "' is not an integer");
        return static_cast<I>(v);
    } else {
        if (text.find('-') != std::string::npos) throw config_error("'" + text + "' is not a non-negative integer");
        unsigned long long v = std::strtoull(s, &end, 0);
        if (end == s || *end != '\0' || errno == ERANGE) throw config_error("'" + text + "' is not an integer");
        return static_cast<I>(v);
    }
}

// JSON values may be given as numbers or as the same text the CLI takes.
template <typename T>
T from_json_via_text(const nlohmann::json& j) {
    if (j.is_string()) return param_traits<T>::parse(j.get<std::string>());
    throw config_error(
        fmt::format("{} is not a {} (write it as a string with its unit)", j.dump(), param_traits<T>::type_name()));
}
}  // namespace

template <>
bool param_traits<bool>::parse(const std::string& t) {
    std::string l = lower(t);
    if (l == "true" || l == "1" || l == "on" || l == "yes") return true;
    if (l == "false" || l == "0" || l == "off" || l == "no") return false;
    throw config_error("'" + t + "' is not a boolean (true/false)");
}
template <>
std::string param_traits<bool>::format(const bool& v) {
    return v ? "true" : "false";
}
template <>
const char* param_traits<bool>::type_name() {
    return "bool";
}
template <>
const char* param_traits<bool>::unit() {
    return "";
}
template <>
bool param_traits<bool>::from_json(const nlohmann::json& j) {
    if (j.is_boolean()) return j.get<bool>();
    if (j.is_string()) return parse(j.get<std::string>());
    throw config_error(j.dump() + " is not a boolean");
}
template <>
nlohmann::json param_traits<bool>::to_json(const bool& v) {
    return v;
}
template <>
range<bool> param_traits<bool>::default_range() {
    return {};
}

template <>
std::int64_t param_traits<std::int64_t>::parse(const std::string& t) {
    return parse_integer<std::int64_t>(t);
}
template <>
std::string param_traits<std::int64_t>::format(const std::int64_t& v) {
    return std::to_string(v);
}
template <>
const char* param_traits<std::int64_t>::type_name() {
    return "int";
}
template <>
const char* param_traits<std::int64_t>::unit() {
    return "";
}
template <>
std::int64_t param_traits<std::int64_t>::from_json(const nlohmann::json& j) {
    if (j.is_number_integer()) return j.get<std::int64_t>();
    if (j.is_string()) return parse(j.get<std::string>());
    throw config_error(j.dump() + " is not an integer");
}
template <>
nlohmann::json param_traits<std::int64_t>::to_json(const std::int64_t& v) {
    return v;
}
template <>
range<std::int64_t> param_traits<std::int64_t>::default_range() {
    return {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()};
}

template <>
std::uint64_t param_traits<std::uint64_t>::parse(const std::string& t) {
    return parse_integer<std::uint64_t>(t);
}
template <>
std::string param_traits<std::uint64_t>::format(const std::uint64_t& v) {
    return std::to_string(v);
}
template <>
const char* param_traits<std::uint64_t>::type_name() {
    return "uint";
}
template <>
const char* param_traits<std::uint64_t>::unit() {
    return "";
}
template <>
std::uint64_t param_traits<std::uint64_t>::from_json(const nlohmann::json& j) {
    if (j.is_number_unsigned()) return j.get<std::uint64_t>();
    if (j.is_string()) return parse(j.get<std::string>());
    throw config_error(j.dump() + " is not a non-negative integer");
}
template <>
nlohmann::json param_traits<std::uint64_t>::to_json(const std::uint64_t& v) {
    return v;
}
template <>
range<std::uint64_t> param_traits<std::uint64_t>::default_range() {
    return {0, std::numeric_limits<std::uint32_t>::max()};
}

template <>
double param_traits<double>::parse(const std::string& t) {
    char* end = nullptr;
    double v = std::strtod(t.c_str(), &end);
    if (end == t.c_str() || *end != '\0') throw config_error("'" + t + "' is not a number");
    return v;
}
template <>
std::string param_traits<double>::format(const double& v) {
    return fmt::format("{}", v);
}
template <>
const char* param_traits<double>::type_name() {
    return "real";
}
template <>
const char* param_traits<double>::unit() {
    return "";
}
template <>
double param_traits<double>::from_json(const nlohmann::json& j) {
    if (j.is_number()) return j.get<double>();
    if (j.is_string()) return parse(j.get<std::string>());
    throw config_error(j.dump() + " is not a number");
}
template <>
nlohmann::json param_traits<double>::to_json(const double& v) {
    return v;
}
template <>
range<double> param_traits<double>::default_range() {
    return {-1e15, 1e15};
}

template <>
std::string param_traits<std::string>::parse(const std::string& t) {
    return t;
}
template <>
std::string param_traits<std::string>::format(const std::string& v) {
    return v;
}
template <>
const char* param_traits<std::string>::type_name() {
    return "string";
}
template <>
const char* param_traits<std::string>::unit() {
    return "";
}
template <>
std::string param_traits<std::string>::from_json(const nlohmann::json& j) {
    if (j.is_string()) return j.get<std::string>();
    throw config_error(j.dump() + " is not a string");
}
template <>
nlohmann::json param_traits<std::string>::to_json(const std::string& v) {
    return v;
}
template <>
range<std::string> param_traits<std::string>::default_range() {
    return {};
}

template <>
sc_core::sc_time param_traits<sc_core::sc_time>::parse(const std::string& t) {
    return parse_time(t);
}
template <>
std::string param_traits<sc_core::sc_time>::format(const sc_core::sc_time& v) {
    return format_time(v);
}
template <>
const char* param_traits<sc_core::sc_time>::type_name() {
    return "time";
}
template <>
const char* param_traits<sc_core::sc_time>::unit() {
    return "s";
}
template <>
sc_core::sc_time param_traits<sc_core::sc_time>::from_json(const nlohmann::json& j) {
    return from_json_via_text<sc_core::sc_time>(j);
}
template <>
nlohmann::json param_traits<sc_core::sc_time>::to_json(const sc_core::sc_time& v) {
    return format_time(v);
}
template <>
range<sc_core::sc_time> param_traits<sc_core::sc_time>::default_range() {
    return {sc_core::SC_ZERO_TIME, sc_core::sc_time(3600, sc_core::SC_SEC)};
}

template <>
frequency param_traits<frequency>::parse(const std::string& t) {
    return parse_frequency(t);
}
template <>
std::string param_traits<frequency>::format(const frequency& v) {
    return format_frequency(v);
}
template <>
const char* param_traits<frequency>::type_name() {
    return "frequency";
}
template <>
const char* param_traits<frequency>::unit() {
    return "Hz";
}
template <>
frequency param_traits<frequency>::from_json(const nlohmann::json& j) {
    return from_json_via_text<frequency>(j);
}
template <>
nlohmann::json param_traits<frequency>::to_json(const frequency& v) {
    return format_frequency(v);
}
template <>
range<frequency> param_traits<frequency>::default_range() {
    return {frequency{1.0}, frequency{1e12}};
}

template <>
byte_count param_traits<byte_count>::parse(const std::string& t) {
    return parse_byte_count(t);
}
template <>
std::string param_traits<byte_count>::format(const byte_count& v) {
    return format_byte_count(v);
}
template <>
const char* param_traits<byte_count>::type_name() {
    return "size";
}
template <>
const char* param_traits<byte_count>::unit() {
    return "B";
}
template <>
byte_count param_traits<byte_count>::from_json(const nlohmann::json& j) {
    if (j.is_number_unsigned()) return {j.get<std::uint64_t>()};
    return from_json_via_text<byte_count>(j);
}
template <>
nlohmann::json param_traits<byte_count>::to_json(const byte_count& v) {
    return format_byte_count(v);
}
template <>
range<byte_count> param_traits<byte_count>::default_range() {
    return {byte_count{0}, byte_count{1ull << 50}};
}

template <>
bandwidth param_traits<bandwidth>::parse(const std::string& t) {
    return parse_bandwidth(t);
}
template <>
std::string param_traits<bandwidth>::format(const bandwidth& v) {
    return format_bandwidth(v);
}
template <>
const char* param_traits<bandwidth>::type_name() {
    return "bandwidth";
}
template <>
const char* param_traits<bandwidth>::unit() {
    return "B/s";
}
template <>
bandwidth param_traits<bandwidth>::from_json(const nlohmann::json& j) {
    return from_json_via_text<bandwidth>(j);
}
template <>
nlohmann::json param_traits<bandwidth>::to_json(const bandwidth& v) {
    return format_bandwidth(v);
}
template <>
range<bandwidth> param_traits<bandwidth>::default_range() {
    return {bandwidth{1.0}, bandwidth{1e15}};
}

// ---- param_base ---------------------------------------------------------

param_base::param_base(const sc_core::sc_object* owner, const std::string& leaf, std::string description)
    : name_(owner ? std::string(owner->name()) + "." + leaf : leaf), description_(std::move(description)),
      program_wide_(owner == nullptr) {}

param_base::~param_base() { param_registry::instance().remove(this); }

void param_base::attach() { param_registry::instance().add(this); }

// ---- registry -------------------------------------------------------------

param_registry& param_registry::instance() {
    static param_registry registry;
    return registry;
}

void param_registry::add(param_base* p) {
    auto [it, inserted] = params_.emplace(p->name(), p);
    if (!inserted) {
        // A host program's param (no owner) in a second instance of the
        // program (a cluster's UltraServers each run one): the same key
        // configures every instance.
        if (!p->program_wide() || !it->second->program_wide() || std::string(p->type_name()) != it->second->type_name())
            throw config_error("param " + p->name() + " is declared twice");
        more_instances_.emplace(p->name(), p);
    }
    // Every value set for this name, by name or by pattern, in the order they were set.
    std::vector<pending_value*> values;
    auto pending = pending_.find(p->name());
    if (pending != pending_.end()) values.push_back(&pending->second);
    for (auto& [pattern, v] : patterns_)
        if (fnmatch(pattern.c_str(), p->name().c_str(), 0) == 0) values.push_back(&v);
    std::sort(values.begin(), values.end(), [](auto* a, auto* b) { return a->order < b->order; });
    for (pending_value* v : values) apply(p, *v);
}

void param_registry::remove(param_base* p) {
    auto range = more_instances_.equal_range(p->name());
    for (auto m = range.first; m != range.second; ++m)
        if (m->second == p) {
            more_instances_.erase(m);
            return;
        }
    auto it = params_.find(p->name());
    if (it == params_.end() || it->second != p) return;
    if (range.first != range.second) {  // another instance stands for the name now
        it->second = range.first->second;
        more_instances_.erase(range.first);
    } else {
        params_.erase(it);
    }
}

void param_registry::apply(param_base* p, pending_value& v) {
    if (v.is_text) p->set_text(v.text, v.source);
    else p->set_json(v.json, v.source);
    v.claimed = true;
}

void param_registry::set(const std::string& name, pending_value value) {
    value.order = next_order_++;
    if (name.find('*') != std::string::npos) {
        patterns_.emplace_back(name, std::move(value));
        pending_value& v = patterns_.back().second;
        for (auto& [n, p] : params_)
            if (fnmatch(name.c_str(), n.c_str(), 0) == 0) apply(p, v);
        for (auto& [n, p] : more_instances_)
            if (fnmatch(name.c_str(), n.c_str(), 0) == 0) apply(p, v);
        return;
    }
    pending_value& v = pending_[name];
    v = std::move(value);
    if (auto it = params_.find(name); it != params_.end()) apply(it->second, v);
    auto range = more_instances_.equal_range(name);
    for (auto m = range.first; m != range.second; ++m) apply(m->second, v);
}

void param_registry::set_pending(const std::string& name, const nlohmann::json& value, const std::string& source) {
    set(name, pending_value{false, {}, value, source, false});
}

void param_registry::set_pending_text(const std::string& name, const std::string& text, const std::string& source) {
    set(name, pending_value{true, text, {}, source, false});
}

namespace {
void flatten(const nlohmann::json& j, const std::string& prefix,
             std::vector<std::pair<std::string, nlohmann::json>>& out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it->is_object()) flatten(*it, key, out);
        else out.emplace_back(key, *it);
    }
}
}  // namespace

namespace {
// Objects and arrays nested deeper than a config needs are refused before
// parsing (a 50,000-deep document would exhaust the stack).
void check_nesting(const std::string& text, const std::string& path) {
    constexpr int max_depth = 64;
    int depth = 0;
    bool in_string = false, escaped = false;
    for (char c : text) {
        if (in_string) {
            if (escaped) escaped = false;
            else if (c == '\\') escaped = true;
            else if (c == '"') in_string = false;
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            if (++depth > max_depth)
                throw config_error(fmt::format("config file '{}': nested deeper than {} levels", path, max_depth));
        } else if (c == '}' || c == ']') {
            --depth;
        }
    }
}

}  // namespace

std::string param_registry::load_config_file(const std::string& path) {
    return load_config_text(read_user_text(path, "config file"), path);
}

std::string param_registry::load_config_text(const std::string& text, const std::string& path) {
    check_nesting(text, path);
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);  // the whole text: anything after the value is an error
    } catch (const nlohmann::json::exception& e) {
        throw config_error("config file '" + path + "' is not valid JSON: " + e.what());
    }
    if (!j.is_object()) throw config_error("config file '" + path + "' must hold a JSON object of param values");
    std::string platform;
    if (auto it = j.find("platform"); it != j.end()) {
        if (!it->is_string()) throw config_error("config file '" + path + "': \"platform\" must be a platform's name");
        platform = it->get<std::string>();
        j.erase(it);
    }
    std::vector<std::pair<std::string, nlohmann::json>> values;
    flatten(j, "", values);
    for (auto& [k, v] : values) set_pending(k, v, "config " + path);
    return platform;
}

std::vector<std::string> param_registry::unclaimed() const {
    std::vector<std::string> keys;
    for (const auto& [name, v] : pending_)
        if (!v.claimed && !params_.count(name)) keys.push_back(name);
    for (const auto& [pattern, v] : patterns_)
        if (!v.claimed) keys.push_back(pattern);
    return keys;
}

void param_registry::check_all_claimed(const std::function<bool(const std::string&)>& claimed_elsewhere) const {
    for (const auto& [name, v] : pending_) {
        if (v.claimed || params_.count(name) || (claimed_elsewhere && claimed_elsewhere(name))) continue;
        std::string msg = "unknown param '" + name + "' (from " + v.source + ")";
        std::string near = nearest_name(name);
        if (!near.empty()) msg += "; did you mean '" + near + "'?";
        throw config_error(msg);
    }
    for (const auto& [pattern, v] : patterns_)
        if (!v.claimed && !(claimed_elsewhere && claimed_elsewhere(pattern)))
            throw config_error("param pattern '" + pattern + "' (from " + v.source + ") matches no param");
}

nlohmann::json param_registry::resolved() const {
    nlohmann::json j = nlohmann::json::object();
    for (const auto& [name, p] : params_) j[name] = p->value_json();
    return j;
}

void param_registry::dump_config_file(const std::string& path, const std::string& platform) const {
    nlohmann::json j = resolved();
    if (!platform.empty()) j["platform"] = platform;
    write_user_file(path, "config file", j.dump(2) + "\n");
}

const param_base* param_registry::find(const std::string& name) const {
    auto it = params_.find(name);
    return it == params_.end() ? nullptr : it->second;
}

std::vector<const param_base*> param_registry::all() const {
    std::vector<const param_base*> out;
    out.reserve(params_.size());
    for (const auto& [name, p] : params_) out.push_back(p);
    return out;
}

std::size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (std::size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (std::size_t j = 1; j <= b.size(); ++j) {
            std::size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::string param_registry::nearest_name(const std::string& name) const {
    std::string best;
    std::size_t best_d = std::numeric_limits<std::size_t>::max();
    for (const auto& [candidate, p] : params_) {
        std::size_t d = edit_distance(name, candidate);
        if (d < best_d) {
            best_d = d;
            best = candidate;
        }
    }
    // A suggestion that shares little with the key helps no one.
    if (best_d > std::max<std::size_t>(3, name.size() / 3)) return "";
    return best;
}

}  // namespace trn3
