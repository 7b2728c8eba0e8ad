# fill eight columns of partition 0..127 with 7.5, one per loop turn
    set_reg vector reg=r0
loop:
    memset vector dst=sbuf:fp32:p0x128@0x0+r0{1x1} scalar=7.5
    add_reg vector reg=r0 imm=4
    branch_lt vector reg=r0 imm=32 target=@loop   # back to the memset
    halt vector
