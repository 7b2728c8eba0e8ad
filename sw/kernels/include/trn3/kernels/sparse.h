// 4:G structured sparsity on the host side: pruning a stationary matrix to at
// most 4 non-zero values in every group of G consecutive K values, and
// compressing it into the kept values and positions a sparse matmul reads
// (docs/isa.md, "Sparse matmul").
#pragma once

#include <cstdint>
#include <vector>

namespace trn3::kernels {

// Keeps, in every group of `group` (8 or 16) consecutive rows of each column
// of a K x cols row-major matrix, the 4 values of largest magnitude (the
// earlier one on a tie) and zeroes the rest.
void prune_4_of(std::vector<float>& matrix, unsigned K, unsigned cols, unsigned group);

// A compressed stationary: K/group*4 kept values per column. Kept value c of
// column m is values[c * cols + m]; positions[c * cols + m] is its row within
// its group (rows c/4*group .. c/4*group + group-1), increasing within a group.
struct sparse_matrix {
    unsigned kept = 0, cols = 0, group = 0;
    std::vector<float> values;
    std::vector<std::uint8_t> positions;
};

// Compresses a matrix with at most 4 non-zero values per group (a group with
// fewer keeps zeros at its first free rows). Throws std::invalid_argument
// naming the first group with more than 4, or K not a multiple of the group.
sparse_matrix compress_4_of(const std::vector<float>& matrix, unsigned K, unsigned cols, unsigned group);

// The dense K x cols matrix a compressed one stands for.
std::vector<float> decompress(const sparse_matrix& s);

}  // namespace trn3::kernels
