#include "trn3/kernels/reference.h"

#include <algorithm>
#include <cmath>

namespace trn3::kernels::reference {

std::vector<double> gemm(const std::vector<float>& a, const std::vector<float>& b, unsigned M, unsigned N, unsigned K) {
    std::vector<double> c(static_cast<std::size_t>(M) * N, 0.0);
    for (unsigned k = 0; k < K; ++k)
        for (unsigned m = 0; m < M; ++m) {
            const double av = a[static_cast<std::size_t>(k) * M + m];
            for (unsigned n = 0; n < N; ++n)
                c[static_cast<std::size_t>(m) * N + n] += av * b[static_cast<std::size_t>(k) * N + n];
        }
    return c;
}

std::vector<double> softmax(const std::vector<float>& x, unsigned rows, unsigned cols) {
    std::vector<double> y(x.size());
    for (unsigned r = 0; r < rows; ++r) {
        const float* xr = &x[static_cast<std::size_t>(r) * cols];
        double mx = xr[0], sum = 0;
        for (unsigned c = 0; c < cols; ++c) mx = std::max(mx, static_cast<double>(xr[c]));
        for (unsigned c = 0; c < cols; ++c) sum += std::exp(xr[c] - mx);
        for (unsigned c = 0; c < cols; ++c) y[static_cast<std::size_t>(r) * cols + c] = std::exp(xr[c] - mx) / sum;
    }
    return y;
}

std::vector<double> rmsnorm(const std::vector<float>& x, const std::vector<float>& gamma, unsigned rows, unsigned cols,
                            double eps) {
    std::vector<double> y(x.size());
    for (unsigned r = 0; r < rows; ++r) {
        const float* xr = &x[static_cast<std::size_t>(r) * cols];
        double ss = 0;
        for (unsigned c = 0; c < cols; ++c) ss += static_cast<double>(xr[c]) * xr[c];
        const double rs = 1.0 / std::sqrt(ss / cols + eps);
        for (unsigned c = 0; c < cols; ++c) y[static_cast<std::size_t>(r) * cols + c] = xr[c] * rs * gamma[c];
    }
    return y;
}

std::vector<double> attention(const std::vector<float>& q, const std::vector<float>& k, const std::vector<float>& v,
                              unsigned Sq, unsigned Sk, unsigned D) {
    std::vector<double> o(static_cast<std::size_t>(Sq) * D, 0.0), w(Sk);
    for (unsigned i = 0; i < Sq; ++i) {
        double mx = -INFINITY, sum = 0;
        for (unsigned j = 0; j < Sk; ++j) {
            double dot = 0;
            for (unsigned d = 0; d < D; ++d) dot += static_cast<double>(q[i * D + d]) * k[j * D + d];
            w[j] = dot / std::sqrt(static_cast<double>(D));
            mx = std::max(mx, w[j]);
        }
        for (unsigned j = 0; j < Sk; ++j) sum += w[j] = std::exp(w[j] - mx);
        for (unsigned j = 0; j < Sk; ++j)
            for (unsigned d = 0; d < D; ++d) o[i * D + d] += w[j] / sum * v[j * D + d];
    }
    return o;
}

double max_relative_error(const std::vector<float>& got, const std::vector<double>& want, double floor) {
    double worst = 0;
    for (std::size_t i = 0; i < got.size() && i < want.size(); ++i)
        worst = std::max(worst, std::fabs(static_cast<double>(got[i]) - want[i]) / (std::fabs(want[i]) + floor));
    return worst;
}

}  // namespace trn3::kernels::reference
