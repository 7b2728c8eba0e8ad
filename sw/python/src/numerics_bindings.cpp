// Number formats on numpy arrays, through the numerics library (bit-exact,
// docs/numerics.md). Codes come back in the narrowest unsigned type that
// holds them: uint8 (fp8, fp4: one code per byte), uint16 (bf16, fp16),
// uint32 (fp32).
#include <cstring>
#include <stdexcept>
#include <string>

#include <pybind11/numpy.h>

#include "bindings.h"
#include "trn3/numerics/float_format.h"
#include "trn3/numerics/mx.h"
#include "trn3/numerics/xorwow.h"

namespace trn3::python {
namespace py = pybind11;
using numerics::format;

namespace {

using floats = py::array_t<float, py::array::c_style | py::array::forcecast>;
using codes32 = py::array_t<std::uint32_t, py::array::c_style | py::array::forcecast>;
using bytes_array = py::array_t<std::uint8_t, py::array::c_style | py::array::forcecast>;

std::vector<py::ssize_t> shape_of(const py::array& a) { return {a.shape(), a.shape() + a.ndim()}; }

format format_named(const std::string& name) {
    try {
        return numerics::parse_format(name);
    } catch (const std::exception& e) {
        throw py::value_error(e.what());
    }
}

template <typename T>
py::array codes_as(const std::vector<std::uint32_t>& codes, const std::vector<py::ssize_t>& shape) {
    py::array_t<T> out(shape);
    T* o = out.mutable_data();
    for (std::size_t i = 0; i < codes.size(); ++i) o[i] = static_cast<T>(codes[i]);
    return std::move(out);
}

py::array encode(const floats& x, const std::string& fmt, const std::string& rounding, std::uint64_t seed,
                 bool saturate) {
    const format f = format_named(fmt);
    numerics::convert_options options;
    options.saturate = saturate;
    if (rounding == "stochastic") options.mode = numerics::rounding::stochastic;
    else if (rounding != "nearest_even")
        throw py::value_error("rounding '" + rounding + "': nearest_even or stochastic");
    numerics::xorwow random(seed);
    std::vector<std::uint32_t> codes(static_cast<std::size_t>(x.size()));
    const float* in = x.data();
    for (std::size_t i = 0; i < codes.size(); ++i) {
        if (options.mode == numerics::rounding::stochastic) options.random = random.next();
        codes[i] = numerics::encode(in[i], f, options);
    }
    const unsigned bits = numerics::info(f).bits();
    if (bits <= 8) return codes_as<std::uint8_t>(codes, shape_of(x));
    if (bits <= 16) return codes_as<std::uint16_t>(codes, shape_of(x));
    return codes_as<std::uint32_t>(codes, shape_of(x));
}

py::array_t<float> decode(const codes32& codes, const std::string& fmt) {
    const format f = format_named(fmt);
    const std::uint32_t mask = numerics::info(f).bits() == 32 ? ~0u : (1u << numerics::info(f).bits()) - 1;
    py::array_t<float> out(shape_of(codes));
    const std::uint32_t* c = codes.data();
    float* o = out.mutable_data();
    for (py::ssize_t i = 0; i < codes.size(); ++i) {
        if (c[i] & ~mask) throw py::value_error("code " + std::to_string(c[i]) + " does not fit " + fmt);
        o[i] = numerics::decode(c[i], f);
    }
    return out;
}

// Blocks of 32 along the last axis.
py::tuple quantize_mx(const floats& x, const std::string& element, const std::string& rule) {
    const format f = format_named(element);
    if (x.ndim() == 0 || x.shape(x.ndim() - 1) % numerics::mx_block_size)
        throw py::value_error("quantize_mx: the last axis must be a multiple of 32");
    if (rule != "ocp" && rule != "trn3") throw py::value_error("rule '" + rule + "': ocp or trn3");
    auto shape = shape_of(x);
    py::array_t<std::uint8_t> codes(shape);
    shape.back() /= numerics::mx_block_size;
    py::array_t<std::uint8_t> scales(shape);
    const std::size_t blocks = static_cast<std::size_t>(x.size()) / numerics::mx_block_size;
    for (std::size_t b = 0; b < blocks; ++b) {
        numerics::mx_block q;
        try {
            q = numerics::quantize_mx(x.data() + b * numerics::mx_block_size, f,
                                      rule == "trn3" ? numerics::mx_scale_rule::trn3 : numerics::mx_scale_rule::ocp);
        } catch (const std::exception& e) {
            throw py::value_error(e.what());
        }
        scales.mutable_data()[b] = q.scale;
        std::memcpy(codes.mutable_data() + b * numerics::mx_block_size, q.elements.data(), numerics::mx_block_size);
    }
    return py::make_tuple(codes, scales);
}

py::array_t<float> dequantize_mx(const bytes_array& codes, const bytes_array& scales, const std::string& element) {
    const format f = format_named(element);
    if (codes.size() != scales.size() * static_cast<py::ssize_t>(numerics::mx_block_size))
        throw py::value_error("dequantize_mx: one scale per 32 codes");
    const unsigned bits = numerics::info(f).bits();
    for (py::ssize_t i = 0; i < codes.size(); ++i)
        if (codes.data()[i] >> bits)
            throw py::value_error("code " + std::to_string(codes.data()[i]) + " does not fit " + element);
    py::array_t<float> out(shape_of(codes));
    for (py::ssize_t b = 0; b < scales.size(); ++b) {
        numerics::mx_block q;
        q.scale = scales.data()[b];
        q.element_format = f;
        std::memcpy(q.elements.data(), codes.data() + b * numerics::mx_block_size, numerics::mx_block_size);
        for (unsigned i = 0; i < numerics::mx_block_size; ++i)
            out.mutable_data()[b * numerics::mx_block_size + i] = q.value(i);
    }
    return out;
}

}  // namespace

void bind_numerics(py::module_& m) {
    m.def("encode", &encode, py::arg("values"), py::arg("format"), py::arg("rounding") = "nearest_even",
          py::arg("seed") = 0, py::arg("saturate") = false,
          "float32 values to codes of a format (fp32, bf16, fp16, e4m3fn, e5m2, e2m1); stochastic rounding draws one "
          "XORWOW number per element, in C order, from `seed`");
    m.def("decode", &decode, py::arg("codes"), py::arg("format"), "codes of a format to their exact float32 values");
    m.def("quantize_mx", &quantize_mx, py::arg("values"), py::arg("element_format"), py::arg("rule") = "ocp",
          "OCP MX blocks of 32 along the last axis: (codes uint8, E8M0 scales uint8)");
    m.def("dequantize_mx", &dequantize_mx, py::arg("codes"), py::arg("scales"), py::arg("element_format"),
          "the values MX blocks hold");
}

}  // namespace trn3::python
