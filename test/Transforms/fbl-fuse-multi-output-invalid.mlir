// RUN: fbl-opt %s -fbl-fuse-multi-output=gemm-epilogues=bias -verify-diagnostics

// gemm-epilogues names a kind fbl does not know: refused before anything
// is fused.
// expected-error @+1 {{fbl-fuse-multi-output: unknown gemm-epilogues 'bias' (all, none, sole-reader, same-shape, sole-same-shape)}}
module {
  func.func @nothing(%x: tensor<4xf32>) -> tensor<4xf32> {
    return %x : tensor<4xf32>
  }
}
