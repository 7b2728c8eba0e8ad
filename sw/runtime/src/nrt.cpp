// The runtime's C API over the driver (include/trn3/runtime/nrt.h).
#include "trn3/runtime/nrt.h"

#include <array>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "trn3/driver/trn3_device.h"
#include "trn3/runtime/container.h"

using trn3::driver::status;

struct nrt_runtime {
    trn3::driver::trn3_device* device;
    unsigned cores_in_use = 0;  // bit per NeuronCore held by a loaded model
};

struct nrt_tensor {
    nrt_runtime* runtime;
    std::uint64_t address;
    std::size_t size;
    std::string name;
};

struct nrt_model {
    nrt_runtime* runtime;
    unsigned first_core, cores;
    std::vector<std::uint64_t> code;  // device allocations
    std::vector<std::array<std::uint64_t, 5>> pcs;  // per core
    std::vector<unsigned> masks;  // per core: engines with a stream
    bool running = false;
    std::uint32_t last_error = 0;
};

namespace {

NRT_STATUS from(status s) {
    switch (s) {
    case status::ok: return NRT_SUCCESS;
    case status::bad_argument: return NRT_INVALID;
    case status::out_of_memory: return NRT_RESOURCE;
    case status::timeout: return NRT_TIMEOUT;
    case status::exec_error: return NRT_EXEC_ERROR;
    case status::no_device: return NRT_UNINITIALIZED;
    default: return NRT_FAILURE;
    }
}

}  // namespace

