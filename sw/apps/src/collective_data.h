// The collectives program's element types and data: the inputs it writes
// and the results it expects. Inputs make every partial result exact in
// every type: element e gets a small integer from two ranks (e mod n and
// e + 1 mod n) and zero from the rest, so any reduction order gives the
// same bits and #wrong is 0 unless something is wrong.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "trn3/collectives/plan.h"
#include "trn3/numerics/float_format.h"
#include "trn3/numerics/reduce.h"
#include "trn3/spec/device.h"

namespace trn3::apps {

struct dtype_info {
    const char* param;  // our name
    const char* nccl;  // nccl-tests' name
    unsigned code;  // TRN3_REDUCE_*
    numerics::reduce_type type;
};
inline constexpr dtype_info dtypes[] = {
    {"fp32", "float", TRN3_REDUCE_FP32, numerics::reduce_type::fp32},
    {"bf16", "bfloat16", TRN3_REDUCE_BF16, numerics::reduce_type::bf16},
    {"fp16", "half", TRN3_REDUCE_FP16, numerics::reduce_type::fp16},
    {"e4m3", "f8e4m3", TRN3_REDUCE_E4M3, numerics::reduce_type::e4m3fn},
    {"e5m2", "f8e5m2", TRN3_REDUCE_E5M2, numerics::reduce_type::e5m2},
    {"int32", "int32", TRN3_REDUCE_INT32, numerics::reduce_type::int32},
};
inline const dtype_info& dtype_of(const std::string& name) {
    for (const auto& d : dtypes)
        if (name == d.param) return d;
    return dtypes[0];  // the param's choices are these names
}

// The code of a small integer in a type.
inline void put_value(std::uint8_t* at, int v, numerics::reduce_type t) {
    if (t == numerics::reduce_type::int32) {
        const std::int32_t i = v;
        std::memcpy(at, &i, 4);
        return;
    }
    const std::uint32_t code = numerics::encode(static_cast<float>(v), numerics::format_of(t));
    std::memcpy(at, &code, numerics::element_bytes(t));
}

// What one collective of the sweep should give, for the check.
struct collective_reference {
    collectives::op what = collectives::op::all_reduce;
    unsigned n = 2;  // ranks
    numerics::reduce_type type = numerics::reduce_type::fp32;
    unsigned redop = TRN3_REDUCE_SUM;
    unsigned root = 0;  // broadcast, reduce
    bool average = false;  // avg: the sum times 1/n rounded to the type

    bool reduces() const {
        return what == collectives::op::all_reduce || what == collectives::op::reduce_scatter ||
               what == collectives::op::reduce;
    }

    // Rank p's contribution to element e of the whole buffer (reducing ops),
    // or its own part's element e (all_gather).
    int value(unsigned p, std::uint64_t e) const {
        if (!reduces()) return static_cast<int>((p * 5 + e * 3) % 7) - 3;
        if (p == e % n) return 1 + static_cast<int>((e / n) % 2);
        if (p == (e + 1) % n) return static_cast<int>((e / n) % 3) - 1;
        return redop == TRN3_REDUCE_PROD ? 1 : 0;  // the others: the reduction's identity
    }
    // all_to_allv: each rank's `elements` split unevenly (and repeatably)
    // over the n ranks: rank i gives rank j a share weighted 1 to 9 by (i, j).
    std::vector<std::uint64_t> splits(std::uint64_t elements) const {
        std::vector<std::uint64_t> s(std::size_t(n) * n);
        for (unsigned i = 0; i < n; ++i) {
            std::uint64_t weights = 0, given = 0;
            for (unsigned j = 0; j < n; ++j) weights += 1 + (i * 31 + j * 17) % 9;
            for (unsigned j = 0; j < n; ++j) {
                s[std::size_t(i) * n + j] =
                    j + 1 == n ? elements - given : elements * (1 + (i * 31 + j * 17) % 9) / weights;
                given += s[std::size_t(i) * n + j];
            }
        }
        return s;
    }

    // 1/n in the type: one element (avg multiplies the sum by it).
    std::vector<std::uint8_t> one_over_n() const {
        std::vector<std::uint8_t> v(numerics::element_bytes(type));
        const std::uint32_t code = numerics::encode(1.0f / static_cast<float>(n), numerics::format_of(type));
        std::memcpy(v.data(), &code, v.size());
        return v;
    }

    // The bytes rank p's output holds.
    std::uint64_t output_bytes(std::uint64_t bytes, unsigned p) const {
        if (what == collectives::op::reduce_scatter) return bytes / n;
        if (what != collectives::op::all_to_allv) return bytes;
        const unsigned es = numerics::element_bytes(type);
        const auto s = splits(bytes / es);
        std::uint64_t e = 0;
        for (unsigned i = 0; i < n; ++i) e += s[std::size_t(i) * n + p];
        return e * es;
    }

