    iota gpsimd dst=sbuf:int32:p0x128@0x0{1x128} scalar=1 scalar2=128 imm=5
    sem_increment gpsimd signal=s200+3
    affine_select gpsimd dst=sbuf:fp32:p0x64@0x0{1x64} src0=sbuf:fp32:p0x64@0x100{1x64} scalar=-1 scalar2=1 imm=4294967293 target=4286578688
