// The kernel builder (sw/kernels): instruction streams written from Python
// with the same C++ that writes the reference kernels, so a kernel built
// either way encodes to the same bytes. The C++ reference kernels are here
// too, for comparison.
#include <stdexcept>
#include <string>
#include <vector>

#include <pybind11/stl.h>

#include "bindings.h"
#include "trn3/kernels/attention.h"
#include "trn3/kernels/builder.h"
#include "trn3/kernels/gemm.h"
#include "trn3/kernels/norm.h"
#include "trn3/runtime/container.h"
#include "trn3/spec/isa.h"

namespace trn3::python {
namespace py = pybind11;
using kernels::program;
using kernels::stream;

namespace {

template <typename E>
void enum_values(py::enum_<E>& e, std::initializer_list<E> values) {
    for (E v : values) e.value(isa::name(v), v);
}

py::bytes code_bytes(const stream& s) {
    return py::bytes(reinterpret_cast<const char*>(s.code().data()), s.code().size() * sizeof(isa::instruction));
}

py::bytes pack(const program& p) {
    const auto bytes = runtime::pack({&p});
    return py::bytes(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

// Wraps a builder call: its std::invalid_argument is Python's ValueError.
template <typename F>
program built(F&& f) {
    try {
        return f();
    } catch (const std::invalid_argument& e) {
        throw py::value_error(e.what());
    }
}

}  // namespace

void bind_builder(py::module_& m) {
    py::enum_<isa::engine> engine(m, "engine");
    enum_values(engine, {isa::engine::tensor, isa::engine::vector, isa::engine::scalar, isa::engine::gpsimd,
                         isa::engine::sync});
    py::enum_<isa::dtype> dtype(m, "dtype");
    enum_values(dtype, {isa::dtype::fp32, isa::dtype::bf16, isa::dtype::fp16, isa::dtype::e4m3fn, isa::dtype::e5m2,
                        isa::dtype::int32, isa::dtype::e2m1});
    py::enum_<isa::space> space(m, "space");
    enum_values(space, {isa::space::sbuf, isa::space::psum, isa::space::hbm});
    py::enum_<isa::alu> alu(m, "alu");
    enum_values(
        alu, {isa::alu::add, isa::alu::subtract, isa::alu::multiply, isa::alu::max, isa::alu::min, isa::alu::bypass});
    py::enum_<isa::function> function(m, "function");
    enum_values(function, {isa::function::copy, isa::function::exp, isa::function::relu, isa::function::gelu,
                           isa::function::silu, isa::function::tanh, isa::function::sigmoid, isa::function::square,
                           isa::function::rsqrt, isa::function::reciprocal});
    m.def("dtype_bytes", &isa::dtype_bytes);
    m.attr("engine_count") = isa::engine_count;
    m.attr("semaphores") = isa::semaphores;
    m.attr("registers") = isa::registers;

    py::class_<isa::access_pattern>(m, "access_pattern")
        .def_property_readonly("space", [](const isa::access_pattern& a) { return isa::space(a.space); })
        .def_property_readonly("dtype", [](const isa::access_pattern& a) { return isa::dtype(a.dtype); })
        .def_readonly("start_partition", &isa::access_pattern::start_partition)
        .def_readonly("partitions", &isa::access_pattern::partitions)
        .def_readonly("address", &isa::access_pattern::address)
        .def_readonly("partition_stride", &isa::access_pattern::partition_stride)
        .def_property_readonly("dims",
                               [](const isa::access_pattern& a) {
                                   std::vector<std::pair<std::int32_t, std::uint16_t>> d;
                                   for (unsigned i = 0; i < a.dims && i < isa::max_free_dims; ++i)
                                       d.emplace_back(a.step[i], a.num[i]);
                                   return d;
                               })
        .def_property_readonly("free_elements", [](const isa::access_pattern& a) { return isa::free_elements(a); });
    m.def("sbuf", &kernels::sbuf, py::arg("dtype"), py::arg("start_partition"), py::arg("partitions"),
          py::arg("byte_offset"), py::arg("free"));
    m.def("psum", &kernels::psum, py::arg("dtype"), py::arg("start_partition"), py::arg("partitions"),
          py::arg("byte_offset"), py::arg("free"));
    m.def("hbm", &kernels::hbm, py::arg("dtype"), py::arg("address"), py::arg("partitions"),
          py::arg("row_stride_bytes"), py::arg("free"));
    m.def(
        "with_dims",
        [](const isa::access_pattern& ap, const std::vector<std::pair<std::int32_t, std::uint16_t>>& dims) {
            try {
                return kernels::with_dims(ap, dims);
            } catch (const std::invalid_argument& e) {
                throw py::value_error(e.what());
            }
        },
        py::arg("pattern"), py::arg("dims"), "replaces the free walk with [step, num] pairs, outermost first");
    m.def("with_base_reg", &kernels::with_base_reg);

    auto self = py::return_value_policy::reference_internal;
    py::class_<stream>(m, "stream")
        .def_property_readonly("engine", &stream::engine)
        .def("matmul", &stream::matmul, self, py::arg("dst"), py::arg("stationary"), py::arg("moving"),
             py::arg("accumulate") = false)
        .def("matmul_mx", &stream::matmul_mx, self, py::arg("dst"), py::arg("stationary"), py::arg("moving"),
             py::arg("scales_a"), py::arg("scales_b"), py::arg("accumulate") = false)
        .def("transpose", &stream::transpose, self)
        .def("quantize_mx", &stream::quantize_mx, self, py::arg("dst"), py::arg("src"), py::arg("scales"),
             py::arg("trn3_rule") = false)
        .def("affine_select", &stream::affine_select, self)
        .def("activation", &stream::activation, self, py::arg("dst"), py::arg("src"), py::arg("function"),
             py::arg("scale") = 1.0f, py::arg("bias") = 0.0f)
        .def("tensor_tensor", &stream::tensor_tensor, self)
        .def("tensor_scalar", &stream::tensor_scalar, self)
        .def("tensor_reduce", &stream::tensor_reduce, self)
        .def("tensor_copy", &stream::tensor_copy, self)
        .def("memset", &stream::memset, self)
        .def("iota", &stream::iota, self)
        .def("dma", &stream::dma, self, py::arg("dst"), py::arg("src"), py::arg("queue") = 0)
        .def("set_reg", &stream::set_reg, self)
        .def("add_reg", &stream::add_reg, self)
        .def("branch_lt", &stream::branch_lt, self)
        .def("sem_increment", &stream::sem_increment, self, py::arg("sem"), py::arg("add") = 1)
        .def("halt", &stream::halt, self)
        .def("nop", &stream::nop, self)
        .def("wait", &stream::wait, self, py::arg("sem"), py::arg("at_least"))
        .def("signal", &stream::signal, self, py::arg("sem"), py::arg("add") = 1)
        .def("stochastic", &stream::stochastic, self)
        .def("here", &stream::here)
        .def("__len__", [](const stream& s) { return s.code().size(); })
        .def("code_bytes", &code_bytes, "the stream's instructions as the device reads them")
        .def("disassemble", [](const stream& s) { return isa::disassemble_stream(s.code()); });

    py::class_<program>(m, "program")
        .def(py::init<>())
        .def("on", py::overload_cast<isa::engine>(&program::on), self, py::arg("engine"))
        .def("instructions", &program::instructions)
        .def("pack", &pack, "the program as a one-core program container (runtime/container.h)");

    m.def(
        "gemm_program",
        [](unsigned M, unsigned N, unsigned K, isa::dtype operands, bool mx, bool resident_a, std::uint64_t a,
           std::uint64_t b, std::uint64_t c, std::uint64_t scales_a, std::uint64_t scales_b) {
            return built([&] {
                return kernels::gemm({M, N, K, operands, mx, resident_a}, {a, b, c, scales_a, scales_b});
            });
        },
        py::arg("M"), py::arg("N"), py::arg("K"), py::arg("operands"), py::arg("mx"), py::arg("resident_a"),
        py::arg("a"), py::arg("b"), py::arg("c"), py::arg("scales_a") = 0, py::arg("scales_b") = 0,
        "the C++ reference GEMM (kernels/gemm.h)");
    m.def(
        "softmax_program",
        [](unsigned rows, unsigned cols, std::uint64_t x, std::uint64_t y) {
            return built([&] { return kernels::softmax({rows, cols}, x, y); });
        },
        py::arg("rows"), py::arg("cols"), py::arg("x"), py::arg("y"));
    m.def(
        "rmsnorm_program",
        [](unsigned rows, unsigned cols, std::uint64_t x, std::uint64_t gamma, std::uint64_t y, float eps) {
            return built([&] { return kernels::rmsnorm({rows, cols}, x, gamma, y, eps); });
        },
        py::arg("rows"), py::arg("cols"), py::arg("x"), py::arg("gamma"), py::arg("y"), py::arg("eps"));
    m.def(
        "attention_program",
        [](unsigned keys, unsigned head_dim, std::uint64_t q, std::uint64_t k, std::uint64_t v, std::uint64_t o) {
            return built([&] { return kernels::attention({keys, head_dim}, q, k, v, o); });
        },
        py::arg("keys"), py::arg("head_dim"), py::arg("q"), py::arg("k"), py::arg("v"), py::arg("o"));
}

}  // namespace trn3::python
