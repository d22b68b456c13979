// RUN: fbl-opt %s -split-input-file -fbl-classify-ops -fbl-select-layouts -verify-diagnostics
// RUN: not fbl-opt %s -split-input-file -fbl-set-target=target=pocl-cpu -fbl-select-layouts=policy=mnn 2>&1 | FileCheck %s --check-prefix=POLICY
// RUN: not fbl-opt %s -split-input-file -fbl-set-target=target=snapdragon -fbl-select-layouts 2>&1 | FileCheck %s --check-prefix=TARGET

// POLICY: fbl-select-layouts: unknown policy 'mnn'; expected fblayout, reuse-forward or explicit-transpose
// TARGET: unknown target 'snapdragon'; presets: adreno-a740, mali-g710, pocl-cpu, nvidia-h200

// expected-error @+1 {{no target: set fbl.target on the module or pass target=NAME (adreno-a740, mali-g710, pocl-cpu, nvidia-h200)}}
module {
}

// -----

// A tensor no image and no buffer of the target can hold.
module attributes {fbl.target = #fbl.target<"tiny", max_image_width = 8, max_image_height = 8, max_image_layers = 1, max_buffer_bytes = 256, cache_line_texels = [4, 1], cache_bytes = 1024, cache_ways = 4, fp16 = false, max_workgroup_size = 64, preferred_workgroup = [8, 8]>} {
  // expected-error @+1 {{fbl-select-layouts: a tensor of type 'tensor<64x64xf32>' fits no image or buffer of target 'tiny'}}
  func.func @too_big(%w: tensor<64x64xf32> {fbl.param}) -> (tensor<f32>, tensor<64x64xf32>) {
    %one = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%w : tensor<64x64xf32>) outs(%e : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %ge = tensor.empty() : tensor<64x64xf32>
    %g = linalg.fill ins(%one : f32) outs(%ge : tensor<64x64xf32>) -> tensor<64x64xf32>
    return %l, %g : tensor<f32>, tensor<64x64xf32>
  }
}

// -----

// Empty tensors have no device memory: refused before any layout (kernels
// would divide by their extents).
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  // expected-error @+1 {{fbl-select-layouts: tensor of type 'tensor<0x8xf32>' is empty; device memory holds no empty tensors}}
  func.func @empty(%w: tensor<0x8xf32> {fbl.param}) -> (tensor<f32>, tensor<0x8xf32>) {
    %one = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%w : tensor<0x8xf32>) outs(%e : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %ge = tensor.empty() : tensor<0x8xf32>
    %g = linalg.fill ins(%one : f32) outs(%ge : tensor<0x8xf32>) -> tensor<0x8xf32>
    return %l, %g : tensor<f32>, tensor<0x8xf32>
  }
}

// -----

// Extents near 2^62 overflow every size computation: refused.
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  // expected-error @+1 {{fbl-select-layouts: tensor of type 'tensor<4611686018427387904x2xf32>' has more elements than any device holds}}
  func.func @huge(%w: tensor<4611686018427387904x2xf32> {fbl.param}) -> (tensor<f32>, tensor<4611686018427387904x2xf32>) {
    %one = arith.constant 1.0 : f32
    %e = tensor.empty() : tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%w : tensor<4611686018427387904x2xf32>) outs(%e : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %ge = tensor.empty() : tensor<4611686018427387904x2xf32>
    %g = linalg.fill ins(%one : f32) outs(%ge : tensor<4611686018427387904x2xf32>) -> tensor<4611686018427387904x2xf32>
    return %l, %g : tensor<f32>, tensor<4611686018427387904x2xf32>
  }
}

// -----

// A tensor a scatter loop updates lives in a buffer (images are read-only or
// write-only in a kernel): one larger than the target's largest buffer is
// refused, even though an image would hold it.
module attributes {fbl.target = #fbl.target<"tiny", max_image_width = 64, max_image_height = 64, max_image_layers = 1, max_buffer_bytes = 256, cache_line_texels = [4, 1], cache_bytes = 1024, cache_ways = 4, fp16 = false, max_workgroup_size = 64, preferred_workgroup = [8, 8]>} {
  func.func @scatter_too_big(%w: tensor<64x64xf32> {fbl.param}) -> (tensor<f32>, tensor<64x64xf32>) {
    %zero = arith.constant 0.0 : f32
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %e = tensor.empty() : tensor<f32>
    %l = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> ()>], iterator_types = ["reduction", "reduction"]}
        ins(%w : tensor<64x64xf32>) outs(%e : tensor<f32>) {
    ^bb0(%a: f32, %acc: f32):
      %s = arith.addf %acc, %a : f32
      linalg.yield %s : f32
    } -> tensor<f32>
    %ge = tensor.empty() : tensor<64x64xf32>
    // expected-error @+1 {{fbl-select-layouts: a tensor of type 'tensor<64x64xf32>' must live in a buffer (it is updated by a scatter loop), but its 16384 bytes exceed the largest buffer of target 'tiny' (256 bytes)}}
    %z = linalg.fill ins(%zero : f32) outs(%ge : tensor<64x64xf32>) -> tensor<64x64xf32>
    %g = scf.for %i = %c0 to %c1 step %c1 iter_args(%acc = %z) -> (tensor<64x64xf32>) {
      scf.yield %acc : tensor<64x64xf32>
    }
    return %l, %g : tensor<f32>, tensor<64x64xf32>
  }
}
