/* A firmware that traps at its first instruction (an all-zero word is
 * illegal): the platforms' reports must name the trap. */
    .section .text.start
    .globl _start
_start:
    .word 0
