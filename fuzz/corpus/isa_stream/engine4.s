    dma sync flags=0xf0 dst=hbm:bf16:p0x128@0x123456789a{1x512}/s8192 src0=sbuf:bf16:p0x128@0x0{1x512}
