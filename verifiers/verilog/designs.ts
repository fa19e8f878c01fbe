/** Test designs shared by verilog.test.ts and bench/verilog.ts (golden modules and rewrites). */

export const ADDER_GOLDEN = `module adder(input [7:0] a, input [7:0] b, input cin, output [7:0] sum, output cout);
  assign {cout, sum} = a + b + cin;
endmodule
`;

/** The same adder as a ripple of full adders (structural, generate loop). */
export const ADDER_RIPPLE = `module full_adder(input x, input y, input c, output s, output co);
  assign s = x ^ y ^ c;
  assign co = (x & y) | (x & c) | (y & c);
endmodule

module adder(a, b, cin, sum, cout);
  input [7:0] a, b;
  input cin;
  output [7:0] sum;
  output cout;
  wire [8:0] c;
  assign c[0] = cin;
  genvar i;
  generate for (i = 0; i < 8; i = i + 1) begin : fa
    full_adder u (.x(a[i]), .y(b[i]), .c(c[i]), .s(sum[i]), .co(c[i + 1]));
  end endgenerate
  assign cout = c[8];
endmodule
`;

/** A "101" sequence detector (Moore), binary state encoding, asynchronous active-high reset. */
export const FSM_BINARY = `module det(input clk, input rst, input x, output reg y);
  localparam S0 = 2'd0, S1 = 2'd1, S2 = 2'd2, S3 = 2'd3;
  reg [1:0] s;
  always @(posedge clk or posedge rst)
    if (rst) s <= S0;
    else case (s)
      S0: s <= x ? S1 : S0;
      S1: s <= x ? S1 : S2;
      S2: s <= x ? S3 : S0;
      S3: s <= x ? S1 : S2;
    endcase
  always @(*) y = (s == S3);
endmodule
`;

/** The same detector, one-hot encoded. */
export const FSM_ONEHOT = `module det(input clk, input rst, input x, output y);
  reg [3:0] s;
  always @(posedge clk or posedge rst) begin
    if (rst) s <= 4'b0001;
    else begin
      s[0] <= (s[0] & ~x) | (s[2] & ~x);
      s[1] <= (s[0] & x) | (s[1] & x) | (s[3] & x);
      s[2] <= (s[1] & ~x) | (s[3] & ~x);
      s[3] <= s[2] & x;
    end
  end
  assign y = s[3];
endmodule
`;
