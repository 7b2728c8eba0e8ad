// Named, typed, documented parameters.
//
// Every number that describes hardware is a param: it has a hierarchical name
// ("chip0.hbm.latency"), a type, a default, a unit (carried by the type), an
// optional range and a one-line description. Values come from a JSON config
// file and from the command line; both are handed to the param_registry
// before the platform is built, and each param picks up its value when it is
// constructed. A key that no param claims is an error, reported with the
// nearest valid name.
//
//   param<sc_time>   latency{this, "latency", sc_time(120, SC_NS), "read latency of the array"};
//   param<frequency> clock{this, "clock", frequency{2.4e9}, "core clock"};
//   param<uint64_t>  count{this, "count", 1000, "transactions to issue", range<uint64_t>{1, 1u << 30}};
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>
#include <systemc>

#include "trn3/core/error.h"
#include "trn3/core/units.h"
#include "trn3/core/user_file.h"

namespace trn3 {

template <typename T>
struct range {
    std::optional<T> min;
    std::optional<T> max;
};

// Ranges of params that hold addresses (below 2^56, so that an address plus
// a size cannot wrap) and seeds (any 64-bit value).
inline range<std::uint64_t> address_range() { return {0, (1ull << 56) - 1}; }
inline range<std::uint64_t> seed_range() { return {0, ~0ull}; }

// The values a fixed-choice param may take (an enum param): anything else is
// refused, and list-params prints the choices.
//   param<std::string> mode{this, "mode", "far", "which pairs", one_of<std::string>{{"far", "all", "off"}}};
template <typename T>
struct one_of {
    std::vector<T> values;
};

// How a value type reads, writes and names its unit. Specialised in param.cpp
// for bool, int64_t, uint64_t, double, std::string, sc_time, frequency,
// byte_count and bandwidth.
template <typename T>
struct param_traits {
    static T parse(const std::string& text);
    static std::string format(const T& value);
    static const char* type_name();
    static const char* unit();  // "" when unitless
    static T from_json(const nlohmann::json& j);
    static nlohmann::json to_json(const T& value);
    // The range a param of this type has when its declaration gives no bound
    // (each missing bound is taken from here): every numeric param has one,
    // so a value cannot wrap where models narrow it (uint: 32 bits unless
    // declared wider), overflow simulated time (time: an hour) or be NaN.
    static range<T> default_range();
};

class param_base {
public:
    param_base(const param_base&) = delete;
    param_base& operator=(const param_base&) = delete;
    virtual ~param_base();

    const std::string& name() const { return name_; }
    const std::string& description() const { return description_; }
    // Where the value came from: "default", "config FILE" or "command line".
    const std::string& source() const { return source_; }
    // A host program's param (declared without an owner): every instance of
    // the program reads the same key.
    bool program_wide() const { return program_wide_; }

    virtual std::string value_string() const = 0;
    virtual std::string default_string() const = 0;
    virtual std::string range_string() const = 0;
    virtual const char* type_name() const = 0;
    virtual const char* unit() const = 0;
    virtual nlohmann::json value_json() const = 0;

    // Set from text (command line) or JSON (config file); throws config_error
    // naming this param when the value does not parse or is out of range.
    virtual void set_text(const std::string& text, const std::string& source) = 0;
    virtual void set_json(const nlohmann::json& value, const std::string& source) = 0;

protected:
    param_base(const sc_core::sc_object* owner, const std::string& leaf, std::string description);
    void attach();  // registers and picks up a pending value
    std::string source_ = "default";

private:
    std::string name_;
    std::string description_;
    bool program_wide_ = false;
};

template <typename T>
class param final : public param_base {
public:
    param(const sc_core::sc_object* owner, const std::string& leaf, T default_value, std::string description,
          range<T> limits = {})
        : param_base(owner, leaf, std::move(description)), value_(default_value), default_(default_value),
          range_(with_defaults(std::move(limits))) {
        check(value_, "default");
        attach();
    }
    param(const sc_core::sc_object* owner, const std::string& leaf, T default_value, std::string description,
          one_of<T> choices)
        : param_base(owner, leaf, std::move(description)), value_(default_value), default_(default_value),
          choices_(std::move(choices.values)) {
        check(value_, "default");
        attach();
    }

    const T& get() const { return value_; }
    operator const T&() const { return value_; }
    // Models may set a param during elaboration (a builder deriving a value);
    // the dumped config then records it.
    void set(const T& v, const std::string& source = "model") {
        check(v, source);
        value_ = v;
        source_ = source;
    }

