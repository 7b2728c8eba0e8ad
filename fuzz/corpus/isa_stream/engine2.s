    activation scalar func=gelu dst=sbuf:fp16:p0x8@0x0{1x8} src0=psum:fp32:p0x8@0x0{1x8} scalar=0.5 scalar2=-3.25
