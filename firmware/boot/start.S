/* Boot ROM entry: a stack in the top 4 KiB of SRAM (above the firmware
 * image and its data), then boot_main, which does not return. */
    .section .text.start
    .globl _start
_start:
    li sp, 0x20040000
    call boot_main
1:  wfi
    j 1b