    std::string value_string() const override { return param_traits<T>::format(value_); }
    std::string default_string() const override { return param_traits<T>::format(default_); }
    std::string range_string() const override {
        if (!choices_.empty()) return "{" + choices_text() + "}";
        if (!range_.min && !range_.max) return "";
        return "[" + (range_.min ? param_traits<T>::format(*range_.min) : std::string("-")) + ", " +
               (range_.max ? param_traits<T>::format(*range_.max) : std::string("-")) + "]";
    }
    const char* type_name() const override { return choices_.empty() ? param_traits<T>::type_name() : "enum"; }
    const std::vector<T>& choices() const { return choices_; }
    const char* unit() const override { return param_traits<T>::unit(); }
    nlohmann::json value_json() const override { return param_traits<T>::to_json(value_); }
    void set_text(const std::string& text, const std::string& source) override {
        set(parse_or_throw([&] { return param_traits<T>::parse(text); }), source);
    }
    void set_json(const nlohmann::json& j, const std::string& source) override {
        set(parse_or_throw([&] { return param_traits<T>::from_json(j); }), source);
    }

private:
    // Runs a parser; its error names this param.
    template <typename F>
    T parse_or_throw(F&& parse) const {
        try {
            return parse();
        } catch (const std::exception& e) {
            throw config_error("param " + name() + ": " + quoted_excerpt(e.what(), 200));
        }
    }
    static range<T> with_defaults(range<T> r) {
        const range<T> d = param_traits<T>::default_range();
        if (!r.min) r.min = d.min;
        if (!r.max) r.max = d.max;
        return r;
    }
    std::string choices_text() const {
        std::string s;
        for (const T& c : choices_) {
            const std::string text = param_traits<T>::format(c);
            s += (s.empty() ? "" : ", ") + (text.empty() ? std::string("\"\"") : text);
        }
        return s;
    }
    void check(const T& v, const std::string& source) const {
        if (!choices_.empty() && std::find(choices_.begin(), choices_.end(), v) == choices_.end())
            throw config_error("param " + name() + " = '" + quoted_excerpt(param_traits<T>::format(v)) + "' (" +
                               source + "): must be one of " + choices_text());
        if constexpr (std::is_floating_point_v<T>)
            if (v != v) throw config_error("param " + name() + " = NaN (" + source + "): not a number");
        bool below = range_.min && v < *range_.min;
        bool above = range_.max && *range_.max < v;
        if (below || above)
            throw config_error("param " + name() + " = " + param_traits<T>::format(v) + " (" + source +
                               ") is outside its range " + range_string());
    }

    T value_;
    T default_;
    range<T> range_;
    std::vector<T> choices_;
};

// All params of the simulation, by name, and the values waiting for them.
class param_registry {
public:
    static param_registry& instance();

    // Values to apply when a param of that name is constructed (or at once if
    // it exists). Later calls override earlier ones: config file, then -p. A
    // name with '*' is a pattern (each '*' any run of characters, dots too:
    // "nl72x2.*.hbm*.t_refi") that sets every param it matches.
    void set_pending(const std::string& name, const nlohmann::json& value, const std::string& source);
    void set_pending_text(const std::string& name, const std::string& text, const std::string& source);
    // Reads a JSON object of values: flat ({"a.b.c": 1}) or nested ({"a": {"b": {"c": 1}}}).
    // Returns the file's top-level "platform" (the platform a dumped config
    // came from; not a param), or "" when it names none.
    std::string load_config_file(const std::string& path);
    // The same for a config file's text (`path` names it in errors).
    std::string load_config_text(const std::string& text, const std::string& path);
    // Throws config_error for the first value no param claimed, with the
    // nearest existing name as a suggestion; values and patterns for which
    // `claimed_elsewhere(key)` holds are left alone (a distributed run: the
    // param is another process's).
    void check_all_claimed(const std::function<bool(const std::string&)>& claimed_elsewhere = {}) const;
    // The keys of the values and patterns no param claimed here.
    std::vector<std::string> unclaimed() const;
    // The resolved set, as a flat JSON object that load_config_file reads back.
    nlohmann::json resolved() const;
    // With "platform": `platform`, so that --config of a dump alone reproduces the run.
    void dump_config_file(const std::string& path, const std::string& platform = "") const;

    const param_base* find(const std::string& name) const;
    std::vector<const param_base*> all() const;  // sorted by name
    std::string nearest_name(const std::string& name) const;

    // Forget pending values (tests use this between cases).
    void clear_pending() {
        pending_.clear();
        patterns_.clear();
    }

private:
    friend class param_base;
    void add(param_base* p);
    void remove(param_base* p);

    struct pending_value {
        bool is_text = false;
        std::string text;
        nlohmann::json json;
        std::string source;
        bool claimed = false;
        std::uint64_t order = 0;  // when it was set: later ones win
    };
    void apply(param_base* p, pending_value& v);
    void set(const std::string& name, pending_value v);

    std::map<std::string, param_base*> params_;
    std::multimap<std::string, param_base*> more_instances_;  // program-wide params declared again
    std::map<std::string, pending_value> pending_;
    std::vector<std::pair<std::string, pending_value>> patterns_;  // names with '*'
    std::uint64_t next_order_ = 0;
};

// Edit distance, used for "did you mean" suggestions.
std::size_t edit_distance(const std::string& a, const std::string& b);

}  // namespace trn3
