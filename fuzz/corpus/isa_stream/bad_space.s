matmul tensor dst=dram:fp32:p0x1@0x0{1x1}
