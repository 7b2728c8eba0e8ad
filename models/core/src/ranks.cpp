// One process's ranks, and the helpers over all_gather (ranks.h).
#include "trn3/core/ranks.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <stdexcept>

#include "trn3/core/error.h"

namespace trn3 {
namespace {

// A run outside mpirun: one rank, nobody to exchange with.
class single_rank final : public ranks {
public:
    unsigned rank() const override { return 0; }
    unsigned size() const override { return 1; }
    std::vector<byte_buffer> exchange(std::vector<byte_buffer>) override { return {byte_buffer{}}; }
    std::vector<byte_buffer> all_gather(const byte_buffer& mine) override { return {mine}; }
    [[noreturn]] void abort_job(int code) override { std::exit(code); }
};

std::unique_ptr<ranks>& installed() {
    static std::unique_ptr<ranks> r = std::make_unique<single_rank>();
    return r;
}

byte_buffer bytes_of(std::uint64_t v) {
    byte_buffer b(8);
    std::memcpy(b.data(), &v, 8);
    return b;
}

std::uint64_t value_of(const byte_buffer& b) {
    if (b.size() != 8) throw std::logic_error("ranks: a gathered value of the wrong size");
    std::uint64_t v;
    std::memcpy(&v, b.data(), 8);
    return v;
}

}  // namespace

ranks& process_ranks() { return *installed(); }
void set_ranks(std::unique_ptr<ranks> r) { installed() = r ? std::move(r) : std::make_unique<single_rank>(); }

bool all_of(ranks& r, bool mine) {
    for (const byte_buffer& b : r.all_gather(bytes_of(mine)))
        if (value_of(b) == 0) return false;
    return true;
}

std::uint64_t min_of(ranks& r, std::uint64_t mine) {
    std::uint64_t m = mine;
    for (const byte_buffer& b : r.all_gather(bytes_of(mine))) m = std::min(m, value_of(b));
    return m;
}

std::uint64_t sum_of(ranks& r, std::uint64_t mine) {
    std::uint64_t s = 0;
    for (const byte_buffer& b : r.all_gather(bytes_of(mine))) s += value_of(b);
    return s;
}

std::vector<std::string> gather_text(ranks& r, const std::string& mine) {
    std::vector<std::string> out;
    for (const byte_buffer& b : r.all_gather(byte_buffer(mine.begin(), mine.end())))
        out.emplace_back(b.begin(), b.end());
    return out;
}

void on_every_rank(ranks& r, const std::function<void()>& step) {
    if (r.single()) return step();
    std::exception_ptr failed;
    std::string mine;  // "" or a kind ('C' a config_error, 'E' another) and the message
    try {
        step();
    } catch (const config_error& e) {
        failed = std::current_exception();
        mine = std::string("C") + e.what();
    } catch (const std::exception& e) {
        failed = std::current_exception();
        mine = std::string("E") + e.what();
    }
    const std::vector<std::string> all = gather_text(r, mine);
    if (failed) std::rethrow_exception(failed);
    for (unsigned k = 0; k < all.size(); ++k) {
        if (all[k].empty()) continue;
        const std::string why = "rank " + std::to_string(k) + ": " + all[k].substr(1);
        if (all[k][0] == 'C') throw config_error(why);
        throw std::runtime_error(why);
    }
}

}  // namespace trn3
