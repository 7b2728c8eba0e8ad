// IEEE 754 binary32 arithmetic for the Tensor engine's processing element:
// a fused multiply-add with one round-to-nearest-even rounding, gradual
// underflow and the one canonical NaN, exactly as docs/numerics.md rules 18
// and 24 define a matmul step (acc = fl32(acc + a x b)). The C++ model and
// this RTL follow that text; tests compare both with std::fma bit for bit.
//
// Datapath: the exact product (48-bit significand) and the addend meet in a
// 64-bit window: the operand whose leading bit is higher sits with that bit
// at position 61, the other is shifted right to its place and every bit
// shifted out is jammed into bit 0 (sticky). When the leading bits are two or
// more positions apart the sum loses at most one leading bit, so the
// rounding position stays above bit 35 and the jammed bit is a correct
// sticky; when they are closer nothing is shifted out and the sum is exact.
package trn3_fp_pkg;

  localparam logic [31:0] QNAN = 32'h7fc0_0000;

  // Leading-zero count of a 64-bit value (64 for zero), as six halving steps.
  function automatic logic [6:0] lzc64(input logic [63:0] v);
    logic [63:0] x;
    logic [6:0] n;
    x = v;
    n = 7'd0;
    if (x == 64'd0) return 7'd64;
    if (x[63:32] == 32'd0) begin n = n + 7'd32; x = x << 32; end
    if (x[63:48] == 16'd0) begin n = n + 7'd16; x = x << 16; end
    if (x[63:56] == 8'd0)  begin n = n + 7'd8;  x = x << 8;  end
    if (x[63:60] == 4'd0)  begin n = n + 7'd4;  x = x << 4;  end
    if (x[63:62] == 2'd0)  begin n = n + 7'd2;  x = x << 2;  end
    if (x[63] == 1'b0)     begin n = n + 7'd1;               end
    return n;
  endfunction

  // The binary32 nearest (ties to even) to (-1)^s x mag x 2^e0; bit 0 of mag
  // may be a jammed sticky bit when the result keeps no bit below bit 2.
  // Gradual underflow (lsb 2^-149), overflow to infinity, +-0 on underflow.
  function automatic logic [31:0] round_pack(input logic s, input logic [63:0] mag, input int e0);
    logic [63:0] m, rest;
    logic [6:0]  lz;
    logic        round_bit, sticky;
    int          msb, lsb_exp, r, field;
    lz = lzc64(mag);
    msb = 63 - int'(lz);
    lsb_exp = e0 + msb - 23;
    if (lsb_exp < -149) lsb_exp = -149;
    r = lsb_exp - e0;  // bit of mag that becomes the result's lsb
    if (r <= 0) begin
      m = mag << (-r);  // exact: nothing below the lsb
      round_bit = 1'b0;
      sticky = 1'b0;
    end else if (r > 64) begin  // far below the smallest subnormal
      m = 64'd0;
      round_bit = 1'b0;
      sticky = 1'b1;
    end else begin
      m = mag >> r;
      round_bit = mag[r - 1];
      rest = (r >= 2) ? (mag & ((64'd1 << (r - 1)) - 64'd1)) : 64'd0;
      sticky = rest != 64'd0;
    end
    if (round_bit && (sticky || m[0])) m = m + 64'd1;
    if (m[24]) begin  // rounding carried into a 25th bit
      m = m >> 1;
      lsb_exp = lsb_exp + 1;
    end
    if (!m[23]) return {s, 8'd0, m[22:0]};  // subnormal or zero (lsb_exp is -149)
    field = lsb_exp + 150;
    if (field >= 255) return {s, 8'hff, 23'd0};  // overflow rounds to infinity
    return {s, field[7:0], m[22:0]};
  endfunction

  // fl32(c + a x b) with one RNE rounding.
  function automatic logic [31:0] fma32(input logic [31:0] a, input logic [31:0] b, input logic [31:0] c);
    logic        sa, sb, sc, sp, sx, sy, sr;
    logic [7:0]  ea, eb, ec;
    logic [23:0] ma, mb, mc;
    logic [47:0] mp;
    logic        a_nan, b_nan, c_nan, a_inf, b_inf, c_inf, a_zero, b_zero;
    // exponents of the operands' leading bits (value = 2^top x 1.f)
    int          ep_top, ec_top, x_top, y_top, shift;
    logic [63:0] xw, yw, sum;
    logic [6:0]  lz_p, lz_c;
    logic        sticky, p_bigger;

    sa = a[31]; ea = a[30:23];
    sb = b[31]; eb = b[30:23];
    sc = c[31]; ec = c[30:23];
    a_nan  = (ea == 8'hff) && (a[22:0] != 23'd0);
    b_nan  = (eb == 8'hff) && (b[22:0] != 23'd0);
    c_nan  = (ec == 8'hff) && (c[22:0] != 23'd0);
    a_inf  = (ea == 8'hff) && (a[22:0] == 23'd0);
    b_inf  = (eb == 8'hff) && (b[22:0] == 23'd0);
    c_inf  = (ec == 8'hff) && (c[22:0] == 23'd0);
    a_zero = (a[30:0] == 31'd0);
    b_zero = (b[30:0] == 31'd0);
    sp = sa ^ sb;

    // Specials: NaN in, inf x 0, inf - inf give the one NaN; infinities win.
    if (a_nan || b_nan || c_nan) return QNAN;
    if ((a_inf && b_zero) || (b_inf && a_zero)) return QNAN;
    if (a_inf || b_inf) begin
      if (c_inf && (sc != sp)) return QNAN;
      return {sp, 8'hff, 23'd0};
    end
    if (c_inf) return c;
    // A zero product leaves c (the sum of two zeros is -0 only if both are).
    if (a_zero || b_zero) begin
      if (c[30:0] != 31'd0) return c;
      return {sc & sp, 31'd0};
    end

    // Significands with the hidden bit; subnormals have exponent field 1.
    ma = {ea != 8'd0, a[22:0]};
    mb = {eb != 8'd0, b[22:0]};
    mc = {ec != 8'd0, c[22:0]};
    mp = ma * mb;
    // Value of mp: mp x 2^(ea' + eb' - 300), e' = max(e, 1); of mc: mc x 2^(ec' - 150).
    lz_p = lzc64({16'd0, mp});
    ep_top = (ea == 8'd0 ? 1 : int'(ea)) + (eb == 8'd0 ? 1 : int'(eb)) - 300 + (63 - int'(lz_p));
    if (c[30:0] == 31'd0) begin
      lz_c = 7'd64;
      ec_top = -100000;  // no addend: the product alone is rounded
    end else begin
      lz_c = lzc64({40'd0, mc});
      ec_top = (ec == 8'd0 ? 1 : int'(ec)) - 150 + (63 - int'(lz_c));
    end

    // X: the operand with the higher leading bit, its leading bit at 61.
    p_bigger = ep_top >= ec_top;
    if (p_bigger) begin
      x_top = ep_top; y_top = ec_top; sx = sp; sy = sc;
      xw = {16'd0, mp} << (int'(lz_p) - 2);
      yw = {40'd0, mc};
      shift = (int'(lz_c) - 2) - (x_top - y_top);  // left shift that puts y's leading bit at 61 - d
    end else begin
      x_top = ec_top; y_top = ep_top; sx = sc; sy = sp;
      xw = {40'd0, mc} << (int'(lz_c) - 2);
      yw = {16'd0, mp};
      shift = (int'(lz_p) - 2) - (x_top - y_top);
    end
    if (c[30:0] == 31'd0) begin
      yw = 64'd0;
    end else if (shift >= 0) begin
      yw = yw << shift;
    end else if (shift > -64) begin
      sticky = (yw & ((64'd1 << (-shift)) - 64'd1)) != 64'd0;
      yw = (yw >> (-shift)) | {63'd0, sticky};
    end else begin
      yw = {63'd0, yw != 64'd0};
    end

    // Sum of magnitudes (X is at least as large unless both lead at 61).
    if (sx == sy) begin
      sum = xw + yw; sr = sx;
    end else if (xw >= yw) begin
      sum = xw - yw; sr = sx;
    end else begin
      sum = yw - xw; sr = sy;
    end
    if (sum == 64'd0) return 32'h0000_0000;  // exact cancellation: +0 under RNE

    return round_pack(sr, sum, x_top - 61);
  endfunction

  // ---- MX (OCP MX v1.0): four element multiplies per PE and cycle ----------
  //
  // An element is an exact integer: its value x 2^shift (e4m3fn 9, e5m2 16,
  // e2m1 1), at most 2^32 in magnitude. A PE adds its four products to the
  // block's integer partial sum flowing down; a block of 32 K values spans 8
  // rows, and its last row rounds the scaled block sum once to fp32 and adds
  // it to the fp32 accumulator (docs/numerics.md rules 16 and 22):
  //   d = fl32(2^(sa - 127 + sb - 127 - shift_a - shift_b) x sum)
  //   acc = d for the first block, fl32(acc + d) after.
  // A block with a NaN scale or a non-finite element gives NaN.
  localparam logic [1:0] MX_E4M3FN = 2'd0, MX_E5M2 = 2'd1, MX_E2M1 = 2'd2;
  localparam logic [31:0] ONE = 32'h3f80_0000;

  typedef struct packed {
    logic               bad;    // NaN or infinity
    logic signed [33:0] value;  // element x 2^shift
  } mx_elem_t;

  // The fp32 accumulator and the block in progress, flowing down a column.
  typedef struct packed {
    logic [31:0]        acc;
    logic               first;  // no block added to acc yet
    logic               nan;    // the block so far holds a non-finite element
    logic signed [71:0] sum;    // the block so far, exact
  } mx_psum_t;

  function automatic int mx_shift(input logic [1:0] fmt);
    case (fmt)
      MX_E5M2: return 16;
      MX_E2M1: return 1;
      default: return 9;
    endcase
  endfunction

  function automatic mx_elem_t mx_element(input logic [7:0] code, input logic [1:0] fmt);
    mx_elem_t r;
    logic [33:0] mag;
    r.bad = 1'b0;
    case (fmt)
      MX_E5M2: begin  // s eeeee mm; e = 31: infinity or NaN
        r.bad = code[6:2] == 5'd31;
        mag = code[6:2] == 5'd0 ? 34'(code[1:0]) : 34'({1'b1, code[1:0]}) << (int'(code[6:2]) - 1);
      end
      MX_E2M1: begin  // s ee m in the low four bits
        mag = code[2:1] == 2'd0 ? 34'(code[0]) : 34'({1'b1, code[0]}) << (int'(code[2:1]) - 1);
      end
      MX_E4M3FN: begin  // s eeee mmm; 0x7f and 0xff are NaN
        r.bad = code[6:0] == 7'h7f;
        mag = code[6:3] == 4'd0 ? 34'(code[2:0]) : 34'({1'b1, code[2:0]}) << (int'(code[6:3]) - 1);
      end
      default: begin  // no such format: the element is NaN
        r.bad = 1'b1;
        mag = 34'd0;
      end
    endcase
    if (r.bad) mag = 34'd0;
    r.value = ((fmt == MX_E2M1) ? code[3] : code[7]) ? -$signed(mag) : $signed(mag);
    return r;
  endfunction

  // fl32(v x 2^e), one RNE rounding, for |v| < 2^71.
  function automatic logic [31:0] int_to_fp32(input logic signed [71:0] v, input int e);
    logic [71:0] mag;
    logic [63:0] m64;
    if (v == 72'sd0) return 32'h0000_0000;
    mag = v[71] ? 72'(-v) : 72'(v);
    if (mag[71:64] != 8'd0) begin  // keep 64 bits; the rest jams into bit 0
      m64 = mag[71:8];
      m64[0] = m64[0] | (mag[7:0] != 8'd0);
      return round_pack(v[71], m64, e + 8);
    end
    return round_pack(v[71], mag[63:0], e);
  endfunction

  // One MX step of a PE: w and x hold four element codes each (K values
  // 4r .. 4r+3, lowest byte first), with their blocks' E8M0 scales.
  // `hole` marks weight elements a structured-sparse matmul pruned: they are
  // never multiplied, so their moving values (even NaN or infinity) are
  // never read (docs/numerics.md rule 23).
  function automatic mx_psum_t pe_step_mx(input logic [31:0] w, input logic [7:0] w_scale, input logic [3:0] hole,
                                          input logic [31:0] x, input logic [7:0] x_scale, input mx_psum_t p,
                                          input logic [1:0] fmt_w, input logic [1:0] fmt_x, input logic block_start,
                                          input logic block_end);
    mx_psum_t q;
    mx_elem_t a, b;
    logic signed [71:0] four;
    logic bad;
    logic [31:0] d;
    four = 72'sd0;
    bad = 1'b0;
    for (int j = 0; j < 4; j++) begin
      if (!hole[j]) begin
        a = mx_element(w[8*j +: 8], fmt_w);
        b = mx_element(x[8*j +: 8], fmt_x);
        four = four + 72'(a.value) * 72'(b.value);
        bad = bad | a.bad | b.bad;
      end
    end
    q = p;
    q.sum = (block_start ? 72'sd0 : p.sum) + four;
    q.nan = (block_start ? 1'b0 : p.nan) | bad;
    if (block_end) begin
      if (q.nan || w_scale == 8'hff || x_scale == 8'hff) d = QNAN;
      else d = int_to_fp32(q.sum, int'(w_scale) + int'(x_scale) - 254 - mx_shift(fmt_w) - mx_shift(fmt_x));
      q.acc = p.first ? d : fma32(d, ONE, p.acc);
      q.first = 1'b0;
    end
    return q;
  endfunction

  // The processing element, the one definition the array instantiates: a
  // multiply-accumulate step, or (transpose) a select that passes the
  // weight down where the moving value is 1.0 and the partial sum elsewhere;
  // a pruned weight (hole) passes the partial sum.
  function automatic logic [31:0] pe_step(input logic [31:0] w, input logic hole, input logic [31:0] x,
                                          input logic [31:0] psum, input logic sel);
    if (sel) return (x == 32'h3f80_0000) ? w : psum;
    if (hole) return psum;  // a pruned weight: no multiply at all
    return fma32(w, x, psum);
  endfunction

endpackage
