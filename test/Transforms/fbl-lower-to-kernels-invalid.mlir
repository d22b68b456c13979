// RUN: fbl-opt %s -split-input-file -fbl-lower-to-kernels -verify-diagnostics

// Kernels need layouts on every operand of a laid-out function.
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @unlaid(%w: tensor<4x8xf32, #fbl.channel_packed<packed = 1>>, %x: tensor<4x8xf32>) -> tensor<4x8xf32, #fbl.channel_packed<packed = 1>> {
    %e = tensor.empty() : tensor<4x8xf32, #fbl.channel_packed<packed = 1>>
    // expected-error @+1 {{fbl-lower-to-kernels: operand without a layout; run fbl-select-layouts first}}
    %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                         iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<4x8xf32>) outs(%e : tensor<4x8xf32, #fbl.channel_packed<packed = 1>>) {
    ^bb0(%v: f32, %o: f32):
      %t = math.tanh %v : f32
      linalg.yield %t : f32
    } -> tensor<4x8xf32, #fbl.channel_packed<packed = 1>>
    return %r : tensor<4x8xf32, #fbl.channel_packed<packed = 1>>
  }
}

// -----

// The target comes from the module or the option.
// expected-error @+1 {{no target}}
module {
  func.func @no_target() {
    return
  }
}

// -----

// A slice with a zero stride writes several elements into one place (the
// kernel would divide by the stride).
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @zero_stride_insert(%x: tensor<2x4xf32, #fbl.buffer>, %y: tensor<4x8xf32, #fbl.buffer>) -> tensor<4x8xf32, #fbl.buffer> {
    // expected-error @+1 {{fbl-lower-to-kernels: strides below 1}}
    %s = tensor.insert_slice %x into %y[1, 0] [2, 4] [0, 2] : tensor<2x4xf32, #fbl.buffer> into tensor<4x8xf32, #fbl.buffer>
    return %s : tensor<4x8xf32, #fbl.buffer>
  }
}

// -----

// One kernel writes an op's several results at the same places: results of
// different layouts (or a reduction, or a read init) are refused.
#a = #fbl.channel_packed<packed = 1>
#b = #fbl.channel_packed<packed = 0>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @two_layouts(%x: tensor<8x8xf32, #a>) -> (tensor<8x8xf32, #a>, tensor<8x8xf32, #b>) {
    %ea = tensor.empty() : tensor<8x8xf32, #a>
    %eb = tensor.empty() : tensor<8x8xf32, #b>
    // expected-error @+1 {{fbl-lower-to-kernels: an op with several results needs parallel loops, one result type and map, and inits it does not read}}
    %r:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x8xf32, #a>) outs(%ea, %eb : tensor<8x8xf32, #a>, tensor<8x8xf32, #b>) {
    ^bb0(%v: f32, %o: f32, %p: f32):
      %e = math.exp %v : f32
      linalg.yield %v, %e : f32, f32
    } -> (tensor<8x8xf32, #a>, tensor<8x8xf32, #b>)
    return %r#0, %r#1 : tensor<8x8xf32, #a>, tensor<8x8xf32, #b>
  }
}

// -----

#a = #fbl.channel_packed<packed = 1>
#id = affine_map<(i, j) -> (i, j)>
module attributes {fbl.target = #fbl.target<"pocl-cpu">} {
  func.func @reads_init(%x: tensor<8x8xf32, #a>, %y: tensor<8x8xf32, #a>) -> (tensor<8x8xf32, #a>, tensor<8x8xf32, #a>) {
    %ea = tensor.empty() : tensor<8x8xf32, #a>
    // expected-error @+1 {{fbl-lower-to-kernels: an op with several results needs parallel loops, one result type and map, and inits it does not read}}
    %r:2 = linalg.generic {indexing_maps = [#id, #id, #id], iterator_types = ["parallel", "parallel"]}
        ins(%x : tensor<8x8xf32, #a>) outs(%y, %ea : tensor<8x8xf32, #a>, tensor<8x8xf32, #a>) {
    ^bb0(%v: f32, %o: f32, %p: f32):
      %s = arith.addf %v, %o : f32
      linalg.yield %s, %v : f32, f32
    } -> (tensor<8x8xf32, #a>, tensor<8x8xf32, #a>)
    return %r#0, %r#1 : tensor<8x8xf32, #a>, tensor<8x8xf32, #a>
  }
}
