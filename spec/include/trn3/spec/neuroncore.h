/* A NeuronCore's control registers: what software writes to start its
 * engines and reads to follow them. The model (models/neuroncore), the chip
 * (which maps core c at TRN3_BAR0_CORE(c), spec/device.h) and tests share
 * them; docs/isa.md describes the engines, streams and semaphores. Plain C.
 *
 * Engine e: 0 tensor, 1 vector, 2 scalar, 3 gpsimd, 4 sync (the isa.h
 * engine numbers). Each has a block of TRN3_NC_ENGINE_STRIDE bytes.
 */
#ifndef TRN3_SPEC_NEURONCORE_H
#define TRN3_SPEC_NEURONCORE_H

#define TRN3_NC_ENGINES 5u
#define TRN3_NC_SEMAPHORE_COUNT 256u

/* ---- Per engine ---- */
#define TRN3_NC_ENGINE_STRIDE 0x20u
#define TRN3_NC_ENGINE_BASE(e) (TRN3_NC_ENGINE_STRIDE * (e))
#define TRN3_NC_PC(e) (TRN3_NC_ENGINE_BASE(e) + 0x00u) /* RW 8: start address of engine e's stream */
#define TRN3_NC_START(e) (TRN3_NC_ENGINE_BASE(e) + 0x08u) /* WO 4: TRN3_NC_START_GO starts engine e at PC */
#define TRN3_NC_STATUS(e) (TRN3_NC_ENGINE_BASE(e) + 0x0Cu) /* RO 4: TRN3_NC_STATUS_* */
#define TRN3_NC_ERROR(e) (TRN3_NC_ENGINE_BASE(e) + 0x10u) /* RO 4: TRN3_NC_ERR_*, 0 when none */
#define TRN3_NC_ERROR_PC(e) (TRN3_NC_ENGINE_BASE(e) + 0x14u) /* RO 4: index of the failing instruction */

#define TRN3_NC_START_GO 0x1u /* START bit 0 */

#define TRN3_NC_STATUS_IDLE 0u
#define TRN3_NC_STATUS_RUNNING 1u
#define TRN3_NC_STATUS_HALTED 2u
#define TRN3_NC_STATUS_ERROR 3u /* stopped on an error: ERROR and ERROR_PC say which */

/* Error codes: an error stops that engine only. */
#define TRN3_NC_ERR_NONE 0u
#define TRN3_NC_ERR_ILLEGAL 1u /* illegal opcode, wrong engine, a register or DMA queue out of range */
#define TRN3_NC_ERR_OUT_OF_BOUNDS 2u /* tile outside SBUF/PSUM */
#define TRN3_NC_ERR_PARTITION 3u /* partition start or count */
#define TRN3_NC_ERR_MEMORY 4u /* DMA or fetch outside device memory */
#define TRN3_NC_ERR_DTYPE 5u /* operand type not allowed */
#define TRN3_NC_ERR_SHAPE 6u /* shape not allowed (matmul limits) */
#define TRN3_NC_ERR_UNREACHABLE 7u /* the engine cannot reach that memory (GpSimd and PSUM) */
#define TRN3_NC_ERR_SPARSITY 8u /* invalid sparsity metadata */

/* ---- Error interrupt: the core's error_irq is (IRQ_STATUS & IRQ_ENABLE) != 0 ---- */
#define TRN3_NC_IRQ_STATUS 0xA0u /* W1C 4: TRN3_NC_IRQ_ENGINE(e): engine e stopped on an error */
#define TRN3_NC_IRQ_ENABLE 0xA4u /* RW 4: reset TRN3_NC_IRQ_ALL */
#define TRN3_NC_IRQ_ENGINE(e) (1u << (e))
#define TRN3_NC_IRQ_ALL ((1u << TRN3_NC_ENGINES) - 1u)

/* ---- Semaphores (docs/isa.md): engines wait for and signal them ---- */
#define TRN3_NC_SEMAPHORE(s) (0x400u + 4u * (s)) /* RW 4: semaphore s, 0..TRN3_NC_SEMAPHORE_COUNT-1 */

#endif /* TRN3_SPEC_NEURONCORE_H */
