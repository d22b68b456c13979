// RUN: fbl-opt %s -fbl-autodiff="wrt=1" -verify-diagnostics
// RUN: not fbl-opt %s -fbl-autodiff="optimizer=adam" 2>&1 | FileCheck %s --check-prefix=OPT

// OPT: fbl-autodiff: unknown optimizer 'adam'; expected none, sgd or adamw

// expected-error @+1 {{fbl-autodiff: wrt names argument #1, which is not an fbl.param argument}}
func.func @frozen_data(%w: tensor<2xf32> {fbl.param}, %x: tensor<2xf32>) -> tensor<f32> {
  %le = tensor.empty() : tensor<f32>
  %l = linalg.generic {indexing_maps = [affine_map<(i) -> (i)>, affine_map<(i) -> (i)>, affine_map<(i) -> ()>], iterator_types = ["reduction"]}
      ins(%w, %x : tensor<2xf32>, tensor<2xf32>) outs(%le : tensor<f32>) {
  ^bb0(%a: f32, %b: f32, %acc: f32):
    %p = arith.mulf %a, %b : f32
    %r = arith.addf %acc, %p : f32
    linalg.yield %r : f32
  } -> tensor<f32>
  return %l : tensor<f32>
}
