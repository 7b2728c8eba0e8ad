    tensor_tensor vector alu=max dst=sbuf:bf16:p64x64@0x0{1x16} src0=sbuf:bf16:p64x64@0x40{1x16} src1=sbuf:fp32:p64x64@0x80{1x16}
    tensor_scalar vector alu=subtract dst=sbuf:e4m3fn:p0x32@0x8+r7{1x4} src0=sbuf:e5m2:p32x32@0x0{1x4} scalar=-0
    tensor_reduce vector dst=sbuf:fp32:p0x1@0x0{1x1} src0=sbuf:fp32:p0x1@0x0{64x4,1x16,-1x2}
    memset vector dst=sbuf:int32:p0x2@0x0{1x8} scalar=1.50000005e-07
    nop vector wait=s9>=123456
    quantize_mx vector flags=0x8 dst=sbuf:e2m1:p0x16@0x0{1x64} src0=sbuf:bf16:p0x16@0x40{1x64} imm=9000
