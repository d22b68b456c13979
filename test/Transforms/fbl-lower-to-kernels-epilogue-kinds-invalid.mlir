// RUN: fbl-opt %s -fbl-lower-to-kernels=gemm-epilogues=bias -verify-diagnostics

// gemm-epilogues names a kind fbl does not know: refused before anything
// is lowered.
// expected-error @+1 {{fbl-lower-to-kernels: unknown gemm-epilogues 'bias' (all, none, sole-reader, same-shape, sole-same-shape)}}
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @gemm(%a: tensor<8x12xf32, #fbl.channel_packed<packed = 1>>, %b: tensor<12x16xf32, #fbl.channel_packed<packed = 0>>) -> tensor<8x16xf32, #fbl.channel_packed<packed = 1>> {
    %zero = arith.constant 0.0 : f32
    %e = tensor.empty() : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
    %c = linalg.fill ins(%zero : f32) outs(%e : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>) -> tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
    %r = linalg.matmul ins(%a, %b : tensor<8x12xf32, #fbl.channel_packed<packed = 1>>, tensor<12x16xf32, #fbl.channel_packed<packed = 0>>) outs(%c : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>) -> tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
    return %r : tensor<8x16xf32, #fbl.channel_packed<packed = 1>>
  }
}