extern "C" {

NRT_STATUS nrt_init(void* device, nrt_runtime_t** runtime) {
    if (!device || !runtime) return NRT_INVALID;
    *runtime = new (std::nothrow) nrt_runtime{static_cast<trn3::driver::trn3_device*>(device)};
    return *runtime ? NRT_SUCCESS : NRT_RESOURCE;
}

void nrt_close(nrt_runtime_t* runtime) { delete runtime; }

NRT_STATUS nrt_load(nrt_runtime_t* rt, const void* container, size_t bytes, int32_t start_nc, int32_t nc_count,
                    nrt_model_t** model) {
    if (!rt || !model) return NRT_INVALID_HANDLE;
    if (nc_count != 1 && nc_count != 2) return NRT_INVALID;
    if (start_nc < 0 || start_nc > 8 - nc_count || (nc_count == 2 && start_nc % 2 != 0)) return NRT_INVALID;
    const unsigned mask = ((1u << nc_count) - 1) << start_nc;
    if (rt->cores_in_use & mask) return NRT_RESOURCE;
    trn3::runtime::container_view view;
    const auto* data = static_cast<const std::uint8_t*>(container);
    if (!trn3::runtime::parse(data, bytes, view).empty()) return NRT_LOAD_ERROR;
    if (view.cores != static_cast<std::uint32_t>(nc_count)) return NRT_LOAD_ERROR;
    auto m = std::make_unique<nrt_model>();
    m->runtime = rt;
    // On any failure below, the code already placed goes back.
    auto give_back = [&](NRT_STATUS s) {
        for (std::uint64_t a : m->code) rt->device->free(a);
        return s;
    };
    m->first_core = static_cast<unsigned>(start_nc);
    m->cores = static_cast<unsigned>(nc_count);
    for (unsigned c = 0; c < m->cores; ++c) {
        std::array<std::uint64_t, 5> pcs{};
        unsigned engines = 0;
        for (unsigned e = 0; e < 5; ++e) {
            const trn3::runtime::stream_ref& r = view.streams[c][e];
            if (r.instructions == 0) continue;
            std::uint64_t at = 0;
            const std::size_t n = std::size_t(r.instructions) * 192;
            if (status s = rt->device->alloc(n, at); s != status::ok) return give_back(from(s));
            m->code.push_back(at);
            if (status s = rt->device->write(at, data + r.offset, n); s != status::ok) return give_back(from(s));
            pcs[e] = at;
            engines |= 1u << e;
        }
        m->pcs.push_back(pcs);
        m->masks.push_back(engines);
    }
    rt->cores_in_use |= mask;
    *model = m.release();
    return NRT_SUCCESS;
}

NRT_STATUS nrt_unload(nrt_model_t* m) {
    if (!m) return NRT_INVALID_HANDLE;
    if (m->running)  // still executing: stop its cores before its code goes away
        for (unsigned c = 0; c < m->cores; ++c) m->runtime->device->reset_core(m->first_core + c);
    for (std::uint64_t a : m->code) m->runtime->device->free(a);
    m->runtime->cores_in_use &= ~(((1u << m->cores) - 1) << m->first_core);
    delete m;
    return NRT_SUCCESS;
}

NRT_STATUS nrt_tensor_allocate(nrt_runtime_t* rt, size_t bytes, const char* name, nrt_tensor_t** tensor) {
    if (!rt || !tensor) return NRT_INVALID_HANDLE;
    if (bytes == 0) return NRT_INVALID;
    std::uint64_t at = 0;
    if (status s = rt->device->alloc(bytes, at); s != status::ok) return from(s);
    *tensor = new nrt_tensor{rt, at, bytes, name ? name : ""};
    return NRT_SUCCESS;
}

void nrt_tensor_free(nrt_tensor_t** tensor) {
    if (!tensor || !*tensor) return;
    (*tensor)->runtime->device->free((*tensor)->address);
    delete *tensor;
    *tensor = nullptr;
}

uint64_t nrt_tensor_get_device_address(const nrt_tensor_t* t) { return t ? t->address : 0; }
size_t nrt_tensor_get_size(const nrt_tensor_t* t) { return t ? t->size : 0; }

NRT_STATUS nrt_tensor_write(nrt_tensor_t* t, const void* data, size_t offset, size_t bytes) {
    if (!t) return NRT_INVALID_HANDLE;
    if (!data || offset > t->size || bytes > t->size - offset) return NRT_INVALID;
    return from(t->runtime->device->write(t->address + offset, data, bytes));
}

NRT_STATUS nrt_tensor_read(const nrt_tensor_t* t, void* data, size_t offset, size_t bytes) {
    if (!t) return NRT_INVALID_HANDLE;
    if (!data || offset > t->size || bytes > t->size - offset) return NRT_INVALID;
    return from(t->runtime->device->read(data, t->address + offset, bytes));
}

NRT_STATUS nrt_execute_start(nrt_model_t* m) {
    if (!m) return NRT_INVALID_HANDLE;
    if (m->running) return NRT_INVALID;
    for (unsigned c = 0; c < m->cores; ++c)
        if (status s = m->runtime->device->launch(m->first_core + c, m->pcs[c], m->masks[c]); s != status::ok)
            return from(s);
    m->running = true;
    return NRT_SUCCESS;
}

NRT_STATUS nrt_wait(nrt_model_t* m, uint64_t timeout_us) {
    if (!m) return NRT_INVALID_HANDLE;
    if (!m->running) return NRT_INVALID;
    m->running = false;
    NRT_STATUS result = NRT_SUCCESS;
    // One deadline for all the model's cores (at most an hour of simulated time).
    const std::uint64_t timeout_ns = std::min<std::uint64_t>(timeout_us, 3'600'000'000ull) * 1000;
    trn3::driver::host_ops& host = m->runtime->device->host();
    const std::uint64_t deadline = host.now_ns() + timeout_ns;
    for (unsigned c = 0; c < m->cores; ++c) {
        trn3::driver::core_result r;
        const std::uint64_t now = host.now_ns();
        const status s = m->runtime->device->wait_core(m->first_core + c, deadline > now ? deadline - now : 0, r);
        if (s == status::exec_error && result == NRT_SUCCESS) m->last_error = r.error;
        if (s != status::ok && result == NRT_SUCCESS) result = from(s);
    }
    if (result != NRT_SUCCESS) {
        // A failed or hung kernel leaves its cores stopped mid-stream: reset them.
        for (unsigned c = 0; c < m->cores; ++c) m->runtime->device->reset_core(m->first_core + c);
    } else {
        m->last_error = 0;
    }
    return result;
}

NRT_STATUS nrt_execute(nrt_model_t* m) {
    if (NRT_STATUS s = nrt_execute_start(m); s != NRT_SUCCESS) return s;
    return nrt_wait(m, 10'000'000);
}

uint32_t nrt_get_last_error(const nrt_model_t* m) { return m ? m->last_error : 0; }

const char* nrt_status_string(NRT_STATUS s) {
    switch (s) {
    case NRT_SUCCESS: return "success";
    case NRT_FAILURE: return "the device failed the request";
    case NRT_INVALID: return "invalid argument";
    case NRT_INVALID_HANDLE: return "invalid handle";
    case NRT_RESOURCE: return "out of resources";
    case NRT_TIMEOUT: return "timed out";
    case NRT_LOAD_ERROR: return "malformed program container";
    case NRT_EXEC_ERROR: return "the kernel stopped on an error";
    case NRT_UNINITIALIZED: return "no device";
    }
    return "unknown status";
}

}  // extern "C"
