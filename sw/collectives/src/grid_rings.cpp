// Rings by construction on a switched grid (grid_rings.h).
#include "trn3/collectives/grid_rings.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <set>
#include <stdexcept>
#include <string>

namespace trn3::collectives {

namespace {

void need(bool ok, const std::string& why) {
    if (!ok) throw std::invalid_argument("grid rings: " + why);
}

// A reflected Gray code over mixed radices (digit 0 fastest): consecutive
// entries, and the last and the first when the slowest radix is even,
// differ in one digit.
std::vector<std::vector<unsigned>> gray_code(const std::vector<unsigned>& radix) {
    std::vector<std::vector<unsigned>> out{{}};
    for (unsigned r : radix) {  // add the next slower digit
        std::vector<std::vector<unsigned>> next;
        for (unsigned v = 0; v < r; ++v)
            for (std::size_t i = 0; i < out.size(); ++i) {
                std::vector<unsigned> e = out[v % 2 == 0 ? i : out.size() - 1 - i];
                e.push_back(v);
                next.push_back(std::move(e));
            }
        out = std::move(next);
    }
    return out;
}

// The annealing's state: the base ring over chip indices, each orbit's hops
// out and in by level, and the excess over the quotas.
class base_ring {
public:
    base_ring(std::vector<unsigned> ring, std::vector<int> hop_level, std::vector<unsigned> orbit, unsigned orbits,
              std::vector<unsigned> quota)
        : ring_(std::move(ring)), hop_(std::move(hop_level)), orbit_(std::move(orbit)), quota_(std::move(quota)),
          levels_(quota_.size()), out_(orbits * levels_, 0), in_(orbits * levels_, 0) {
        for (std::size_t i = 0; i < ring_.size(); ++i) add(ring_[i], ring_[(i + 1) % ring_.size()], 1);
    }
    const std::vector<unsigned>& ring() const { return ring_; }
    std::int64_t excess() const { return excess_; }
    int level(unsigned a, unsigned b) const { return hop_[std::size_t(a) * ring_.size() + b]; }

    // One move tried: kept when it lowers the excess, or with probability
    // exp(-rise / temperature).
    void step(std::mt19937_64& rng, double temperature) {
        const std::size_t n = ring_.size();
        const std::int64_t before = excess_;
        auto keep = [&] {
            const std::int64_t rise = excess_ - before;
            if (rise <= 0) return true;
            const double u = double(rng() >> 11) * 0x1.0p-53;
            return u < std::exp(-double(rise) / temperature);
        };
        if (rng() % 2 == 0) {
            // Reverse ring_[i..j], 1 <= i < j <= n - 2 (ring_[0] stays: rotate() moves it).
            const std::size_t i = 1 + rng() % (n - 3), j = i + 1 + rng() % (n - 2 - i);
            const unsigned p = ring_[i - 1], q = ring_[j + 1];
            if (level(p, ring_[j]) < 0 || level(ring_[i], q) < 0) return;
            for (std::size_t k = i; k < j; ++k)
                if (level(ring_[k + 1], ring_[k]) < 0) return;
            auto flip = [&](int sign) {  // 1: the reversed run in, the old out; -1: back
                add(p, ring_[i], -sign);
                add(ring_[j], q, -sign);
                for (std::size_t k = i; k < j; ++k) add(ring_[k], ring_[k + 1], -sign);
                add(p, ring_[j], sign);
                add(ring_[i], q, sign);
                for (std::size_t k = i; k < j; ++k) add(ring_[k + 1], ring_[k], sign);
            };
            flip(1);
            if (keep()) std::reverse(ring_.begin() + std::ptrdiff_t(i), ring_.begin() + std::ptrdiff_t(j) + 1);
            else flip(-1);
            return;
        }
        // Move the run ring_[i .. i + len - 1] (1 <= i, i + len <= n - 1)
        // between ring_[k] and ring_[k + 1] (k + 1 <= n - 1, outside the run).
        const std::size_t len = 1 + rng() % 4;
        if (n < len + 4) return;
        const std::size_t i = 1 + rng() % (n - 1 - len), k = rng() % (n - 1);
        if (k + 1 >= i && k <= i + len - 1) return;
        const unsigned p = ring_[i - 1], q = ring_[i + len], s0 = ring_[i], s1 = ring_[i + len - 1], a = ring_[k],
                       b = ring_[k + 1];
        if (level(p, q) < 0 || level(a, s0) < 0 || level(s1, b) < 0) return;
        auto move = [&](int sign) {
            add(p, s0, -sign);
            add(s1, q, -sign);
            add(p, q, sign);
            add(a, b, -sign);
            add(a, s0, sign);
            add(s1, b, sign);
        };
        move(1);
        if (!keep()) {
            move(-1);
            return;
        }
        std::vector<unsigned> run(ring_.begin() + std::ptrdiff_t(i), ring_.begin() + std::ptrdiff_t(i + len));
        ring_.erase(ring_.begin() + std::ptrdiff_t(i), ring_.begin() + std::ptrdiff_t(i + len));
        const auto at = std::find(ring_.begin(), ring_.end(), a) + 1;
        ring_.insert(at, run.begin(), run.end());
    }
    void rotate(std::size_t by) {
        std::rotate(ring_.begin(), ring_.begin() + std::ptrdiff_t(by % ring_.size()), ring_.end());
    }

private:
    std::int64_t over(unsigned count, std::size_t l) const {
        const std::int64_t o = std::int64_t(count) - std::int64_t(quota_[l]);
        return o > 0 ? o * o : 0;
    }
    void add(unsigned a, unsigned b, int sign) {
        const auto l = std::size_t(level(a, b));
        unsigned& o = out_[orbit_[a] * levels_ + l];
        unsigned& i = in_[orbit_[b] * levels_ + l];
        excess_ -= over(o, l) + over(i, l);
        o = unsigned(int(o) + sign);
        i = unsigned(int(i) + sign);
        excess_ += over(o, l) + over(i, l);
    }

