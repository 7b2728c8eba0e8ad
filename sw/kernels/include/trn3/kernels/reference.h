// Independent fp64 references for the kernels: what the kernels compute,
// without the platform's rounding, to measure their error.
#pragma once

#include <vector>

namespace trn3::kernels::reference {

// C[M][N] = A^T B, A[K][M], B[K][N] (row-major).
std::vector<double> gemm(const std::vector<float>& a, const std::vector<float>& b, unsigned M, unsigned N, unsigned K);
std::vector<double> softmax(const std::vector<float>& x, unsigned rows, unsigned cols);
std::vector<double> rmsnorm(const std::vector<float>& x, const std::vector<float>& gamma, unsigned rows, unsigned cols,
                            double eps);

// O = softmax(Q K^T / sqrt(D)) V; Q [Sq][D], K and V [Sk][D].
std::vector<double> attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                              unsigned queries, unsigned keys, unsigned head_dim);

// Largest |got - want| / (|want| + floor) over all elements.
double max_relative_error(const std::vector<float>& got, const std::vector<double>& want, double floor);

}  // namespace trn3::kernels::reference
