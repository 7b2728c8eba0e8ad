#include "trn3/kernels/sparse.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace trn3::kernels {

namespace {
void check_group(unsigned K, unsigned group) {
    if (group != 8 && group != 16) throw std::invalid_argument("sparsity group must be 8 or 16");
    if (K % group) throw std::invalid_argument("K (" + std::to_string(K) + ") is not a multiple of the group");
}
}  // namespace

void prune_4_of(std::vector<float>& matrix, unsigned K, unsigned cols, unsigned group) {
    check_group(K, group);
    std::vector<unsigned> rows(group);
    for (unsigned col = 0; col < cols; ++col)
        for (unsigned g0 = 0; g0 < K; g0 += group) {
            auto at = [&](unsigned r) -> float& { return matrix[static_cast<std::size_t>(g0 + r) * cols + col]; };
            for (unsigned r = 0; r < group; ++r) rows[r] = r;
            std::stable_sort(rows.begin(), rows.end(),
                             [&](unsigned x, unsigned y) { return std::fabs(at(x)) > std::fabs(at(y)); });
            for (unsigned i = 4; i < group; ++i) at(rows[i]) = 0.0f;
        }
}

sparse_matrix compress_4_of(const std::vector<float>& matrix, unsigned K, unsigned cols, unsigned group) {
    check_group(K, group);
    sparse_matrix s;
    s.kept = K / group * 4;
    s.cols = cols;
    s.group = group;
    s.values.resize(static_cast<std::size_t>(s.kept) * cols);
    s.positions.resize(s.values.size());
    for (unsigned col = 0; col < cols; ++col)
        for (unsigned g = 0; g < K / group; ++g) {
            auto at = [&](unsigned r) { return matrix[static_cast<std::size_t>(g * group + r) * cols + col]; };
            // The non-zero rows, then zero rows from the first, until there are 4; in increasing order.
            std::vector<unsigned> keep;
            for (unsigned r = 0; r < group; ++r)
                if (at(r) != 0.0f) keep.push_back(r);
            if (keep.size() > 4)
                throw std::invalid_argument("column " + std::to_string(col) + ", rows " + std::to_string(g * group) +
                                            "-" + std::to_string(g * group + group - 1) +
                                            ": more than 4 non-zero values");
            for (unsigned r = 0; keep.size() < 4; ++r)
                if (std::find(keep.begin(), keep.end(), r) == keep.end()) keep.push_back(r);
            std::sort(keep.begin(), keep.end());
            for (unsigned i = 0; i < 4; ++i) {
                const std::size_t at_c = static_cast<std::size_t>(4 * g + i) * cols + col;
                s.values[at_c] = at(keep[i]);
                s.positions[at_c] = static_cast<std::uint8_t>(keep[i]);
            }
        }
    return s;
}

std::vector<float> decompress(const sparse_matrix& s) {
    const unsigned K = s.kept / 4 * s.group;
    std::vector<float> dense(static_cast<std::size_t>(K) * s.cols, 0.0f);
    for (unsigned c = 0; c < s.kept; ++c)
        for (unsigned col = 0; col < s.cols; ++col) {
            const std::size_t i = static_cast<std::size_t>(c) * s.cols + col;
            dense[static_cast<std::size_t>(c / 4 * s.group + s.positions[i]) * s.cols + col] = s.values[i];
        }
    return dense;
}

}  // namespace trn3::kernels