    std::vector<unsigned> ring_;
    std::vector<int> hop_;  // [a n + b]: the level a hop from a to b crosses, -1 if none
    std::vector<unsigned> orbit_;
    std::vector<unsigned> quota_;
    std::size_t levels_;
    std::vector<unsigned> out_, in_;
    std::int64_t excess_ = 0;
};

}  // namespace

grid_rings_result grid_rings(const fabric_paths& fabric, const std::vector<unsigned>& ranks,
                             const std::vector<std::vector<unsigned>>& positions, unsigned rings,
                             const std::function<unsigned(unsigned)>& fabric_channel, std::uint64_t steps) {
    const std::size_t n = ranks.size();
    need(n >= 4 && positions.size() == n && rings >= 1, "needs 4 ranks or more, each with its position");
    const std::size_t levels = positions.front().size();
    need(levels >= 1, "the ranks have no levels");
    std::vector<unsigned> places(levels, 0);
    for (const auto& p : positions) {
        need(p.size() == levels, "every rank needs a position on every level");
        for (std::size_t l = 0; l < levels; ++l) places[l] = std::max(places[l], p[l] + 1);
    }
    std::map<std::vector<unsigned>, unsigned> index_of;
    for (std::size_t p = 0; p < n; ++p) index_of.emplace(positions[p], unsigned(p));
    std::size_t cells = 1;
    for (unsigned c : places) cells *= c;
    need(index_of.size() == n && cells == n, "the ranks do not fill the levels' grid");

    // The level a hop crosses: the one level two positions differ on, when the routes reach.
    std::vector<int> hop(n * n, -1);
    for (std::size_t a = 0; a < n; ++a)
        for (std::size_t b = 0; b < n; ++b) {
            int differs = -1;
            unsigned count = 0;
            for (std::size_t l = 0; l < levels; ++l)
                if (positions[a][l] != positions[b][l]) {
                    differs = int(l);
                    ++count;
                }
            if (count == 1 && !fabric.links(ranks[a], ranks[b], fabric_channel(0)).empty()) hop[a * n + b] = differs;
        }
    // Each level's ways (the first links its flows take over the channels) and bandwidth, from rank 0.
    std::vector<unsigned> ways(levels, 0);
    std::vector<double> bandwidth(levels, 0.0);
    for (std::size_t l = 0; l < levels; ++l) {
        std::size_t peer = n;
        for (std::size_t q = 0; q < n && peer == n; ++q)
            if (hop[q] == int(l)) peer = q;
        need(peer < n, "level " + std::to_string(l) + " has no route between peers");
        std::set<unsigned> first;  // over 64 channels at least: a level's ways, whatever the ring count
        for (unsigned k = 0; k < std::max(rings, 64u); ++k) {
            const auto path = fabric.links(ranks[0], ranks[peer], fabric_channel(k));
            need(!path.empty(), "level " + std::to_string(l) + " has no route on a channel");
            first.insert(path.front());
        }
        ways[l] = unsigned(first.size());
        for (unsigned link : first) bandwidth[l] += fabric.capacity.at(link);
        need(bandwidth[l] > 0, "level " + std::to_string(l) + " has no bandwidth");
    }
    const unsigned copies = *std::max_element(ways.begin(), ways.end());
    for (unsigned w : ways)
        need(copies % w == 0,
             "a level's ways (" + std::to_string(w) + ") do not divide the most ways (" + std::to_string(copies) + ")");
    need(rings % copies == 0,
         std::to_string(rings) + " rings: a multiple of " + std::to_string(copies) + " (the most ways of a level)");
    const unsigned patterns = rings / copies;

    // Quotas: the least load per way x at which sum floor(x B_l / G) >= P.
    std::vector<unsigned> quota(levels, 0);
    {
        double best = -1;
        for (std::size_t l = 0; l < levels; ++l)
            for (unsigned c = 1; c <= patterns; ++c) {
                const double x = double(c) * copies / bandwidth[l];
                unsigned sum = 0;
                for (std::size_t m = 0; m < levels; ++m)
                    sum += unsigned(std::floor(x * bandwidth[m] / copies * (1 + 1e-9)));
                if (sum >= patterns && (best < 0 || x < best)) best = x;
            }
        for (std::size_t l = 0; l < levels; ++l)
            quota[l] = unsigned(std::floor(best * bandwidth[l] / copies * (1 + 1e-9)));
    }

    // The shifts that give the patterns: on level l by places / order[l], the
    // orders' product P, each dividing its level's places (the levels with
    // the most places first).
    std::vector<unsigned> order_of(levels, 1);
    {
        std::vector<std::size_t> by_places(levels);
        for (std::size_t l = 0; l < levels; ++l) by_places[l] = l;
        std::stable_sort(by_places.begin(), by_places.end(),
                         [&](std::size_t a, std::size_t b) { return places[a] > places[b]; });
        unsigned left = patterns;
        for (std::size_t l : by_places) {
            order_of[l] = std::gcd(left, places[l]);
            left /= order_of[l];
        }
        need(left == 1, std::to_string(patterns) + " patterns: not a product of divisors of the levels' places");
    }
    // Pattern j: its digit on level l (mixed radix over the orders) times places / order shifts level l.
    auto image = [&](unsigned v, unsigned j) {
        std::vector<unsigned> p = positions[v];
        for (std::size_t l = 0; l < levels; ++l) {
            p[l] = (p[l] + (j % order_of[l]) * (places[l] / order_of[l])) % places[l];
            j /= order_of[l];
        }
        return index_of.at(p);
    };
    // Orbits: positions modulo the shifts.
    std::map<std::vector<unsigned>, unsigned> orbit_of;
    std::vector<unsigned> orbit(n);
    for (std::size_t v = 0; v < n; ++v) {
        std::vector<unsigned> key = positions[v];
        for (std::size_t l = 0; l < levels; ++l) key[l] %= places[l] / order_of[l];
        orbit[v] = orbit_of.emplace(key, unsigned(orbit_of.size())).first->second;
    }

    // The Gray code, slowest over a level with an even number of places (so it closes).
    std::size_t slowest = levels;
    for (std::size_t l = 0; l < levels; ++l)
        if (places[l] % 2 == 0) slowest = l;
    need(slowest < levels, "no level has an even number of places (the base ring would not close)");
    std::vector<std::size_t> order;
    for (std::size_t l = 0; l < levels; ++l)
        if (l != slowest) order.push_back(l);
    order.push_back(slowest);
    std::vector<unsigned> radix;
    for (std::size_t l : order) radix.push_back(places[l]);
    std::vector<unsigned> start;
    for (const auto& digits : gray_code(radix)) {
        std::vector<unsigned> p(levels);
        for (std::size_t d = 0; d < order.size(); ++d) p[order[d]] = digits[d];
        start.push_back(index_of.at(p));
    }
    for (std::size_t i = 0; i < n; ++i)
        need(hop[std::size_t(start[i]) * n + start[(i + 1) % n]] >= 0,
             "a hop of one level has no route (not a switched grid)");

    base_ring state(start, hop, orbit, unsigned(orbit_of.size()), quota);
    std::vector<unsigned> best = state.ring();
    std::int64_t best_excess = state.excess();
    std::mt19937_64 rng(0x7472'6e33'7670ull);  // fixed: every host lays the same rings
    double temperature = 1.0;
    // Until balanced, `steps` moves, or a quarter of them with no better ring.
    std::uint64_t tried = 0, improved = 0;
    for (; tried < steps && best_excess > 0 && tried - improved < steps / 4; ++tried) {
        if (tried % 200'000 == 199'999) temperature *= 0.97;
        if (tried % 100'000 == 99'999) state.rotate(rng() % n);
        state.step(rng, temperature);
        if (state.excess() < best_excess) {
            best_excess = state.excess();
            best = state.ring();
            improved = tried;
        }
    }

    grid_rings_result out;
    out.patterns = patterns;
    out.copies = copies;
    out.quota = quota;
    out.shift_orders = order_of;
    out.excess = std::uint64_t(best_excess);
    out.steps = tried;
    for (unsigned k = 0; k < rings; ++k) {
        std::vector<unsigned> ring;
        for (unsigned v : best) ring.push_back(ranks[image(v, k / copies)]);
        const unsigned first = ranks[(std::size_t(k) * n / rings) % n];
        std::rotate(ring.begin(), std::find(ring.begin(), ring.end(), first), ring.end());
        out.rings.push_back(std::move(ring));
    }
    return out;
}

}  // namespace trn3::collectives