    // Whether every rank's expected output lies in one buffer
    // (expected_buffer(bytes, p) is the same for every p), so a check can
    // build it once a row: at expected_at(bytes, p) in it.
    bool one_expected_buffer() const {
        return what != collectives::op::all_to_all && what != collectives::op::all_to_allv &&
               what != collectives::op::send_recv;
    }
    std::uint64_t expected_at(std::uint64_t bytes, unsigned p) const {
        return what == collectives::op::reduce_scatter ? std::uint64_t(p) * (bytes / n) : 0;
    }
    // The buffer that holds what rank p's output should be, at
    // expected_at(bytes, p): the whole reduced buffer for reduce_scatter,
    // else p's output itself.
    std::vector<std::uint8_t> expected_buffer(std::uint64_t bytes, unsigned p) const {
        const unsigned es = numerics::element_bytes(type);
        small_codes codes(*this);
        if (what == collectives::op::all_to_allv) {  // every rank's piece for p, in rank order
            const auto s = splits(bytes / es);
            std::vector<std::uint8_t> out;
            for (unsigned i = 0; i < n; ++i) {
                std::uint64_t first = 0;
                for (unsigned k = 0; k < p; ++k) first += s[std::size_t(i) * n + k];
                for (std::uint64_t e = 0; e < s[std::size_t(i) * n + p]; ++e) {
                    out.resize(out.size() + es);
                    codes.put(out.data() + out.size() - es, value(i, first + e));
                }
            }
            return out;
        }
        const std::uint64_t elements = bytes / es;
        std::vector<std::uint8_t> out(bytes);
        for (std::uint64_t e = 0; e < elements; ++e) {
            std::uint8_t* at = out.data() + e * es;
            if (what == collectives::op::broadcast) {  // the root's input
                codes.put(at, value(root, e));
            } else if (what == collectives::op::send_recv) {  // the predecessor's input
                codes.put(at, value((p + n - 1) % n, e));
            } else if (what == collectives::op::all_to_all) {  // chunk i: rank i's chunk p
                const std::uint64_t chunk = elements / n;
                codes.put(at, value(static_cast<unsigned>(e / chunk), p * chunk + e % chunk));
            } else if (!reduces()) {
                const unsigned owner = static_cast<unsigned>(e / (elements / n));
                codes.put(at, value(owner, e % (elements / n)));
            } else {  // two ranks give something, the others the identity
                codes.put_reduced(at, value(unsigned(e % n), e), value(unsigned((e + 1) % n), e));
            }
        }
        return out;
    }
    std::vector<std::uint8_t> input(std::uint64_t bytes, unsigned p) const {
        const unsigned es = numerics::element_bytes(type);
        const std::uint64_t elements = what == collectives::op::all_gather ? bytes / es / n : bytes / es;
        std::vector<std::uint8_t> in(elements * es);
        small_codes codes(*this);
        for (std::uint64_t e = 0; e < elements; ++e) codes.put(in.data() + e * es, value(p, e));
        return in;
    }

private:
    // The codes of value()'s small integers in the type, and of the
    // reduction of two ranks' values as every order gives it (the others
    // give the identity; avg then multiplies by 1/n), each computed once:
    // a buffer of a million elements holds a handful of distinct ones.
    class small_codes {
    public:
        explicit small_codes(const collective_reference& ref) : ref_(ref), es_(numerics::element_bytes(ref.type)) {}
        void put(std::uint8_t* at, int v) {
            if (!in_range(v)) return put_value(at, v, ref_.type);
            auto& c = plain_[std::size_t(v + limit)];
            if (!c.known) {
                put_value(c.bytes, v, ref_.type);
                c.known = true;
            }
            std::memcpy(at, c.bytes, es_);
        }
        void put_reduced(std::uint8_t* at, int a, int b) {
            if (!in_range(a) || !in_range(b)) return reduce(at, a, b);
            auto& c = reduced_[std::size_t(a + limit) * span + std::size_t(b + limit)];
            if (!c.known) {
                reduce(c.bytes, a, b);
                c.known = true;
            }
            std::memcpy(at, c.bytes, es_);
        }

    private:
        static constexpr int limit = 8;  // value() gives -3 to 3
        static constexpr std::size_t span = 2 * limit + 1;
        static bool in_range(int v) { return v >= -limit && v <= limit; }
        struct code {
            bool known = false;
            std::uint8_t bytes[4] = {};
        };
        void reduce(std::uint8_t* at, int a, int b) const {
            const numerics::reduction r{static_cast<numerics::reduce_op>(ref_.redop), ref_.type};
            std::uint8_t next[4];
            put_value(at, a, ref_.type);
            put_value(next, b, ref_.type);
            numerics::reduce_into(r, at, next, es_);
            if (ref_.n > 2) {
                put_value(next, ref_.redop == TRN3_REDUCE_PROD ? 1 : 0, ref_.type);
                numerics::reduce_into(r, at, next, es_);
            }
            if (ref_.average)
                numerics::reduce_into({numerics::reduce_op::prod, ref_.type}, at, ref_.one_over_n().data(), es_);
        }
        const collective_reference& ref_;
        const unsigned es_;
        std::array<code, span> plain_{};
        std::array<code, span * span> reduced_{};
    };
};

}  // namespace trn3::apps
