// One fused multiply-add, combinational: the PE's arithmetic alone, so a
// testbench can drive millions of operand triples through it.
module trn3_fma_unit (
    input  logic [31:0] a,
    input  logic [31:0] b,
    input  logic [31:0] c,
    output logic [31:0] r
);
  assign r = trn3_fp_pkg::fma32(a, b, c);
endmodule
