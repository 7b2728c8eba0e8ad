// The Tensor engine's weight-stationary systolic array, ROWS x COLS
// processing elements (128 x 128 on the chip; a smaller array tiles larger
// matmuls through the partial-sum input).
//
// PE(r, c) holds the stationary value w[r][c] (K row r, output column c).
// A moving column (ROWS values, K rows) enters the left edge skewed one
// cycle per row and moves right one PE per cycle; partial sums enter the top
// of each column (skewed one cycle per column) and move down one PE per
// cycle, so column c accumulates
//     acc = psum_in[c]; for r = 0 .. ROWS-1: acc = fma32(w[r][c], x[r], acc)
// in row order, exactly docs/numerics.md rule 18. A contraction longer than
// ROWS continues by feeding a fold's outputs to the next fold's psum_in.
//
// Ports (valid/ready): weights load one row per cycle into either of two
// banks, so the next matmul's weights load while the current one streams;
// each moving column names the bank it multiplies with, how many rows are
// active (rows at or past in_rows pass the partial sum through untouched)
// and whether the PEs select instead of multiply (a transpose: PE passes its
// weight down where the moving value is 1.0), or run in MX mode: each value
// then holds four element codes (K values 4r .. 4r+3 of row r) with its
// block's E8M0 scale, the partial sum carries the block's exact integer sum
// down 8 rows, and the block's last row rounds it into the fp32 accumulator
// (trn3_fp_pkg::pe_step_mx; R must be a multiple of 8). Weights marked as
// holes (pruned by structured sparsity) are never multiplied. The whole array advances when
// out_ready is high; a column accepted at one clock edge leaves, de-skewed,
// ROWS + COLS - 2 edges later (docs/rtl.md).
//
// Formulation (for Verilator): the PE is one function (trn3_fp_pkg::pe_step)
// applied over unpacked state arrays in one clocked process; each cycle
// updates the PEs from the bottom-right corner, so every PE reads its
// neighbours' values of the previous cycle before they change. Skew and
// de-skew are triangular shift registers.
module trn3_systolic_array #(
    parameter int ROWS = 16,
    parameter int COLS = 16
) (
    input  logic        clk,
    input  logic        rst_n,
    // weight load
    input  logic        w_valid,
    input  logic        w_bank,
    input  logic [7:0]  w_row,
    input  logic [31:0] w_data   [COLS],
    input  logic [7:0]  w_scale  [COLS],   // MX: E8M0 scale of the row's block, per column
    input  logic [3:0]  w_hole   [COLS],   // pruned elements (structured sparsity): bit j for element j
    // moving columns
    input  logic        in_valid,
    output logic        in_ready,
    input  logic        in_bank,
    input  logic        in_select,
    input  logic        in_mx,             // MX: four element codes per value, scales per block
    input  logic [1:0]  in_fmt_w,          // MX element formats (trn3_fp_pkg::MX_*) of weights
    input  logic [1:0]  in_fmt_x,          //   and of moving values
    input  logic [7:0]  in_scale [ROWS],   // MX: E8M0 scale of each row's block
    input  logic        in_first,          // MX: the partial sums entering at the top hold no block yet
    input  logic [8:0]  in_rows,
    input  logic [31:0] in_data  [ROWS],
    input  logic [31:0] in_psum  [COLS],
    // results, one column of COLS partial sums per accepted moving column
    output logic        out_valid,
    input  logic        out_ready,
    output logic [31:0] out_data [COLS]
);
  import trn3_fp_pkg::*;

  // Flags that travel with a moving value: valid, row active, bank, select,
  // MX mode and formats.
  typedef struct packed {
    logic       v;
    logic       act;
    logic       bank;
    logic       sel;
    logic       mx;
    logic [1:0] fw;
    logic [1:0] fx;
  } flags_t;

  logic [31:0] w      [2][ROWS][COLS];
  logic [7:0]  w_sc   [2][ROWS][COLS];  // MX weight scales
  logic [3:0]  w_h    [2][ROWS][COLS];  // pruned weight elements
  logic [31:0] mv     [ROWS][COLS];   // moving value held by PE(r, c)
  logic [7:0]  ms     [ROWS][COLS];   // its MX scale
  flags_t      mf     [ROWS][COLS];
  logic [31:0] ps     [ROWS][COLS];   // partial sum leaving PE(r, c) downwards
  // MX: the rest of the partial sum (trn3_fp_pkg::mx_psum_t without acc)
  logic               ps_first [ROWS][COLS];
  logic               ps_nan   [ROWS][COLS];
  logic signed [71:0] ps_sum   [ROWS][COLS];
  // skew: row r delays its input r cycles; column c delays its psum c cycles;
  // de-skew: column c's result waits COLS - 1 - c cycles.
  logic [31:0] skew_x [ROWS][ROWS];
  logic [7:0]  skew_s [ROWS][ROWS];
  flags_t      skew_f [ROWS][ROWS];
  logic [31:0] skew_p [COLS][COLS];
  logic        skew_pf [COLS][COLS];
  logic [31:0] deskew [COLS][COLS];

  logic [31:0] row_x  [ROWS];
  logic [7:0]  row_s  [ROWS];
  flags_t      row_f  [ROWS];
  logic [31:0] top_p  [COLS];
  logic        top_pf [COLS];

  assign in_ready = out_ready;

  /* verilator lint_off BLKSEQ */
  always_ff @(posedge clk) begin
    if (!rst_n) begin
      for (int r = 0; r < ROWS; r++) begin
        for (int c = 0; c < COLS; c++) mf[r][c] = '0;
        for (int k = 0; k < ROWS; k++) skew_f[r][k] = '0;
      end
      out_valid = 1'b0;
    end else begin
      if (w_valid && 32'(w_row) < ROWS)
        for (int c = 0; c < COLS; c++) begin
          w[w_bank][32'(w_row)][c] = w_data[c];
          w_sc[w_bank][32'(w_row)][c] = w_scale[c];
          w_h[w_bank][32'(w_row)][c] = w_hole[c];
        end
      if (out_ready) begin
        // Inputs as they reach the array's edges this cycle.
        for (int r = 0; r < ROWS; r++) begin
          flags_t f;
          f.v = in_valid;
          f.act = in_valid && (r < 32'(in_rows));
          f.bank = in_bank;
          f.sel = in_select;
          f.mx = in_mx;
          f.fw = in_fmt_w;
          f.fx = in_fmt_x;
          if (r == 0) begin
            row_x[r] = in_data[r];
            row_s[r] = in_scale[r];
            row_f[r] = f;
          end else begin
            row_x[r] = skew_x[r][r - 1];
            row_s[r] = skew_s[r][r - 1];
            row_f[r] = skew_f[r][r - 1];
            for (int k = r - 1; k > 0; k--) begin
              skew_x[r][k] = skew_x[r][k - 1];
              skew_s[r][k] = skew_s[r][k - 1];
              skew_f[r][k] = skew_f[r][k - 1];
            end
            skew_x[r][0] = in_data[r];
            skew_s[r][0] = in_scale[r];
            skew_f[r][0] = f;
          end
        end
        for (int c = 0; c < COLS; c++) begin
          if (c == 0) begin
            top_p[c] = in_psum[c];
            top_pf[c] = in_first;
          end else begin
            top_p[c] = skew_p[c][c - 1];
            top_pf[c] = skew_pf[c][c - 1];
            for (int k = c - 1; k > 0; k--) begin
              skew_p[c][k] = skew_p[c][k - 1];
              skew_pf[c][k] = skew_pf[c][k - 1];
            end
            skew_p[c][0] = in_psum[c];
            skew_pf[c][0] = in_first;
          end
        end
        // The array, bottom-right first.
        for (int r = ROWS - 1; r >= 0; r--) begin
          for (int c = COLS - 1; c >= 0; c--) begin
            logic [31:0] x, p;
            logic [7:0] xs;
            flags_t f;
            mx_psum_t q;
            x = (c == 0) ? row_x[r] : mv[r][c - 1];
            xs = (c == 0) ? row_s[r] : ms[r][c - 1];
            f = (c == 0) ? row_f[r] : mf[r][c - 1];
            p = (r == 0) ? top_p[c] : ps[r - 1][c];
            mv[r][c] = x;
            ms[r][c] = xs;
            mf[r][c] = f;
            if (!f.act) begin
              ps[r][c] = p;
              if (f.mx) begin
                ps_first[r][c] = (r == 0) ? top_pf[c] : ps_first[r - 1][c];
                ps_nan[r][c] = (r == 0) ? 1'b0 : ps_nan[r - 1][c];
                ps_sum[r][c] = (r == 0) ? 72'sd0 : ps_sum[r - 1][c];
              end
            end else if (f.mx) begin
              q.acc = p;
              q.first = (r == 0) ? top_pf[c] : ps_first[r - 1][c];
              q.nan = (r == 0) ? 1'b0 : ps_nan[r - 1][c];
              q.sum = (r == 0) ? 72'sd0 : ps_sum[r - 1][c];
              q = pe_step_mx(w[f.bank][r][c], w_sc[f.bank][r][c], w_h[f.bank][r][c], x, xs, q, f.fw, f.fx, r % 8 == 0,
                             r % 8 == 7);
              ps[r][c] = q.acc;
              ps_first[r][c] = q.first;
              ps_nan[r][c] = q.nan;
              ps_sum[r][c] = q.sum;
            end else begin
              ps[r][c] = pe_step(w[f.bank][r][c], w_h[f.bank][r][c][0], x, p, f.sel);
            end
          end
        end
        // De-skew: column c's result of COLS - 1 - c cycles ago.
        for (int c = 0; c < COLS; c++) begin
          if (c == COLS - 1) begin
            out_data[c] = ps[ROWS - 1][c];
          end else begin
            out_data[c] = deskew[c][COLS - 2 - c];
            for (int k = COLS - 2 - c; k > 0; k--) deskew[c][k] = deskew[c][k - 1];
            deskew[c][0] = ps[ROWS - 1][c];
          end
        end
        out_valid = mf[ROWS - 1][COLS - 1].v;
      end
    end
  end
  /* verilator lint_on BLKSEQ */

endmodule
