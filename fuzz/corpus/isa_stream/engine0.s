    matmul tensor flags=0x3 wait=s0>=2 signal=s2+1 dst=psum:fp32:p0x128@0x800{1x512} src0=sbuf:bf16:p0x128@0x0{1x128} src1=sbuf:bf16:p0x128@0x400{1x512}
L1:
    transpose tensor dst=sbuf:fp32:p0x32@0x0{1x64} src0=sbuf:fp32:p0x64@0x200{1x32}
    matmul tensor flags=0x5 dst=psum:bf16:p0x128@0x0{1x512} src0=sbuf:e2m1:p0x128@0x0{1x512} src1=sbuf:e5m2:p0x128@0x1000{1x2048} imm=100000 target=101000
    matmul tensor dst=psum:fp32:p0x64@0x0{1x256} src0=sbuf:bf16:p0x32@0x0{1x64} src1=sbuf:bf16:p0x32@0x400{1x1024} sparse=4:16 meta=70000
    set_reg tensor reg=r3 imm=77
    add_reg tensor reg=r3 imm=4294967295
    branch_lt tensor reg=r3 imm=100 target=@L1
    halt tensor
