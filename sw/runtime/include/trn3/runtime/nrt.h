/* The trn3 runtime: a C API in the spirit of AWS's libnrt. Load a program
 * (our container format, docs/runtime.md), allocate tensors in device
 * memory, write and read them, execute on a NeuronCore or an LNC=2 pair of
 * cores, wait. Every call returns a status; none aborts.
 *
 *   nrt_runtime_t* rt;  nrt_init(device, &rt);
 *   nrt_tensor_t* a;    nrt_tensor_allocate(rt, bytes, "a", &a);  nrt_tensor_write(a, host, 0, bytes);
 *   nrt_model_t* m;     nrt_load(rt, container, size, 0, 1, &m);
 *   nrt_execute(m);     nrt_tensor_read(c, host, 0, bytes);
 *   nrt_unload(m); nrt_tensor_free(&a); nrt_close(rt);
 *
 * The device is the driver's (a trn3::driver::trn3_device*, probed and past
 * its firmware handshake). A kernel that stops on an error makes nrt_wait
 * return NRT_EXEC_ERROR; the runtime has the driver reset the model's cores,
 * so the next execution starts clean.
 */
#ifndef TRN3_RUNTIME_NRT_H
#define TRN3_RUNTIME_NRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    NRT_SUCCESS = 0,
    NRT_FAILURE = 1, /* the device did not do what was asked (DMA failed) */
    NRT_INVALID = 2, /* a bad argument */
    NRT_INVALID_HANDLE = 3, /* a null or freed handle */
    NRT_RESOURCE = 4, /* out of device memory or cores */
    NRT_TIMEOUT = 5, /* the kernel did not finish in time */
    NRT_LOAD_ERROR = 6, /* a malformed program container */
    NRT_EXEC_ERROR = 7, /* the kernel stopped on an error (nrt_get_last_error tells which) */
    NRT_UNINITIALIZED = 8, /* no device */
} NRT_STATUS;

typedef struct nrt_runtime nrt_runtime_t;
typedef struct nrt_model nrt_model_t;
typedef struct nrt_tensor nrt_tensor_t;

NRT_STATUS nrt_init(void* device, nrt_runtime_t** runtime);
void nrt_close(nrt_runtime_t* runtime);

/* start_nc: the first NeuronCore; nc_count: 1, or 2 for a logical core of two
 * (LNC=2: cores start_nc and start_nc + 1, start_nc even; the container then
 * holds one program per core). */
NRT_STATUS nrt_load(nrt_runtime_t* runtime, const void* container, size_t bytes, int32_t start_nc, int32_t nc_count,
                    nrt_model_t** model);
NRT_STATUS nrt_unload(nrt_model_t* model);

NRT_STATUS nrt_tensor_allocate(nrt_runtime_t* runtime, size_t bytes, const char* name, nrt_tensor_t** tensor);
void nrt_tensor_free(nrt_tensor_t** tensor);
uint64_t nrt_tensor_get_device_address(const nrt_tensor_t* tensor);
size_t nrt_tensor_get_size(const nrt_tensor_t* tensor);
NRT_STATUS nrt_tensor_write(nrt_tensor_t* tensor, const void* data, size_t offset, size_t bytes);
NRT_STATUS nrt_tensor_read(const nrt_tensor_t* tensor, void* data, size_t offset, size_t bytes);

NRT_STATUS nrt_execute_start(nrt_model_t* model);
NRT_STATUS nrt_wait(nrt_model_t* model, uint64_t timeout_us);
NRT_STATUS nrt_execute(nrt_model_t* model); /* start, then wait up to 10 s of simulated time */
/* The error code (models/neuroncore error_code) of the last execution that failed, 0 if none. */
uint32_t nrt_get_last_error(const nrt_model_t* model);

const char* nrt_status_string(NRT_STATUS status);

#ifdef __cplusplus
}
#endif

#endif /* TRN3_RUNTIME_NRT_H */
